"""What a record or the log can do to the server, turned into documented answers.

Whoever controls the evidence folder controls the bytes of every record and
of ``.notanda/log.jsonl``. Whatever those bytes are (deep nesting, a huge
file, a FIFO or a device in the log's place), the server answers with a
documented code and never ``internal_error``; a search whose record is
sealed still returns its receipt. The readers in notanda-evidence report
most of these conditions themselves; this module is the server's own
guard, so that an answer never depends on every reader getting every case
right:

* :func:`record_conditions` are the exceptions reading a record may raise;
  ``get_evidence`` answers them as ``integrity_failure``.
* :func:`log_call` runs one log operation: it refuses a log that is not a
  regular file without opening it (opening a FIFO blocks), runs the
  operation in a daemon thread with :data:`LOG_DEADLINE_S`, and turns every
  failure into :class:`LogUnavailable` with a documented ``log_reason``.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import notanda_evidence as evidence

from ._errors import NotandaMcpError

if TYPE_CHECKING:
    from notanda_evidence import EvidenceLog

__all__ = [
    "LOG_DEADLINE_S",
    "LogUnavailable",
    "PendingLogCall",
    "ServerLogReason",
    "bounded",
    "log_call",
    "record_conditions",
    "start_log_call",
]

T = TypeVar("T")

#: How long one read of, or append to, the log may take before the answer says so.
LOG_DEADLINE_S = 10.0


def record_conditions() -> tuple[type[Exception], ...]:
    """What reading a record may raise besides findings.

    A file nested past the parser's depth, too large for memory, unreadable
    or undecodable, and the evidence package's own storage error.
    """
    return (evidence.EvidenceStorageError, RecursionError, MemoryError, OSError, ValueError)


class ServerLogReason(StrEnum):
    """The ``log_reason`` values only the server gives, beside notanda-evidence's own.

    notanda-evidence's :class:`~notanda_evidence.LogReason` (``log_shrunk``,
    ``log_unparsable``, ``log_not_a_file``, ``log_too_large``) and its storage
    reasons cover what its reader finds; these cover what the guard itself
    sees when a reader fails in a way it should not.
    """

    #: A log line nested past the parser's depth (a ``RecursionError``).
    TOO_DEEP = "log_too_deep"
    #: The log did not answer within :data:`LOG_DEADLINE_S` (an append may still land).
    TIMEOUT = "log_timeout"


class LogUnavailable(NotandaMcpError):
    """The log could not be read or appended to; ``reason`` is a documented ``log_reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"evidence log unavailable: {reason}")
        self.reason = reason


def _not_a_regular_file(path: Path) -> bool:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False  # missing, or a folder problem: the log's own code reports it
    return not (stat.S_ISREG(mode) or stat.S_ISLNK(mode))


class _Job:
    """One piece of work handed to a worker, and its outcome once it has one."""

    __slots__ = ("done", "outcome", "work")

    def __init__(self, work: Callable[[], object]) -> None:
        self.work = work
        self.done = threading.Event()
        self.outcome: tuple[bool, object] | None = None


class _Worker:
    """A daemon thread that runs one job at a time and offers itself again when done.

    Starting a thread per log call cost more than the lookup it guarded, so
    workers are kept; but only one that has finished its job is ever handed
    another, so a worker stuck on a file it should never have met (a FIFO
    swapped in after the check) holds up nobody else: it is simply never
    idle again, and the next call starts a fresh worker, as before.
    """

    def __init__(self, name: str, idle: list[_Worker], lock: threading.Lock) -> None:
        self._idle = idle
        self._lock = lock
        self._wake = threading.Condition(threading.Lock())
        self._job: _Job | None = None
        # A daemon: a stuck worker must not keep the process from exiting.
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def give(self, job: _Job) -> None:
        with self._wake:
            self._job = job
            self._wake.notify()

    def _serve(self) -> None:
        while True:
            with self._wake:
                while self._job is None:
                    self._wake.wait()
                job, self._job = self._job, None
            try:
                job.outcome = (True, job.work())
            except BaseException as exc:  # handed to the waiting thread, raised there
                job.outcome = (False, exc)
            del job.work  # nothing of the finished work is kept alive by an idle worker
            with self._lock:
                self._idle.append(self)
            job.done.set()
            del job


#: Idle workers by thread name, and the lock that guards every list in it.
_IDLE: dict[str, list[_Worker]] = {}
_IDLE_LOCK = threading.Lock()


def _start(work: Callable[[], T], name: str) -> _Job:
    job = _Job(work)
    with _IDLE_LOCK:
        idle = _IDLE.setdefault(name, [])
        worker = idle.pop() if idle else None
    if worker is None:
        worker = _Worker(name, idle, _IDLE_LOCK)
    worker.give(job)
    return job


def prestart(name: str = "notanda-log") -> None:
    """Have one idle worker for *name* ready before its first job (the server's warm-up).

    Starting a thread waits for it to run; on a busy machine that cost the
    first search milliseconds (issue 23). Nothing is started when one is idle.
    """
    with _IDLE_LOCK:
        idle = _IDLE.setdefault(name, [])
        if idle:
            return
    worker = _Worker(name, idle, _IDLE_LOCK)
    with _IDLE_LOCK:
        idle.append(worker)


def _finish(job: _Job, timeout_s: float) -> Any:
    if not job.done.wait(timeout_s) or job.outcome is None:
        raise TimeoutError
    ok, value = job.outcome
    if not ok:
        raise value  # type: ignore[misc]
    return value


def bounded(work: Callable[[], T], timeout_s: float, *, name: str = "notanda-log") -> T:
    """Run *work* in a daemon thread; its result or exception, or TimeoutError after *timeout_s*."""
    result: T = _finish(_start(work, name), timeout_s)
    return result


class PendingLogCall(Generic[T]):
    """A log operation already running; :meth:`result` waits for it under the guard.

    ``get_evidence`` starts its lookup before it verifies the record, so that
    the hand-off to the log worker overlaps the verification (issue 11); the
    lookup's outcome only counts once the record has checked out.
    """

    def __init__(self, job: _Job | None, refused: LogUnavailable | None) -> None:
        self._job = job
        self._refused = refused

    def result(self) -> T:
        """The operation's result, waiting at most :data:`LOG_DEADLINE_S`.

        Raises:
            LogUnavailable: As :func:`log_call`.
        """
        if self._job is None:
            raise self._refused or LogUnavailable(evidence.LogReason.NOT_A_FILE)
        try:
            result: T = _finish(self._job, LOG_DEADLINE_S)
        except evidence.EvidenceLogError as exc:
            raise LogUnavailable(exc.reason) from exc
        except TimeoutError as exc:
            raise LogUnavailable(ServerLogReason.TIMEOUT) from exc
        except RecursionError as exc:
            raise LogUnavailable(ServerLogReason.TOO_DEEP) from exc
        except MemoryError as exc:
            raise LogUnavailable(evidence.LogReason.TOO_LARGE) from exc
        except OSError as exc:
            # Reading the log raises a bare OSError when .notanda/ is not a
            # folder (ENOTDIR); it is the same failure as an unreadable log.
            raise LogUnavailable(
                evidence.EvidenceStorageError.from_os_error(exc).reason.value
            ) from exc
        except ValueError as exc:
            raise LogUnavailable(evidence.LogReason.UNPARSABLE) from exc
        return result


def start_log_call(log: EvidenceLog, work: Callable[[], T]) -> PendingLogCall[T]:
    """Start one log operation under the guard; a log that is not a regular file is never opened."""
    if _not_a_regular_file(log.path):
        return PendingLogCall(None, LogUnavailable(evidence.LogReason.NOT_A_FILE))
    return PendingLogCall(_start(work, "notanda-log"), None)


def log_call(log: EvidenceLog, work: Callable[[], T]) -> T:
    """Run one log operation under the guard described in the module docstring.

    Raises:
        LogUnavailable: The log is not a regular file, the operation did not
            finish within :data:`LOG_DEADLINE_S`, or it failed.
    """
    return start_log_call(log, work).result()
