"""The public surface: exported names, stable codes, dependency direction."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import notanda_openalex
from notanda_openalex import (
    ENDPOINT,
    Capture,
    ConfigProblem,
    ConfigurationDetail,
    ErrorCode,
    InputReason,
    ProviderReason,
    ReferenceFormat,
    UnparsedReason,
)
from notanda_openalex._version import __version__

EXPECTED = [
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


def test_all_is_the_guarded_list() -> None:
    assert notanda_openalex.__all__ == EXPECTED
    for name in EXPECTED:
        assert hasattr(notanda_openalex, name), name


def test_loading_the_configuration_does_not_import_the_http_stack() -> None:
    """The server checks its configuration at start-up; that must stay cheap."""
    code = (
        "import sys, json\n"
        "from notanda_openalex import load_core_config\n"
        "load_core_config({})\n"
        "heavy = ('httpx', 'httpcore', 'pydantic')\n"
        "print(json.dumps(sorted(m for m in heavy if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_version_and_marker() -> None:
    assert notanda_openalex.__version__ == __version__
    assert resources.files("notanda_openalex").joinpath("py.typed").is_file()
    assert (
        f"notanda-openalex/{__version__} (+https://github.com/notanda/notanda)"
    ) == notanda_openalex.DEFAULT_USER_AGENT


def test_stable_codes() -> None:
    assert ENDPOINT == "https://api.openalex.org/works"
    assert [code.value for code in ErrorCode] == [
        "configuration_error",
        "invalid_arguments",
        "provider_error",
    ]
    assert [reason.value for reason in ProviderReason] == [
        "http_error",
        "rate_limited",
        "budget_exhausted",
        "timeout",
        "transport_error",
        "too_large",
        "too_deep",
        "malformed_json",
        "undecodable",
        "unexpected_shape",
        "redirect",
    ]
    assert [detail.value for detail in ConfigurationDetail] == [
        "missing_api_key",
        "invalid_api_key",
        "endpoint_not_allowed",
    ]
    assert [reason.value for reason in InputReason] == [
        "not_a_string",
        "empty",
        "too_long",
        "empty_after_hygiene",
        "not_an_integer",
        "out_of_range",
        "not_an_object",
        "unknown_field",
        "not_a_list",
        "invalid_value",
        "duplicate",
        "unknown_language",
        "from_after_to",
        "too_many",
    ]
    assert [problem.value for problem in ConfigProblem] == [
        "file_not_found",
        "file_not_readable",
        "invalid_json",
        "not_an_object",
        "unknown_key",
        "section_not_an_object",
        "invalid_value",
        "invalid",
    ]
    assert [fmt.value for fmt in ReferenceFormat] == ["auto", "bibtex", "ris", "csl-json", "text"]
    assert [reason.value for reason in UnparsedReason] == [
        "bibtex_syntax",
        "ris_outside_record",
        "ris_syntax",
        "json_syntax",
        "json_too_deep",
        "csl_not_a_list",
        "csl_not_an_object",
        "no_title_or_identifier",
        "no_reference_found",
        "macro_too_large",
        "crossref_cycle",
    ]
    assert [capture.value for capture in Capture] == [
        "not_attempted",
        "no_response",
        "body_not_read",
        "body_incomplete_not_retained",
        "non_json_body_not_retained",
        "parsed_json_with_secret_redaction_not_wire_bytes",
        "json_body_withheld_secret_not_removable",
    ]


def test_imports_nothing_of_mcp_or_the_evidence_package() -> None:
    code = (
        "import json, sys, notanda_openalex;"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mcp', 'notanda_evidence', 'notanda_mcp'))))"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(output) == []


def test_every_public_exception_has_the_one_base() -> None:
    exceptions = [
        obj
        for name in notanda_openalex.__all__
        if isinstance(obj := getattr(notanda_openalex, name), type)
        and issubclass(obj, BaseException)
    ]
    assert {e.__name__ for e in exceptions} >= {"ConfigurationError", "SearchInputError"}
    assert all(issubclass(e, notanda_openalex.OpenAlexError) for e in exceptions)
