"""The log (``_log``): appends, heads, concurrency, torn tails, links and the log vectors."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import VECTORS
from notanda_evidence import (
    EntryType,
    EvidenceLog,
    EvidenceLogError,
    EvidenceStore,
    Head,
    LogReason,
    Stage,
    StorageReason,
    _log,
    _merkle,
    audit,
    verify_file,
)
from vector_cases import generate_into, tree


def sealed(root: Path, log: EvidenceLog | None = None) -> tuple[str, str]:
    writer = EvidenceStore(root).create()
    writer.write_request({"evidence_id": writer.evidence_id})
    writer.write_provider({})
    writer.write_response({"evidence_id": writer.evidence_id, "status": "ok", "results": []})
    seal = writer.seal()
    if log is not None:
        log.append(seal.evidence_id, seal.receipt)
    return seal.evidence_id, seal.receipt


def test_the_generator_reproduces_the_log_vectors(tmp_path: Path) -> None:
    generate_into(VECTORS / "generate_log.py", tmp_path)
    assert (tmp_path / "log-expected.json").read_bytes() == (
        VECTORS / "log-expected.json"
    ).read_bytes()
    assert tree(tmp_path / "log-cases") == tree(VECTORS / "log-cases")


def test_appends_return_heads_that_match_an_independent_tree(tmp_path: Path) -> None:
    log = EvidenceLog(tmp_path)
    lines = []
    for _ in range(7):
        evidence_id, receipt = sealed(tmp_path)
        result = log.append(evidence_id, receipt)
        lines.append(result.entry.line)
        root = _merkle.root_of([_merkle.leaf_hash(line) for line in lines])
        assert result.head == Head(len(lines), root.hex())
    assert log.head() == result.head
    data = (tmp_path / ".notanda" / "log.jsonl").read_bytes()
    assert data == b"".join(line + b"\n" for line in lines)
    assert audit(tmp_path).exit_code == 0


def test_a_second_log_object_sees_entries_written_by_the_first(tmp_path: Path) -> None:
    first, second = EvidenceLog(tmp_path), EvidenceLog(tmp_path)
    evidence_id, receipt = sealed(tmp_path, first)
    assert second.lookup(evidence_id) == [(0, EntryType.SEALED, receipt)]
    other_id, other_receipt = sealed(tmp_path)
    appended = second.append(other_id, other_receipt)
    assert appended.entry.index == 1
    assert appended.entry.prev != "0" * 64
    assert first.head() == appended.head


def test_latest_entries_give_each_record_its_last_entry_in_log_order(tmp_path: Path) -> None:
    log = EvidenceLog(tmp_path)
    older, older_receipt = sealed(tmp_path, log)
    pruned, _ = sealed(tmp_path, log)
    newer, newer_receipt = sealed(tmp_path, log)
    log.append(pruned, None, EntryType.TOMBSTONE, reason="pruned")
    assert EvidenceLog(tmp_path).latest_entries() == [
        (0, EntryType.SEALED, older, older_receipt),
        (2, EntryType.SEALED, newer, newer_receipt),
        (3, EntryType.TOMBSTONE, pruned, None),
    ]


def test_after_log_append_stage_is_reported(tmp_path: Path) -> None:
    seen: list[tuple[Stage, str]] = []
    log = EvidenceLog(tmp_path, on_stage=lambda stage, i: seen.append((stage, i)))
    evidence_id, _ = sealed(tmp_path, log)
    assert seen == [(Stage.AFTER_LOG_APPEND, evidence_id)]


def test_log_files_are_private(tmp_path: Path) -> None:
    sealed(tmp_path, EvidenceLog(tmp_path))
    folder = tmp_path / ".notanda"
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / "log.jsonl").stat().st_mode & 0o777 == 0o600


def test_a_torn_tail_is_set_aside_and_repaired_explicitly(tmp_path: Path) -> None:
    log = EvidenceLog(tmp_path)
    sealed(tmp_path, log)
    path = tmp_path / ".notanda" / "log.jsonl"
    with path.open("ab") as stream:
        stream.write(b'{"evidence_id":"half')
    assert audit(tmp_path).exit_code == 3
    sealed(tmp_path, EvidenceLog(tmp_path))
    torn = list((tmp_path / ".notanda").glob("torn-*"))
    assert [p.read_bytes() for p in torn] == [b'{"evidence_id":"half']
    assert audit(tmp_path).exit_code == 0


def test_a_log_truncated_behind_a_writers_back_is_refused(tmp_path: Path) -> None:
    log = EvidenceLog(tmp_path)
    sealed(tmp_path, log)
    sealed(tmp_path, log)
    path = tmp_path / ".notanda" / "log.jsonl"
    path.write_bytes(path.read_bytes().split(b"\n")[0] + b"\n")
    evidence_id, receipt = sealed(tmp_path)
    with pytest.raises(EvidenceLogError) as caught:
        log.append(evidence_id, receipt)
    assert caught.value.reason is LogReason.SHRUNK


def test_a_symlinked_log_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(elsewhere, root / ".notanda")
    evidence_id, receipt = sealed(root)
    with pytest.raises(EvidenceLogError) as caught:
        EvidenceLog(root).append(evidence_id, receipt)
    # A string enum, whose str() is the documented log_reason.
    assert caught.value.reason is StorageReason.SYMLINK
    assert str(caught.value) == "evidence log unavailable: symlink"
    assert list(elsewhere.iterdir()) == []


def test_reading_never_follows_a_linked_log_folder(tmp_path: Path) -> None:
    """A forged log behind a linked .notanda/ is never read to decide 'logged'."""
    forged_root = tmp_path / "forged"
    forged_root.mkdir()
    evidence_id, _ = sealed(forged_root, EvidenceLog(forged_root))
    root = tmp_path / "root"
    root.mkdir()
    shutil.copytree(forged_root / evidence_id, root / evidence_id)
    os.symlink(forged_root / ".notanda", root / ".notanda")
    with pytest.raises(EvidenceLogError) as caught:
        EvidenceLog(root).lookup(evidence_id)
    assert caught.value.reason is StorageReason.SYMLINK
    (root / ".notanda").unlink()
    (root / ".notanda").write_text("not a folder")
    with pytest.raises(EvidenceLogError) as caught:
        EvidenceLog(root).lookup(evidence_id)
    assert caught.value.reason is StorageReason.NOT_A_DIRECTORY


def test_a_failed_write_leaves_no_partial_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    log = EvidenceLog(tmp_path)
    sealed(tmp_path, log)
    before = (tmp_path / ".notanda" / "log.jsonl").read_bytes()
    real_write = os.write

    def half(fd: int, data: bytes) -> int:
        real_write(fd, data[:5])
        raise OSError(errno.ENOSPC, "full")

    evidence_id, receipt = sealed(tmp_path)
    monkeypatch.setattr(_log.os, "write", half)
    with pytest.raises(EvidenceLogError) as caught:
        log.append(evidence_id, receipt)
    monkeypatch.undo()
    assert caught.value.reason == "no_space"
    assert (tmp_path / ".notanda" / "log.jsonl").read_bytes() == before
    assert log.append(evidence_id, receipt).entry.index == 1


def test_windows_code_path_appends_the_same_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(verify_file, "USE_DIR_FD", False)
    log = EvidenceLog(tmp_path)
    for _ in range(3):
        sealed(tmp_path, log)
    monkeypatch.undo()
    assert audit(tmp_path).exit_code == 0
    assert log.head().size == 3


def _append_many(root: str, count: int) -> list[str]:
    log = EvidenceLog(root)
    ids = []
    for _ in range(count):
        evidence_id, receipt = sealed(Path(root))
        log.append(evidence_id, receipt)
        ids.append(evidence_id)
    return ids


def test_appends_from_several_processes_lose_nothing_and_never_fork(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        batches = pool.starmap(_append_many, [(str(tmp_path), 25)] * 4)
    result = audit(tmp_path)
    assert result.exit_code == 0
    assert len(result.entries) == 100
    assert sorted(e.evidence_id for e in result.entries) == sorted(i for b in batches for i in b)
    assert [e.index for e in result.entries] == list(range(100))


def test_lookup_by_id(tmp_path: Path) -> None:
    log = EvidenceLog(tmp_path)
    evidence_id, receipt = sealed(tmp_path, log)
    assert log.lookup(evidence_id) == [(0, EntryType.SEALED, receipt)]
    assert log.lookup("0" * 32) == []


def test_head_parsing() -> None:
    head = Head.parse("12:" + "ab" * 32)
    assert (head.size, str(head)) == (12, "12:" + "ab" * 32)
    for bad in ("12", "x:" + "ab" * 32, "12:" + "AB" * 32, "12:abc", "-1:" + "ab" * 32):
        with pytest.raises(ValueError, match="SIZE:ROOT"):
            Head.parse(bad)


def test_timestamps_are_formatted_from_aware_moments_only() -> None:
    moment = dt.datetime(2026, 5, 22, 14, 0, 0, 123999, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert verify_file.format_timestamp(moment) == "2026-05-22T12:00:00.123Z"
    assert verify_file.parse_timestamp("2026-05-22T12:00:00.123Z") == moment.replace(
        microsecond=123000
    )
    # A naive moment used to be taken as the machine's local time.
    with pytest.raises(ValueError, match="naive"):
        verify_file.format_timestamp(dt.datetime(2026, 5, 22, 12, 0))


def test_reading_a_timestamp_loads_no_strptime() -> None:
    # Every log line's time is read; strptime's first call imports _strptime and
    # builds the locale's patterns, which fell inside a server's first search.
    code = (
        "import sys\n"
        "from notanda_evidence import verify_file\n"
        "verify_file.parse_timestamp('2026-05-22T12:00:00.123Z')\n"
        "print('_strptime' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(
    "time",
    [
        "2026-13-22T12:00:00.123Z",  # no month 13
        "2026-05-22T12:00:60.123Z",
        "\u0662\u0660\u0662\u0666-05-22T12:00:00.123Z",  # Arabic-Indic digits
        "2026-05-22T12:00:00.123+00:00",
        "2026-05-22T12:00:00Z",
    ],
)
def test_a_log_entry_whose_time_names_no_moment_is_malformed(time: str) -> None:
    entry = {
        "evidence_id": "ab" * 16,
        "index": 0,
        "prev": "00" * 32,
        "receipt": "cd" * 32,
        "time": time,
        "type": "sealed",
        "v": 1,
    }
    good = verify_file.canonical_bytes({**entry, "time": "2026-05-22T12:00:00.123Z"})
    assert _log.parse_line(good.rstrip(b"\n")) is not None
    line = verify_file.canonical_bytes(entry).rstrip(b"\n")
    assert _log.parse_line(line) is None
    with pytest.raises(ValueError, match="timestamp"):
        verify_file.parse_timestamp(time)
