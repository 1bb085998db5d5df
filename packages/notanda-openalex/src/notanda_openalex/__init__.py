"""A typed OpenAlex works-search client on the notanda core that records what the provider said.

One search is one GET to ``https://api.openalex.org/works`` for open-access
works with a DOI, under a total deadline and a body ceiling, returning the
normalized citation blocks and the provider observation to persist. See
``docs/openalex-client.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from ._checking import (
        DEFAULT_CHECK_CONCURRENCY,
        DEFAULT_CHECK_DEADLINE_S,
        MAX_CHECK_CONCURRENCY,
        MAX_DOIS_PER_REQUEST,
        MAX_TITLE_CANDIDATES,
        AttemptPurpose,
        CheckAttempt,
        CheckedReference,
        ReferenceCheck,
        UncheckedReason,
        WithheldReason,
    )
    from ._citations import (
        MAX_CITATION_BYTES,
        CitationError,
        CitationReason,
        Citations,
        CitationSource,
        citation_source,
        read_citations,
    )
    from ._client import BODY_CEILING_BYTES, DEFAULT_USER_AGENT, ENDPOINT, OpenAlexClient
    from ._clock import Clock, SystemClock
    from ._config import load_core_config
    from ._errors import (
        ConfigProblem,
        ConfigurationDetail,
        ConfigurationError,
        ErrorCode,
        InputReason,
        OpenAlexError,
        ProviderReason,
        ReferenceInputError,
        SearchInputError,
    )
    from ._matching import ReferenceField
    from ._observation import Capture, ProviderAttempt, ProviderObservation
    from ._query import (
        ORDERING,
        EffectiveSearch,
        SearchFilters,
        SearchRequest,
        prepare_search,
        supplied_record,
    )
    from ._references import (
        ARXIV_DOI_PREFIX,
        MACRO_EXPANSION_FACTOR,
        MAX_MACRO_BYTES,
        ParsedReferences,
        Reference,
        ReferenceAuthor,
        ReferenceFormat,
        UnparsedReason,
        parse_references,
        read_references,
    )
    from ._result import SearchFailure, SearchResult
    from ._secrets import SECRET_NAMES
    from ._vocabulary import (
        DEFAULT_LIMIT,
        MAX_LIMIT,
        MAX_QUERY_LENGTH,
        MAX_REFERENCES,
        MAX_REFERENCES_BYTES,
        MAX_YEAR,
        MIN_YEAR,
        OA_STATUSES,
        WORK_TYPES,
        Verdict,
    )
    from ._works import AUTHOR_CAP, WORK_SELECT_FIELDS, Author, Work

# Names are imported on first use, so that a caller that only needs the
# configuration loader or a constant does not pay for httpx and pydantic
# models (the MCP server checks its configuration before it starts serving,
# and publishes its tool schemas from ``._vocabulary``, which needs neither).
_EXPORTS = {
    "ARXIV_DOI_PREFIX": "._references",
    "MACRO_EXPANSION_FACTOR": "._references",
    "MAX_MACRO_BYTES": "._references",
    "AUTHOR_CAP": "._works",
    "AttemptPurpose": "._checking",
    "Author": "._works",
    "BODY_CEILING_BYTES": "._client",
    "Capture": "._observation",
    "CheckAttempt": "._checking",
    "CheckedReference": "._checking",
    "Clock": "._clock",
    "ConfigProblem": "._errors",
    "ConfigurationDetail": "._errors",
    "ConfigurationError": "._errors",
    "DEFAULT_CHECK_CONCURRENCY": "._checking",
    "DEFAULT_CHECK_DEADLINE_S": "._checking",
    "DEFAULT_LIMIT": "._vocabulary",
    "DEFAULT_USER_AGENT": "._client",
    "ENDPOINT": "._client",
    "EffectiveSearch": "._query",
    "ErrorCode": "._errors",
    "InputReason": "._errors",
    "MAX_CHECK_CONCURRENCY": "._checking",
    "MAX_DOIS_PER_REQUEST": "._checking",
    "MAX_LIMIT": "._vocabulary",
    "MAX_QUERY_LENGTH": "._vocabulary",
    "MAX_REFERENCES": "._vocabulary",
    "MAX_REFERENCES_BYTES": "._vocabulary",
    "MAX_TITLE_CANDIDATES": "._checking",
    "MAX_YEAR": "._vocabulary",
    "MIN_YEAR": "._vocabulary",
    "OA_STATUSES": "._vocabulary",
    "ORDERING": "._query",
    "OpenAlexClient": "._client",
    "OpenAlexError": "._errors",
    "ParsedReferences": "._references",
    "ProviderAttempt": "._observation",
    "ProviderObservation": "._observation",
    "ProviderReason": "._errors",
    "Reference": "._references",
    "ReferenceAuthor": "._references",
    "ReferenceCheck": "._checking",
    "ReferenceField": "._matching",
    "ReferenceFormat": "._references",
    "ReferenceInputError": "._errors",
    "SECRET_NAMES": "._secrets",
    "SearchFailure": "._result",
    "SearchFilters": "._query",
    "SearchInputError": "._errors",
    "SearchRequest": "._query",
    "SearchResult": "._result",
    "SystemClock": "._clock",
    "UncheckedReason": "._checking",
    "UnparsedReason": "._references",
    "Verdict": "._vocabulary",
    "WORK_SELECT_FIELDS": "._works",
    "WORK_TYPES": "._vocabulary",
    "WithheldReason": "._checking",
    "Work": "._works",
    "load_core_config": "._config",
    "parse_references": "._references",
    "read_references": "._references",
    "read_citations": "._citations",
    "citation_source": "._citations",
    "MAX_CITATION_BYTES": "._citations",
    "CitationError": "._citations",
    "CitationReason": "._citations",
    "CitationSource": "._citations",
    "Citations": "._citations",
    "prepare_search": "._query",
    "supplied_record": "._query",
}

__all__ = [
    "ARXIV_DOI_PREFIX",
    "AUTHOR_CAP",
    "BODY_CEILING_BYTES",
    "DEFAULT_CHECK_CONCURRENCY",
    "DEFAULT_CHECK_DEADLINE_S",
    "DEFAULT_LIMIT",
    "DEFAULT_USER_AGENT",
    "ENDPOINT",
    "MACRO_EXPANSION_FACTOR",
    "MAX_CHECK_CONCURRENCY",
    "MAX_CITATION_BYTES",
    "MAX_DOIS_PER_REQUEST",
    "MAX_LIMIT",
    "MAX_MACRO_BYTES",
    "MAX_QUERY_LENGTH",
    "MAX_REFERENCES",
    "MAX_REFERENCES_BYTES",
    "MAX_TITLE_CANDIDATES",
    "MAX_YEAR",
    "MIN_YEAR",
    "OA_STATUSES",
    "ORDERING",
    "SECRET_NAMES",
    "WORK_SELECT_FIELDS",
    "WORK_TYPES",
    "AttemptPurpose",
    "Author",
    "Capture",
    "CheckAttempt",
    "CheckedReference",
    "CitationError",
    "CitationReason",
    "CitationSource",
    "Citations",
    "Clock",
    "ConfigProblem",
    "ConfigurationDetail",
    "ConfigurationError",
    "EffectiveSearch",
    "ErrorCode",
    "InputReason",
    "OpenAlexClient",
    "OpenAlexError",
    "ParsedReferences",
    "ProviderAttempt",
    "ProviderObservation",
    "ProviderReason",
    "Reference",
    "ReferenceAuthor",
    "ReferenceCheck",
    "ReferenceField",
    "ReferenceFormat",
    "ReferenceInputError",
    "SearchFailure",
    "SearchFilters",
    "SearchInputError",
    "SearchRequest",
    "SearchResult",
    "SystemClock",
    "UncheckedReason",
    "UnparsedReason",
    "Verdict",
    "WithheldReason",
    "Work",
    "__version__",
    "citation_source",
    "load_core_config",
    "parse_references",
    "prepare_search",
    "read_citations",
    "read_references",
    "supplied_record",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'notanda_openalex' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
