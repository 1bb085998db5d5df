"""notanda-openalex: body bytes to works and an observation; a 100-reference check.

Ours is ``bench_support.body_to_result`` from the package's tests (the exact
path ``OpenAlexClient.search`` runs once the body is in memory, plus encoding
the observation); the anchor's is the same stretch of 0.1.0b3's search, run by
``anchor_worker.py`` in its own venv on the same bytes. Runs alternate, each
after a garbage collection, and the medians are compared. Peak memory is
measured with ``tracemalloc`` above the baseline with the body already in
memory.

The reference check runs ``OpenAlexClient.check_references`` on 100
references (50 with DOIs: one DOI batch; 50 with titles only: 50 title
lookups) against an ``httpx.MockTransport`` that answers every request after
200 ms (``references_fixture.py``), at the default concurrency of 4: 13 rounds,
a floor of about 2.6 s. Its memory is measured through the real server
(``mcp_bench.py``).
"""

from __future__ import annotations

import gc
import time
from datetime import UTC, datetime
from typing import Any

from benchlib import Bench, median, mib, ms, times
from references_fixture import CHECK_LATENCY_S, CHECK_REFERENCES, check_fixture, check_provider

LIMIT = 10


def bench_time(bench: Bench) -> None:
    support = bench.support
    page = bench.page("page1m")
    body = page.read_bytes()
    anchor = bench.anchor() if bench.has_anchor else None

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
    if bench.has_anchor:
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


def bench_references(bench: Bench) -> None:
    import httpx
    from notanda_openalex import OpenAlexClient, parse_references
    from notanda_openalex._matching import decide_by_doi, decide_by_title

    text, _ = check_fixture()

    client = OpenAlexClient(
        api_key="bench-key-0000", transport=httpx.MockTransport(check_provider())
    )
    parsed = parse_references(text)
    started = time.perf_counter()
    check = client.check_references(parsed)
    wall = time.perf_counter() - started
    summary = check.summary()
    if summary["verified"] != CHECK_REFERENCES:
        raise RuntimeError(f"the benchmark check did not verify every reference: {summary}")
    # Matching CPU per reference: the same decisions, replayed on the check's own answers.
    cpu: list[float] = []
    year = datetime.now(UTC).year
    for reference, entry in zip(parsed, check.references, strict=True):
        if entry.attempt_index is None:
            raise RuntimeError(f"reference {entry.index} has no observation")
        candidates = _works_of(check.attempts[entry.attempt_index].observation)
        if reference.doi is not None:
            candidates = [work for work in candidates if work.doi == reference.doi]
            decide_one = decide_by_doi
        else:
            decide_one = decide_by_title
        gc.collect()
        begun = time.thread_time()
        decide_one(reference, candidates, current_year=year)
        cpu.append(time.thread_time() - begun)
    rounds = -(-len(check.attempts) // 4)
    floor = rounds * CHECK_LATENCY_S
    bench.row(
        f"references: check of {CHECK_REFERENCES} (50 DOIs, 50 titles), 200 ms mock, concurrency 4",
        f"{wall:.2f} s",
        f"floor {floor:.1f} s ({rounds} rounds)",
        f"{wall / floor:.2f}x floor",
        "<= 3.5 s",
        met=wall <= 3.5,
    )
    per_reference = median(cpu)
    bench.row(
        "references: matching CPU per reference, median",
        ms(per_reference, 3),
        "-",
        "-",
        "<= 2 ms",
        met=per_reference <= 0.002,
    )
    bench.note(
        f"references: {len(check.attempts)} requests (1 DOI batch, 50 title lookups of 10 "
        "candidates each) to an httpx.MockTransport sleeping 200 ms per request; matching CPU "
        "is thread CPU time of each reference's decision, replayed on the check's own answers."
    )


def _works_of(observation: Any) -> list[Any]:
    """The works of a stored body, normalized as the check normalized them."""
    from notanda_openalex._secrets import SecretScrubber
    from notanda_openalex._works import normalize_work

    scrubber = SecretScrubber(())
    works = (normalize_work(item, scrubber) for item in observation.body_json["results"])
    return [work for work in works if work is not None]


def run(bench: Bench) -> None:
    for name, step in (
        ("time", bench_time),
        ("memory", bench_memory),
        ("references", bench_references),
    ):
        try:
            step(bench)
        except Exception as exc:
            bench.failed(f"openalex: {name}", f"{type(exc).__name__}: {exc}")
