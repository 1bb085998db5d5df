"""Benchmark support: the body-to-result path of notanda-openalex, timed and measured.

Not a test module and not imported by the package. A benchmark session calls
:func:`time_body_to_result` and :func:`measure_peak_memory` (or runs this file)
and compares the figures with notanda-mcp 0.1.0b3's equivalent steps
(``RecordingTransport`` parse + scrub, ``OpenAlexAdapter.discover_page`` parse +
normalize, ``Experiment.scrub`` of the provider record, ``encode``) measured in
that package's own virtual environment on the same bytes.

The measured path starts with the decoded body bytes in memory and ends with
the normalized works and an observation ready to write: its record fields
built and its canonical body bytes produced (no file I/O, no fsync).

Usage::

    python tests/bench_support.py            # both pages, built from the repository's fixtures
    python tests/bench_support.py PAGE.json  # any works page
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from notanda_openalex import BODY_CEILING_BYTES, ProviderResult, prepare_search
from notanda_openalex._outcome import result_from_body

REPO_ROOT = Path(__file__).resolve().parents[3]
# The recorded OpenAlex bodies the pages are built from: the repository's own copies.
sys.path.insert(0, str(REPO_ROOT / "tests-support"))
from openalex_fixtures import fixture_paths  # noqa: E402

#: Secrets configured during the benchmark (the scrubber is never empty in production).
BENCH_SECRETS = ("sk-bench-secret-0001", "bench@example.org")


class _FixedClock:
    def now(self) -> datetime:
        return datetime(2026, 5, 22, 12, 0, tzinfo=UTC)

    def monotonic(self) -> float:
        return 0.0


def body_to_result(body: bytes, *, limit: int = 10) -> tuple[ProviderResult, dict[str, Any]]:
    """Run the measured path once: body bytes -> works + observation ready to write."""
    result = result_from_body(
        200,
        {"Content-Type": "application/json"},
        body,
        request=prepare_search("machine learning", limit),
        clock=_FixedClock(),
        secrets=BENCH_SECRETS,
        url="https://api.openalex.org/works?search=machine+learning",
    )
    fields = result.observation.record_fields()
    return result, fields


def time_body_to_result(body: bytes, *, repeat: int = 15, limit: int = 10) -> dict[str, float]:
    """Time :func:`body_to_result`; return median and minimum seconds."""
    body_to_result(body, limit=limit)
    times: list[float] = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        body_to_result(body, limit=limit)
        times.append(time.perf_counter() - started)
    return {"median_s": statistics.median(times), "min_s": min(times), "repeat": repeat}


def measure_peak_memory(body: bytes, *, limit: int = 10) -> dict[str, float]:
    """Peak traced memory above the baseline (body already in memory), with a breakdown."""
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        parsed = json.loads(body)
        parsed_bytes = tracemalloc.get_traced_memory()[0] - baseline
        del parsed
        gc.collect()
        baseline = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result, _ = body_to_result(body, limit=limit)
        peak = tracemalloc.get_traced_memory()[1] - baseline
    finally:
        tracemalloc.stop()
    encoded = len(json.dumps(result.observation.body_json, ensure_ascii=False).encode())
    return {
        "body_bytes": len(body),
        "parsed_bytes": parsed_bytes,
        "encoded_bytes": encoded,
        "peak_above_baseline_bytes": peak,
        "peak_ratio_to_body": peak / len(body),
    }


def _pool() -> list[dict[str, Any]]:
    works: list[dict[str, Any]] = []
    for path in fixture_paths("works_list_*.json"):
        results = json.loads(path.read_bytes()).get("results") or []
        works.extend(record for record in results if isinstance(record.get("id"), str))
    return works


def realistic_page(n_works: int = 100, target_bytes: int = 1_000_000) -> bytes:
    """A page of *n_works* real, full OpenAlex records of about *target_bytes*.

    Works are drawn from the repository's OpenAlex fixtures, smallest average first, so that
    the page lands near the target; their text is OpenAlex's own.
    """
    pool = sorted(_pool(), key=lambda record: len(json.dumps(record)))
    mean = target_bytes / n_works
    chosen = sorted(pool, key=lambda record: abs(len(json.dumps(record)) - mean))[:n_works]
    while len(chosen) < n_works:
        chosen.append(chosen[len(chosen) % max(len(pool), 1)])
    page = {"meta": {"count": 123456, "page": 1, "per_page": n_works}, "results": chosen}
    return json.dumps(page, ensure_ascii=False).encode("utf-8")


def large_page(limit_bytes: int = BODY_CEILING_BYTES) -> bytes:
    """A real-record page just under the 4 MiB ceiling."""
    pool = sorted(_pool(), key=lambda record: -len(json.dumps(record)))
    results: list[dict[str, Any]] = []
    size = 64
    index = 0
    while pool:
        record = pool[index % len(pool)]
        extra = len(json.dumps(record, ensure_ascii=False).encode("utf-8")) + 2
        if size + extra > limit_bytes:
            break
        results.append(record)
        size += extra
        index += 1
    page = {
        "meta": {"count": len(results), "page": 1, "per_page": len(results)},
        "results": results,
    }
    return json.dumps(page, ensure_ascii=False).encode("utf-8")


def main(argv: list[str]) -> int:
    """Print timing and memory figures for the given pages (or the built ones)."""
    pages: list[tuple[str, bytes]]
    if argv:
        pages = [(arg, Path(arg).read_bytes()) for arg in argv]
    else:
        pages = [("realistic-100", realistic_page()), ("large-4MiB", large_page())]
    for name, body in pages:
        report = {"page": name, **time_body_to_result(body), **measure_peak_memory(body)}
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
