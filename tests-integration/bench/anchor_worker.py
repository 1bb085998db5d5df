"""Run notanda-mcp 0.1.0b3's own code paths, timed, inside its own virtual environment.

Started by ``run_bench.py`` as ``ANCHOR_VENV/bin/python anchor_worker.py``; reads
one JSON request per line on stdin and answers one JSON line on stdout, so the
benchmark can alternate our runs and the anchor's in one session. The anchor
is imported and driven as a library, never copied:

``verify {root}``
    One pass over an evidence root the way 0.1.0b3 verifies a record: its
    in-server ``EvidenceStore.get`` on every record (this is also what
    ``verify_mcp_evidence`` style checks of that release amount to).
``body {page, limit}``
    One run of the anchor's steps from body bytes in memory to normalized
    results and a provider record ready to write: its ``RecordingTransport``
    (parse + scrub), ``OpenAlexAdapter.discover_page`` (parse again +
    normalize every work), the final ``Experiment.scrub`` of the response and
    of the provider record, and ``encode``. The HTTP client is replaced by a
    stand-in that hands the adapter the recorded response, so no transport,
    rate limiter or socket is timed, only the steps themselves.
``memory {page, limit}``
    Peak traced memory of one ``body`` run above its baseline (body in memory).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import re
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import notanda_mcp.server as anchor
from harvester.config import Config
from harvester.providers.openalex import OpenAlexAdapter, OpenAlexQuery

#: The same secrets as notanda-openalex's ``bench_support.BENCH_SECRETS``.
SECRETS_ENV = {
    "HARVESTER_OPENALEX_API_KEY": "sk-bench-secret-0001",
    "HARVESTER_CONTACT_EMAIL": "bench@example.org",
}
QUERY = "machine learning"
_ID = re.compile(r"[0-9a-f]{32}")


class _RecordedBody(httpx.BaseTransport):
    """The provider's answer with the body already in memory."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"Content-Type": "application/json"}, content=self.body, request=request
        )


class _OneRequest:
    """Stands in for ``ProviderClient``: the adapter's one GET goes to the recording transport."""

    def __init__(self, transport: httpx.BaseTransport) -> None:
        self._transport = transport

    def request(
        self, method: str, url: str, *, params: Any = None, operation: str = ""
    ) -> httpx.Response:
        return self._transport.handle_request(httpx.Request(method, url, params=params))


class Worker:
    def __init__(self) -> None:
        config = Config.load(env=SECRETS_ENV)
        self.experiment = anchor.Experiment(Path.cwd(), config)
        self.pages: dict[str, bytes] = {}
        self.openalex = config.openalex

    def _page(self, path: str) -> bytes:
        if path not in self.pages:
            self.pages[path] = Path(path).read_bytes()
        return self.pages[path]

    def body_steps(self, body: bytes, limit: int) -> tuple[dict[str, Any], bytes]:
        experiment = self.experiment
        config = dataclasses.replace(
            self.openalex,
            base_url="https://api.openalex.org",
            per_page=limit,
            timeout_seconds=20,
            connect_timeout_seconds=10,
        )
        provider: dict[str, Any] = {
            "attempts": [],
            "capture": "not_attempted",
            "pagination": False,
            "max_attempts": 1,
        }
        recording = anchor.RecordingTransport(_RecordedBody(body), provider, experiment.scrub)
        page = OpenAlexAdapter(_OneRequest(recording), config).discover_page(
            OpenAlexQuery(search=QUERY)
        )
        results = [
            {
                "document_id": document.document_id,
                "title": document.title,
                "doi": document.doi,
                "year": document.publication_year,
                "source_id": source.source_id,
            }
            for document, source in page.records[:limit]
        ]
        provider["raw_record_count"] = page.raw_count
        provider["normalized_record_count"] = len(page.records)
        response = experiment.scrub(
            {
                "evidence_id": "0" * 32,
                "status": "ok",
                "content_notice": anchor.UNTRUSTED_CONTENT_NOTICE,
                "results": results,
                "limit": limit,
                "total_count": page.total_count,
                "pagination": False,
            }
        )
        return response, anchor.encode(experiment.scrub(provider))

    # ------------------------------------------------------------------ ops

    def op_verify(self, root: str) -> dict[str, Any]:
        gc.collect()
        started = time.perf_counter()
        store = anchor.EvidenceStore(Path(root))
        names = [name for name in sorted(os.listdir(root)) if _ID.fullmatch(name)]
        ok = sum(1 for name in names if store.get(name).get("status") == "ok")
        seconds = time.perf_counter() - started
        return {"seconds": seconds, "records": len(names), "ok": ok}

    def op_body(self, page: str, limit: int) -> dict[str, Any]:
        body = self._page(page)
        gc.collect()
        started = time.perf_counter()
        response, _ = self.body_steps(body, limit)
        seconds = time.perf_counter() - started
        return {"seconds": seconds, "results": len(response["results"])}

    def op_memory(self, page: str, limit: int) -> dict[str, Any]:
        body = self._page(page)
        gc.collect()
        tracemalloc.start()
        try:
            baseline = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            _, encoded = self.body_steps(body, limit)
            peak = tracemalloc.get_traced_memory()[1] - baseline
        finally:
            tracemalloc.stop()
        return {"body_bytes": len(body), "peak_bytes": peak, "encoded_bytes": len(encoded)}


def main() -> int:
    worker = Worker()
    for line in sys.stdin:
        request = json.loads(line)
        op = request.pop("op")
        if op == "quit":
            return 0
        try:
            answer = getattr(worker, f"op_{op}")(**request)
        except Exception as exc:  # reported to the benchmark, which marks the row
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
