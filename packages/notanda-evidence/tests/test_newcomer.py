"""What a newcomer with only the README met at the ``notanda-evidence`` prompt (issue 22).

Each test is one stumble: injected records in ``find``, an empty ``cite``, a
truncated receipt, a mistyped command or option, ``--root`` for every
command, a finding without its remedy, records ``find`` passed over, and
(issue 24) an output closed early.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import search_record
from notanda_evidence import EvidenceLog, EvidenceStore, _cli, verify_file
from notanda_evidence.verify_file import Code

DOI = "10.1234/example.5"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = _cli.main(args)
    except SystemExit as exited:
        code = int(exited.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------ find, injected


def test_find_leaves_injected_records_out_and_says_how_to_include_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real, _ = search_record(tmp_path)
    fake, _ = search_record(tmp_path, mode="injected")
    code, out, _ = run(["find", "--doi", DOI, "--root", str(tmp_path)], capsys)
    assert code == 0
    assert real in out
    assert fake not in out
    assert "1 verified record(s) returned" in out
    assert (
        "1 record(s) made through an injected (test) provider left out:"
        " give --allow-injected to include them"
    ) in out

    code, out, _ = run(["find", "--doi", DOI, "--root", str(tmp_path), "--allow-injected"], capsys)
    assert code == 0
    [fake_line] = [line for line in out.splitlines() if line.startswith(fake)]
    [real_line] = [line for line in out.splitlines() if line.startswith(real)]
    assert fake_line.endswith("  injected")
    assert not real_line.endswith("injected")
    assert "left out" not in out


def test_find_json_marks_injected_records_and_lists_those_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    search_record(tmp_path)
    fake, _ = search_record(tmp_path, mode="injected")
    _, out, _ = run(["find", "--doi", DOI, "--root", str(tmp_path), "--json"], capsys)
    report = json.loads(out)
    assert report["format_version"] == 2
    assert [m["injected"] for m in report["matches"]] == [False]
    assert report["left_out"] == [{"evidence_id": fake, "reason": "injected_provider"}]
    _, out, _ = run(
        ["find", "--doi", DOI, "--root", str(tmp_path), "--json", "--allow-injected"], capsys
    )
    report = json.loads(out)
    assert sorted(m["injected"] for m in report["matches"]) == [False, True]
    assert report["left_out"] == []


def test_find_only_injected_records_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    search_record(tmp_path, mode="injected")
    code, out, _ = run(["find", "--doi", DOI, "--root", str(tmp_path)], capsys)
    assert code == 1
    assert "0 verified record(s)" in out
    assert "--allow-injected" in out


def test_find_names_the_records_it_passed_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    search_record(tmp_path)
    damaged, _ = search_record(tmp_path)
    (tmp_path / damaged / "response.json").write_bytes(b"{}\n")
    code, out, _ = run(["find", "--doi", DOI, "--root", str(tmp_path)], capsys)
    assert code == 0
    assert f"not searched: {damaged}  integrity_failure" in out
    assert "1 record(s) not searched because they do not verify (listed above)" in out


# ------------------------------------------------------------ cite


def _check_record(root: Path, verdicts: list[str]) -> str:
    """A sealed, logged reference check whose references have *verdicts*."""
    writer = EvidenceStore(root).create()
    writer.write_request(
        {
            "evidence_id": writer.evidence_id,
            "provider_mode": "network",
            "requested_at": "2026-11-29T10:00:00.000Z",
            "tool": "check_references",
        }
    )
    writer.write_provider({})
    references = [{"index": i, "verdict": verdict} for i, verdict in enumerate(verdicts)]
    writer.write_response(
        {"evidence_id": writer.evidence_id, "references": references, "status": "ok"}
    )
    seal = writer.seal()
    EvidenceLog(root).append(seal.evidence_id, seal.receipt)
    return seal.evidence_id


def test_cite_with_nothing_to_cite_exits_1_with_a_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id = _check_record(tmp_path, ["not_found", "ambiguous"])
    code, out, err = run(["cite", evidence_id, "--root", str(tmp_path)], capsys)
    assert code == 1
    assert out == ""
    assert f"refused: {evidence_id}: no_results" in err
    assert "verified none of its references, so nothing is cited" in err


def test_cite_receipt_is_refused_as_unknown_not_read_as_receipts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, _ = search_record(tmp_path)
    code, out, err = run(
        ["cite", evidence_id, "--root", str(tmp_path), "--receipt", "x", "--allow-injected"],
        capsys,
    )
    assert code == 2
    assert out == ""
    assert err.startswith("usage: notanda-evidence cite ")
    assert "error: unrecognized arguments: --receipt x" in err


# ------------------------------------------------------------ receipts


def test_a_truncated_receipt_says_what_was_given_against_what_a_receipt_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, receipt = search_record(tmp_path)
    code, out, _ = run(["verify", str(tmp_path / evidence_id), "--receipt", receipt[:16]], capsys)
    assert code == 1  # receipt.malformed, outcome receipt_mismatch: as the format says
    assert (
        "    error receipt.malformed [manifest.json]: 16 characters; a receipt is 64 lowercase"
        " hex digits: check it was copied whole"
    ) in out
    assert "replaced" not in out
    receipts = tmp_path.parent / "receipts.txt"
    receipts.write_text(f"{evidence_id} {receipt[:16]}\n", encoding="utf-8")
    code, _, err = run(
        ["cite", evidence_id, "--root", str(tmp_path), "--receipts", str(receipts)], capsys
    )
    assert code == 1
    assert "receipt_mismatch (receipt.malformed: 16 characters; a receipt is 64" in err


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        (
            "a" * 63,
            "63 characters; a receipt is 64 lowercase hex digits: check it was copied whole",
        ),
        ("a" * 65, "65 characters; a receipt is 64 lowercase hex digits: check nothing was added"),
        ("A" * 64, "64 characters with uppercase letters; a receipt is 64 lowercase hex digits"),
        ("z" * 64, "64 characters, not all hex digits; a receipt is 64 lowercase hex digits"),
        (None, None),
        (5, "not a string; a receipt is 64 lowercase hex digits"),
    ],
)
def test_receipt_problem_never_repeats_the_value(given: object, problem: str | None) -> None:
    said = verify_file.receipt_problem(given)
    if given is None:
        assert said == "not a string; a receipt is 64 lowercase hex digits"
        return
    assert said is not None
    assert said.startswith(problem or "")
    if isinstance(given, str):
        assert given not in said
    assert verify_file.receipt_problem("0" * 64) is None


def test_no_remedy_for_a_malformed_receipt_speaks_of_replacement() -> None:
    assert "replace" not in Code.RECEIPT_MALFORMED.remedy
    assert "replaced" in Code.RECEIPT_MISMATCH.remedy


# ------------------------------------------------------------ commands and --root


def test_a_mistyped_command_gets_the_nearest_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["vrify", "x"], capsys)
    assert code == 2
    assert "unknown command 'vrify'; did you mean verify?" in err
    code, _, err = run(["zzzz"], capsys)
    assert code == 2
    assert "did you mean" not in err
    assert "commands: verify, audit" in err


def test_a_subcommand_usage_error_shows_that_subcommands_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    search_record(tmp_path)
    code, _, err = run(["audit", str(tmp_path), "--hed", "1:x"], capsys)
    assert code == 2
    assert err.startswith("usage: notanda-evidence audit ")
    assert "error: unrecognized arguments: --hed 1:x" in err
    assert "remedy: see notanda-evidence audit --help" in err


def test_an_option_is_never_abbreviated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    search_record(tmp_path)
    code, _, err = run(["audit", str(tmp_path), "--js"], capsys)
    assert code == 2
    assert "unrecognized arguments: --js" in err


def test_audit_and_verify_take_root_as_every_command_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    search_record(tmp_path)
    code, out, _ = run(["audit", "--root", str(tmp_path)], capsys)
    assert code == 0
    assert "1 record(s), 1 log entries" in out
    code, out, _ = run(["verify", "--root", str(tmp_path)], capsys)
    assert code == 0
    assert out.endswith("1 record(s), default pass: 1 ok\n")
    # The same folder both ways is fine; two different ones are refused.
    assert run(["audit", str(tmp_path), "--root", str(tmp_path) + "/"], capsys)[0] == 0
    for command in ("audit", "verify"):
        code, _, err = run([command, str(tmp_path), "--root", str(tmp_path.parent)], capsys)
        assert code == 2
        assert "error: --root and PATH name different folders" in err
    code, _, err = run(["verify"], capsys)
    assert code == 2
    assert err.startswith("usage: notanda-evidence verify ")
    assert "required: PATH (or --root DIR)" in err


# ------------------------------------------------------------ remedies


def test_every_printed_finding_carries_its_remedy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, _ = search_record(tmp_path)
    response = tmp_path / evidence_id / "response.json"
    response.write_bytes(response.read_bytes().replace(b"Ada", b"Ida"))  # same size
    remedy = Code.PAYLOAD_DIGEST_MISMATCH.remedy
    code, out, _ = run(["verify", str(tmp_path)], capsys)
    assert code == 1
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "payload.digest_mismatch" in line)
    assert lines[at + 1] == f"      remedy: {remedy}"
    code, out, _ = run(["audit", str(tmp_path)], capsys)
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "payload.digest_mismatch" in line)
    assert lines[at + 1] == f"      remedy: {remedy}"
    _, out, _ = run(["verify", str(tmp_path), "--json"], capsys)
    report = json.loads(out)
    assert report["format_version"] == 2
    findings = [f for r in report["records"] for f in r["findings"]]
    assert findings
    assert all(f["remedy"] == Code(f["code"]).remedy for f in findings)
    _, out, _ = run(["audit", str(tmp_path), "--json"], capsys)
    report = json.loads(out)
    assert report["format_version"] == 4
    assert [f["remedy"] for r in report["records"] for f in r["findings"]] == [
        f["remedy"] for f in findings
    ]


def test_every_record_code_has_a_one_line_remedy() -> None:
    assert set(verify_file.REMEDIES) == set(Code)
    for code, remedy in verify_file.REMEDIES.items():
        assert remedy
        assert "\n" not in remedy
        assert remedy == code.remedy


# ------------------------------------------------------------ broken pipes

COMMANDS = [
    ["verify", "{root}"],
    ["verify", "{root}", "--json"],
    ["audit", "{root}"],
    ["audit", "{root}", "--json"],
    ["find", "--doi", DOI, "--root", "{root}"],
    ["find", "--doi", DOI, "--root", "{root}", "--json"],
    ["cite", "{id}", "--root", "{root}"],
    ["export", "--root", "{root}", "--bagit", "{bag}"],
    ["prove", "{id}", "--root", "{root}"],
]


def closed_pipe_run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Run *argv* with its standard output a real pipe closed before anything is read."""
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=dict(os.environ)
    )
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdout.close()
    err = process.stderr.read()
    process.stderr.close()
    return subprocess.CompletedProcess(argv, process.wait(timeout=120), b"", err)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c[:3]))
def test_a_closed_output_ends_the_command_quietly_with_141(
    command: list[str], tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    # Enough output that the pipe's buffer cannot hide the closed reader.
    evidence_id = ""
    for _ in range(3):
        evidence_id, _ = search_record(root, works=[{}] * 40)
    args = [a.format(root=root, id=evidence_id, bag=tmp_path / "bag") for a in command]
    script = "import sys; from notanda_evidence._cli import main; sys.exit(main())"
    done = closed_pipe_run([sys.executable, "-c", script, *args], tmp_path)
    assert done.returncode == 141, done.stderr
    assert b"Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) <= 1


def test_the_copied_single_file_ends_quietly_with_141(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for _ in range(20):
        search_record(root)
    copy = tmp_path / "verify_file.py"
    copy.write_bytes(Path(verify_file.__file__).read_bytes())
    done = closed_pipe_run([sys.executable, "-I", "-S", str(copy), str(root), "--json"], tmp_path)
    assert (done.returncode, done.stderr) == (141, b"")


def test_what_was_done_before_the_output_closed_stays_done(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    ids = [search_record(root, logged=False)[0] for _ in range(30)]
    script = "import sys; from notanda_evidence._cli import main; sys.exit(main())"
    done = closed_pipe_run([sys.executable, "-c", script, "adopt", "--root", str(root)], tmp_path)
    assert done.returncode == 141
    assert done.stderr == b""
    # Each adoption is logged before it is announced: the log holds at least the first.
    lines = (root / ".notanda" / "log.jsonl").read_text(encoding="utf-8").splitlines()
    logged = {json.loads(line)["evidence_id"] for line in lines}
    assert logged
    assert logged <= set(ids)
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in logged)
