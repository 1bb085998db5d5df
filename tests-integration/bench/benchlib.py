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
import re
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

#: The figures issue 11 asks for ("Measure"), in its order: a row measuring one names
#: its key (``Bench.row(..., goal=KEY)``) and the run ends with one table of all of them.
GOALS = {
    "search-raw": "search_literature, 100 KB page, raw client",
    "search-mcp1": "search_literature, 100 KB page, mcp 1.x client",
    "get-raw": "get_evidence with receipt, raw client",
    "get-mcp1": "get_evidence with receipt, mcp 1.x client",
    "first-search": "first search after start, raw client",
    "stubbed-search": "in-process search, fsync stubbed",
    "answer-bytes": "search answer text bytes per work",
    "verify-jobs": "verify 1,000 records, default --jobs",
    "audit-jobs": "audit 10,000 records, default --jobs",
    "large-rss": "peak RSS above baseline, 3.8 MB page",
    "cold-start": "cold start over a bare mcp 2.x server",
}


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
    anchor_python: str | None
    #: ``full``, ``quick`` (scaled down) or ``smoke`` (one or two rounds on tiny inputs,
    #: a stand-in anchor when none is given: only checks that every step runs).
    mode: str
    #: python of a venv with the mcp 1.x SDK (the third client path), if given.
    mcp1_python: str | None = None
    rows: list[Row] = field(default_factory=list)
    goals: dict[str, Row] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    _support: ModuleType | None = None
    _anchor: AnchorWorker | FakeAnchor | None = None

    def row(
        self,
        benchmark: str,
        ours: str,
        reference: str,
        ratio: str,
        target: str,
        *,
        met: bool | None,
        goal: str | None = None,
    ) -> None:
        """Add a line; *met* is None for a figure that is only reported.

        *goal* names the issue-11 figure (a key of :data:`GOALS`) the line measures.
        """
        row = Row(benchmark, ours, reference, ratio, target, verdict(met))
        self.rows.append(row)
        if goal is not None:
            if goal not in GOALS:
                raise KeyError(f"unknown goal {goal!r}")
            self.goals[goal] = row

    def note(self, text: str) -> None:
        self.notes.append(text)

    def failed(self, what: str, reason: str) -> None:
        """Record that *what* could not be measured; the run will exit 1."""
        self.failures.append(f"{what}: {reason}")
        self.rows.append(Row(what, "not measured", reason[:60], "-", "-", "n/a"))

    @property
    def quick(self) -> bool:
        """Sizes are scaled down (``--quick`` or ``--smoke``)."""
        return self.mode != "full"

    @property
    def smoke(self) -> bool:
        return self.mode == "smoke"

    @property
    def fake_anchor(self) -> bool:
        """``--smoke`` without an anchor venv: ours stands in for 0.1.0b3 on its side."""
        return self.smoke and self.anchor_python is None

    @property
    def has_anchor(self) -> bool:
        """Whether anchor-side figures can be taken (real or, in smoke, stood in for)."""
        return self.anchor_python is not None or self.fake_anchor

    def scale(self, full: int, quick: int, smoke: int = 1) -> int:
        return {"full": full, "quick": quick, "smoke": smoke}[self.mode]

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

    def fixture(self, name: str) -> bytes:
        """One recorded OpenAlex body, from the repository's ``tests-support/fixtures/openalex``."""
        sys.path.insert(0, str(self.repo_root / "tests-support"))
        from openalex_fixtures import fixture_bytes

        return fixture_bytes(name)

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
            if self.smoke:  # the same code paths on the small page
                builders = dict.fromkeys(builders, builders["small"])
            if name.startswith("record"):
                index = int(name[len("record") :])
                data = support.realistic_page(10, 100_000 + 8_000 * index)
            else:
                data = builders[name]()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return path

    def anchor(self) -> AnchorWorker | FakeAnchor:
        """The worker process in the anchor's venv (started on first use)."""
        if self._anchor is None:
            if self.fake_anchor:
                self._anchor = FakeAnchor()
            elif self.anchor_python is None:
                raise RuntimeError("no --anchor-python given")
            else:
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


class FakeAnchor:
    """Answers ``anchor_worker.py``'s operations with fixed figures (``--smoke`` only).

    Our side of every step still runs; the anchor's figures are meaningless.
    """

    _ID = re.compile(r"[0-9a-f]{32}")

    def call(self, op: str, **arguments: Any) -> dict[str, Any]:
        if op == "verify":
            names = [name for name in os.listdir(arguments["root"]) if self._ID.fullmatch(name)]
            return {"seconds": 1.0, "records": len(names), "ok": len(names)}
        if op == "body":
            return {"seconds": 1.0, "results": arguments["limit"]}
        if op == "memory":
            size = os.path.getsize(arguments["page"])
            return {"body_bytes": size, "peak_bytes": size, "encoded_bytes": size}
        raise RuntimeError(f"unknown anchor operation {op!r}")

    def close(self) -> None:
        pass


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
