"""The exit codes and the citation formats: each defined once, and the rest derived.

The exit codes are ``verify_file``'s (the single file cannot import the rest
of the package, so the package imports them from it); ``cite --format`` offers
what ``_cite.CitationFormat`` lists, and the verifier's help states the codes.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import notanda_evidence
import pytest
from notanda_evidence import _audit, _cli, _report, verify_file
from notanda_evidence._cite import CitationFormat, render

SOURCE = Path(notanda_evidence.__file__).parent


def _exit_literals() -> dict[str, list[str]]:
    """Each ``EXIT_*`` name given a number at module level, with the modules that do."""
    found: dict[str, list[str]] = {}
    for path in sorted(SOURCE.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, int)
            ):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.startswith("EXIT_"):
                        found.setdefault(target.id, []).append(path.name)
    return found


def test_every_exit_code_is_numbered_in_the_verifier_alone() -> None:
    elsewhere = {
        name: where for name, where in _exit_literals().items() if where != ["verify_file.py"]
    }
    assert elsewhere == {}
    for name in ("EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INCOMPLETE", "EXIT_BROKEN_PIPE"):
        assert getattr(_cli, name) is getattr(verify_file, name)


def test_the_exit_codes_are_those_docs_errors_md_gives() -> None:
    codes = (verify_file.EXIT_OK, verify_file.EXIT_FAILED, verify_file.EXIT_USAGE)
    assert (*codes, verify_file.EXIT_INCOMPLETE, verify_file.EXIT_BROKEN_PIPE) == (0, 1, 2, 3, 141)


def test_the_verifier_help_states_the_exit_codes_it_returns(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(verify_file, "EXIT_INCOMPLETE", 9)
    with pytest.raises(SystemExit):
        verify_file.main(["--help"])
    assert "9 incomplete" in " ".join(capsys.readouterr().out.split())


def test_an_audit_and_a_report_answer_with_the_verifier_s_codes() -> None:
    ok, failed = verify_file.EXIT_OK, verify_file.EXIT_FAILED
    incomplete = verify_file.EXIT_INCOMPLETE
    assert _audit.audit_exit_code(ok, (), None) == ok
    assert _audit.audit_exit_code(failed, (), None) == failed
    assert _audit.audit_exit_code(incomplete, (), None) == incomplete
    assert _report.CheckReport(root="r", parts=(), left_out=()).exit_code == ok
    left_out = (_report.LeftOut(evidence_id="e" * 32, code="integrity_failure"),)
    assert _report.CheckReport(root="r", parts=(), left_out=left_out).exit_code == failed


def _cite_format() -> argparse.Action:
    parser = _cli._parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    cite = commands.choices["cite"]
    [action] = [a for a in cite._actions if a.dest == "format"]
    return action


def test_cite_offers_exactly_the_citation_formats_and_defaults_to_bibtex() -> None:
    action = _cite_format()
    assert action.choices == [fmt.value for fmt in CitationFormat]
    assert action.default == CitationFormat.BIBTEX.value
    for choice in action.choices:
        assert isinstance(render((), CitationFormat(choice)), str)


def test_a_hostile_argument_is_escaped_once(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        verify_file.main(["--root", "r", "--\x1b[2J"])
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert "error: unrecognized arguments: --\\x1b[2J\n" in err
