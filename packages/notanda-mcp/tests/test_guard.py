"""The guard's deadline runner: workers are reused, but never one that is still busy."""

from __future__ import annotations

import threading

import pytest
from notanda_mcp._guard import bounded


def test_the_result_and_the_exception_reach_the_caller() -> None:
    assert bounded(lambda: 42, 10) == 42

    def fails() -> None:
        raise ValueError("from the worker")

    with pytest.raises(ValueError, match="from the worker"):
        bounded(fails, 10)


def test_consecutive_calls_reuse_one_daemon_worker() -> None:
    """Starting a thread per call cost more than a log lookup (issue 11)."""
    first = bounded(threading.current_thread, 10, name="notanda-test-reuse")
    second = bounded(threading.current_thread, 10, name="notanda-test-reuse")
    assert first is second
    assert first is not threading.current_thread()
    assert first.daemon
    assert first.name == "notanda-test-reuse"


def test_a_stuck_worker_is_never_handed_another_call() -> None:
    release = threading.Event()
    stuck: list[threading.Thread] = []

    def hang() -> None:
        stuck.append(threading.current_thread())
        release.wait(30)

    try:
        with pytest.raises(TimeoutError):
            bounded(hang, 0.05, name="notanda-test-stuck")
        # Not queued behind the stuck call: a fresh worker answers at once.
        later = bounded(threading.current_thread, 10, name="notanda-test-stuck")
        assert later is not stuck[0]
        assert stuck[0].is_alive()
    finally:
        release.set()


def test_concurrent_callers_each_get_their_own_worker() -> None:
    """Two calls that need each other to finish would time out if they shared a worker."""
    meet = threading.Barrier(2, timeout=10)
    seen: list[threading.Thread] = []
    failures: list[BaseException] = []

    def caller() -> None:
        try:
            seen.append(bounded(lambda: (meet.wait(), threading.current_thread())[1], 10))
        except BaseException as exc:  # reported by the assertion below
            failures.append(exc)

    callers = [threading.Thread(target=caller) for _ in range(2)]
    for thread in callers:
        thread.start()
    for thread in callers:
        thread.join(20)
    assert failures == []
    assert len(seen) == 2
    assert seen[0] is not seen[1]
