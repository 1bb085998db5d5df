"""Operators beside two live servers: repeated ``adopt`` and ``prune`` on the root they write.

Two server processes (one per protocol era) each make a stream of searches
into one evidence root, some of them concurrently. Beside them, in their own
processes, the installed ``notanda-evidence`` adopts over and over (with the
default minimum age, which leaves a search's in-flight record alone, and with
``--min-age 0``, which adopts whatever is sealed and unlogged at once) and
prunes records the servers already sealed and logged. Whatever the
interleaving:

* every search answers ``ok`` with a receipt, and every unpruned record
  verifies with it;
* ``adopt`` never fails with the default age; with ``--min-age 0`` it may
  refuse only a record still being written (``incomplete``), and only one a
  search then answered with;
* every pruned record has a tombstone and no folder; every other record is in
  the log exactly once (sealed by its server or adopted), none twice;
* ``audit --head`` with the newest head anyone saw exits 0, without
  ``log.duplicate_entry``, and a last ``adopt --min-age 0`` finds nothing left.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from harness import (
    MODERN,
    RawSession,
    audit_json,
    launcher_argv,
    record_ids,
    run,
    script,
    tool_result,
    verify_json,
)

SEARCHES_PER_SERVER = 40
#: Each server sends its searches in bursts this large, answered concurrently.
BURST = 3
#: Upper bounds for each operator; they stop as soon as both servers are done.
ADOPT_ROUNDS = 30
PRUNE_ROUNDS = 12
#: Every PRUNE_EVERY-th answered search is pruned (deterministically chosen).
PRUNE_EVERY = 5
#: The provider's wait per search: it keeps records in flight (created, not yet
#: sealed) while the operators run, and the servers busy long enough for them.
PROVIDER_DELAY = "0.1"
REASON = "withdrawn beside live servers"
_HEAD_LINE = re.compile(r"^head (\d+:[0-9a-f]{64})$", re.MULTILINE)
_REFUSED_LINE = re.compile(r"^refused ([0-9a-f]{32}): (\S+)$", re.MULTILINE)
_LEFT_LINE = re.compile(r"^left (\d+) incomplete record", re.MULTILINE)
_ADOPTED_LINE = re.compile(r"^adopted ([0-9a-f]{32}) as entry \d+$", re.MULTILINE)


class _Seen:
    """What the servers answered and the operators did, shared by the threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answers: list[dict[str, Any]] = []
        self.heads: list[str] = []
        self.failures: list[str] = []
        self.adopt_runs: list[tuple[bool, int, str, str]] = []  # (min-age 0?, code, out, err)
        self.pruned: list[str] = []
        self.prune_runs = 0
        #: Set at the first answer: before it the root may hold nothing, and the
        #: operators would rightly refuse it as not an evidence root (exit 2).
        self.first_answer = threading.Event()

    def head(self, head: str) -> None:
        with self.lock:
            self.heads.append(head)

    def newest_head(self) -> str:
        with self.lock:
            return max(self.heads, key=lambda head: int(head.split(":")[0]))


def _drive(raw: RawSession, me: int, seen: _Seen, start: threading.Barrier) -> None:
    try:
        start.wait(timeout=60)
        for first in range(0, SEARCHES_PER_SERVER, BURST):
            sent = [
                raw.send_call("search_literature", {"query": f"server {me} search {n}", "limit": 2})
                for n in range(first, min(first + BURST, SEARCHES_PER_SERVER))
            ]
            for request_id in sent:
                content, is_error = tool_result(raw.wait(request_id, timeout=60))
                if is_error or content.get("status") != "ok" or not content.get("receipt"):
                    seen.failures.append(f"server {me}: {content}")
                    continue
                with seen.lock:
                    seen.answers.append(content)
                seen.first_answer.set()
                seen.head(content["head"])
    except BaseException as exc:  # reported by the test, never lost in a thread
        seen.failures.append(f"server {me}: {exc!r}")


def _adopt_beside(seen: _Seen, root: Path, done: threading.Event, nth: int) -> None:
    # Until both servers are done (at least once), at most ADOPT_ROUNDS times.
    seen.first_answer.wait(timeout=60)
    for round_ in range(ADOPT_ROUNDS):
        if done.is_set() and round_ > 0:
            return
        at_once = (round_ + nth) % 2 == 0
        argv = [script("notanda-evidence"), "adopt", "--root", str(root)]
        if at_once:
            argv += ["--min-age", "0"]
        finished = run(argv, timeout=30)
        with seen.lock:
            seen.adopt_runs.append((at_once, finished.returncode, finished.stdout, finished.stderr))
        for head in _HEAD_LINE.findall(finished.stdout):
            seen.head(head)


def _prune_beside(seen: _Seen, root: Path, done: threading.Event) -> None:
    # Until both servers are done (at least once), at most PRUNE_ROUNDS runs.
    while seen.prune_runs < PRUNE_ROUNDS and not (done.is_set() and seen.prune_runs):
        with seen.lock:
            answered = [content["evidence_id"] for content in seen.answers]
            chosen = [
                evidence_id
                for number, evidence_id in enumerate(answered)
                if number % PRUNE_EVERY == PRUNE_EVERY - 1 and evidence_id not in seen.pruned
            ][:2]
        if not chosen:
            time.sleep(0.05)  # no answer to prune yet
            continue
        argv = [script("notanda-evidence"), "prune", *chosen, "--root", str(root)]
        finished = run([*argv, "--reason", REASON], timeout=30)
        with seen.lock:
            seen.prune_runs += 1
            if finished.returncode != 0:
                seen.failures.append(f"prune exited {finished.returncode}: {finished.stderr}")
            seen.pruned += chosen


@pytest.mark.timeout(90)
def test_adopt_and_prune_beside_two_servers_leave_a_clean_log(root: Path, tmp_path: Path) -> None:
    seen = _Seen()
    start = threading.Barrier(2)
    done = threading.Event()
    argv = launcher_argv(root, "--delay", PROVIDER_DELAY)
    began = time.monotonic()
    with (
        RawSession(argv, stderr_path=tmp_path / "a.err") as a,
        RawSession(argv, era=MODERN, stderr_path=tmp_path / "b.err") as b,
    ):
        a.start()
        b.start()
        servers = [
            threading.Thread(target=_drive, args=(raw, me, seen, start))
            for me, raw in enumerate((a, b))
        ]
        operators = [
            threading.Thread(target=_adopt_beside, args=(seen, root, done, nth)) for nth in (0, 1)
        ]
        operators.append(threading.Thread(target=_prune_beside, args=(seen, root, done)))
        for thread in servers + operators:
            thread.start()
        for thread in servers:
            thread.join(timeout=70)
        done.set()
        for thread in operators:
            thread.join(timeout=40)
        assert not seen.failures, seen.failures
        assert a.close() == 0
        assert b.close() == 0
        assert a.garbage == b.garbage == []
    elapsed = time.monotonic() - began

    answered = {content["evidence_id"]: content["receipt"] for content in seen.answers}
    assert len(answered) == len(seen.answers) == 2 * SEARCHES_PER_SERVER
    pruned = set(seen.pruned)
    assert pruned, "prune never ran beside the servers"
    assert seen.adopt_runs, "adopt never ran beside the servers"

    # adopt: never a failure with the default age; with --min-age 0 only a record
    # caught between creation and sealing, which its search then answered with.
    adopted: set[str] = set()
    left = refusals = 0
    for at_once, code, out, err in seen.adopt_runs:
        refused = _REFUSED_LINE.findall(err)
        refusals += len(refused)
        adopted |= set(_ADOPTED_LINE.findall(out))
        left += sum(int(count) for count in _LEFT_LINE.findall(out))
        if at_once:
            assert code == (1 if refused else 0), (code, out, err)
            assert all(o == "incomplete" and i in answered for i, o in refused), err
        else:
            assert code == 0, (code, out, err)
            assert not refused, err

    # Nothing lost, nothing twice: read the log's lines as the format defines them.
    entries = [
        json.loads(line) for line in (root / ".notanda" / "log.jsonl").read_text().splitlines()
    ]
    records = [e["evidence_id"] for e in entries if e["type"] != "tombstone"]
    tombstones = [e["evidence_id"] for e in entries if e["type"] == "tombstone"]
    assert sorted(records) == sorted(answered), "a record is logged twice, or not at all"
    assert sorted(tombstones) == sorted(pruned), "a pruned record has no tombstone, or two"
    assert {e["receipt"] for e in entries if e["type"] != "tombstone"} == set(answered.values())
    assert record_ids(root) == sorted(set(answered) - pruned)

    code, audit = audit_json(root, "--head", seen.newest_head())
    codes = {finding["code"] for finding in audit["log"]}
    assert code == 0, audit["log"]
    assert "log.duplicate_entry" not in codes
    assert "head.consistent" in codes
    statuses = audit["log_status"]
    assert set(statuses) == set(answered)
    assert {i for i, s in statuses.items() if s == "tombstoned"} == pruned
    assert {s for i, s in statuses.items() if i not in pruned} <= {"logged", "adopted"}

    receipts = tmp_path / "receipts.txt"
    receipts.write_text("".join(f"{i} {answered[i]}\n" for i in sorted(set(answered) - pruned)))
    code, report = verify_json(root, receipts=receipts)
    assert code == 0, report
    assert report["summary"]["ok"] == len(answered) - len(pruned)

    last = run([script("notanda-evidence"), "adopt", "--root", str(root), "--min-age", "0"])
    assert last.returncode == 0, last.stderr
    assert not _ADOPTED_LINE.findall(last.stdout), "a sealed record was left unlogged"
    print(
        f"searches {len(answered)}, adopt runs {len(seen.adopt_runs)} (adopted {len(adopted)}, "
        f"left {left} and refused {refusals} in flight), prune runs {seen.prune_runs} "
        f"(pruned {len(pruned)}), {elapsed:.1f} s"
    )
