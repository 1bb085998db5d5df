"""The provider-neutral citation block built from one OpenAlex work record.

This follows the core's ``OpenAlexAdapter.normalize_work`` (same sources for
DOI, title, venue and open-access fields, and the core's
:func:`harvester.identity.normalize_doi`) with the corrections documented in
``docs/openalex-client.md``: every authorship is kept (the core merges
different people who share a name), the author list is capped with an honest
total, a field of the wrong type becomes ``None`` instead of being coerced,
the ID must really be an OpenAlex work ID, and returned text is cleaned of
control and format characters.
"""

from __future__ import annotations

import re
from typing import Any

from harvester.identity import normalize_doi
from pydantic import BaseModel, ConfigDict

from ._secrets import SecretScrubber
from ._text import clean_display_text
from ._vocabulary import IDENTITY_FIELDS

__all__ = [
    "AUTHOR_CAP",
    "WORK_SELECT_FIELDS",
    "Author",
    "Work",
    "normalize_work",
]

#: At most this many authors are returned per work; ``authors_total`` says how many there were.
AUTHOR_CAP = 20

#: The root fields requested with ``select``: exactly those the citation block reads.
WORK_SELECT_FIELDS: tuple[str, ...] = (
    "id",
    "doi",
    "title",
    "publication_year",
    "publication_date",
    "authorships",
    "is_authors_truncated",
    "primary_location",
    "biblio",
    "type",
    "language",
    "open_access",
    "is_retracted",
    "cited_by_count",
)


_WORK_ID = re.compile(r"(?:https://openalex\.org/)?(W[0-9]+)")
_ORCID = re.compile(
    r"(?:https?://(?:www\.)?orcid\.org/)?([0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X])"
)


class Author(BaseModel):
    """One authorship, in the provider's order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: ``author.display_name`` (falling back to ``raw_author_name``), cleaned; ``None`` if absent.
    name: str | None
    #: The bare ORCID iD (``0000-0002-1825-0097``) when the provider gives a well-formed one.
    orcid: str | None

    def to_record(self) -> dict[str, Any]:
        """Return the author's answer form: ``name`` always, ``orcid`` only when known."""
        if self.orcid is None:
            return {"name": self.name}
        return {"name": self.name, "orcid": self.orcid}


class Work(BaseModel):
    """What a person needs to cite and check one work."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Short OpenAlex ID such as ``W2741809807``.
    openalex_id: str
    #: Canonical lower-case DOI without a resolver prefix (``10.7717/peerj.4375``).
    doi: str | None
    title: str | None
    publication_year: int | None
    publication_date: str | None
    #: At most :data:`AUTHOR_CAP` authors.
    authors: list[Author]
    #: Number of authorships in the payload (``None`` if ``authorships`` is not a list).
    authors_total: int | None
    #: OpenAlex ``is_authors_truncated``: the provider itself cut the list (at 100).
    authors_truncated_by_provider: bool | None
    #: ``primary_location.source.display_name``.
    venue: str | None
    volume: str | None
    issue: str | None
    first_page: str | None
    last_page: str | None
    type: str | None
    language: str | None
    is_oa: bool | None
    oa_status: str | None
    oa_url: str | None
    is_retracted: bool | None
    cited_by_count: int | None

    def to_record(self) -> dict[str, Any]:
        """Return the work's answer form, the one every tool that returns works gives.

        The :data:`IDENTITY_FIELDS` are always present; every other field is
        left out when it is ``null``, and ORCID iDs are bare: the model reads
        this text, and the full observation stays in ``provider.json``.
        """
        record: dict[str, Any] = {
            "openalex_id": self.openalex_id,
            "doi": self.doi,
            "title": self.title,
            "authors": [author.to_record() for author in self.authors],
            "publication_year": self.publication_year,
        }
        for name in _OPTIONAL_FIELDS:
            value = getattr(self, name)
            if value is not None:
                record[name] = value
        return record


_OPTIONAL_FIELDS = tuple(name for name in Work.model_fields if name not in IDENTITY_FIELDS)


def _as_dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _strict_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    return None


def _strict_bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _work_id(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    match = _WORK_ID.fullmatch(value.strip())
    return match.group(1) if match else None


def _orcid(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    match = _ORCID.fullmatch(value.strip())
    return match.group(1) if match else None


class _Cleaner:
    """Clean provider text, then scrub it: cleaning can join a split secret."""

    def __init__(self, scrubber: SecretScrubber) -> None:
        self._scrubber = scrubber

    def text(self, value: object) -> str | None:
        cleaned = clean_display_text(value)
        if cleaned is None or not self._scrubber.has_secrets:
            return cleaned
        return self._scrubber.scrub_text(cleaned)

    def url(self, value: object) -> str | None:
        cleaned = clean_display_text(value)
        if cleaned is None:
            return None
        return self._scrubber.scrub_url(cleaned)

    def doi(self, value: object) -> str | None:
        doi: str | None = normalize_doi(clean_display_text(value))
        if doi is None or not self._scrubber.has_secrets:
            return doi
        return self._scrubber.scrub_text(doi)


def _authors(authorships: object, clean: _Cleaner) -> tuple[list[Author], int | None]:
    if not isinstance(authorships, list):
        return [], None
    authors: list[Author] = []
    for authorship in authorships[:AUTHOR_CAP]:
        entry = _as_dict(authorship)
        author = _as_dict(entry.get("author"))
        name = clean.text(author.get("display_name"))
        if name is None:
            name = clean.text(entry.get("raw_author_name"))
        authors.append(Author(name=name, orcid=_orcid(author.get("orcid"))))
    return authors, len(authorships)


def normalize_work(record: object, scrubber: SecretScrubber) -> Work | None:
    """Build the citation block for one entry of ``results``.

    Returns ``None`` (the caller counts it as skipped) when the entry is not an
    object or has no valid OpenAlex work ID. Any other field of the wrong type
    becomes ``None``; nothing is coerced or invented.
    """
    if not isinstance(record, dict):
        return None
    openalex_id = _work_id(record.get("id"))
    if openalex_id is None:
        return None
    clean = _Cleaner(scrubber)
    title_source = record.get("title")
    if title_source is None:
        title_source = record.get("display_name")
    authors, authors_total = _authors(record.get("authorships"), clean)
    source = _as_dict(_as_dict(record.get("primary_location")).get("source"))
    biblio = _as_dict(record.get("biblio"))
    open_access = _as_dict(record.get("open_access"))
    cited_by_count = _strict_int(record.get("cited_by_count"))
    return Work(
        openalex_id=openalex_id,
        doi=clean.doi(record.get("doi")),
        title=clean.text(title_source),
        publication_year=_strict_int(record.get("publication_year")),
        publication_date=clean.text(record.get("publication_date")),
        authors=authors,
        authors_total=authors_total,
        authors_truncated_by_provider=_strict_bool(record.get("is_authors_truncated")),
        venue=clean.text(source.get("display_name")),
        volume=clean.text(biblio.get("volume")),
        issue=clean.text(biblio.get("issue")),
        first_page=clean.text(biblio.get("first_page")),
        last_page=clean.text(biblio.get("last_page")),
        type=clean.text(record.get("type")),
        language=clean.text(record.get("language")),
        is_oa=_strict_bool(open_access.get("is_oa")),
        oa_status=clean.text(open_access.get("oa_status")),
        oa_url=clean.url(open_access.get("oa_url")),
        is_retracted=_strict_bool(record.get("is_retracted")),
        cited_by_count=cited_by_count if cited_by_count is None or cited_by_count >= 0 else None,
    )
