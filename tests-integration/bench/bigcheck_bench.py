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

The section also reads BibTeX files of 5,000 entries (10 MB) and of 500
(1 MB) with ``read_references`` (``--reader`` processes, three fresh ones per
file): issue 19 asks for the time to stay linear in size, the large file's CPU
time at most 11 times the small one's, and for the read to take under 200 MiB.
The entries are generated like real ones (``bibtex_corpus``): about 2 KB each,
authors with accents, a title, a journal named by an ``@string`` macro, year,
volume, pages, DOI, keywords and an abstract; one in ten an
``@inproceedings`` taking its book title, year and publisher from a
``crossref`` parent that follows it.
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
READ_TIME_TARGET = 11.0
READ_MEMORY_TARGET_MIB = 200.0
READ_RUNS = 3


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


JOURNALS = {
    "jcp": "Journal of Computational Physics",
    "jasa": "Journal of the American Statistical Association",
    "pnas": "Proceedings of the National Academy of Sciences",
    "tse": "IEEE Transactions on Software Engineering",
    "nar": "Nucleic Acids Research",
    "mnras": "Monthly Notices of the Royal Astronomical Society",
    "jmlr": "Journal of Machine Learning Research",
    "bmj": "The BMJ",
}
FAMILIES = (
    'M{\\"u}ller',
    "Garc{\\'\\i}a",
    "Smith",
    "Nguyen",
    "van der Berg",
    "O'Brien",
    "Kowalski",
    'Sch{\\"o}n',
    "Dupont",
    "Tanaka",
    "Okafor",
    "Lindqvist",
    "Rossi",
    "Chen",
)
GIVEN = ("Anna", "J. R.", "Mar{\\'\\i}a", "Wei", "Pieter", "S{\\o}ren", "Kemi", "Luca")
WORDS = (
    "adaptive",
    "bayesian",
    "inference",
    "sparse",
    "networks",
    "stochastic",
    "model",
    "protein",
    "folding",
    "galaxy",
    "survey",
    "robust",
    "estimation",
    "clinical",
    "trial",
    "software",
    "evolution",
    "lattice",
    "quantum",
    "measurement",
    "of",
    "the",
    "for",
    "in",
)


def bibtex_corpus(count: int, seed: int = 19) -> str:
    """A BibTeX file of *count* entries (``@string`` definitions not counted), ~2 KB each.

    Every tenth entry is an ``@proceedings`` parent, right after the
    ``@inproceedings`` child whose ``crossref`` names it (BibTeX wants the
    parent after its children); the other entries are ``@article``.
    """
    import random

    rng = random.Random(seed)
    parts = [f"@string{{{name} = {{{title}}}}}\n" for name, title in JOURNALS.items()]
    parts.append("@string{acm = {Association for Computing Machinery}}\n\n")
    for number in range(count):
        key = f"bench{number:05d}"
        if number % 10 == 9:
            parts.append(
                f"@proceedings{{proc{number:05d},\n"
                f"  title = {{Proceedings of Workshop {number // 10 + 1} on "
                f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()}}},\n"
                f"  year = {{{2000 + number % 25}}},\n  publisher = acm,\n"
                f"  address = {{New York, NY, USA}},\n}}\n\n"
            )
            continue
        authors = " and ".join(
            f"{rng.choice(FAMILIES)}, {rng.choice(GIVEN)}" for _ in range(rng.randint(2, 8))
        )
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))
        title = "{" + title[0].upper() + "}" + title[1:] + " with {DNA} and 0.25% noise"
        abstract = " ".join(rng.choice(WORDS) for _ in range(250))
        keywords = ", ".join(rng.choice(WORDS) for _ in range(6))
        common = (
            f"  author = {{{authors}}},\n  title = {{{title}}},\n"
            f"  pages = {{{number % 300 + 1}--{number % 300 + 17}}},\n"
            f"  doi = {{10.5555/bench.{number:05d}}},\n  keywords = {{{keywords}}},\n"
            f"  abstract = {{{abstract}}},\n"
        )
        if number % 10 == 8:
            parts.append(
                f"@inproceedings{{{key},\n{common}  crossref = {{proc{number + 1:05d}}},\n}}\n\n"
            )
        else:
            parts.append(
                f"@article{{{key},\n{common}  journal = {rng.choice(list(JOURNALS))},\n"
                f"  year = {{{1990 + number % 35}}},\n  volume = {{{number % 60 + 1}}},\n"
                f"  number = {{{number % 12 + 1}}},\n}}\n\n"
            )
    return "".join(parts)


def _reader(args: argparse.Namespace) -> int:
    """In a fresh process: read one BibTeX file once; print its CPU time and memory."""
    from notanda_openalex import read_references

    read_references("@string{w = {Warm}}\n@article{warm, title=w, doi={10.5555/warm}}")
    text = Path(args.files[0]).read_text(encoding="utf-8")
    try:
        Path("/proc/self/clear_refs").write_text("5")
        reset = True
    except OSError:
        reset = False
    idle = _status()["VmRSS"]
    started = time.process_time()
    parsed = read_references(text)
    cpu = time.process_time() - started
    status = _status()
    by_key = {reference.key: reference for reference in parsed}
    child = next((r for r in parsed if r.entry_type == "inproceedings"), None)
    print(
        json.dumps(
            {
                "cpu": cpu,
                "references": len(parsed),
                "unparsed": sum(1 for r in parsed if not r.parsed),
                # A crossref child inherits its parent's year: resolved file-wide.
                "crossref_year": child.year if child is not None else None,
                "has_parent": child is not None and child.crossref in by_key,
                "hwm_reset": reset,
                "idle": idle,
                "peak": status["VmHWM"],
            }
        ),
        file=sys.stderr,
    )
    return 0


def _read_once(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--reader", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the reader failed: {done.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stderr.strip().splitlines()[-1])
    return figures


def _read_best(path: Path, count: int) -> dict[str, Any]:
    """Best CPU time of :data:`READ_RUNS` fresh readers, and the largest peak above idle."""
    runs = [_read_once(path) for _ in range(READ_RUNS)]
    for figures in runs:
        if figures["references"] != count or figures["unparsed"]:
            raise RuntimeError(
                f"{path.name}: read {figures['references']} references "
                f"({figures['unparsed']} unparsed), expected {count} all parsed"
            )
        if not figures["has_parent"] or figures["crossref_year"] is None:
            raise RuntimeError(f"{path.name}: a crossref child did not inherit its year")
    return {
        "cpu": min(figures["cpu"] for figures in runs),
        "above": max(int(figures["peak"]) - int(figures["idle"]) for figures in runs),
        "peak": max(int(figures["peak"]) for figures in runs),
        "hwm_reset": all(figures["hwm_reset"] for figures in runs),
    }


def run_reading(bench: Bench) -> None:
    """Rows for reading a 10 MB, 5,000-entry BibTeX file against a 1 MB one."""
    large_count = bench.scale(5000, 1000, 200)
    small_count = large_count // 10
    workdir = Path(bench.workdir) / "reading"
    workdir.mkdir(parents=True)
    large = workdir / "large.bib"
    small = workdir / "small.bib"
    large.write_text(bibtex_corpus(large_count), encoding="utf-8")
    small.write_text(bibtex_corpus(small_count), encoding="utf-8")
    large_bytes = large.stat().st_size
    small_bytes = small.stat().st_size
    big = _read_best(large, large_count)
    little = _read_best(small, small_count)
    ratio = big["cpu"] / little["cpu"]
    bench.row(
        f"read_references, BibTeX {large_bytes / 1e6:.1f} MB ({large_count} entries) "
        f"vs {small_bytes / 1e6:.1f} MB",
        f"{big['cpu']:.2f} s CPU",
        f"{little['cpu']:.3f} s CPU",
        f"{ratio:.1f}x for {large_bytes / small_bytes:.1f}x bytes",
        f"<= {READ_TIME_TARGET:.0f}x",
        met=ratio <= READ_TIME_TARGET,
    )
    bench.row(
        f"read_references, BibTeX {large_bytes / 1e6:.1f} MB, peak RSS above idle",
        mib(big["above"]),
        f"process peak {mib(big['peak'])}",
        "-",
        f"< {READ_MEMORY_TARGET_MIB:.0f} MiB",
        met=big["above"] < READ_MEMORY_TARGET_MIB * 1024 * 1024,
    )
    bench.note(
        f"read_references on generated BibTeX (bibtex_corpus in bigcheck_bench.py: "
        f"{len(JOURNALS) + 1} @string macros, ~2 KB entries with abstracts, one in ten a "
        f"crossref parent): {large_count} entries in {large_bytes:,} bytes took "
        f"{big['cpu']:.2f} s of CPU, {small_count} in {small_bytes:,} bytes "
        f"{little['cpu']:.3f} s (best of {READ_RUNS} fresh processes each; every entry "
        "read, crossref resolved). Memory: VmHWM after the read minus VmRSS with the text "
        "loaded and the reader imported, the largest of the runs"
        + (" (VmHWM reset then)" if big["hwm_reset"] else " (VmHWM not resettable)")
    )


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
    """The bench section: the rows and a note for the run of 1,000 references, then reading."""
    run_check(bench)
    run_reading(bench)


def run_check(bench: Bench) -> None:
    """The rows and a note for the run of 1,000 references."""

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
    parser.add_argument("--reader", action="store_true")
    parser.add_argument("--root")
    parser.add_argument("--count", type=int)
    parser.add_argument("--delay", type=float)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args(argv)
    return _reader(args) if args.reader else _driver(args)


if __name__ == "__main__":
    raise SystemExit(main())
