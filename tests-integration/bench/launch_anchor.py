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

import os
import sys
from pathlib import Path

from launch_common import BENCH_KEY, page_provider, parse_launch_args


def main() -> None:
    args = parse_launch_args(__doc__.splitlines()[0])

    import httpx
    import notanda_mcp.server as anchor

    provider = page_provider(args.page, args.delay)

    class OfflineExperiment(anchor.Experiment):
        def __init__(self, root: Path, config: object, transport_factory: object = None) -> None:
            super().__init__(root, config, transport_factory=lambda: httpx.MockTransport(provider))

    anchor.Experiment = OfflineExperiment
    os.environ["HARVESTER_OPENALEX_API_KEY"] = BENCH_KEY
    sys.argv = [sys.argv[0], "--evidence-dir", args.evidence_dir]
    anchor.main()


if __name__ == "__main__":
    main()
