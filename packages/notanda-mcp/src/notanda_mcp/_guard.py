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
from typing import TYPE_CHECKING, TypeVar

from ._errors import NotandaMcpError

if TYPE_CHECKING:
    from notanda_evidence import EvidenceLog

__all__ = [
    "LOG_DEADLINE_S",
    "LogUnavailable",
    "ServerLogReason",
    "bounded",
    "log_call",
    "record_conditions",
]

T = TypeVar("T")

#: How long one read of, or append to, the log may take before the answer says so.
LOG_DEADLINE_S = 10.0


def record_conditions() -> tuple[type[Exception], ...]:
    """What reading a record may raise besides findings.

    A file nested past the parser's depth, too large for memory, unreadable
    or undecodable, and the evidence package's own storage error.
    """
    from notanda_evidence import EvidenceStorageError

    return (EvidenceStorageError, RecursionError, MemoryError, OSError, ValueError)


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


def bounded(work: Callable[[], T], timeout_s: float, *, name: str = "notanda-log") -> T:
    """Run *work* in a daemon thread; its result or exception, or TimeoutError after *timeout_s*."""
    outcome: list[tuple[bool, object]] = []

    def target() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as exc:  # handed to the waiting thread, raised there
            outcome.append((False, exc))

    # A daemon: a thread stuck on a file it should never have met (a FIFO
    # swapped in after the check) must not keep the process from exiting.
    worker = threading.Thread(target=target, name=name, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if not outcome:
        raise TimeoutError
    ok, value = outcome[0]
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]


def log_call(log: EvidenceLog, work: Callable[[], T]) -> T:
    """Run one log operation under the guard described in the module docstring.

    Raises:
        LogUnavailable: The log is not a regular file, the operation did not
            finish within :data:`LOG_DEADLINE_S`, or it failed.
    """
    from notanda_evidence import EvidenceLogError, EvidenceStorageError, LogReason

    if _not_a_regular_file(log.path):
        raise LogUnavailable(LogReason.NOT_A_FILE)
    try:
        return bounded(work, LOG_DEADLINE_S)
    except EvidenceLogError as exc:
        raise LogUnavailable(exc.reason) from exc
    except TimeoutError as exc:
        raise LogUnavailable(ServerLogReason.TIMEOUT) from exc
    except RecursionError as exc:
        raise LogUnavailable(ServerLogReason.TOO_DEEP) from exc
    except MemoryError as exc:
        raise LogUnavailable(LogReason.TOO_LARGE) from exc
    except OSError as exc:
        # Reading the log raises a bare OSError when .notanda/ is not a
        # folder (ENOTDIR); it is the same failure as an unreadable log.
        raise LogUnavailable(EvidenceStorageError.from_os_error(exc).reason.value) from exc
    except ValueError as exc:
        raise LogUnavailable(LogReason.UNPARSABLE) from exc
