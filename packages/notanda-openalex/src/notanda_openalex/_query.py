"""Argument validation and query hygiene: everything that happens before I/O.

:func:`prepare_search` turns what a caller supplied into a frozen
:class:`SearchRequest` that records both the supplied arguments and the exact
request that will be sent. It is pure: no clock, no configuration, no network.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from harvester.errors import ConfigurationError as CoreConfigurationError
from harvester.providers.openalex import OpenAlexQuery
from harvester.vocabulary import normalize_languages
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ._errors import InputError, InputReason
from ._text import replace_lone_surrogates, sanitize_query
from ._vocabulary import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_QUERY_LENGTH,
    MAX_YEAR,
    MIN_YEAR,
    OaStatus,
    WorkType,
)
from ._works import WORK_SELECT_FIELDS

__all__ = [
    "ORDERING",
    "EffectiveSearch",
    "SearchFilters",
    "SearchRequest",
    "prepare_search",
    "supplied_record",
]


#: OpenAlex's default order for a search without ``sort``: relevance score, then
#: publication date, then ID (a deterministic tie-break). No ``sort`` is sent.
ORDERING = "openalex_default:_score,publication_date,id"


def _unique_sorted(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    if len(set(values)) != len(values):
        raise PydanticCustomError("duplicate", "a value is repeated")
    return sorted(values)


class SearchFilters(BaseModel):
    """Optional filters. Unset (or empty) filters leave the request unchanged.

    Values are validated strictly (a bool is not a year, a tuple is not a list)
    and canonicalised: lists are sorted, language codes lower-cased. Pass a plain
    mapping to :func:`prepare_search` to get an :class:`InputError` instead
    of a pydantic ``ValidationError``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    #: Earliest publication year (inclusive), ``MIN_YEAR``..``MAX_YEAR``.
    from_year: int | None = None
    #: Latest publication year (inclusive), ``MIN_YEAR``..``MAX_YEAR``.
    to_year: int | None = None
    #: Any of :data:`OA_STATUSES`.
    oa_status: list[OaStatus] | None = None
    #: Any of :data:`WORK_TYPES`.
    types: list[WorkType] | None = None
    #: ISO 639-1 codes known to OpenAlex (validated by the notanda core).
    languages: list[str] | None = None

    @field_validator("from_year", "to_year")
    @classmethod
    def _year_in_range(cls, value: int | None) -> int | None:
        if value is not None and not MIN_YEAR <= value <= MAX_YEAR:
            raise PydanticCustomError("out_of_range", "year out of range")
        return value

    @field_validator("oa_status", "types")
    @classmethod
    def _no_duplicates(cls, value: list[str] | None) -> list[str] | None:
        return _unique_sorted(value)

    @field_validator("languages")
    @classmethod
    def _known_languages(cls, value: list[str] | None) -> list[str] | None:
        if not value:
            return None
        keys = [code.strip().lower() for code in value]
        if any(not key for key in keys):
            raise PydanticCustomError("unknown_language", "unknown language code")
        if len(set(keys)) != len(keys):
            raise PydanticCustomError("duplicate", "a value is repeated")
        try:
            codes: list[str] = normalize_languages(keys)
        except CoreConfigurationError:
            # The core's message quotes the value; only the kind is kept.
            raise PydanticCustomError("unknown_language", "unknown language code") from None
        return codes

    @model_validator(mode="after")
    def _ordered_years(self) -> SearchFilters:
        if (
            self.from_year is not None
            and self.to_year is not None
            and self.from_year > self.to_year
        ):
            raise PydanticCustomError("from_after_to", "from_year is after to_year")
        return self

    def is_empty(self) -> bool:
        """Return whether no filter is set."""
        return all(getattr(self, name) is None for name in type(self).model_fields)


class EffectiveSearch(BaseModel):
    """Exactly what is sent to OpenAlex."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: The ``search`` value after hygiene.
    query: str
    #: The ``per-page`` value.
    limit: int
    #: The filters in effect, ``None`` when none is set.
    filters: SearchFilters | None
    #: The ``filter`` value, built and sorted by the core's ``OpenAlexQuery``.
    filter: str
    #: The query parameters in the order sent.
    params: tuple[tuple[str, str], ...]
    #: How results are ordered (no ``sort`` is sent).
    ordering: str
    #: The core's own record of the query (``OpenAlexQuery.to_dict()``).
    core_query: dict[str, Any]


class SearchRequest(BaseModel):
    """A validated search, ready for :meth:`OpenAlexClient.search`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Query, limit and filters as given, JSON-safe, lone surrogates replaced.
    supplied: dict[str, Any]
    effective: EffectiveSearch

    def to_record(self) -> dict[str, Any]:
        """Return ``{"supplied": ..., "effective": ...}``, JSON-safe."""
        effective = self.effective
        return {
            "supplied": self.supplied,
            "effective": {
                "query": effective.query,
                "limit": effective.limit,
                "filters": (
                    None if effective.filters is None else effective.filters.model_dump(mode="json")
                ),
                "filter": effective.filter,
                "params": [[name, value] for name, value in effective.params],
                "ordering": effective.ordering,
                "core_query": effective.core_query,
            },
        }


def _json_safe(value: object) -> Any:
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        return replace_lone_surrogates(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, SearchFilters):
        return value.model_dump(mode="json", exclude_unset=True)
    if isinstance(value, Mapping):
        return {
            (replace_lone_surrogates(key) if isinstance(key, str) else repr(key)): _json_safe(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    return f"<{type(value).__name__}>"


def supplied_record(
    query: object, limit: object = DEFAULT_LIMIT, filters: object = None
) -> dict[str, Any]:
    """Return the JSON-safe record of arguments as supplied, valid or not.

    Strings keep their text (lone surrogates replaced), non-finite floats
    become their ``repr``, other non-JSON values become ``"<typename>"``.
    """
    return {"query": _json_safe(query), "limit": _json_safe(limit), "filters": _json_safe(filters)}


_VALIDATION_REASONS: dict[str, InputReason] = {
    "int_type": InputReason.NOT_AN_INTEGER,
    "list_type": InputReason.NOT_A_LIST,
    "string_type": InputReason.NOT_A_STRING,
    "literal_error": InputReason.INVALID_VALUE,
    "out_of_range": InputReason.OUT_OF_RANGE,
    "duplicate": InputReason.DUPLICATE,
    "unknown_language": InputReason.UNKNOWN_LANGUAGE,
    "from_after_to": InputReason.FROM_AFTER_TO,
    "extra_forbidden": InputReason.UNKNOWN_FIELD,
    "invalid_key": InputReason.UNKNOWN_FIELD,
}


def _input_error(exc: ValidationError) -> InputError:
    error = exc.errors(include_input=False, include_url=False)[0]
    reason = _VALIDATION_REASONS.get(error["type"], InputReason.INVALID_VALUE)
    location = error["loc"]
    if reason is InputReason.FROM_AFTER_TO:
        return InputError("filters.to_year", reason)
    name = location[0] if location else None
    # An unknown key is the caller's text: the field is reported as "filters".
    if isinstance(name, str) and name in SearchFilters.model_fields:
        return InputError(f"filters.{name}", reason)
    return InputError("filters", reason)


def _filters(filters: SearchFilters | Mapping[str, Any] | None) -> SearchFilters | None:
    if filters is None:
        return None
    if isinstance(filters, SearchFilters):
        model = filters
    elif isinstance(filters, Mapping):
        try:
            model = SearchFilters.model_validate(dict(filters))
        except ValidationError as exc:
            # Not chained: pydantic's message repeats the input.
            raise _input_error(exc) from None
    else:
        raise InputError("filters", InputReason.NOT_AN_OBJECT)
    return None if model.is_empty() else model


def _core_query(query: str, filters: SearchFilters | None) -> OpenAlexQuery:
    if filters is None:
        return OpenAlexQuery(search=query)
    return OpenAlexQuery(
        search=query,
        from_publication_year=filters.from_year,
        to_publication_year=filters.to_year,
        oa_status="|".join(filters.oa_status) if filters.oa_status else None,
        languages=list(filters.languages or []),
        extra_filters=[f"type:{'|'.join(filters.types)}"] if filters.types else [],
    )


def prepare_search(
    query: object,
    limit: object = DEFAULT_LIMIT,
    filters: SearchFilters | Mapping[str, Any] | None = None,
) -> SearchRequest:
    """Validate a search and apply query hygiene. No I/O.

    Args:
        query: A string of 1 to 1000 characters after ``strip()``.
        limit: An ``int`` (not a ``bool``) from 1 to 10.
        filters: A :class:`SearchFilters`, a mapping of its fields, or ``None``.

    Returns:
        The frozen request, recording the supplied arguments and the effective request.

    Raises:
        InputError: An argument was rejected; ``field`` and ``reason`` say
            which and why, and the message never repeats the input.
    """
    if not isinstance(query, str):
        raise InputError("query", InputReason.NOT_A_STRING)
    stripped = query.strip()
    if not stripped:
        raise InputError("query", InputReason.EMPTY)
    if len(stripped) > MAX_QUERY_LENGTH:
        raise InputError("query", InputReason.TOO_LONG)
    effective_query = sanitize_query(stripped)
    if not effective_query:
        raise InputError("query", InputReason.EMPTY_AFTER_HYGIENE)
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InputError("limit", InputReason.NOT_AN_INTEGER)
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError("limit", InputReason.OUT_OF_RANGE)
    effective_filters = _filters(filters)
    core_query = _core_query(effective_query, effective_filters)
    filter_string: str = core_query.filter_string()
    params = (
        ("search", effective_query),
        ("filter", filter_string),
        ("per-page", str(int(limit))),
        ("select", ",".join(WORK_SELECT_FIELDS)),
    )
    return SearchRequest(
        supplied=supplied_record(query, int(limit), filters),
        effective=EffectiveSearch(
            query=effective_query,
            limit=int(limit),
            filters=effective_filters,
            filter=filter_string,
            params=params,
            ordering=ORDERING,
            core_query=core_query.to_dict(),
        ),
    )
