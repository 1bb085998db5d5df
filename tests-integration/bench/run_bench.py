"""Every benchmark figure the package issues ask for, in one table beside notanda-mcp 0.1.0b3's.

Run by ``nox -s bench``, which installs the three built wheels into its venv,
builds a second venv with ``notanda-mcp==0.1.0b3`` (the anchor) and calls::

    python tests-integration/bench/run_bench.py --anchor-python ANCHOR_VENV/bin/python

with ``NOTANDA_REPO_ROOT`` set (for
``packages/notanda-openalex/tests/bench_support.py``, which the wheel does not
ship, and the OpenAlex fixtures in ``tests-support/fixtures/openalex``).
Sections (``--only``): ``evidence`` (verify, seal, log append,
audit, consistency proof), ``openalex`` (body to result, peak memory, the
100-reference check), ``mcp`` (the two servers over real stdio; the reference
check's memory is ours alone) and ``answers`` (answer bytes per
work, the first search after start) and ``bigcheck`` (``check-references`` on a
file of 1,000 references against its ten parts' runs, and its memory; reading
a 10 MB BibTeX file against a 1 MB one, and its memory; issue 19).
``search_literature`` and ``get_evidence``
are measured through three client paths: a raw JSON-RPC client, the mcp 1.x
SDK client (``mcp1_client.py`` under ``--mcp1-python``, a venv nox builds) and
this venv's mcp 2.x SDK client. Targets are shown, not asserted: the run ends
with one table of every figure issue 11 asks for, met or NOT met; the exit
code is 0 when every figure was measured and 1 when one could not be,
whatever the figures say. ``--quick`` scales every size down for development
and says so in the output.

``--smoke`` checks that the bench still runs, not what it measures: every
step runs once or twice on tiny inputs, and without ``--anchor-python`` our
server and fixed figures stand in for the anchor (without ``--mcp1-python``
that client path is left out, with a note). Its exit code is 1 when any step
raised; ``tests-integration/test_bench_smoke.py`` runs it.

Everything is written under a fresh directory in the system temporary
directory (``--workdir`` to choose), removed at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from benchlib import GOALS, Bench, Row, interpreter_version, machine_summary

SECTIONS = ("evidence", "openalex", "mcp", "answers", "bigcheck")
HEADERS = Row("benchmark", "ours", "anchor 0.1.0b3 / floor", "ratio", "target", "met")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--anchor-python",
        help="python of a venv with notanda-mcp==0.1.0b3 installed (the anchor)",
    )
    parser.add_argument(
        "--mcp1-python",
        help="python of a venv with the mcp 1.x SDK (the mcp 1.x client path)",
    )
    parser.add_argument("--only", action="append", choices=SECTIONS, help="run only SECTION")
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument("--quick", action="store_true", help="scaled-down sizes (development)")
    sizes.add_argument(
        "--smoke",
        action="store_true",
        help="every step once on tiny inputs, a stand-in anchor if none: does the bench run?",
    )
    parser.add_argument("--workdir", type=Path, help="where to build corpora (default: a tempdir)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the rows as JSON")
    return parser.parse_args(argv)


def render(rows: list[Row]) -> list[str]:
    """The rows as a fixed-width text table."""
    table = [HEADERS, *rows]
    widths = [max(len(getattr(row, name)) for row in table) for name in Row.__dataclass_fields__]

    def line(row: Row) -> str:
        cells = [getattr(row, name) for name in Row.__dataclass_fields__]
        return " | ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True))

    rule = "-+-".join("-" * width for width in widths)
    return [line(HEADERS), rule, *(line(row) for row in rows)]


def summary(bench: Bench) -> list[Row]:
    """Every figure issue 11 asks for, in its order; one not measured is NOT met."""
    rows = []
    for key, what in GOALS.items():
        row = bench.goals.get(key)
        if row is None:
            rows.append(Row(what, "not measured", "-", "-", "-", "NOT met"))
        else:
            met = {"yes": "met", "no": "NOT met"}.get(row.met, row.met)
            rows.append(Row(what, row.ours, row.reference, row.ratio, row.target, met))
    return rows


def reproduce(args: argparse.Namespace, anchor_python: str | None) -> list[str]:
    here = Path(__file__).resolve()
    repo = os.environ.get("NOTANDA_REPO_ROOT") or str(here.parents[2])
    direct = [sys.executable, str(here)]
    if anchor_python:
        direct += ["--anchor-python", anchor_python]
    if args.mcp1_python:
        direct += ["--mcp1-python", os.path.abspath(args.mcp1_python)]
    for section in args.only or ():
        direct += ["--only", section]
    for flag in ("quick", "smoke"):
        if getattr(args, flag):
            direct.append(f"--{flag}")
    return [
        "# the whole run (builds the wheels, the bench venv and, once, the anchor venv):",
        f"cd {shlex.quote(repo)} && nox -s bench",
        "# this run again, in the venvs nox built (after the wheels are installed there):",
        f"cd {shlex.quote(repo)} && NOTANDA_REPO_ROOT={shlex.quote(repo)} {shlex.join(direct)}",
        "# one section: add --only evidence|openalex|mcp|answers|bigcheck; development sizes: "
        "add --quick",
    ]


def format_load(load: tuple[float, float, float]) -> str:
    return " / ".join(f"{value:.2f}" for value in load)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    repo_root = Path(os.environ.get("NOTANDA_REPO_ROOT") or Path(__file__).resolve().parents[2])
    # The servers the bench starts read the OpenAlex fixtures through it.
    os.environ.setdefault("NOTANDA_REPO_ROOT", str(repo_root))
    anchor_python = os.path.abspath(args.anchor_python) if args.anchor_python else None
    if args.workdir:
        workdir = args.workdir.resolve()
        workdir.mkdir(parents=True, exist_ok=False)
    else:
        workdir = Path(tempfile.mkdtemp(prefix="notanda-bench-"))
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    mcp1_python = os.path.abspath(args.mcp1_python) if args.mcp1_python else None
    bench = Bench(workdir, repo_root, anchor_python, mode, mcp1_python)
    if anchor_python is None and not bench.smoke:
        bench.failures.append("anchor: no --anchor-python given; anchor figures missing")

    import notanda_evidence
    import notanda_mcp
    import notanda_openalex

    print(f"notanda benchmarks, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine_summary()}")
    print(
        f"ours: notanda-evidence {notanda_evidence.__version__}, notanda-openalex "
        f"{notanda_openalex.__version__}, notanda-mcp {notanda_mcp.__version__} "
        f"({sys.executable})"
    )
    if anchor_python:
        print(
            f"anchor: notanda-mcp 0.1.0b3 on Python {interpreter_version(anchor_python)} "
            f"({anchor_python})"
        )
    if mcp1_python:
        print(f"mcp 1.x client: Python {interpreter_version(mcp1_python)} ({mcp1_python})")
    banner = {
        "full": "",
        "quick": " (QUICK: scaled-down sizes)",
        "smoke": " (SMOKE: does every step run? the figures mean nothing"
        + ("; ours stands in for the anchor)" if bench.fake_anchor else ")"),
    }[mode]
    print(f"work directory: {workdir}{banner}")
    load_before = os.getloadavg()
    print(f"load average (1/5/15 min) at start: {format_load(load_before)}")
    print(flush=True)

    import answer_bench
    import bigcheck_bench
    import evidence_bench
    import mcp_bench
    import openalex_bench

    modules = {
        "evidence": evidence_bench,
        "openalex": openalex_bench,
        "mcp": mcp_bench,
        "answers": answer_bench,
        "bigcheck": bigcheck_bench,
    }
    try:
        for name in args.only or SECTIONS:
            section_started = time.perf_counter()
            print(f"running {name} ...", flush=True)
            try:
                modules[name].run(bench)
            except Exception as exc:
                traceback.print_exc()
                bench.failed(name, f"{type(exc).__name__}: {exc}")
            print(f"  {name} took {time.perf_counter() - section_started:.0f} s", flush=True)
    finally:
        bench.close()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    print()
    for line in render(bench.rows):
        print(line)
    print()
    print("issue 11 targets:")
    for line in render(summary(bench)):
        print(line)
    print()
    print("notes:")
    for note in bench.notes:
        print(f"- {note}")
    print()
    print("reproduce:")
    for line in reproduce(args, anchor_python):
        print(f"  {line}")
    if args.json:
        args.json.write_text(json.dumps([row.__dict__ for row in bench.rows], indent=2) + "\n")
    print()
    print(
        f"total time: {time.perf_counter() - started:.0f} s; load average at the end: "
        f"{format_load(os.getloadavg())} (other work on the machine makes figures noisier)"
    )
    if bench.failures:
        print("could not measure:", file=sys.stderr)
        for failure in bench.failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
