"""The public surface: exported names, stable codes, dependency direction."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import notanda_openalex
import public_names
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


def test_type_checkers_see_the_one_list_of_names() -> None:
    """``__all__`` is ``_EXPORTS``; the TYPE_CHECKING re-exports name the same names."""
    assert public_names.problems(notanda_openalex) == []
    public = {name for name in dir(notanda_openalex) if not name.startswith("_")}
    assert public == set(notanda_openalex.__all__) - {"__version__"}


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
