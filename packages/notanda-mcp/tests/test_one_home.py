"""Each default and small rule of the server has one home, and the rest use it.

The error replies (one builder, ``_codes.error_answer``), the defaults a help
text states (the help formats the constant), the check's format list and a
checked reference's keys (the schema derives them from notanda-openalex's
definitions), and the exit codes (each number named once per package).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import notanda_mcp
import notanda_openalex
import pytest
from conftest import KEY, call, make_server, open_session
from fake_openalex import FakeOpenAlex
from notanda_mcp import _check_cli, _cli, _client, _codes, _server, _service, _usage
from notanda_mcp._codes import ToolError, error_answer
from notanda_mcp._schemas import TOOLS
from notanda_openalex._vocabulary import (
    CHECKED_REFERENCE_KEYS,
    DEFAULT_CHECK_CONCURRENCY,
    DEFAULT_CHECK_DEADLINE_S,
    DEFAULT_LIMIT,
    ReferenceFormat,
)

SOURCE = Path(notanda_mcp.__file__).parent
#: The modules that answer a tool or a resource read.
ANSWERING = ("_service.py", "_server.py", "_resources.py")


def _tree(name: str) -> ast.Module:
    return ast.parse((SOURCE / name).read_text(encoding="utf-8"), filename=name)


def _called(call: ast.Call) -> str | None:
    """The name a call calls: ``dict`` for ``dict(...)``, ``update`` for ``x.update(...)``."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def _modules() -> list[str]:
    return sorted(path.name for path in SOURCE.glob("*.py"))


# ------------------------------------------------------------- error replies


def test_an_error_answer_holds_its_code_status_and_fields_as_plain_strings() -> None:
    content = error_answer(ToolError.SERVER_BUSY, evidence_id="e" * 32, reason="r")
    assert content == {
        "error": "server_busy",
        "evidence_id": "e" * 32,
        "reason": "r",
        "status": "error",
    }
    assert type(content["error"]) is str
    assert type(content["status"]) is str
    assert list(content) == sorted(content)


def test_an_error_answer_refuses_a_second_code_or_status() -> None:
    with pytest.raises(TypeError):
        error_answer(ToolError.NOT_FOUND, status="ok")
    with pytest.raises(TypeError):
        error_answer(ToolError.NOT_FOUND, error="other")


def test_only_the_builder_writes_the_error_status() -> None:
    # ``AnswerStatus.ERROR`` is written by error_answer and published by the
    # output schemas; any other use is an error answer built by hand.
    users = {
        name
        for name in _modules()
        for node in ast.walk(_tree(name))
        if isinstance(node, ast.Attribute)
        and node.attr == "ERROR"
        and isinstance(node.value, ast.Name)
        and node.value.id == "AnswerStatus"
    }
    assert users == {"_codes.py", "_schemas.py"}


@pytest.mark.parametrize("name", ANSWERING)
def test_no_answering_module_builds_an_error_dict_by_hand(name: str) -> None:
    by_hand: list[int] = []
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.Dict):
            keys = {key.value for key in node.keys if isinstance(key, ast.Constant)}
            if "error" in keys:
                by_hand.append(node.lineno)
        elif (
            isinstance(node, ast.Call)
            and _called(node) in {"dict", "update", "setdefault"}
            and "error" in {kw.arg for kw in node.keywords}
        ):
            by_hand.append(node.lineno)
    assert by_hand == [], f"{name}: build error answers with _codes.error_answer"


def test_the_builder_is_the_codes_module_own() -> None:
    assert error_answer.__module__ == _codes.__name__
    assert "error_answer" in _codes.__all__


@pytest.mark.anyio
async def test_a_refusal_before_a_record_is_an_error_answer(evidence_root: Path) -> None:
    server = make_server(evidence_root, FakeOpenAlex())
    async with open_session(server, "legacy") as client:
        result = await call(client, "search_literature", {"query": 5})
    content = result.structured_content
    assert result.is_error is True
    assert content is not None
    expected = error_answer(
        ToolError.INVALID_ARGUMENTS,
        field=content["field"],
        persisted=False,
        reason=content["reason"],
    )
    assert {key: value for key, value in content.items() if key != "remedy"} == expected


# ------------------------------------------------------------------ defaults


def test_the_search_slots_help_and_refusal_state_the_constant(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_cli, "DEFAULT_SEARCH_SLOTS", 7)
    parser = _cli._server_parser()
    assert parser.get_default("search_slots") == 7
    assert "(default: 7)" in " ".join(parser.format_help().split())
    assert _cli.main(["--search-slots", "0", "--evidence-dir", "/nonexistent"]) == 2
    assert "(default 7)" in capsys.readouterr().err


def test_the_timestamp_interval_help_states_the_stamper_s_constants(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_cli, "DEFAULT_TIMESTAMP_EVERY_S", 600.0)
    monkeypatch.setattr(_cli, "MINIMUM_TIMESTAMP_EVERY_S", 5.0)
    help_text = " ".join(_cli._server_parser().format_help().split())
    assert "(at least 5; default: 600)" in help_text


def test_every_search_slots_default_is_the_service_s() -> None:
    assert _cli.DEFAULT_SEARCH_SLOTS is _service.DEFAULT_SEARCH_SLOTS
    for function in (_server.build_server, _service.EvidenceService.__init__):
        default = inspect.signature(function).parameters["search_slots"].default
        assert default is _service.DEFAULT_SEARCH_SLOTS


def test_the_check_defaults_are_the_client_s() -> None:
    assert _service.CHECK_CONCURRENCY is DEFAULT_CHECK_CONCURRENCY
    assert _service.CHECK_DEADLINE_S is DEFAULT_CHECK_DEADLINE_S
    for function in (_server.build_server, _service.EvidenceService.__init__):
        parameters = inspect.signature(function).parameters
        assert parameters["check_concurrency"].default is DEFAULT_CHECK_CONCURRENCY
        assert parameters["check_deadline_s"].default is DEFAULT_CHECK_DEADLINE_S


def test_a_search_without_a_limit_takes_the_vocabulary_s_default(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server reads the default from notanda_openalex at call time, not a copy of its own.
    assert notanda_openalex.DEFAULT_LIMIT is DEFAULT_LIMIT
    assert "DEFAULT_LIMIT" not in vars(_service)
    monkeypatch.setattr(notanda_openalex, "DEFAULT_LIMIT", 3)
    service = _service.EvidenceService(
        evidence_root,
        transport=FakeOpenAlex().transport(),
        env={"HARVESTER_OPENALEX_API_KEY": KEY},
    )
    reply = service.search({"query": "open science"}, _service.Caller())
    assert reply.is_error is False, reply.content
    assert reply.content["limit"] == 3


def test_the_client_timeout_help_states_the_constant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_client, "DEFAULT_READ_TIMEOUT_S", 42.0)
    parser = _client._parser()
    assert parser.get_default("timeout") == 42.0
    assert "(default: 42)" in " ".join(parser.format_help().split())


def test_the_check_format_help_states_the_reader_s_default() -> None:
    parser = _check_cli.parser()
    assert parser.get_default("format") == ReferenceFormat.AUTO.value
    help_text = " ".join(parser.format_help().split())
    assert f"(default: {ReferenceFormat.AUTO.value})" in help_text


# --------------------------------------------------------- schema from lists


def test_the_check_format_prose_lists_exactly_the_reader_s_formats() -> None:
    described = TOOLS["check_references"]["inputSchema"]["properties"]["format"]
    assert described["default"] == ReferenceFormat.AUTO.value
    prose = described["description"].removesuffix(".").replace(" (the default)", "")
    named = [part for chunk in prose.split(", ") for part in chunk.split(" or ")]
    assert named == [member.value for member in ReferenceFormat]


def test_the_checked_reference_keys_are_the_check_s_own() -> None:
    output = TOOLS["check_references"]["outputSchema"]
    entry = output["properties"]["references"]["items"]
    assert entry["required"] == list(CHECKED_REFERENCE_KEYS)
    assert ", ".join(CHECKED_REFERENCE_KEYS) in output["description"]


# ---------------------------------------------------------------- exit codes


def _exit_literals() -> dict[str, list[tuple[str, Any]]]:
    """Each ``EXIT_*`` name given a number, with the modules that give it one."""
    found: dict[str, list[tuple[str, Any]]] = {}
    for name in _modules():
        for node in _tree(name).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, int)
            ):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.startswith("EXIT_"):
                        found.setdefault(target.id, []).append((name, node.value.value))
    return found


def test_each_exit_code_name_is_given_its_number_once() -> None:
    twice = {name: where for name, where in _exit_literals().items() if len(where) > 1}
    assert twice == {}


def test_success_and_usage_are_every_notanda_command_s() -> None:
    from notanda_evidence import verify_file

    assert _usage.EXIT_OK is verify_file.EXIT_OK
    assert _usage.EXIT_USAGE is verify_file.EXIT_USAGE
    assert _check_cli.EXIT_USAGE is _usage.EXIT_USAGE
    assert _check_cli.EXIT_VERIFIED is _usage.EXIT_OK
    assert {"EXIT_OK", "EXIT_USAGE"}.isdisjoint(_exit_literals())


def test_the_usage_parser_is_the_verifier_s(capsys: pytest.CaptureFixture[str]) -> None:
    from notanda_evidence import verify_file

    assert issubclass(_usage.UsageParser, verify_file.UsageParser)
    parser = _usage.UsageParser(prog="notanda-mcp demo")
    parser.add_argument("--receipts")
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["--receipt", "x"])  # never abbreviated
    assert exited.value.code == _usage.EXIT_USAGE
    lines = capsys.readouterr().err.splitlines()
    assert lines[-2] == "notanda-mcp demo: error: unrecognized arguments: --receipt x"
    assert lines[-1] == "notanda-mcp demo: remedy: run 'notanda-mcp demo --help' for every option"


def test_a_hostile_argument_is_escaped_once(capsys: pytest.CaptureFixture[str]) -> None:
    parser = _usage.UsageParser(prog="notanda-mcp demo")
    with pytest.raises(SystemExit):
        parser.parse_args(["\x1b[2J"])
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert err.splitlines()[-2] == "notanda-mcp demo: error: unrecognized arguments: \\x1b[2J"
