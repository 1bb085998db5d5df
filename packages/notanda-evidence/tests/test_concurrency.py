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


def _write(root: str, started: list[threading.Event]) -> list[str]:
    # Writing begins once every operator is inside its first round, so that
    # however late a pool process starts, the rounds overlap the writing.
    for event in started:
        event.wait()
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


def _adopt_until(root: str, started: threading.Event, done: threading.Event) -> int:
    rounds = 0
    started.set()
    while True:  # at least one round, the first beside the writers (see _write)
        adopt(root, min_age_s=0)
        rounds += 1
        if done.is_set() or rounds >= ROUNDS:
            return rounds


def _prune_until(root: str, started: threading.Event, done: threading.Event) -> int:
    rounds = 0
    started.set()
    while True:  # at least one round, the first beside the writers (see _write)
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
        if done.is_set() or rounds >= ROUNDS:
            return rounds


@pytest.mark.timeout(120)
def test_adopt_and_prune_beside_two_writers_never_log_twice_or_lose_a_record(
    tmp_path: Path,
) -> None:
    root = str(tmp_path)
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, context.Pool(5) as pool:
        started = [manager.Event() for _ in range(3)]
        done = manager.Event()
        operators = [
            pool.apply_async(_adopt_until, (root, started[0], done)),
            pool.apply_async(_adopt_until, (root, started[1], done)),
            pool.apply_async(_prune_until, (root, started[2], done)),
        ]
        writers = [pool.apply_async(_write, (root, started)) for _ in range(2)]
        written = {i for w in writers for i in w.get(timeout=100)}
        done.set()
        # Each operator loops from before the first record until after the last.
        for operator in operators:
            operator.get(timeout=100)
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
