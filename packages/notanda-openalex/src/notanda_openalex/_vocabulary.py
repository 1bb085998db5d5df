"""The search and check vocabularies: filter values, limits, defaults, years, formats, verdicts.

Each is defined here once. This module imports only the standard library, so
that the MCP server can publish its tool schemas from these names without
loading pydantic or httpx (``tools/list`` and cold start stay cheap); the
validating models in :mod:`._query`, :mod:`._works` and :mod:`._matching`
derive their types from the same names.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args

__all__ = [
    "CHECKED_REFERENCE_KEYS",
    "DEFAULT_CHECK_CONCURRENCY",
    "DEFAULT_CHECK_DEADLINE_S",
    "DEFAULT_LIMIT",
    "DEFAULT_SEARCH_DEADLINE_S",
    "FIELD_YEARS",
    "IDENTITY_FIELDS",
    "MAX_CHECK_CONCURRENCY",
    "MAX_LIMIT",
    "MAX_QUERY_LENGTH",
    "MAX_REFERENCES",
    "MAX_REFERENCES_BYTES",
    "MAX_YEAR",
    "MIN_YEAR",
    "OA_STATUSES",
    "WORK_TYPES",
    "TEXT_YEARS",
    "OaStatus",
    "ReferenceFormat",
    "Verdict",
    "WorkType",
]

MAX_QUERY_LENGTH = 1000
DEFAULT_LIMIT = 5
MAX_LIMIT = 10
#: Publication-year filter bounds, inclusive: what a search may ask for.
MIN_YEAR = 1000
MAX_YEAR = 2100
#: The years a bibliography reader takes from a year given as a JSON number
#: (CSL-JSON ``issued`` and its ``date-parts``): a four-digit year. (A year
#: given as text is its first four-digit number, whatever it is.)
FIELD_YEARS = range(1000, 3000)
#: The years a reader takes from running text (a plain-text citation): a
#: four-digit number there is a year only in this range, so that a volume,
#: page or report number is not read as one.
TEXT_YEARS = range(1500, 2100)

#: The whole search's deadline, by default, in seconds: the client's and the server's.
DEFAULT_SEARCH_DEADLINE_S = 20.0
#: Requests one check keeps in flight at once, by default.
DEFAULT_CHECK_CONCURRENCY = 4
#: The most requests a check may keep in flight.
MAX_CHECK_CONCURRENCY = 16
#: The total deadline of one check, by default, in seconds: first request to last byte.
DEFAULT_CHECK_DEADLINE_S = 60.0

#: Most references one check reads.
MAX_REFERENCES = 100
#: Largest bibliography text, in UTF-8 bytes.
MAX_REFERENCES_BYTES = 262_144


class ReferenceFormat(StrEnum):
    """The ``format`` argument of ``parse_references``: ``auto`` or one of the readers."""

    AUTO = "auto"
    BIBTEX = "bibtex"
    RIS = "ris"
    CSL_JSON = "csl-json"
    TEXT = "text"


OaStatus = Literal["diamond", "gold", "green", "hybrid", "bronze"]
WorkType = Literal[
    "article",
    "book",
    "book-chapter",
    "dataset",
    "dissertation",
    "editorial",
    "erratum",
    "grant",
    "letter",
    "libguides",
    "other",
    "paratext",
    "peer-review",
    "preprint",
    "reference-entry",
    "report",
    "retraction",
    "review",
    "standard",
    "supplementary-materials",
]

#: Allowed ``oa_status`` filter values (closed access is excluded by ``is_oa:true``).
OA_STATUSES: tuple[str, ...] = get_args(OaStatus)
#: Allowed ``types`` filter values: OpenAlex work types.
WORK_TYPES: tuple[str, ...] = get_args(WorkType)

#: The fields a work's answer form always holds, ``null`` or not: what names the work.
#: Every other field is left out when it is ``null`` (:meth:`Work.to_record`).
IDENTITY_FIELDS: tuple[str, ...] = ("openalex_id", "doi", "title", "authors", "publication_year")

#: The keys of one checked reference in a check's answer, in their order; each
#: is always present (``CheckedReference.to_record``, the tool's output schema).
CHECKED_REFERENCE_KEYS: tuple[str, ...] = (
    "index",
    "key",
    "verdict",
    "differs",
    "retracted",
    "work",
    "observation",
    "error",
    "identifier_withheld",
)


class Verdict(StrEnum):
    """What a check concluded about one reference, in the order of a check's ``summary``."""

    #: One work matches the identifier (or the title) and nothing differs.
    VERIFIED = "verified"
    #: A work matches the DOI or the title, but named fields disagree.
    METADATA_MISMATCH = "metadata_mismatch"
    #: No OpenAlex work matches, as searched (not: the work does not exist).
    NOT_FOUND = "not_found"
    #: Several candidates, none decisive.
    AMBIGUOUS = "ambiguous"
    #: The provider failed for this reference, or the deadline passed.
    UNCHECKED = "unchecked"
    #: Not readable as a reference.
    UNPARSED = "unparsed"
