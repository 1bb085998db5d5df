"""One version, guarded public names, shared vocabularies and encodings, cold start."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path
from typing import Any

import notanda_evidence
import notanda_mcp
import notanda_openalex
import public_names
import pytest
from conftest import KEY, NOTICE, clean_env
from fake_openalex import fixture_bytes, fixture_names
from notanda_evidence import ParsedJSON, canonical_bytes, canonical_pieces, parse_canonical
from notanda_evidence import verify_file as evidence_verify_file
from notanda_mcp import _schemas

VERSION = notanda_mcp.__version__


def test_the_three_versions_are_one() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?", VERSION)
    assert notanda_evidence.__version__ == VERSION
    assert notanda_openalex.__version__ == VERSION
    assert evidence_verify_file.VERIFIER_VERSION == VERSION
    for dist in ("notanda-mcp", "notanda-evidence", "notanda-openalex"):
        assert metadata.version(dist) == VERSION, dist


def test_the_installed_metadata_pins_the_siblings_exactly() -> None:
    requires = metadata.requires("notanda-mcp") or []
    pins = {
        name: spec
        for requirement in requires
        if (match := re.fullmatch(r"(notanda-\w+)\s*(.*)", requirement))
        for name, spec in [match.groups()]
    }
    assert pins == {
        "notanda-evidence": f"=={VERSION}",
        "notanda-openalex": f"=={VERSION}",
    }


def test_public_names_are_guarded() -> None:
    assert public_names.problems(notanda_mcp) == []
    assert notanda_mcp.NOTICE == NOTICE
    assert callable(notanda_mcp.build_server)
    with pytest.raises(AttributeError):
        _ = notanda_mcp.EvidenceService
    namespace: dict[str, Any] = {}
    exec("from notanda_mcp import *", namespace)  # noqa: S102 - the star import is the point
    assert sorted(k for k in namespace if not k.startswith("__")) == sorted(
        set(notanda_mcp.__all__) - {"__version__"}
    )


def _python_json(code: str, *args: str) -> Any:
    """What *code*, run in a fresh interpreter, prints as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


SCHEMAS_ONLY = textwrap.dedent(
    """
    import json, sys
    from notanda_mcp import _schemas

    heavy = ("pydantic", "pydantic_core", "httpx", "harvester", "notanda_openalex._query")
    print(json.dumps([_schemas.TOOLS["search_literature"]["name"],
                      sorted(m for m in heavy if m in sys.modules)]))
    """
)


def test_the_tool_schemas_load_their_vocabularies_without_pydantic_or_httpx() -> None:
    # The schemas import the search vocabularies from their one definition
    # instead of copying them; that import must stay as cheap as a copy.
    assert _python_json(SCHEMAS_ONLY) == ["search_literature", []]


def test_every_search_error_code_of_the_openalex_package_is_published() -> None:
    published = set(
        _schemas.TOOLS["search_literature"]["outputSchema"]["properties"]["error"]["enum"]
    )
    assert {code.value for code in notanda_openalex.ErrorCode} <= published


CANONICAL_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**63,
    1.5,
    -0.0,
    1e-7,
    "",
    "plain",
    "café ✓ 日本語 한국어 Кириллица",
    "emoji 😀 and \u2028 \u2029",
    "control \u0000 \u001f \u007f",
    'quote " backslash \\ slash /',
    [],
    {},
    [1, "two", None, [3.0]],
    {"b": 1, "a": 2, "é": 3, "Z": 4, "aa": {"y": [], "x": {}}},
    {"nested": [{"k": "v", "list": [True, False, None]}] * 3},
]


@pytest.mark.parametrize("value", CANONICAL_VALUES, ids=lambda v: repr(v)[:30])
def test_the_piecewise_encoding_is_the_one_shot_encoding(value: Any) -> None:
    assert b"".join(canonical_pieces(value)) == canonical_bytes(value)


@pytest.mark.parametrize("fixture", fixture_names("*.json"))
def test_a_real_openalex_body_is_stored_as_one_encoding(fixture: str) -> None:
    """The body the server hands the writer encodes in pieces to the one-shot bytes."""
    value = json.loads(fixture_bytes(fixture))
    data = b"".join(canonical_pieces({"observed_json": ParsedJSON(value)}))
    assert data == canonical_bytes({"observed_json": value})
    assert parse_canonical(data) == ({"observed_json": value}, None)


COLD_START = textwrap.dedent(
    """
    import json, sys, tempfile
    import anyio
    from mcp import Client

    WATCHED = (
        "httpx", "harvester.providers", "notanda_openalex._client", "jsonschema", "rapidfuzz"
    )

    def loaded():
        return sorted(m for m in WATCHED if m in sys.modules)

    import notanda_mcp
    after_import = loaded()
    config = {"HARVESTER_OPENALEX_API_KEY": sys.argv[1]}
    server = notanda_mcp.build_server(tempfile.mkdtemp(), config=config)
    after_build = loaded()

    async def session():
        async with Client(server.lowlevel, mode="legacy") as client:
            await client.session.list_tools()
            server._warming.join()  # the background warm-up the tool list started
            warmed = loaded()
            await client.session.call_tool("search_literature", {"query": "x"})
        return warmed

    after_warm_up = anyio.run(session)
    print(json.dumps([after_import, after_build, after_warm_up, loaded()]))
    """
)


def test_the_search_path_loads_in_the_background_once_the_tools_are_listed() -> None:
    after_import, after_build, after_warm_up, after_call = _python_json(COLD_START, KEY)
    assert after_import == []
    assert after_build == []
    # Changed on purpose (issue 11): the first search no longer loads the
    # search path itself; the warm-up after tools/list has, before any call.
    assert {"httpx", "notanda_openalex._client", "jsonschema"} <= set(after_warm_up)
    assert after_call == after_warm_up
    # Only a reference check compares titles: rapidfuzz's native library
    # (about 5 MiB resident) stays out of a server that searches (issue 11).
    assert "rapidfuzz" not in after_call


def test_the_package_ships_its_type_marker() -> None:
    assert (Path(notanda_mcp.__file__).parent / "py.typed").is_file()
