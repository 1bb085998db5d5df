"""Serve the real server on stdio through the documented seam, with a fake OpenAlex.

``python stdio_launcher.py --evidence-dir DIR [--provider NAME] [--delay S] [--hold-file F]
[--log-level LEVEL] [--search-slots N] [--toolsets LIST] [--tamper-after-seal] [--timestamp-url URL
--timestamp-every S --timestamp-deadline S]``

It does what ``notanda-mcp`` does (logging first, then ``build_server(...).run()``)
except that the provider is an in-process ``httpx.MockTransport``. The
configuration is read from this process's environment, as the console script
reads it, so a test sets ``HARVESTER_OPENALEX_API_KEY`` in the child's env.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_openalex import FakeOpenAlex, FileGate, responder_by_name


def _tamper(root: Path) -> Any:
    """An on_stage callback that rewrites a sealed response before the answer goes out."""
    from notanda_evidence import Stage, canonical_bytes, parse_canonical

    def on_stage(stage: Stage, evidence_id: str) -> None:
        if stage is Stage.BEFORE_REPLY:
            path = root / evidence_id / "response.json"
            value, _ = parse_canonical(path.read_bytes())
            value["total_count"] = (value.get("total_count") or 0) + 1
            path.write_bytes(canonical_bytes(value))

    return on_stage


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--evidence-dir", required=True)
    parser.add_argument("--provider", default="page")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--hold-file", help="hold each request at a FileGate on this file")
    parser.add_argument("--log-level", default="warning")
    parser.add_argument("--search-slots", type=int, default=2)
    parser.add_argument("--toolsets", default="search")
    parser.add_argument("--tamper-after-seal", action="store_true")
    parser.add_argument("--timestamp-url")
    parser.add_argument("--timestamp-every", type=float)
    parser.add_argument("--timestamp-deadline", type=float, default=10.0)
    args = parser.parse_args()

    from notanda_mcp._logging import configure_logging

    configure_logging(args.log_level)
    from notanda_mcp import build_server

    root = Path(args.evidence_dir)
    provider = FakeOpenAlex(
        responder_by_name(args.provider),
        delay_s=args.delay,
        gate=FileGate(Path(args.hold_file)) if args.hold_file else None,
    )
    build_server(
        root,
        transport=provider.transport(),
        config=dict(os.environ),
        on_stage=_tamper(root) if args.tamper_after_seal else None,
        search_slots=args.search_slots,
        toolsets=args.toolsets.split(","),
        timestamp_url=args.timestamp_url,
        timestamp_every=args.timestamp_every,
        timestamp_deadline_s=args.timestamp_deadline,
    ).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
