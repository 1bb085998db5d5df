"""A typed OpenAlex works-search client on the notanda core that records what the provider said.

One search is one GET to ``https://api.openalex.org/works`` for open-access
works with a DOI, under a total deadline and a body ceiling, returning the
normalized citation blocks and the provider observation to persist. See
``docs/openalex-client.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

# The public names: ``_EXPORTS`` below is the one list (``__all__`` is made
# from it). Type checkers cannot read it, so each name is also imported here
# as ``X as X`` (an explicit re-export); ``tests/test_public_api.py`` checks
# that the two agree. To add a name: one line here, one entry in ``_EXPORTS``.
if TYPE_CHECKING:
    from ._checking import MAX_DOIS_PER_REQUEST as MAX_DOIS_PER_REQUEST
    from ._checking import MAX_TITLE_CANDIDATES as MAX_TITLE_CANDIDATES
    from ._checking import AttemptPurpose as AttemptPurpose
    from ._checking import CheckAttempt as CheckAttempt
    from ._checking import CheckedReference as CheckedReference
    from ._checking import ReferenceCheck as ReferenceCheck
    from ._checking import ReferenceErrorCode as ReferenceErrorCode
    from ._checking import UncheckedReason as UncheckedReason
    from ._checking import WithheldReason as WithheldReason
    from ._citations import MAX_CITATION_BYTES as MAX_CITATION_BYTES
    from ._citations import CitationError as CitationError
    from ._citations import CitationReason as CitationReason
    from ._citations import Citations as Citations
    from ._citations import CitationSource as CitationSource
    from ._citations import citation_source as citation_source
    from ._citations import read_citations as read_citations
    from ._client import BODY_CEILING_BYTES as BODY_CEILING_BYTES
    from ._client import DEFAULT_USER_AGENT as DEFAULT_USER_AGENT
    from ._client import ENDPOINT as ENDPOINT
    from ._client import OpenAlexClient as OpenAlexClient
    from ._clock import Clock as Clock
    from ._clock import SystemClock as SystemClock
    from ._config import load_core_config as load_core_config
    from ._errors import ConfigProblem as ConfigProblem
    from ._errors import ConfigurationDetail as ConfigurationDetail
    from ._errors import ConfigurationError as ConfigurationError
    from ._errors import ErrorCode as ErrorCode
    from ._errors import InputError as InputError
    from ._errors import InputReason as InputReason
    from ._errors import OpenAlexError as OpenAlexError
    from ._errors import ProviderReason as ProviderReason
    from ._errors import ReferenceInputError as ReferenceInputError
    from ._errors import SearchInputError as SearchInputError
    from ._matching import ReferenceField as ReferenceField
    from ._observation import Capture as Capture
    from ._observation import ProviderAttempt as ProviderAttempt
    from ._observation import ProviderObservation as ProviderObservation
    from ._query import ORDERING as ORDERING
    from ._query import EffectiveSearch as EffectiveSearch
    from ._query import SearchFilters as SearchFilters
    from ._query import SearchRequest as SearchRequest
    from ._query import prepare_search as prepare_search
    from ._query import supplied_record as supplied_record
    from ._references import ARXIV_DOI_PREFIX as ARXIV_DOI_PREFIX
    from ._references import MACRO_EXPANSION_FACTOR as MACRO_EXPANSION_FACTOR
    from ._references import MAX_MACRO_BYTES as MAX_MACRO_BYTES
    from ._references import ParsedReferences as ParsedReferences
    from ._references import Reference as Reference
    from ._references import ReferenceAuthor as ReferenceAuthor
    from ._references import UnparsedReason as UnparsedReason
    from ._references import parse_references as parse_references
    from ._references import read_references as read_references
    from ._result import ProviderFailure as ProviderFailure
    from ._result import ProviderResult as ProviderResult
    from ._result import SearchFailure as SearchFailure
    from ._result import SearchResult as SearchResult
    from ._secrets import SECRET_NAMES as SECRET_NAMES
    from ._vocabulary import DEFAULT_CHECK_CONCURRENCY as DEFAULT_CHECK_CONCURRENCY
    from ._vocabulary import DEFAULT_CHECK_DEADLINE_S as DEFAULT_CHECK_DEADLINE_S
    from ._vocabulary import DEFAULT_LIMIT as DEFAULT_LIMIT
    from ._vocabulary import DEFAULT_SEARCH_DEADLINE_S as DEFAULT_SEARCH_DEADLINE_S
    from ._vocabulary import MAX_CHECK_CONCURRENCY as MAX_CHECK_CONCURRENCY
    from ._vocabulary import MAX_LIMIT as MAX_LIMIT
    from ._vocabulary import MAX_QUERY_LENGTH as MAX_QUERY_LENGTH
    from ._vocabulary import MAX_REFERENCES as MAX_REFERENCES
    from ._vocabulary import MAX_REFERENCES_BYTES as MAX_REFERENCES_BYTES
    from ._vocabulary import MAX_YEAR as MAX_YEAR
    from ._vocabulary import MIN_YEAR as MIN_YEAR
    from ._vocabulary import OA_STATUSES as OA_STATUSES
    from ._vocabulary import WORK_TYPES as WORK_TYPES
    from ._vocabulary import ReferenceFormat as ReferenceFormat
    from ._vocabulary import Verdict as Verdict
    from ._works import AUTHOR_CAP as AUTHOR_CAP
    from ._works import WORK_SELECT_FIELDS as WORK_SELECT_FIELDS
    from ._works import Author as Author
    from ._works import Work as Work

# Names are imported on first use, so that a caller that only needs the
# configuration loader or a constant does not pay for httpx and pydantic
# models (the MCP server checks its configuration before it starts serving,
# and publishes its tool schemas from ``._vocabulary``, which needs neither).
_EXPORTS = {
    "ARXIV_DOI_PREFIX": "._references",
    "AUTHOR_CAP": "._works",
    "BODY_CEILING_BYTES": "._client",
    "DEFAULT_CHECK_CONCURRENCY": "._vocabulary",
    "DEFAULT_CHECK_DEADLINE_S": "._vocabulary",
    "DEFAULT_LIMIT": "._vocabulary",
    "DEFAULT_SEARCH_DEADLINE_S": "._vocabulary",
    "DEFAULT_USER_AGENT": "._client",
    "ENDPOINT": "._client",
    "MACRO_EXPANSION_FACTOR": "._references",
    "MAX_CHECK_CONCURRENCY": "._vocabulary",
    "MAX_CITATION_BYTES": "._citations",
    "MAX_DOIS_PER_REQUEST": "._checking",
    "MAX_LIMIT": "._vocabulary",
    "MAX_MACRO_BYTES": "._references",
    "MAX_QUERY_LENGTH": "._vocabulary",
    "MAX_REFERENCES": "._vocabulary",
    "MAX_REFERENCES_BYTES": "._vocabulary",
    "MAX_TITLE_CANDIDATES": "._checking",
    "MAX_YEAR": "._vocabulary",
    "MIN_YEAR": "._vocabulary",
    "OA_STATUSES": "._vocabulary",
    "ORDERING": "._query",
    "SECRET_NAMES": "._secrets",
    "WORK_SELECT_FIELDS": "._works",
    "WORK_TYPES": "._vocabulary",
    "AttemptPurpose": "._checking",
    "Author": "._works",
    "Capture": "._observation",
    "CheckAttempt": "._checking",
    "CheckedReference": "._checking",
    "CitationError": "._citations",
    "CitationReason": "._citations",
    "CitationSource": "._citations",
    "Citations": "._citations",
    "Clock": "._clock",
    "ConfigProblem": "._errors",
    "ConfigurationDetail": "._errors",
    "ConfigurationError": "._errors",
    "EffectiveSearch": "._query",
    "ErrorCode": "._errors",
    "InputError": "._errors",
    "InputReason": "._errors",
    "OpenAlexClient": "._client",
    "OpenAlexError": "._errors",
    "ParsedReferences": "._references",
    "ProviderAttempt": "._observation",
    "ProviderFailure": "._result",
    "ProviderObservation": "._observation",
    "ProviderReason": "._errors",
    "ProviderResult": "._result",
    "Reference": "._references",
    "ReferenceAuthor": "._references",
    "ReferenceCheck": "._checking",
    "ReferenceErrorCode": "._checking",
    "ReferenceField": "._matching",
    "ReferenceFormat": "._vocabulary",
    "ReferenceInputError": "._errors",
    "SearchFilters": "._query",
    "SearchRequest": "._query",
    "SystemClock": "._clock",
    "UncheckedReason": "._checking",
    "UnparsedReason": "._references",
    "Verdict": "._vocabulary",
    "WithheldReason": "._checking",
    "Work": "._works",
    "__version__": "._version",
    "citation_source": "._citations",
    "load_core_config": "._config",
    "parse_references": "._references",
    "prepare_search": "._query",
    "read_citations": "._citations",
    "read_references": "._references",
    "supplied_record": "._query",
    # Deprecated aliases, each the very object of its new name: kept for one
    # release, then removed (docs/openalex-client.md, "Deprecated names").
    "SearchFailure": "._result",
    "SearchInputError": "._errors",
    "SearchResult": "._result",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'notanda_openalex' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
