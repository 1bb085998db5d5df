"""``notanda-mcp check-references``, in process through its seam (a fake provider)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import KEY, assert_sealed, record_ids
from fake_openalex import FakeOpenAlex, bibliography, status_response
from notanda_mcp import _check_cli
from test_check_references import BIBTEX

ENV = {"HARVESTER_OPENALEX_API_KEY": KEY}
CORRECT = "10.5555/notanda.test.1\n"


def run(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    text: str | None,
    *options: str,
    provider: FakeOpenAlex | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    source = tmp_path / "refs.txt"
    if text is not None:
        source.write_text(text, encoding="utf-8")
    code = _check_cli.main(
        [str(source), "--evidence-dir", str(tmp_path / "evidence"), *options],
        transport=(provider or FakeOpenAlex(bibliography())).transport(),
        env=ENV if env is None else env,
    )
    out, err = capsys.readouterr()
    return code, out, err


def _tail(out: str) -> dict[str, str]:
    found = {}
    for line in out.splitlines():
        label, _, value = line.partition(": ")
        if label in ("evidence ID", "receipt", "head"):
            found[label] = value
    return found


def test_every_reference_verified_exits_0_and_names_its_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, tmp_path, CORRECT)
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0] == (
        "plan: 1 reference(s), 1 part(s), at most 2 request(s), 1 credit(s) "
        "(11 at most if no DOI is known)"
    )
    assert lines[1] == "1 reference(s) in 1 part(s): 1 verified"
    assert not any(line.startswith("verified") for line in lines)  # only the others get a line
    tail = _tail(out)
    assert set(tail) == {"evidence ID", "receipt", "head"}
    stored = assert_sealed(tmp_path / "evidence", tail["evidence ID"], tail["receipt"])
    assert stored["references"][0]["work"]["doi"] == "10.5555/notanda.test.1"
    assert err == ""  # no progress bar: stderr is not a terminal


def test_a_mismatch_or_a_missing_work_exits_1_with_what_differs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run(capsys, tmp_path, BIBTEX)
    assert code == 1
    lines = out.splitlines()
    assert lines[1] == "4 reference(s) in 1 part(s): 2 verified, 1 metadata_mismatch, 1 not_found"
    assert lines[2].startswith("metadata_mismatch")
    assert "#1  [noether]" in lines[2]
    assert "differs: title" in lines[2]
    assert lines[3].startswith("not_found")
    assert "#3  [ghost]" in lines[3]
    assert lines[4].startswith("part 1 of 1: references #0 to #3, ok")


def test_only_unchecked_exits_3(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, tmp_path, CORRECT, provider=FakeOpenAlex(status_response(503)))
    assert code == 3
    assert out.splitlines()[2].startswith("unchecked")
    assert "(http_error)" in out.splitlines()[2]


def test_a_check_that_fails_as_a_whole_exits_4_with_its_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    provider = FakeOpenAlex(bibliography())
    code, out, _ = run(capsys, tmp_path, CORRECT, provider=provider, env={})
    assert code == 4
    assert "error: configuration_error (missing_api_key)" in out
    assert "remedy: " in out
    tail = _tail(out)
    assert_sealed(tmp_path / "evidence", tail["evidence ID"], tail["receipt"])
    assert provider.requests == []


def test_empty_input_exits_2_and_is_recorded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run(capsys, tmp_path, "  \n\n")
    assert code == 2
    assert "error: invalid_arguments (empty)" in out
    assert len(record_ids(tmp_path / "evidence")) == 1


@pytest.mark.parametrize(
    ("text", "word"),
    [(None, "cannot read"), ("x" * 4_097, "larger than 4096 bytes")],
    ids=["missing-file", "too-large"],
)
def test_an_unreadable_or_oversized_file_exits_2_without_a_record(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    text: str | None,
    word: str,
) -> None:
    # The real ceiling is 100 MiB; the same code path refuses at a smaller one.
    monkeypatch.setattr(_check_cli, "MAX_FILE_BYTES", 4096)
    code, out, err = run(capsys, tmp_path, text)
    assert code == 2
    assert out == ""
    assert word in err
    assert "give " in err  # the remedy
    assert record_ids(tmp_path / "evidence") == []


def test_an_unknown_format_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as stopped:
        run(capsys, tmp_path, CORRECT, "--format", "endnote")
    assert stopped.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_json_prints_the_run_as_one_document(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, tmp_path, BIBTEX, "--json")
    assert code == 1
    document: dict[str, Any] = json.loads(out)
    assert document["format"] == "notanda-check-run"
    assert document["exit_code"] == 1
    assert err.startswith("plan: 4 reference(s)")  # stdout stays one document
    [part] = document["parts"]
    stored = assert_sealed(tmp_path / "evidence", part["evidence_id"], part["receipt"])
    assert part["summary"] == stored["summary"] == document["summary"] | {"unchecked": 0}
    assert [entry["verdict"] for entry in document["references"]] == [
        entry["verdict"] for entry in stored["references"]
    ]
    assert [entry["index"] for entry in document["references"]] == [0, 1, 2, 3]
    assert document["plan"] == {
        "credits": 21,
        "credits_at_most": 41,
        "max_credits": 10_000,
        "max_requests": 5,
        "parts": 1,
        "references": 4,
    }
    assert document["missing_entry"] == []
    assert document["stopped"] is None
    assert part["head"] == _tail_of(tmp_path)


def _tail_of(tmp_path: Path) -> str:
    from notanda_evidence import EvidenceLog

    return str(EvidenceLog(tmp_path / "evidence").head())


def test_every_string_of_a_line_is_shown_as_escapes() -> None:
    entry = {
        "differs": ["title\x1b[2J"],
        "error": None,
        "index": 0,
        "key": "evil\u202e",
        "verdict": "metadata_mismatch",
        "work": {"doi": "10.1/\x07x", "is_retracted": True},
    }
    line = _check_cli.reference_line(entry)
    assert line.isprintable()
    assert "[evil\\u202e]" in line
    assert "title\\x1b[2J" in line
    assert "doi: 10.1/\\x07x" in line
    assert "RETRACTED" in line


def test_stdin_and_a_relative_evidence_dir(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(CORRECT.encode())))
    code = _check_cli.main(
        ["-", "--evidence-dir", "relative/evidence"],
        transport=FakeOpenAlex(bibliography()).transport(),
        env=ENV,
    )
    assert code == 0
    assert len(record_ids(tmp_path / "relative" / "evidence")) == 1
    capsys.readouterr()


def test_the_progress_bar_goes_to_a_terminal_stderr_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = io.StringIO()
    monkeypatch.setattr(terminal, "isatty", lambda: True, raising=False)
    monkeypatch.setattr("sys.stderr", terminal)
    code, out, _ = run(capsys, tmp_path, BIBTEX)
    assert code == 1
    assert "checking [" in terminal.getvalue()
    assert "4/4  parts 1/1  not verified: 2" in terminal.getvalue()
    assert "checking" not in out
