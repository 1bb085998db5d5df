"""``check-references`` on 1,000 references: the run's time against its parts', and memory.

A BibTeX file of 1,000 references (half with DOIs; ``references_fixture``) is
checked by ``notanda-mcp check-references`` against a fake OpenAlex that
answers each request after 200 ms: once whole (10 parts of 100, in one run),
and once as its ten 100-reference files, one run each. Issue 19 asks for the
whole run to take at most 1.2 times the sum of the ten, and for its peak
memory above idle to stay at most 60 MiB. Each measurement runs in a fresh
process (this file with ``--driver``): idle is its RSS once everything the
check imports is loaded, the peak its ``VmHWM`` after the run (reset first
through ``/proc/self/clear_refs`` where the kernel allows).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchlib import Bench, mib
from references_fixture import check_fixture

HERE = Path(__file__).resolve().parent
TIME_TARGET = 1.2
MEMORY_TARGET_MIB = 60.0


def _status() -> dict[str, int]:
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) * 1024
    return found


def _driver(args: argparse.Namespace) -> int:
    """In a fresh process: check the given files one after another; print times and memory."""
    import httpx
    from notanda_mcp import _check_cli
    from notanda_openalex import read_references
    from references_fixture import check_provider

    transport = httpx.MockTransport(check_provider(args.delay, args.count))
    env = {"HARVESTER_OPENALEX_API_KEY": "bench-key-0123456789"}
    # Everything a check imports, loaded before idle is taken.
    read_references("@article{warm, title={Warm up}, doi={10.5555/warm}}")
    try:
        Path("/proc/self/clear_refs").write_text("5")
        reset = True
    except OSError:
        reset = False
    idle = _status()["VmRSS"]
    seconds = []
    codes = []
    for number, name in enumerate(args.files):
        started = time.perf_counter()
        codes.append(
            _check_cli.main(
                [name, "--evidence-dir", str(Path(args.root) / str(number)), "--json"],
                transport=transport,
                env=env,
            )
        )
        seconds.append(time.perf_counter() - started)
    status = _status()
    print(
        json.dumps(
            {
                "codes": codes,
                "hwm_reset": reset,
                "idle": idle,
                "peak": status["VmHWM"],
                "seconds": seconds,
            }
        ),
        file=sys.stderr,
    )
    return 0


def _measure(files: list[Path], root: Path, count: int, delay: float) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--driver"]
    command += ["--root", str(root), "--count", str(count), "--delay", str(delay)]
    done = subprocess.run(
        command + [str(name) for name in files],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the check driver failed: {done.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stderr.strip().splitlines()[-1])
    if any(code != 0 for code in figures["codes"]):
        raise RuntimeError(f"a check did not verify every reference: {figures['codes']}")
    return figures


def run(bench: Bench) -> None:
    """The bench section: the rows and a note for the run of 1,000 references."""

    count = bench.scale(1000, 300, 200)
    delay = 0.2 if not bench.smoke else 0.01
    workdir = Path(bench.workdir) / "bigcheck"
    workdir.mkdir(parents=True)
    text, _ = check_fixture(count)
    entries = text.split("\n")
    whole = workdir / "whole.bib"
    whole.write_text(text, encoding="utf-8")
    parts = []
    for number, start in enumerate(range(0, len(entries), 100)):
        part = workdir / f"part{number}.bib"
        part.write_text("\n".join(entries[start : start + 100]), encoding="utf-8")
        parts.append(part)
    once = _measure([whole], workdir / "whole", count, delay)
    apart = _measure(parts, workdir / "parts", count, delay)
    whole_s = sum(once["seconds"])
    parts_s = sum(apart["seconds"])
    ratio = whole_s / parts_s
    above = int(once["peak"]) - int(once["idle"])
    bench.row(
        f"check-references, {count} refs in {len(parts)} parts, vs its parts' runs",
        f"{whole_s:.2f} s",
        f"sum of {len(parts)}: {parts_s:.2f} s",
        f"{ratio:.2f}x",
        f"<= {TIME_TARGET}x",
        met=ratio <= TIME_TARGET,
    )
    bench.row(
        f"check-references, {count} refs, peak RSS above idle",
        mib(above),
        f"idle {mib(int(once['idle']))}",
        "-",
        f"<= {MEMORY_TARGET_MIB:.0f} MiB",
        met=above <= MEMORY_TARGET_MIB * 1024 * 1024,
    )
    bench.note(
        f"check-references of {count} references ({count // 2} with DOIs, {len(text.encode()):,} "
        f"bytes of BibTeX; references_fixture.py), fake OpenAlex answering after "
        f"{delay * 1000:.0f} ms, four requests in flight: the whole file in one run "
        f"({len(parts)} sealed, logged parts) took {whole_s:.2f} s; its {len(parts)} "
        f"100-reference files, one run each in one process, {parts_s:.2f} s in all. Memory "
        "in a fresh process: VmHWM after the run minus VmRSS once the check's imports were "
        "loaded" + (" (VmHWM reset then)" if once["hwm_reset"] else " (VmHWM not resettable)")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--driver", action="store_true")
    parser.add_argument("--root")
    parser.add_argument("--count", type=int)
    parser.add_argument("--delay", type=float)
    parser.add_argument("files", nargs="*")
    return _driver(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
