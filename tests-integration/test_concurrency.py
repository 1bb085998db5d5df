"""Two server processes on one evidence root, searching and retrieving at the same time.

Each process runs 100 searches, each followed by a retrieval of its own new
record and, every fifth time, of the other process's latest one. Afterwards
every record verifies with the receipt its search returned, no ID collides,
nothing is lost, the log holds exactly 200 entries whose indexes are the 200
``log_index`` values the searches returned, and the audit exits 0.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from harness import MODERN, RawSession, audit_json, launcher_argv, record_ids, verify_json

SEARCHES = 100


def test_two_processes_one_root(root: Path, tmp_path: Path) -> None:
    answers: list[list[dict[str, Any]]] = [[], []]
    failures: list[BaseException] = []
    cross_checked = [0, 0]
    start = threading.Barrier(2)

    def drive(me: int, raw: RawSession) -> None:
        other = answers[1 - me]
        try:
            start.wait(timeout=60)
            for i in range(SEARCHES):
                content, is_error = raw.search(f"process {me} search {i}", limit=2)
                assert not is_error, content
                answers[me].append(content)
                stored, is_error = raw.get(content["evidence_id"], content["receipt"])
                assert not is_error, stored
                assert stored["logged"] is True
                if i % 5 == 4 and other:
                    theirs = other[-1]
                    stored, is_error = raw.get(theirs["evidence_id"], theirs["receipt"])
                    assert not is_error, stored
                    assert stored["logged"] is True
                    cross_checked[me] += 1
        except BaseException as exc:
            failures.append(exc)

    with (
        RawSession(launcher_argv(root), stderr_path=tmp_path / "a.err") as a,
        RawSession(launcher_argv(root), era=MODERN, stderr_path=tmp_path / "b.err") as b,
    ):
        a.start()
        b.start()
        threads = [threading.Thread(target=drive, args=(n, raw)) for n, raw in enumerate((a, b))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        if failures:
            raise failures[0]
        assert a.close() == 0
        assert b.close() == 0
        assert a.garbage == b.garbage == []
        assert a.stderr == b.stderr == b""
    assert [len(mine) for mine in answers] == [SEARCHES, SEARCHES]
    assert min(cross_checked) > 0

    everything = answers[0] + answers[1]
    ids = [content["evidence_id"] for content in everything]
    assert len(set(ids)) == 2 * SEARCHES, "an evidence ID was returned twice"
    assert record_ids(root) == sorted(ids), "a record is missing or unexpected"
    assert sorted(content["log_index"] for content in everything) == list(range(2 * SEARCHES))
    for content in everything:
        assert content["log_head"]["size"] == content["log_index"] + 1
    heads = {content["log_head"]["size"]: content["log_head"]["root"] for content in everything}
    assert len(heads) == 2 * SEARCHES, "two searches saw the same head"

    receipts = tmp_path / "receipts.txt"
    receipts.write_text("".join(f"{c['evidence_id']} {c['receipt']}\n" for c in everything))
    code, report = verify_json(root, receipts=receipts)
    assert code == 0, report
    assert report["summary"]["ok"] == 2 * SEARCHES
    assert all(record["receipt_checked"] for record in report["records"])

    # A head handed out half-way is proven to be a prefix of the final log.
    code, audit = audit_json(root, "--head", f"{SEARCHES}:{heads[SEARCHES]}")
    assert code == 0, audit
    assert "head.consistent" in {finding["code"] for finding in audit["log"]}
    code, audit = audit_json(root, "--head", f"{2 * SEARCHES}:{heads[2 * SEARCHES]}")
    assert code == 0, audit
    assert audit["summary"]["log_entries"] == 2 * SEARCHES
    assert set(audit["log_status"].values()) == {"logged"}
    assert audit["head"] == {"size": 2 * SEARCHES, "root": heads[2 * SEARCHES]}
