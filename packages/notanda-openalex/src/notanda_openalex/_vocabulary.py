"""The search and check vocabularies: filter values, limits, identity fields, verdicts.

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
    "DEFAULT_LIMIT",
    "IDENTITY_FIELDS",
    "MAX_LIMIT",
    "MAX_QUERY_LENGTH",
    "MAX_REFERENCES",
    "MAX_REFERENCES_BYTES",
    "MAX_YEAR",
    "MIN_YEAR",
    "OA_STATUSES",
    "WORK_TYPES",
    "OaStatus",
    "Verdict",
    "WorkType",
]

MAX_QUERY_LENGTH = 1000
DEFAULT_LIMIT = 5
MAX_LIMIT = 10
#: Publication-year filter bounds, inclusive.
MIN_YEAR = 1000
MAX_YEAR = 2100

#: Most references one check reads.
MAX_REFERENCES = 100
#: Largest bibliography text, in UTF-8 bytes.
MAX_REFERENCES_BYTES = 262_144

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
