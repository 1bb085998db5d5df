"""Operators beside live writers: adopt and prune while two processes seal and log records.

Two writer processes do what a server does for each search (create, write,
seal, append to the log), and leave every fourth record unlogged as a server
does when its append fails. Beside them two processes adopt and a third
prunes, over and over. Whatever the interleaving, the log must end with
every record exactly once (logged, adopted or tombstoned), and audit clean.
"""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pytest
from notanda_evidence import EntryType, EvidenceLog, EvidenceStore, adopt, audit, prune
from notanda_evidence._log import parse_log, read_log

RECORDS_PER_WRITER = 30
ROUNDS = 400  # an upper bound for each operator; they stop once the writers are done


def _write(root: str, ready: threading.Event) -> list[str]:
    ready.wait()
    log = EvidenceLog(root)
    ids = []
    for number in range(RECORDS_PER_WRITER):
        writer = EvidenceStore(root).create()
        writer.write_request({"evidence_id": writer.evidence_id})
        writer.write_provider({})
        writer.write_response({"evidence_id": writer.evidence_id, "status": "ok", "results": []})
        seal = writer.seal()
        if number % 4:
            log.append(seal.evidence_id, seal.receipt)
        ids.append(seal.evidence_id)
    return ids


def _adopt_until(root: str, ready: threading.Event, done: threading.Event) -> int:
    ready.wait()
    rounds = 0
    while not done.is_set() and rounds < ROUNDS:
        adopt(root, min_age_s=0)
        rounds += 1
    return rounds


def _prune_until(root: str, ready: threading.Event, done: threading.Event) -> int:
    ready.wait()
    rounds = 0
    while not done.is_set() and rounds < ROUNDS:
        data, _ = read_log(root)
        entries, _, _ = parse_log(data)
        logged = {e.evidence_id for e in entries if e.type is not EntryType.TOMBSTONE}
        gone = {e.evidence_id for e in entries if e.type is EntryType.TOMBSTONE}
        # A deterministic third of the logged records, each pruned by whichever
        # run (this one or a later one) sees it first.
        chosen = sorted(i for i in logged - gone if int(i[0], 16) % 3 == 0)
        present = [i for i in chosen if (Path(root) / i).exists()]
        prune(root, present[:2], reason="withdrawn during the test")
        rounds += 1
    return rounds


@pytest.mark.timeout(120)
def test_adopt_and_prune_beside_two_writers_never_log_twice_or_lose_a_record(
    tmp_path: Path,
) -> None:
    root = str(tmp_path)
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, context.Pool(5) as pool:
        ready, done = manager.Event(), manager.Event()
        operators = [
            pool.apply_async(_adopt_until, (root, ready, done)),
            pool.apply_async(_adopt_until, (root, ready, done)),
            pool.apply_async(_prune_until, (root, ready, done)),
        ]
        writers = [pool.apply_async(_write, (root, ready)) for _ in range(2)]
        ready.set()
        written = {i for w in writers for i in w.get(timeout=100)}
        done.set()
        rounds = [o.get(timeout=100) for o in operators]
    assert all(r >= 1 for r in rounds)
    adopt(root, min_age_s=0)  # the unlogged records nobody adopted in time

    result = audit(root)
    codes = sorted({f.code.value for f in result.log_findings})
    assert "log.duplicate_entry" not in codes
    assert result.exit_code == 0, codes
    statuses = result.log_status
    assert set(statuses) == written
    tombstoned = {i for i, s in statuses.items() if s == "tombstoned"}
    assert {r.evidence_id for r in result.records} == written - tombstoned
    record_entries = [e for e in result.entries if e.type is not EntryType.TOMBSTONE]
    assert len(record_entries) == len({e.evidence_id for e in record_entries}) == len(written)
