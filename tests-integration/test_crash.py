"""Crash safety: SIGKILL at every stage of a search and at random moments; shutdown; cancellation.

Afterwards every record is complete or incomplete, never corrupt; no receipt
was ever returned for a record that does not verify (and every one returned is
logged); a fresh server's ``get_evidence`` and the verifier agree on every
record; the log audits with exit 0 or 3, never 1; and the next server keeps
working on the same root. Power-loss durability is argued from the fsync
order in the threat model, not tested here.
"""

from __future__ import annotations

import hashlib
import json
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from harness import (
    MODERN,
    RawSession,
    ServerGone,
    audit_json,
    launcher_argv,
    record_ids,
    session,
    tool_result,
    verdicts,
    verify_json,
)

PAYLOADS = ("request.json", "provider.json", "response.json")
#: What a kill at each stage leaves: the files in the record folder, and its verdict.
AFTER_KILL: dict[str, tuple[tuple[str, ...], str, str | None]] = {
    # stage: (files present, verifier outcome, log status in the audit)
    "before_request": ((), "incomplete", None),
    "after_request": (("request.json",), "incomplete", None),
    "provider_wait": (("request.json",), "incomplete", None),
    "in_provider": (("request.json",), "incomplete", None),
    "after_provider": (("request.json", "provider.json"), "incomplete", None),
    "after_response": (PAYLOADS, "incomplete", None),
    "before_manifest": (PAYLOADS, "incomplete", None),
    "after_manifest": ((*PAYLOADS, "manifest.json"), "ok", "unlogged"),
    "after_log_append": ((*PAYLOADS, "manifest.json"), "ok", "logged"),
    "before_reply": ((*PAYLOADS, "manifest.json"), "ok", "logged"),
}
SEED = 20261130


def _receipt_of(root: Path, evidence_id: str) -> str:
    return hashlib.sha256((root / evidence_id / "manifest.json").read_bytes()).hexdigest()


def verdicts_with(root: Path, receipts: dict[str, str]) -> str:
    """The verifier's single verdict on the records named in *receipts*, receipts checked."""
    found = verdicts(root, receipts)
    (outcome,) = {found[evidence_id] for evidence_id in receipts}
    return outcome


def _agree(raw: RawSession, evidence_id: str, verdict: str, receipt: str | None) -> dict[str, Any]:
    """get_evidence on a fresh server says what the verifier says."""
    content, is_error = raw.get(evidence_id, receipt)
    if verdict == "incomplete":
        assert (content, is_error) == ({"evidence_id": evidence_id, "status": "incomplete"}, True)
    else:
        assert verdict == "ok"
        assert not is_error, content
        assert content["status"] in ("ok", "error")
        assert content["evidence_id"] == evidence_id
        if receipt is not None:
            assert content["receipt"] == receipt
    return content


@pytest.mark.parametrize("stage", list(AFTER_KILL))
def test_sigkill_at_each_stage(root: Path, stage: str) -> None:
    files, verdict, logged = AFTER_KILL[stage]
    with RawSession(launcher_argv(root, "--kill-at", stage)) as raw:
        raw.start()
        request_id = raw.send_call("search_literature", {"query": "crash at " + stage, "limit": 3})
        with pytest.raises(ServerGone):
            raw.wait(request_id, timeout=60)
        assert raw.wait_exit() == -signal.SIGKILL
        assert not raw.answered(request_id)  # no receipt was returned

    (evidence_id,) = record_ids(root)
    assert sorted(p.name for p in (root / evidence_id).iterdir()) == sorted(files)
    code, report = verify_json(root, full=True)
    (record,) = report["records"]
    assert record["outcome"] == verdict, record
    assert code == (3 if verdict == "incomplete" else 0)
    if verdict == "incomplete":
        codes = {f["code"] for f in record["findings"] if f["severity"] == "error"}
        assert codes == {"record.no_manifest"}

    code, audit = audit_json(root)
    assert code == (0 if logged == "logged" else 3), audit
    assert audit["log_status"].get(evidence_id) == logged

    # A fresh server agrees with the verifier and goes on working on the same root.
    receipt = _receipt_of(root, evidence_id) if verdict == "ok" else None
    with session(root) as raw:
        stored = _agree(raw, evidence_id, verdict, receipt)
        if verdict == "ok":
            assert stored["logged"] is (logged == "logged")
        content, is_error = raw.search("after the crash")
        assert not is_error, content
    code, report = verify_json(root)
    assert code == (3 if verdict == "incomplete" else 0)
    assert {r["evidence_id"]: r["outcome"] for r in report["records"]} == {
        evidence_id: verdict,
        content["evidence_id"]: "ok",
    }
    code, _ = audit_json(root)
    assert code == (0 if logged == "logged" else 3)


def test_sigkill_at_random_moments(root: Path) -> None:
    rng = random.Random(SEED)
    returned: dict[str, str] = {}
    cut_off = 0
    for round_number in range(6):
        with RawSession(launcher_argv(root, "--delay", "0.08")) as raw:
            raw.start()
            # Warm up (imports, first record), then a burst that queues on the two slots.
            content, is_error = raw.search(f"warm-up {round_number}")
            assert not is_error, content
            returned[content["evidence_id"]] = content["receipt"]
            ids = [
                raw.send_call("search_literature", {"query": f"round {round_number} #{i}"})
                for i in range(8)
            ]
            time.sleep(rng.uniform(0.02, 0.38))
            raw.kill()
            for request_id in ids:
                if not raw.answered(request_id):
                    cut_off += 1
                    continue
                content, is_error = tool_result(raw.wait(request_id, 0))
                # An answer that arrived is a success with a receipt, never anything else.
                assert not is_error, content
                returned[content["evidence_id"]] = content["receipt"]
    assert cut_off > 0, "no search was in flight at any kill: the test exercised nothing"

    receipts_file = root.parent / "returned.receipts"
    receipts_file.write_text("".join(f"{k} {v}\n" for k, v in returned.items()))
    code, report = verify_json(root, receipts=receipts_file, full=True)
    assert code in (0, 3), report
    verdicts = {r["evidence_id"]: r["outcome"] for r in report["records"]}
    assert set(verdicts.values()) <= {"ok", "incomplete"}, verdicts
    assert {verdicts[e] for e in returned} == {"ok"}
    for record in report["records"]:
        if record["evidence_id"] in returned:
            assert record["receipt_checked"] is True

    code, audit = audit_json(root)
    assert code in (0, 3), audit
    assert {f["code"] for f in audit["log"] if f["severity"] == "error"} <= {
        "log.tail_torn",
        "log.record_unlogged",
    }
    for evidence_id in returned:
        assert audit["log_status"][evidence_id] == "logged"

    with session(root) as raw:
        for evidence_id, verdict in verdicts.items():
            _agree(raw, evidence_id, verdict, returned.get(evidence_id))
        content, is_error = raw.search("after the kills")
        assert not is_error, content
    code, audit = audit_json(root)
    assert code in (0, 3)
    assert not [f for f in audit["log"] if f["code"] == "log.tail_torn"]


# ------------------------------------------------------------- shutdown


def _start_slow(root: Path, delay: float) -> RawSession:
    raw = RawSession(launcher_argv(root, "--delay", str(delay), "--delay-only-for", "slow"))
    raw.start()
    content, is_error = raw.search("warm-up")  # imports done, first record made
    assert not is_error, content
    return raw


def test_sigterm_lets_a_short_search_seal_and_answer(root: Path) -> None:
    with _start_slow(root, 0.5) as raw:
        request_id = raw.send_call("search_literature", {"query": "slow but finishing"})
        time.sleep(0.2)
        raw.proc.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        content, is_error = tool_result(raw.wait(request_id, timeout=10))
        assert raw.wait_exit(10) == 0
        assert time.monotonic() - stopped < 2.5
    assert not is_error, content
    assert verdicts_with(root, {content["evidence_id"]: content["receipt"]}) == "ok"


def test_sigterm_bounds_the_wait_and_never_reports_success(root: Path) -> None:
    with _start_slow(root, 6.0) as raw:
        request_id = raw.send_call("search_literature", {"query": "too slow"})
        time.sleep(0.2)
        raw.proc.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        late, late_error = raw.tool("search_literature", {"query": "after SIGTERM"}, timeout=10)
        content, is_error = tool_result(raw.wait(request_id, timeout=10))
        assert raw.wait_exit(10) == 0
        waited = time.monotonic() - stopped
    assert (late, late_error) == (
        {"error": "shutting_down", "persisted": False, "status": "error"},
        True,
    )
    assert 1.5 <= waited <= 3.5, f"the grace period is 2 s, the server took {waited:.2f} s"
    _assert_answered_incomplete(root, content, is_error)


def _assert_answered_incomplete(root: Path, content: dict[str, Any], is_error: bool) -> None:
    """The search past the grace was answered shutting_down, its record left incomplete."""
    assert is_error
    assert content["error"] == "shutting_down"
    assert "receipt" not in content
    assert content.get("record_state") == "incomplete"
    code, report = verify_json(root)
    assert code == 3
    verdicts = {r["evidence_id"]: r["outcome"] for r in report["records"]}
    assert verdicts[content["evidence_id"]] == "incomplete"
    assert sorted(verdicts.values()) == ["incomplete", "ok"]


def test_stdin_eof_bounds_the_wait_and_leaves_the_record_incomplete(root: Path) -> None:
    with _start_slow(root, 6.0) as raw:
        request_id = raw.send_call("search_literature", {"query": "too slow"})
        time.sleep(0.2)
        assert raw.proc.stdin is not None
        raw.proc.stdin.close()
        closed = time.monotonic()
        # Answered before the transport closes, as after SIGTERM: never success.
        content, is_error = tool_result(raw.wait(request_id, timeout=10))
        assert raw.wait_exit(10) == 0
        assert time.monotonic() - closed <= 3.5
    _assert_answered_incomplete(root, content, is_error)


# ----------------------------------------------------------- cancellation


def _wait_for(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the server")
        time.sleep(0.02)


def _sealed(root: Path) -> bool:
    return any((root / e / "manifest.json").exists() for e in record_ids(root))


@pytest.mark.parametrize("then", ["client-waits", "client-leaves"])
@pytest.mark.parametrize("era", ["legacy", MODERN])
def test_cancelled_search_is_sealed_and_marked(root: Path, era: str, then: str) -> None:
    """The client cancels a search in flight (notifications/cancelled, as the SDK sends it).

    The search still finishes, seals and logs its record, marked ``cancelled``,
    and the cancelled request is never answered; that holds too when the client
    leaves right after cancelling (stdin EOF while the search is still inside
    the 2 s grace period).
    """
    argv = launcher_argv(root, "--delay", "1.0", "--delay-only-for", "slow")
    with RawSession(argv, era=era) as raw:
        raw.start()
        request_id = raw.send_call("search_literature", {"query": "slow, then cancelled"})
        _wait_for(lambda: any((root / e / "request.json").exists() for e in record_ids(root)))
        raw.send(
            "notifications/cancelled", {"requestId": request_id, "reason": "gave up"}, notify=True
        )
        if then == "client-waits":
            _wait_for(lambda: _sealed(root))
        assert raw.close() == 0
        assert not raw.answered(request_id)
    (evidence_id,) = record_ids(root)
    stored = json.loads((root / evidence_id / "response.json").read_bytes())
    assert stored["status"] == "ok"
    assert stored.get("cancelled") is True, "the record does not say the client cancelled it"
    code, audit = audit_json(root)
    assert code == 0, audit
    assert audit["log_status"][evidence_id] == "logged"
