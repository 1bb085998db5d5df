"""notanda-openalex: body bytes in memory to normalized works and an observation ready to write.

Ours is ``bench_support.body_to_result`` from the package's tests (the exact
path ``OpenAlexClient.search`` runs once the body is in memory, plus encoding
the observation); the anchor's is the same stretch of 0.1.0b3's search, run by
``anchor_worker.py`` in its own venv on the same bytes. Runs alternate, each
after a garbage collection, and the medians are compared. Peak memory is
measured with ``tracemalloc`` above the baseline with the body already in
memory.
"""

from __future__ import annotations

import gc
import time

from benchlib import Bench, median, mib, ms, times

LIMIT = 10


def bench_time(bench: Bench) -> None:
    support = bench.support
    page = bench.page("page1m")
    body = page.read_bytes()
    anchor = bench.anchor() if bench.anchor_python else None

    def ours() -> float:
        gc.collect()
        started = time.perf_counter()
        support.body_to_result(body, limit=LIMIT)
        return time.perf_counter() - started

    ours()  # warm-up: imports and first-use caches on both sides
    if anchor is not None:
        anchor.call("body", page=str(page), limit=LIMIT)
    samples: dict[str, list[float]] = {"ours": [], "anchor": []}
    for _ in range(bench.scale(15, 5)):
        samples["ours"].append(ours())
        if anchor is not None:
            samples["anchor"].append(anchor.call("body", page=str(page), limit=LIMIT)["seconds"])
    mine = median(samples["ours"])
    label = f"openalex: body -> works + observation, {len(body) / 1e6:.2f} MB 100-work page"
    if anchor is None:
        bench.row(label, ms(mine, 1), "no anchor", "-", "<= 1/3 of anchor", met=None)
        return
    theirs = median(samples["anchor"])
    bench.row(
        label,
        ms(mine, 1),
        f"anchor {ms(theirs, 1)}",
        times(mine / theirs),
        "<= 1/3 of anchor",
        met=mine / theirs <= 1 / 3,
    )
    bench.note(
        f"openalex timing: {page.name} ({len(body):,} bytes, 100 real works), limit {LIMIT}, "
        f"median of {len(samples['ours'])} alternating runs. The anchor's "
        "steps: RecordingTransport parse + scrub, discover_page parse + normalize of all 100 "
        "works, scrub of response and provider, encode; the HTTP client is not timed on "
        "either side."
    )


def bench_memory(bench: Bench) -> None:
    support = bench.support
    page = bench.page("page4m")
    body = page.read_bytes()
    found = support.measure_peak_memory(body, limit=LIMIT)
    peak = found["peak_above_baseline_bytes"]
    ratio = peak / len(body)
    anchor_peak = None
    if bench.anchor_python:
        anchor_peak = bench.anchor().call("memory", page=str(page), limit=LIMIT)["peak_bytes"]
    reference = f"page {mib(len(body))}"
    if anchor_peak is not None:
        reference += f"; anchor {mib(anchor_peak)} ({anchor_peak / len(body):.1f}x)"
    bench.row(
        "openalex: peak traced memory above baseline, 4 MiB page",
        mib(peak),
        reference,
        f"{ratio:.2f}x page",
        "<= 6x page size",
        met=ratio <= 6,
    )
    bench.row(
        "  breakdown: body / parsed / encoded",
        f"{mib(found['body_bytes'])} / {mib(found['parsed_bytes'])} / "
        f"{mib(found['encoded_bytes'])}",
        "parsed = json.loads alone",
        "-",
        "report",
        met=None,
    )
    bench.note(
        f"openalex memory: {page.name} ({len(body):,} bytes, just under the 4 MiB ceiling), "
        "tracemalloc peak during one body-to-result run, above the traced memory with the "
        "body already held (bench_support.measure_peak_memory; the anchor's figure is the "
        "same measurement of its steps)."
    )


def run(bench: Bench) -> None:
    for name, step in (("time", bench_time), ("memory", bench_memory)):
        try:
            step(bench)
        except Exception as exc:
            bench.failed(f"openalex: {name}", f"{type(exc).__name__}: {exc}")
