"""Hostile folders: whatever the log, a proof or a folder name holds, readers give findings.

Each case is one that whoever controls the evidence folder can plant: a FIFO,
a folder or a link as the log, a line nested 100,000 deep or kilobytes long,
a log of hundreds of megabytes, a proof that is not one, names that hold
terminal escapes. Every command must answer with a documented code and exit
code, never hang, raise or print the planted bytes raw.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import search_record
from notanda_evidence import (
    EntryType,
    EvidenceLog,
    EvidenceLogError,
    EvidenceStore,
    _cli,
    _log,
    adopt,
    audit,
)
from test_log import sealed

ESC_NAME = "x\x1b[2J\u202eevil"
ESCAPED = "x\\x1b[2J\\u202eevil"

pytestmark = pytest.mark.timeout(60)  # A hang is a failure, never a stuck suite.


def log_path(root: Path) -> Path:
    (root / ".notanda").mkdir(exist_ok=True)
    return root / ".notanda" / "log.jsonl"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = _cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------- the log is not a file


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _folder(path: Path) -> None:
    path.mkdir()


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


PLANTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (_fifo, "log_not_a_file"),
    "folder": (_folder, "log_not_a_file"),
    "link to /dev/zero": (_dev_zero, "symlink"),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_planted_log_is_a_finding_and_the_records_are_still_reported(
    plant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, _ = sealed(tmp_path)
    make, reason = PLANTS[plant]
    make(log_path(tmp_path))
    code, out, err = run(["audit", str(tmp_path)], capsys)
    assert code == 1
    assert f"{evidence_id}  ok" in out
    assert f"error log.unreadable: {reason}\n" in out
    assert err == f"error: the log was not read ({reason}); see the report\n"
    assert "log.record_unlogged" not in out  # an unread log accuses no record


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_the_log_api_raises_its_documented_error_for_a_planted_log(
    plant: str, tmp_path: Path
) -> None:
    evidence_id, receipt = sealed(tmp_path)
    make, reason = PLANTS[plant]
    make(log_path(tmp_path))
    log = EvidenceLog(tmp_path)
    for call in (log.head, lambda: log.lookup(evidence_id), log.refresh):
        with pytest.raises(EvidenceLogError) as caught:
            call()
        assert caught.value.reason == reason
    with pytest.raises(EvidenceLogError) as appending:
        log.append(evidence_id, receipt)
    assert appending.value.reason in {reason, "io_error"}  # a folder cannot even be opened


@pytest.mark.parametrize("command", ["find", "cite"])
def test_find_and_cite_do_not_block_on_a_fifo_log(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, _ = search_record(tmp_path)
    os.remove(log_path(tmp_path))
    os.mkfifo(log_path(tmp_path))
    argv = ["find", "--doi", "10.1234/example.5"] if command == "find" else ["cite", evidence_id]
    code, _, err = run([*argv, "--root", str(tmp_path)], capsys)
    assert (code, err) == (1, "error: evidence log unavailable: log_not_a_file\n")


def test_a_planted_lock_file_is_refused(tmp_path: Path) -> None:
    evidence_id, receipt = sealed(tmp_path)
    os.mkfifo(log_path(tmp_path).with_name("lock"))
    with pytest.raises(EvidenceLogError) as caught:
        EvidenceLog(tmp_path).append(evidence_id, receipt)
    assert caught.value.reason == "log_not_a_file"


def test_a_log_over_the_limit_is_never_read(tmp_path: Path) -> None:
    evidence_id, receipt = sealed(tmp_path)
    # Sparse: the size says 256 MiB and one byte, nothing is written to disk.
    with open(log_path(tmp_path), "wb") as stream:
        stream.truncate(_log.MAX_LOG_BYTES + 1)
    result = audit(tmp_path)
    assert result.exit_code == 1
    assert [f.code.value for f in result.log_findings] == ["log.too_large"]
    log = EvidenceLog(tmp_path)
    with pytest.raises(EvidenceLogError, match="log_too_large"):
        log.head()
    with pytest.raises(EvidenceLogError, match="log_too_large"):
        log.append(evidence_id, receipt)


def test_the_writer_refuses_to_grow_the_log_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = EvidenceLog(tmp_path)
    sealed(tmp_path, log)
    size = log_path(tmp_path).stat().st_size
    monkeypatch.setattr(_log, "MAX_LOG_BYTES", size + 10)
    evidence_id, receipt = sealed(tmp_path)
    with pytest.raises(EvidenceLogError, match="log_too_large"):
        log.append(evidence_id, receipt)
    assert log_path(tmp_path).stat().st_size == size


# ------------------------------------------------------------- hostile lines


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"[" * 2_000 + b"]" * 2_000, "log.too_deep"),
        (b'{"a":' * 500 + b"1" + b"}" * 500, "log.too_deep"),
        (b"[" * 100_000 + b"]" * 100_000, "log.too_large"),
        (b'"' + b"x" * 5_000 + b'"', "log.too_large"),
    ],
    ids=["arrays", "objects", "deep-and-long", "long"],
)
def test_a_hostile_line_is_one_finding_and_the_log_stays_usable(
    line: bytes, code: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = EvidenceLog(tmp_path)
    first, _ = sealed(tmp_path, log)
    with open(log_path(tmp_path), "ab") as stream:
        stream.write(line + b"\n")
    result = audit(tmp_path)
    assert [(f.code.value, f.index) for f in result.log_findings if f.index == 1] == [(code, 1)]
    assert result.exit_code == 1
    assert [r.evidence_id for r in result.records] == [first]
    # The server's reader: a head, a lookup, and the next search's append.
    fresh = EvidenceLog(tmp_path)
    assert fresh.head().size == 2
    assert fresh.lookup(first) == [(0, EntryType.SEALED, result.records[0].receipt)]
    second, receipt = sealed(tmp_path)
    assert fresh.append(second, receipt).entry.index == 2
    code_cli, out, _ = run(["audit", str(tmp_path)], capsys)
    assert code_cli == 1
    assert f"error {code} (entry 1)" in out


def test_find_on_a_damaged_log_exits_with_its_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    search_record(tmp_path)
    with open(log_path(tmp_path), "ab") as stream:
        stream.write(b"not an entry\n")
    code, _, err = run(["find", "--doi", "10.1234/example.5", "--root", str(tmp_path)], capsys)
    assert code == 1
    assert err.startswith("refused: log: log_integrity_failure")


# ------------------------------------------------------------------ proofs


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        (b"[" * 10_000, 1, "proof failed: proof.too_deep"),
        (b" " * (70 << 10), 1, "proof failed: proof.too_large"),
        (b"\xff\xfe", 1, "proof failed: malformed"),
        (b"{", 1, "proof failed: malformed"),
        (
            b'{"format":"notanda-evidence-inclusion-proof","format_version":1,'
            b'"head":{"size":1e400,"root":""},"path":[],"entry":"","evidence_id":"",'
            b'"receipt":"","index":0}',
            1,
            "proof failed: malformed",
        ),
        (b'"a string"', 1, "proof failed: malformed"),
    ],
    ids=["deep", "large", "not-utf8", "not-json", "infinite-size", "not-an-object"],
)
def test_a_hostile_proof_fails_as_a_proof(
    content: bytes, code: int, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proof = tmp_path / "proof.json"
    proof.write_bytes(content)
    exit_code, _, err = run(["prove", "--verify", str(proof)], capsys)
    assert (exit_code, err.splitlines()[0].split(" (")[0][: len(message)]) == (code, message)


@pytest.mark.parametrize("plant", ["fifo", "folder", "link to /dev/zero"])
def test_a_proof_that_is_not_a_regular_file_is_a_usage_error(
    plant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proof = tmp_path / "proof.json"
    PLANTS[plant][0](proof)
    code, _, err = run(["prove", "--verify", str(proof)], capsys)
    assert code == 2
    assert err.startswith(f"error: {proof}: not a")


# ---------------------------------------------------- nothing to check: exit 2


def _empty(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def _parent(tmp_path: Path) -> Path:
    root = tmp_path / "parent" / "evidence"
    root.mkdir(parents=True)
    sealed(root, EvidenceLog(root))
    return root.parent


def _record_folder(tmp_path: Path) -> Path:
    evidence_id, _ = sealed(tmp_path, EvidenceLog(tmp_path))
    return tmp_path / evidence_id


NOTHING: dict[str, Callable[[Path], Path]] = {
    "empty": _empty,
    "parent": _parent,
    "record": _record_folder,
}
COMMANDS: dict[str, list[str]] = {
    "audit": ["audit", "{root}"],
    "find": ["find", "--doi", "10.1/x", "--root", "{root}"],
    "cite": ["cite", "0" * 32, "--root", "{root}"],
    "report": ["report", "0" * 32, "--root", "{root}"],
    "prove": ["prove", "0" * 32, "--root", "{root}"],
    "export": ["export", "--bagit", "{out}", "--root", "{root}"],
    "adopt": ["adopt", "--root", "{root}"],
    "prune": ["prune", "0" * 32, "--reason", "test", "--root", "{root}"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("folder", sorted(NOTHING))
def test_a_folder_with_nothing_to_check_is_a_usage_error(
    command: str, folder: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = NOTHING[folder](tmp_path)
    argv = [a.format(root=root, out=tmp_path / "bag") for a in COMMANDS[command]]
    code, _out, err = run(argv, capsys)
    assert code == 2
    problem, remedy = err.splitlines()[-2:]
    if folder == "record":
        assert problem.endswith("is a record folder, not an evidence root")
        assert remedy.startswith(f"remedy: point {command} at the folder that holds it")
    else:
        assert problem.endswith("holds no evidence record")
        assert remedy == (
            f"remedy: point {command} at the evidence root, the folder holding the 32-hex"
            " record folders and .notanda/"
        )
    assert not (tmp_path / "bag").exists()


def test_a_root_with_a_log_and_no_records_left_is_a_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, _ = sealed(tmp_path, EvidenceLog(tmp_path))
    assert run(["prune", evidence_id, "--reason", "test", "--root", str(tmp_path)], capsys)[0] == 0
    code, out, _ = run(["audit", str(tmp_path)], capsys)
    assert code == 0
    assert "0 record(s), 2 log entries" in out


# ------------------------------------------------- folder text on a terminal


def test_names_with_terminal_escapes_are_printed_visibly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, _ = sealed(tmp_path, EvidenceLog(tmp_path))
    (tmp_path / ESC_NAME).mkdir()
    (tmp_path / evidence_id / ESC_NAME).write_bytes(b"")
    code, out, _ = run(["audit", str(tmp_path)], capsys)
    assert code == 1
    assert "\x1b" not in out
    assert "\u202e" not in out
    assert f"warning root.stray_entry: {ESCAPED}" in out
    assert f"error record.unexpected_entry [{ESCAPED}]" in out
    code, out, _ = run(["audit", str(tmp_path), "--json"], capsys)
    report = json.loads(out)
    assert report["warnings"][0]["file"] == ESC_NAME


def test_a_planted_tombstone_reason_is_printed_visibly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = EvidenceLog(tmp_path)
    evidence_id, _ = sealed(tmp_path, log)
    log.append(evidence_id, None, EntryType.TOMBSTONE, reason=ESC_NAME)
    _code, out, _ = run(["audit", str(tmp_path)], capsys)
    assert "\x1b" not in out
    assert "\u202e" not in out
    assert f"info log.tombstoned {evidence_id} (entry 1): {ESCAPED}" in out


def test_paths_with_terminal_escapes_are_printed_visibly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / ESC_NAME
    root.mkdir()
    evidence_id, _ = sealed(root, EvidenceLog(root))
    bag = root.parent / f"bag{ESC_NAME}"
    code, out, err = run(["export", "--bagit", str(bag), "--root", str(root)], capsys)
    assert code == 0
    assert out == f"exported 1 record(s) to {tmp_path}/bag{ESCAPED}\n"
    code, _, err = run(["audit", str(root / "missing")], capsys)
    assert code == 2
    assert ESCAPED in err
    assert "\x1b" not in err
    proof = tmp_path / f"{ESC_NAME}.json"
    code, _, err = run(["prove", "--verify", str(proof)], capsys)
    assert code == 2
    assert ESCAPED in err
    assert "\x1b" not in err
    assert run(["adopt", "--root", str(root)], capsys)[0] == 0
    code, out, _ = run(["prune", evidence_id, "--reason", "test", "--root", str(root)], capsys)
    assert (code, out) == (0, f"pruned {evidence_id} (tombstone entry 1)\n")


# ------------------------------------------------------------ adopt's patience


def _incomplete(root: Path) -> str:
    writer = EvidenceStore(root).create()
    writer.write_request({"evidence_id": writer.evidence_id})
    return writer.evidence_id


def test_adopt_leaves_young_incomplete_records_alone_and_succeeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sealed(tmp_path, EvidenceLog(tmp_path))
    young = _incomplete(tmp_path)
    code, out, err = run(["adopt", "--root", str(tmp_path)], capsys)
    assert (code, err) == (0, "")
    assert "left 1 incomplete record(s) touched in the last 62 s alone" in out
    assert adopt(tmp_path).left == (young,)
    code, _, err = run(["adopt", "--root", str(tmp_path), "--min-age", "0"], capsys)
    assert (code, err) == (1, f"refused {young}: incomplete\n")
    assert run(["adopt", "--root", str(tmp_path), "--min-age", "-1"], capsys)[0] == 2


def test_an_append_after_adopt_does_not_log_the_record_twice(tmp_path: Path) -> None:
    evidence_id, receipt = sealed(tmp_path)  # sealed; its server has not appended yet
    [(adopted, index)] = adopt(tmp_path).adopted
    assert (adopted, index) == (evidence_id, 0)
    appended = EvidenceLog(tmp_path).append(evidence_id, receipt)
    assert (appended.entry.index, appended.entry.type) == (0, EntryType.ADOPTED)
    result = audit(tmp_path)
    assert result.exit_code == 0
    assert len(result.entries) == 1
    assert appended.head == result.head


@pytest.mark.parametrize(
    "field", ['"type":[]', '"type":{}', '"reason":null', '"evidence_id":Infinity', '"index":NaN']
)
def test_a_line_with_an_unhashable_type_a_null_reason_or_nan_is_unparsable(
    field: str, tmp_path: Path
) -> None:
    fields = {
        "evidence_id": '"' + "0" * 32 + '"',
        "index": "0",
        "prev": '"' + "0" * 64 + '"',
        "receipt": '"' + "0" * 64 + '"',
        "time": '"2026-11-29T10:00:00.000Z"',
        "type": '"sealed"',
        "v": "1",
    }
    name, _, value = field.partition(":")
    fields[name.strip('"')] = value
    line = "{" + ",".join(f'"{k}":{v}' for k, v in sorted(fields.items())) + "}\n"
    log_path(tmp_path).write_text(line)
    result = audit(tmp_path)
    assert [f.code.value for f in result.log_findings] == ["log.unparsable"]


@pytest.mark.parametrize("plant", ["fifo", "file"])
def test_a_planted_log_folder_is_a_finding_and_an_error_never_a_hang(
    plant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, receipt = sealed(tmp_path)
    folder = tmp_path / ".notanda"
    if plant == "fifo":
        os.mkfifo(folder)
    else:
        folder.write_bytes(b"")
    code, out, err = run(["audit", str(tmp_path)], capsys)
    assert code == 1
    assert "error log.unreadable: not_a_directory\n" in out
    assert err == "error: the log was not read (not_a_directory); see the report\n"
    with pytest.raises(EvidenceLogError, match="not_a_directory"):
        EvidenceLog(tmp_path).append(evidence_id, receipt)


def test_a_bug_is_never_reported_as_a_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sealed(tmp_path, EvidenceLog(tmp_path))

    def broken(*args: object, **kwargs: object) -> None:
        raise RecursionError("a reader bug")

    monkeypatch.setattr(_cli, "AuditRun", broken)
    code, out, err = run(["audit", str(tmp_path)], capsys)
    assert (code, out) == (2, "")
    assert err == (
        "error: notanda-evidence audit failed unexpectedly (RecursionError) "
        "and reached no verdict; please report it\n"
    )
