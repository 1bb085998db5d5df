"""``audit`` and ``verify ROOT`` stream: what they remember per record, and the join's order.

Memory and time at scale are measured by ``nox -s bench`` (``bench_scale``);
here: the packed record IDs, the log read line by line as it was when opened,
findings spilled to disk in order, the pool yielding chunk by chunk in order,
and the join's rules on logs that re-log, re-tombstone and mis-number records.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest
from notanda_evidence import (
    EntryType,
    EvidenceStore,
    LogCode,
    LogStatus,
    Severity,
    _audit,
    _pool,
    audit,
)
from notanda_evidence._log import LogReader, encode_entry, log_finding
from notanda_evidence.verify_file import RecordIds, scan_root, verify_root

TIME = "2026-01-01T00:00:00.000Z"


def _ids(count: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [f"{rnd.getrandbits(128):032x}" for _ in range(count)]


@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 1000])
def test_record_ids_are_sorted_packed_and_found(count: int) -> None:
    names = _ids(count, count)
    ids = RecordIds(names)
    assert len(ids) == count
    assert list(ids) == sorted(names)
    assert ids[1:3] == sorted(names)[1:3]
    for position, name in enumerate(sorted(names)):
        assert ids.position(name) == position
        assert name in ids
    for stranger in _ids(50, count + 7):
        assert ids.position(stranger) is None
    assert ids.position("not an id") is None
    assert "ABC" not in ids


def test_an_id_whose_bytes_straddle_two_neighbours_is_not_found() -> None:
    first, second = "00" * 8 + "ab" * 8, "cd" * 8 + "ef" * 8
    ids = RecordIds([first, second])
    straddling = "ab" * 8 + "cd" * 8  # the tail of one and the head of the next
    assert ids.position(straddling) is None
    assert ids.position(second) == 1


def test_a_root_scan_lists_records_sorted_and_strays_by_name(tmp_path: Path) -> None:
    names = _ids(5, 1)
    for name in names:
        (tmp_path / name).mkdir()
    (tmp_path / "zz").write_text("x")
    (tmp_path / "aa").write_text("x")
    (tmp_path / ".notanda").mkdir()
    ids, strays = scan_root(tmp_path)
    assert list(ids) == sorted(names)
    assert [f.file for f in strays] == ["aa", "zz"]


def _log_lines(
    root: Path, events: list[tuple[str, EntryType, str | None, int, str | None]]
) -> None:
    """Write a chained log of (evidence_id, type, receipt, index, reason) entries."""
    previous, lines = "0" * 64, []
    for evidence_id, kind, receipt, index, reason in events:
        line = encode_entry(
            index=index,
            kind=kind,
            evidence_id=evidence_id,
            receipt=receipt,
            time=TIME,
            prev=previous,
            reason=reason,
        )
        lines.append(line + b"\n")
        previous = hashlib.sha256(line).hexdigest()
    (root / ".notanda").mkdir(exist_ok=True)
    (root / ".notanda" / "log.jsonl").write_bytes(b"".join(lines))


def _sealed(root: Path) -> tuple[str, str]:
    writer = EvidenceStore(root).create()
    writer.write_request({"evidence_id": writer.evidence_id})
    writer.write_provider({})
    writer.write_response({"evidence_id": writer.evidence_id, "status": "ok"})
    return writer.evidence_id, writer.seal().receipt


def test_the_join_reports_in_the_logs_first_order_with_the_last_entrys_index(
    tmp_path: Path,
) -> None:
    kept, kept_receipt = _sealed(tmp_path)
    present, present_receipt = _sealed(tmp_path)
    gone, twice = "a" * 32, "b" * 32
    other = "c" * 64
    huge = 10**20
    _log_lines(
        tmp_path,
        [
            (gone, EntryType.SEALED, other, 0, None),  # logged, then re-logged, folder gone
            (kept, EntryType.SEALED, kept_receipt, 1, None),
            (twice, EntryType.TOMBSTONE, None, 2, "first"),  # tombstoned twice in one run
            (kept, EntryType.SEALED, kept_receipt, 3, None),  # a duplicate
            (gone, EntryType.TOMBSTONE, None, 4, "pruned"),
            (present, EntryType.TOMBSTONE, None, 5, "early"),
            (twice, EntryType.TOMBSTONE, None, 6, "second"),
            (gone, EntryType.ADOPTED, other, huge, None),  # re-logged after its tombstone
            (present, EntryType.SEALED, present_receipt, 8, None),  # re-logged: not tombstoned
            (present, EntryType.TOMBSTONE, None, 9, "late"),  # tombstoned again, folder kept
        ],
    )
    result = audit(tmp_path)
    at = {f.code for f in result.log_findings}
    assert LogCode.INDEX_MISMATCH in at
    joined = [
        (f.code, f.evidence_id, f.index, f.detail)
        for f in result.log_findings
        if f.code is not LogCode.INDEX_MISMATCH
    ]
    assert joined == [
        (LogCode.DUPLICATE_ENTRY, kept, 3, None),
        (LogCode.RECORD_MISSING, gone, huge, "logged, no tombstone, and the folder is gone"),
        (LogCode.TOMBSTONED, twice, 6, "second"),
        (LogCode.TOMBSTONED, present, 9, "late"),
        (LogCode.TOMBSTONE_PRESENT, present, 9, "pruned, but the folder is still there"),
    ]
    assert result.log_status == {
        kept: LogStatus.LOGGED,
        present: LogStatus.TOMBSTONED,
        twice: LogStatus.TOMBSTONED,
    }
    assert result.exit_code == 1


def test_findings_spilled_to_disk_come_back_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_audit, "_SPOOL_IN_MEMORY", 3)
    spool = _audit._Spool()
    made = [log_finding(LogCode.UNPARSABLE, index=n, severity=Severity.ERROR) for n in range(10)]
    for finding in made:
        spool.add(finding)
    assert list(spool) == made
    assert list(spool) == []  # read once


def test_the_log_is_read_as_it_was_when_opened(tmp_path: Path) -> None:
    evidence_id, receipt = _sealed(tmp_path)
    _log_lines(tmp_path, [(evidence_id, EntryType.SEALED, receipt, 0, None)])
    log = tmp_path / ".notanda" / "log.jsonl"
    before = log.read_bytes()
    with LogReader(tmp_path) as reader:
        with log.open("ab") as appending:
            appending.write(b'{"a later, torn append')
        first = list(reader.lines())
        second = list(reader.lines())
    assert first == second == [(before[:-1], True)]


def test_a_small_log_block_still_yields_whole_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [_sealed(tmp_path) for _ in range(3)]
    _log_lines(tmp_path, [(e, EntryType.SEALED, r, n, None) for n, (e, r) in enumerate(records)])
    expected = audit(tmp_path)
    monkeypatch.setattr(LogReader, "BLOCK", 7)
    assert audit(tmp_path) == expected
    assert expected.exit_code == 0


def test_the_pool_streams_many_chunks_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pool, "CHUNK_RECORDS", 3)
    for _ in range(20):
        _sealed(tmp_path)
    verify_many = _pool.records_verifier(2, min_records=2)
    assert verify_many is not None
    assert verify_root(tmp_path, verify_many=verify_many) == verify_root(tmp_path)
