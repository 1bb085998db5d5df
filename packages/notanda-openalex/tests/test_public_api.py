"""The public surface: exported names, stable codes, dependency direction."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import notanda_openalex
import public_names
import pytest
from checkout import absent
from conftest import REPO_ROOT
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
    assert {e.__name__ for e in exceptions} >= {"ConfigurationError", "InputError"}
    assert all(issubclass(e, notanda_openalex.OpenAlexError) for e in exceptions)


#: The names the check feature outgrew (issue 23), each kept one release as an alias.
DEPRECATED_ALIASES = {
    "SearchResult": "ProviderResult",
    "SearchFailure": "ProviderFailure",
    "SearchInputError": "InputError",
}


def test_each_deprecated_name_is_its_new_name_and_stays_exported() -> None:
    for old, new in DEPRECATED_ALIASES.items():
        assert getattr(notanda_openalex, old) is getattr(notanda_openalex, new), old
        assert old in notanda_openalex.__all__
        assert new in notanda_openalex.__all__
    # An argument error of a check is still caught by the old name.
    with pytest.raises(notanda_openalex.SearchInputError):
        notanda_openalex.parse_references("")


def test_the_deprecated_names_are_listed_as_such_in_the_library_guide() -> None:
    path = REPO_ROOT / "docs" / "openalex-client.md"
    if not path.is_file():
        absent(f"{path} not present (not a source checkout)")
    guide = path.read_text(encoding="utf-8")
    section = guide.split("## Deprecated names", 1)[1].split("\n## ", 1)[0]
    for old, new in {
        **DEPRECATED_ALIASES,
        "CheckedReference.observation": "CheckedReference.attempt_index",
    }.items():
        assert f"| `{old}` | `{new}` |" in section, old


def test_a_checked_reference_keeps_its_old_attribute_and_a_string_purpose() -> None:
    from notanda_openalex import (
        AttemptPurpose,
        Capture,
        CheckAttempt,
        CheckedReference,
        ProviderObservation,
        Verdict,
    )

    entry = CheckedReference(
        index=0,
        key=None,
        verdict=Verdict.UNCHECKED,
        differs=(),
        retracted=None,
        work=None,
        attempt_index=None,
        error=ProviderReason.TIMEOUT,
    )
    assert entry.observation is entry.attempt_index is None
    assert entry.to_record()["observation"] is None
    assert entry.to_record()["error"] == "timeout"
    assert type(entry.to_record()["error"]) is str
    observation = ProviderObservation(capture=Capture.NOT_ATTEMPTED, attempt=None)
    attempt = CheckAttempt("doi_batch", observation)  # type: ignore[arg-type]
    assert attempt.purpose is AttemptPurpose.DOI_BATCH
    with pytest.raises(ValueError, match="is not a valid AttemptPurpose"):
        CheckAttempt("search", observation)  # type: ignore[arg-type]
