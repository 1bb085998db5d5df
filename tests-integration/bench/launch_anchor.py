"""Serve the installed notanda-mcp 0.1.0b3 (the anchor) on stdio, offline.

Runs under the anchor's own virtual environment::

    ANCHOR_VENV/bin/python launch_anchor.py --evidence-dir DIR --page PAGE.json [--delay S]

The anchor is driven as a library, never copied: its module-level
``Experiment`` is replaced by a subclass whose ``transport_factory`` returns an
``httpx.MockTransport`` serving PAGE.json (after ``--delay`` seconds), and the
anchor's own ``main()`` then builds its FastMCP server with its two tools,
exactly as its console script does. The key comes from
``HARVESTER_OPENALEX_API_KEY``, as the anchor documents.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


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
    import notanda_mcp.server as anchor

    page: Path = args.page
    delay: float = args.delay

    def provider(request: httpx.Request) -> httpx.Response:
        if delay:
            time.sleep(delay)
        return httpx.Response(
            200, headers={"Content-Type": "application/json"}, content=page.read_bytes()
        )

    class OfflineExperiment(anchor.Experiment):
        def __init__(self, root: Path, config: object, transport_factory: object = None) -> None:
            super().__init__(root, config, transport_factory=lambda: httpx.MockTransport(provider))

    anchor.Experiment = OfflineExperiment
    os.environ["HARVESTER_OPENALEX_API_KEY"] = "oa-bench-4f9c2d7e1a8b3c6d5e0f9a8b7c6d5e4f"
    sys.argv = [sys.argv[0], "--evidence-dir", args.evidence_dir]
    anchor.main()


if __name__ == "__main__":
    main()
