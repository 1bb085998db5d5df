"""What every benchmark section shares: the result table, timing, pages, the anchor worker.

A section receives one :class:`Bench`, measures, and adds :class:`Row` objects
(one line of the final table each) and free-text notes. Nothing here asserts
a target: a row says whether its target is met, and only a section that could
not measure at all makes the run exit non-zero.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
MIB = 1024 * 1024


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class Row:
    """One line of the table.

    ``reference`` is the anchor's figure where one exists, otherwise the floor
    the target compares with; ``ratio`` is the quantity the target bounds.
    """

    benchmark: str
    ours: str
    reference: str
    ratio: str
    target: str
    met: str


def verdict(ok: bool | None) -> str:
    """``yes``, ``no``, or ``n/a`` for a figure that is only reported."""
    if ok is None:
        return "n/a"
    return "yes" if ok else "no"


def ms(seconds: float, digits: int = 2) -> str:
    return f"{seconds * 1e3:.{digits}f} ms"


def mib(size: float) -> str:
    return f"{size / MIB:.1f} MiB"


def times(value: float) -> str:
    """A ratio with three significant digits, so that a value near its bound reads as such."""
    return f"{value:.3g}x"


@dataclass
class Bench:
    """The run's settings and everything the sections report."""

    workdir: Path
    repo_root: Path
    shared_dir: Path
    anchor_python: str | None
    quick: bool
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    _support: ModuleType | None = None
    _anchor: AnchorWorker | None = None

    def row(
        self,
        benchmark: str,
        ours: str,
        reference: str,
        ratio: str,
        target: str,
        *,
        met: bool | None,
    ) -> None:
        """Add a line; *met* is None for a figure that is only reported."""
        self.rows.append(Row(benchmark, ours, reference, ratio, target, verdict(met)))

    def note(self, text: str) -> None:
        self.notes.append(text)

    def failed(self, what: str, reason: str) -> None:
        """Record that *what* could not be measured; the run will exit 1."""
        self.failures.append(f"{what}: {reason}")
        self.rows.append(Row(what, "not measured", reason[:60], "-", "-", "n/a"))

    def scale(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    # ---------------------------------------------------------------- helpers

    @property
    def support(self) -> ModuleType:
        """``packages/notanda-openalex/tests/bench_support.py``, imported by path.

        It is not shipped in the wheel; it imports only the installed
        ``notanda_openalex``, so the figures are the wheel's.
        """
        if self._support is None:
            path = self.repo_root / "packages/notanda-openalex/tests/bench_support.py"
            spec = importlib.util.spec_from_file_location("notanda_bench_support", path)
            if spec is None or spec.loader is None:
                raise RuntimeError(f"cannot import {path}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self._support = module
        return self._support

    def page(self, name: str) -> Path:
        """The page file *name* under the work directory, built on first use.

        ``small``: 10 realistic works, about 100 KB (the MCP page);
        ``page1m``: 100 works, about 1 MB; ``page4m``: just under the 4 MiB
        ceiling; ``page37``: the "3.7 MB" MCP page (the fixture pool allows
        3.49 or 3.80 MB; the nearer, 3.80 MB, is used); ``recordN``: the
        pages records are built from, of slightly different sizes.
        """
        path = self.workdir / "pages" / f"{name}.json"
        if not path.exists():
            support = self.support
            builders: dict[str, Callable[[], bytes]] = {
                "small": lambda: support.realistic_page(10, 100_000),
                "page1m": lambda: support.realistic_page(),
                "page4m": lambda: support.large_page(),
                "page37": lambda: support.large_page(3_800_000),
            }
            if name.startswith("record"):
                index = int(name[len("record") :])
                data = support.realistic_page(10, 100_000 + 8_000 * index)
            else:
                data = builders[name]()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return path

    def anchor(self) -> AnchorWorker:
        """The worker process in the anchor's venv (started on first use)."""
        if self.anchor_python is None:
            raise RuntimeError("no --anchor-python given")
        if self._anchor is None:
            self._anchor = AnchorWorker(self.anchor_python, self.workdir)
        return self._anchor

    def close(self) -> None:
        if self._anchor is not None:
            self._anchor.close()
            self._anchor = None


# ------------------------------------------------------------------- timing


def timed(func: Callable[[], Any]) -> float:
    """Seconds one call of *func* takes, after a garbage collection."""
    gc.collect()
    started = time.perf_counter()
    func()
    return time.perf_counter() - started


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


@contextlib.contextmanager
def counted_fsync(*, stub: bool) -> Iterator[list[int]]:
    """Count ``os.fsync`` calls; with *stub*, also skip them.

    The evidence writer and the log call ``os.fsync`` through the module
    attribute, so replacing it is seen everywhere. Stubbing is used to build
    benchmark corpora quickly (their durability is irrelevant) and to separate
    a seal's CPU from its fsync wait.
    """
    real = os.fsync
    count = [0]

    def fsync(fd: int) -> None:
        count[0] += 1
        if not stub:
            real(fd)

    os.fsync = fsync
    try:
        yield count
    finally:
        os.fsync = real


@contextlib.contextmanager
def gc_clock() -> Iterator[dict[str, float]]:
    """Time spent in the cyclic garbage collector, and how many full collections ran."""
    spent = {"seconds": 0.0, "full": 0}
    started: list[float] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            spent["seconds"] += time.perf_counter() - started.pop()
            spent["full"] += info.get("generation") == 2

    gc.callbacks.append(callback)
    try:
        yield spent
    finally:
        gc.callbacks.remove(callback)


def proc_status(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` of a live process, in bytes, from ``/proc``."""
    found: dict[str, int] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as stream:
        for line in stream:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) * 1024
    return found


# ------------------------------------------------------------------- anchor


class AnchorWorker:
    """``anchor_worker.py`` running under the anchor's interpreter, one JSON line per call.

    Keeping one process alive lets a benchmark alternate our run and the
    anchor's run in the same session, on a warm page cache.
    """

    def __init__(self, python: str, workdir: Path) -> None:
        self._stderr = (workdir / "anchor-worker.stderr").open("w")
        self._process = subprocess.Popen(
            [python, str(HERE / "anchor_worker.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )

    def call(self, op: str, **arguments: Any) -> dict[str, Any]:
        stdin, stdout = self._process.stdin, self._process.stdout
        if stdin is None or stdout is None:
            raise RuntimeError("anchor worker has no pipes")
        stdin.write(json.dumps({"op": op, **arguments}) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError("the anchor worker exited; see anchor-worker.stderr")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"anchor worker: {answer['error']}")
        return answer

    def close(self) -> None:
        if self._process.poll() is None:
            with contextlib.suppress(OSError):
                self.call_quit()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._stderr.close()

    def call_quit(self) -> None:
        stdin = self._process.stdin
        if stdin is not None:
            stdin.write(json.dumps({"op": "quit"}) + "\n")
            stdin.close()


def interpreter_version(python: str) -> str:
    return subprocess.run(
        [python, "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def machine_summary() -> str:
    model = "unknown CPU"
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as stream:
        for line in stream:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}"
