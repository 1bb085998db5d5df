"""Verifying the records of a root on every core: the process pool behind ``--jobs``.

``notanda-evidence verify`` and ``audit`` hand the records of a root to
:func:`records_verifier`, which spreads them over a process pool in chunks and
yields the results in the order it was given the records, so the findings
and their order are exactly those of one process. The records are streamed:
only a few chunks per worker are in flight, so the parent holds a bounded
number of results whatever the size of the root. The pool starts its workers
with ``forkserver`` where the platform has it, else ``spawn``: never ``fork``,
which is unsafe in a process that runs threads. The single-file verifier
(``verify_file.py``) never uses this module: run on its own it stays one
process.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence

from .verify_file import (
    RecordResult,
    RecordsVerifier,
    UsageError,
    collection_paused,
    verify_each,
)

#: Below this many records a pool costs more to start than it saves.
MIN_POOL_RECORDS = 64
#: Records per task: enough that the parent (which hands out the next chunk)
#: wakes up rarely, few enough that the last chunks still even out the work.
CHUNK_RECORDS = 256
#: Chunks in flight per worker: each worker has the next one queued while the
#: parent reads the results of the first. A pass over a root keeps no payload,
#: so the results in flight stay small.
CHUNKS_PER_JOB = 4


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def checked_jobs(jobs: int | None) -> int:
    """The number of processes to use: *jobs*, or every available CPU when None.

    Raises:
        UsageError: *jobs* is less than 1.
    """
    if jobs is None:
        return available_cpus()
    if jobs < 1:
        raise UsageError(
            f"--jobs must be 1 or more, not {jobs}",
            f"give --jobs 1 to verify in this process alone, or leave it out to use "
            f"every CPU this process may use ({available_cpus()})",
        )
    return jobs


def records_verifier(jobs: int, *, min_records: int = MIN_POOL_RECORDS) -> RecordsVerifier | None:
    """A verifier over *jobs* processes, or None (verify in this process) for one job."""
    if jobs <= 1:
        return None
    return functools.partial(_verify_in_pool, jobs=jobs, min_records=min_records)


def _start_method() -> str:
    import multiprocessing  # noqa: PLC0415 - only when a pool starts

    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def _verify_in_pool(
    tasks: Iterable[tuple[str, object]],
    *,
    full: bool,
    keep_payloads: bool,
    jobs: int,
    min_records: int,
) -> Iterator[RecordResult]:
    pending = iter(tasks)
    first = list(itertools.islice(pending, max(min_records, 2)))
    if len(first) < max(min_records, 2):
        yield from verify_each(first, full=full, keep_payloads=keep_payloads)
        return
    # Imported here: every other command, and --jobs 1, never pays for them.
    import multiprocessing  # noqa: PLC0415
    from concurrent.futures import Future, ProcessPoolExecutor  # noqa: PLC0415

    verify_chunk = functools.partial(_verify_chunk, full=full, keep_payloads=keep_payloads)
    context = multiprocessing.get_context(_start_method())
    if context.get_start_method() == "forkserver":
        # Workers fork from a server that has the verifier loaded already.
        context.set_forkserver_preload([__name__])
    chunks = _chunks(itertools.chain(first, pending), CHUNK_RECORDS)
    in_flight: deque[Future[list[RecordResult]]] = deque()
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        for chunk in chunks:
            in_flight.append(pool.submit(verify_chunk, chunk))
            if len(in_flight) >= jobs * CHUNKS_PER_JOB:
                yield from in_flight.popleft().result()
        while in_flight:
            yield from in_flight.popleft().result()


def _chunks(tasks: Iterator[tuple[str, object]], size: int) -> Iterator[list[tuple[str, object]]]:
    while chunk := list(itertools.islice(tasks, size)):
        yield chunk


def _verify_chunk(
    chunk: Sequence[tuple[str, object]], *, full: bool, keep_payloads: bool
) -> list[RecordResult]:
    """One worker's task: a chunk of records, with the collector paused as in one process."""
    with collection_paused():
        return list(verify_each(chunk, full=full, keep_payloads=keep_payloads))
