"""Serve the installed notanda-mcp on stdio through its documented seam, offline.

Started by the benchmark as an MCP client would start a server::

    python launch_ours.py --evidence-dir DIR --page PAGE.json [--delay S] [--pid-file F]

``notanda_mcp.build_server(DIR, transport=..., config=...)`` gets an
``httpx.MockTransport`` that answers every provider request with the bytes of
PAGE.json (read afresh per request, as a network read would hold them only
for the request), after ``--delay`` seconds when given. The process writes its
PID to ``--pid-file`` so that the benchmark can read its memory from ``/proc``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

#: Shaped like a real OpenAlex key: a short word such as "bench" occurs in
#: abstracts ("benchmark"), which would send every work down the scrubbing path.
BENCH_KEY = "oa-bench-4f9c2d7e1a8b3c6d5e0f9a8b7c6d5e4f"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evidence-dir", required=True)
    parser.add_argument("--page", required=True, type=Path)
    parser.add_argument("--delay", type=float, default=0.0, help="provider wait in seconds")
    parser.add_argument("--pid-file", type=Path)
    args = parser.parse_args()
    if args.pid_file is not None:
        args.pid_file.write_text(str(os.getpid()))

    import httpx
    import notanda_mcp

    page: Path = args.page
    delay: float = args.delay

    def provider(request: httpx.Request) -> httpx.Response:
        if delay:
            time.sleep(delay)
        return httpx.Response(
            200, headers={"Content-Type": "application/json"}, content=page.read_bytes()
        )

    server = notanda_mcp.build_server(
        args.evidence_dir,
        transport=httpx.MockTransport(provider),
        config={"HARVESTER_OPENALEX_API_KEY": BENCH_KEY},
    )
    server.run()


if __name__ == "__main__":
    main()
