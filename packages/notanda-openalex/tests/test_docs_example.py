"""The example in docs/openalex-client.md is this file, and it runs."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import httpx
import pytest
from checkout import absent
from conftest import REPO_ROOT, FakeClock, json_response
from notanda_openalex import OpenAlexClient

EXAMPLE = Path(__file__).parent / "examples" / "search_example.py"
DOC = REPO_ROOT / "docs" / "openalex-client.md"

PAGE = {
    "meta": {"count": 4210},
    "results": [
        {
            "id": "https://openalex.org/W3046275966",
            "doi": "https://doi.org/10.1016/s0140-6736(20)30367-6",
            "title": "Dementia prevention, intervention, and care",
            "publication_year": 2020,
            "authorships": [
                {"author": {"display_name": name}}
                for name in ("Gill Livingston", "Jonathan Huntley", "Andrew Sommerlad", "D. Ames")
            ],
            "primary_location": {"source": {"display_name": "The Lancet"}},
            "is_retracted": True,
        },
        {"id": "https://openalex.org/W2", "title": "No DOI \u202ehere", "publication_year": 2019},
    ],
}


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("search_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return json_response(PAGE)

    client = OpenAlexClient(api_key="k", transport=httpx.MockTransport(handler), clock=FakeClock())
    assert load_example().main(client) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "searching for: Does exercise improve sleep quality"
    assert lines[1].startswith("provider record: ")
    assert lines[2] == "4210 matching works; showing 2"
    assert lines[3] == (
        "- Gill Livingston, Jonathan Huntley, Andrew Sommerlad and others (2020). Dementia "
        "prevention, intervention, and care. The Lancet. "
        "https://doi.org/10.1016/s0140-6736(20)30367-6 [RETRACTED]"
    )
    assert lines[4] == "- [no authors listed] (2019). No DOI here."
    assert seen[0].url.params["filter"] == (
        "from_publication_date:2015-01-01,has_doi:true,is_oa:true,"
        "open_access.oa_status:diamond|gold|green"
    )


def test_example_reports_failures(capsys: pytest.CaptureFixture[str]) -> None:
    client = OpenAlexClient(api_key=None)
    assert load_example().main(client) == 1
    out = capsys.readouterr().out
    expected = {
        "code": "configuration_error",
        "detail": "missing_api_key",
        "http_status": None,
        "reason": None,
        "retry_after_s": None,
    }
    assert f"failed: {json.dumps(expected, sort_keys=True)}" in out


def test_example_is_in_the_doc_verbatim() -> None:
    if not DOC.is_file():
        absent(f"{DOC} not present (not a source checkout)")
    assert EXAMPLE.read_text(encoding="utf-8") in DOC.read_text(encoding="utf-8")


README = REPO_ROOT / "README.md"


def test_readme_library_snippet_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's library example runs as written (with a mock provider behind it)."""
    if not README.is_file():
        absent(f"{README} not present (not a source checkout)")
    text = README.read_text(encoding="utf-8")
    section = text.split("## Using the OpenAlex client as a library", 1)[1]
    snippet = section.split("```python\n", 1)[1].split("```", 1)[0]
    client = OpenAlexClient(
        api_key="k", transport=httpx.MockTransport(lambda r: json_response(PAGE)), clock=FakeClock()
    )
    monkeypatch.setattr(OpenAlexClient, "from_core_config", classmethod(lambda cls: client))
    exec(compile(snippet, str(README), "exec"), {})  # noqa: S102 - the snippet is ours, from the README
    assert capsys.readouterr().out.splitlines() == [
        "2020 Dementia prevention, intervention, and care 10.1016/s0140-6736(20)30367-6",
        "2019 No DOI here None",
    ]


REFERENCES_EXAMPLE = Path(__file__).parent / "examples" / "references_example.py"


def test_references_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("references_example", REFERENCES_EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main() == 0
    assert capsys.readouterr().out.splitlines() == [
        "3 references read as bibtex",
        "[0] okafor2021: Okafor, Chidi; Müller, Jörg et al. (2021) "
        "Sleep Spindles in Élite Athletes",
        "    look up: 10.1038/s41586-021-00001-x",
        "[1] ferreira2023: Ferreira, Ana (2023) A Survey of Sparse Attention",
        "    look up: 10.48550/arxiv.2303.01234",
        "[2] broken: unparsed (bibtex_syntax)",
    ]
    assert module.main("   ") == 2
    assert capsys.readouterr().out == "refused text: empty (limit None)\n"


def test_references_example_is_in_the_doc_verbatim() -> None:
    if not DOC.is_file():
        absent(f"{DOC} not present (not a source checkout)")
    assert REFERENCES_EXAMPLE.read_text(encoding="utf-8") in DOC.read_text(encoding="utf-8")


def test_errors_md_names_every_unparsed_reason() -> None:
    """The error catalogue lists the codes of the library's reference reader."""
    from notanda_openalex import UnparsedReason

    errors = REPO_ROOT / "docs" / "errors.md"
    if not errors.is_file():
        absent(f"{errors} not present (not a source checkout)")
    text = errors.read_text(encoding="utf-8")
    section = text.split("## Library: reading references", 1)[1].split("\n## ", 1)[0]
    listed = section.split("`unparsed_reason` is one of", 1)[1].split(";", 1)[0]
    assert re.findall(r"`([a-z_]+)`", listed) == [reason.value for reason in UnparsedReason]


def test_the_library_guide_tables_every_unparsed_reason() -> None:
    from notanda_openalex import UnparsedReason

    if not DOC.is_file():
        absent(f"{DOC} not present (not a source checkout)")
    section = DOC.read_text(encoding="utf-8").split("### `UnparsedReason`", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = [line.split("|")[1].strip().strip("`") for line in section.splitlines()[4:]]
    assert [row for row in rows if row] == [reason.value for reason in UnparsedReason]
