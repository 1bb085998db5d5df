"""``docs/errors.md`` against the code: the exit-code table and the tool answer codes."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from checkout import absent
from conftest import REPO_ROOT, seal_record
from notanda_evidence import EvidenceStore, verify_file
from notanda_evidence import _cli as evidence_cli
from notanda_mcp import _check_cli as check_cli
from notanda_mcp import _client as client_cli
from notanda_mcp import _usage as server_exits
from notanda_mcp._schemas import TOOLS
from notanda_openalex import ProviderReason

ERRORS_MD = REPO_ROOT / "docs" / "errors.md"


@pytest.fixture(scope="module")
def errors_md() -> str:
    if not ERRORS_MD.is_file():
        absent(f"{ERRORS_MD} not found: run from a repository checkout (NOTANDA_REPO_ROOT)")
    return ERRORS_MD.read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    match = re.search(rf"^{re.escape(heading)}\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"{heading!r} not found"
    return match.group(1)


def _tables(text: str) -> list[list[list[str]]]:
    """Every Markdown table in *text*, as rows of stripped cells (header row first)."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", cell) for cell in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def _first_code(cell: str) -> str | None:
    match = re.search(r"`([^`]+)`", cell)
    return match.group(1) if match else None


# ------------------------------------------------------------- exit codes


def _documented_exit_codes(errors_md: str) -> dict[str, dict[int, str]]:
    [table] = _tables(_section(errors_md, "## Exit codes"))
    assert table[0] == ["command", "exit", "meaning"]
    documented: dict[str, dict[int, str]] = {}
    for command, code, meaning in table[1:]:
        name = _first_code(command)
        assert name is not None, command
        if "doctor" in command:
            name = "notanda-mcp doctor"
        if "demo" in command:
            name = "notanda-mcp demo"
        documented.setdefault(name, {})[int(code)] = meaning
    return documented


def _constants(module: object) -> dict[str, int]:
    return {k: v for k, v in vars(module).items() if k.startswith("EXIT_") and isinstance(v, int)}


def _closed_output(run: Callable[[], int]) -> int:
    """*run*'s exit code with standard output a real pipe whose reader has already left."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    stream = open(write_end, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    saved = sys.stdout
    sys.stdout = stream
    try:
        return run()
    finally:
        sys.stdout = saved
        with contextlib.suppress(OSError):
            stream.close()
        os.close(write_end)


def _verify_file_behaviour(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[int, str]:
    """Run the stand-alone verifier on an intact, a damaged, an incomplete and a missing record."""
    root = tmp_path / "records"
    root.mkdir()
    intact, _ = seal_record(root, log=False)
    damaged, _ = seal_record(root, log=False)
    (root / damaged / "response.json").write_bytes(b"{}\n")
    writer = EvidenceStore(root).create()
    writer.write_request({"evidence_id": writer.evidence_id})
    writer.close()
    observed = {
        verify_file.main([str(root / intact)]): "intact",
        verify_file.main([str(root / damaged)]): "integrity",
        verify_file.main([str(root / writer.evidence_id)]): "incomplete",
        verify_file.main([str(tmp_path / "no-such-path")]): "usage",
        _closed_output(lambda: verify_file.main([str(root)])): "output was closed",
    }
    capsys.readouterr()
    return observed


def test_the_exit_code_table_matches_the_code(
    errors_md: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    documented = _documented_exit_codes(errors_md)
    evidence = _constants(evidence_cli)
    server = _constants(server_exits)
    client = _constants(client_cli)
    check = _constants(check_cli)
    assert set(documented) == {
        "notanda-evidence",
        "verify_file.py",
        "notanda-mcp",
        "notanda-mcp doctor",
        "notanda-mcp demo",
        "notanda-mcp-client",
        "notanda-mcp check-references",
    }
    assert set(documented["notanda-mcp check-references"]) == set(check.values())
    assert set(documented["notanda-evidence"]) == set(evidence.values())
    assert set(documented["notanda-mcp"]) == {
        server["EXIT_OK"],
        server["EXIT_FORCED"],
        server["EXIT_USAGE"],
    }
    assert set(documented["notanda-mcp doctor"]) == set(server.values())
    assert set(documented["notanda-mcp demo"]) == set(server.values())
    assert set(documented["notanda-mcp-client"]) == set(client.values())
    verify = _verify_file_behaviour(tmp_path, capsys)
    assert set(documented["verify_file.py"]) == set(verify)

    # Each constant's number carries the documented meaning.
    meanings = {
        ("notanda-evidence", evidence["EXIT_OK"]): "success",
        ("notanda-evidence", evidence["EXIT_FAILED"]): "failed",
        ("notanda-evidence", evidence["EXIT_USAGE"]): "usage",
        ("notanda-evidence", evidence["EXIT_INCOMPLETE"]): "incomplete",
        ("notanda-mcp", server["EXIT_FORCED"]): "second SIGTERM",
        ("notanda-mcp", server["EXIT_USAGE"]): "usage",
        ("notanda-mcp doctor", server["EXIT_OK"]): "ready",
        ("notanda-mcp doctor", server["EXIT_PROBLEM"]): "failed",
        ("notanda-mcp doctor", server["EXIT_USAGE"]): "usage",
        ("notanda-mcp demo", server["EXIT_OK"]): "every step worked",
        ("notanda-mcp demo", server["EXIT_PROBLEM"]): "a step failed",
        ("notanda-mcp demo", server["EXIT_USAGE"]): "usage",
        ("notanda-mcp-client", client["EXIT_OK"]): "succeeded",
        ("notanda-mcp-client", client["EXIT_TOOL_ERROR"]): "error",
        ("notanda-mcp-client", client["EXIT_USAGE"]): "usage",
        ("notanda-mcp-client", client["EXIT_UNREACHABLE"]): "could not be started",
        ("notanda-mcp-client", client["EXIT_MISMATCH"]): "differs",
        ("notanda-mcp check-references", check["EXIT_VERIFIED"]): "every reference verified",
        ("notanda-mcp check-references", check["EXIT_FINDINGS"]): "metadata_mismatch",
        ("notanda-mcp check-references", check["EXIT_USAGE"]): "usage",
        ("notanda-mcp check-references", check["EXIT_UNCHECKED"]): "unchecked",
        ("notanda-mcp check-references", check["EXIT_FAILED"]): "failed as a whole",
        ("notanda-mcp check-references", check["EXIT_INTERRUPTED"]): "Ctrl-C",
        **{
            (command, 141): "output was closed"
            for command in (
                "notanda-evidence",
                "notanda-mcp doctor",
                "notanda-mcp demo",
                "notanda-mcp-client",
                "notanda-mcp check-references",
            )
        },
    }
    for (command, code), word in meanings.items():
        assert word in documented[command][code], (command, code)
    for code, word in verify.items():
        assert word in documented["verify_file.py"][code], code


def test_the_client_help_states_the_same_exit_codes(errors_md: str) -> None:
    epilog = client_cli._parser().epilog or ""
    stated = {int(n) for n in re.findall(r"(\d+) [a-z]", epilog)}
    assert stated == set(_documented_exit_codes(errors_md)["notanda-mcp-client"])


# ------------------------------------------------------- tool answer codes


def _documented_answer_codes(errors_md: str) -> set[str]:
    section = _section(errors_md, "## Tool answers (`search_literature`, `get_evidence`)")
    codes = set()
    for table in _tables(section):
        if table[0][0] != "code":
            continue
        for row in table[1:]:
            code = _first_code(row[0])
            if code is not None and not row[0].startswith("(none"):
                codes.add(code)
    return codes


def _published_error_codes() -> set[str]:
    return {
        code
        for tool in TOOLS.values()
        for code in tool["outputSchema"]["properties"]["error"]["enum"]
    }


def test_every_documented_answer_code_is_published(errors_md: str) -> None:
    documented = _documented_answer_codes(errors_md)
    statuses = set(TOOLS["get_evidence"]["outputSchema"]["properties"]["status"]["enum"])
    assert documented - _published_error_codes() == {"incomplete"}
    assert "incomplete" in statuses


@pytest.mark.parametrize("code", sorted(_published_error_codes()))
def test_every_published_error_code_is_documented(errors_md: str, code: str) -> None:
    assert code in _documented_answer_codes(errors_md)


def test_the_provider_reasons_are_documented(errors_md: str) -> None:
    section = _section(errors_md, "## Tool answers (`search_literature`, `get_evidence`)")
    [reasons] = [t for t in _tables(section) if t[0][0] == "reason"]
    assert {_first_code(row[0]) for row in reasons[1:]} == {r.value for r in ProviderReason}


# ------------------------------------------------------- verifier findings


def test_the_finding_tables_list_exactly_the_codes_the_verifier_and_audit_emit(
    errors_md: str,
) -> None:
    from notanda_evidence._log import LogCode
    from notanda_evidence._runs import RunCode

    records, log = _tables(_section(errors_md, "## Verifier findings"))
    assert (records[0][0], log[0][0]) == ("code", "code")

    def listed(table: list[list[str]]) -> set[str]:
        return {code for row in table[1:] for code in re.findall(r"`([^`]+)`", row[0])}

    assert listed(records) == {code.value for code in verify_file.Code}
    assert listed(log) == {code.value for code in LogCode} | {code.value for code in RunCode}
    # Every finding says what to do.
    for table in (records, log):
        assert table[0][-1] == "remedy"
        assert all(len(row) == len(table[0]) and row[-1] for row in table[1:]), table


def test_the_record_findings_table_gives_the_remedies_the_verifier_prints(
    errors_md: str,
) -> None:
    """Each row's remedy is, word for word, ``verify_file.REMEDIES`` of every code it lists."""
    from notanda_evidence._log import LogCode
    from notanda_evidence._runs import RunCode

    records, log = _tables(_section(errors_md, "## Verifier findings"))

    def remedies(table: list[list[str]]) -> dict[str, str]:
        found: dict[str, str] = {}
        for row in table[1:]:
            for code in re.findall(r"`([a-z_]+\.[a-z_]+)`", row[0]):
                found[code] = row[-1]
        return found

    assert remedies(records) == {code.value: text for code, text in verify_file.REMEDIES.items()}
    assert remedies(log) == {
        code.value: code.remedy or "none" for family in (LogCode, RunCode) for code in family
    }


def test_the_storage_reasons_are_documented(errors_md: str) -> None:
    from notanda_evidence import StorageReason

    [listed] = re.findall(r"\(`storage_reason`: ([^)]*)\)", errors_md)
    assert set(re.findall(r"`([^`]+)`", listed)) == {reason.value for reason in StorageReason}


# ------------------------------------------------------------- remedies


def _remedy_rows(section: str, first: str) -> dict[str, str]:
    """``{code: remedy}`` from every table whose header starts with *first* and ends in remedy."""
    rows: dict[str, str] = {}
    for table in _tables(section):
        if table[0][0] != first or table[0][-1] != "remedy":
            continue
        for row in table[1:]:
            code = _first_code(row[0])
            if code is not None and not row[0].startswith("(none"):
                rows.setdefault(code, row[-1])
    return rows


def test_every_answer_code_has_its_remedy_documented(errors_md: str) -> None:
    from notanda_mcp._schemas import REMEDIES

    section = _section(errors_md, "## Tool answers (`search_literature`, `get_evidence`)")
    documented = _remedy_rows(section, "code")
    # Each documented code's remedy is the one the answers carry; every code has one.
    assert documented == REMEDIES
    assert set(REMEDIES) == _published_error_codes() | {"incomplete"}


def test_every_detail_reason_and_configuration_problem_has_its_remedy_documented(
    errors_md: str,
) -> None:
    from notanda_openalex import ConfigProblem, ConfigurationDetail, ConfigurationError

    answers = _section(errors_md, "## Tool answers (`search_literature`, `get_evidence`)")
    assert _remedy_rows(answers, "detail") == {d.value: d.remedy for d in ConfigurationDetail}
    assert _remedy_rows(answers, "reason") == {r.value: r.remedy for r in ProviderReason}
    start_up = _section(errors_md, "## Server start-up: an unusable configuration")
    assert _remedy_rows(start_up, "problem") == {p.value: p.remedy for p in ConfigProblem}
    [table] = _tables(start_up)
    messages = {_first_code(row[0]): row[1] for row in table[1:]}
    assert messages == {p.value: str(ConfigurationError(p)) for p in ConfigProblem}


def test_the_busy_reason_and_the_record_states_are_documented(errors_md: str) -> None:
    from notanda_mcp._codes import BusyReason, RecordState

    answers = _section(errors_md, "## Tool answers (`search_literature`, `get_evidence`)")
    reasons = set(re.findall(r"`reason: ([a-z_]+)`", answers))
    assert {reason.value for reason in BusyReason} <= reasons
    states = set(re.findall(r'`record_state: "([a-z_]+)"`', answers))
    assert states == {state.value for state in RecordState}


def test_the_schema_reasons_are_documented(errors_md: str) -> None:
    from notanda_mcp._codes import SchemaReason

    [listed] = re.findall(r"keyword that failed \(one of ([^)]*)\)", errors_md)
    assert re.findall(r"`([^`]+)`", listed) == [reason.value for reason in SchemaReason]


def test_the_check_verdicts_of_doctor_and_demo_are_documented(errors_md: str) -> None:
    from notanda_mcp._usage import CheckVerdict

    [listed] = re.findall(r"\(check verdicts: ([^)]*)\)", errors_md)
    assert re.findall(r"`([^`]+)`", listed) == [verdict.value for verdict in CheckVerdict]


def test_the_log_reasons_the_server_finds_are_documented(errors_md: str) -> None:
    from notanda_evidence import LogReason
    from notanda_mcp._guard import ServerLogReason

    [listed] = re.findall(r"\(`log_reason`: (.*?)\)\. Keep the receipt", errors_md)
    assert set(re.findall(r"`(log_[a-z_]+)`", listed)) == {r.value for r in LogReason} | {
        r.value for r in ServerLogReason
    }


def test_the_stamping_codes_are_documented_with_their_remedies(errors_md: str) -> None:
    from notanda_mcp._stamper import StampCode

    section = _section(errors_md, "## Server: stamping log heads (stderr)")
    assert _remedy_rows(section, "code") == {code.value: code.remedy for code in StampCode}
