"""What the two offline launchers share: arguments, the bench key, the mock provider.

Imported by ``launch_ours.py`` and ``launch_anchor.py``, each under its own
virtual environment; standard library only at import time.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Shaped like a real OpenAlex key: a short word such as "bench" occurs in
#: abstracts ("benchmark"), which would send every work down the scrubbing path.
BENCH_KEY = "oa-bench-4f9c2d7e1a8b3c6d5e0f9a8b7c6d5e4f"


def parse_launch_args(description: str) -> argparse.Namespace:
    """``--evidence-dir``, ``--page``, ``--delay``, ``--pid-file`` (written here), ours' extras."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--evidence-dir", required=True)
    parser.add_argument("--page", type=Path, help="the page every search is answered with")
    parser.add_argument("--delay", type=float, default=0.0, help="provider wait in seconds")
    parser.add_argument("--pid-file", type=Path)
    parser.add_argument("--timestamp-url", help="ours only: stamp log heads at this TSA")
    parser.add_argument("--timestamp-every", type=float)
    parser.add_argument(
        "--references",
        action="store_true",
        help="ours only: offer check_references, the provider answering the bench's check",
    )
    args = parser.parse_args()
    if args.page is None and not args.references:
        parser.error("--page is required unless --references")
    if args.pid_file is not None:
        args.pid_file.write_text(str(os.getpid()))
    return args


def page_provider(page: Path, delay: float) -> Callable[[Any], Any]:
    """A MockTransport handler answering every request with *page*, after *delay* seconds.

    The page is read afresh per request, as a network read holds it only for
    the request.
    """
    import httpx

    def provider(request: httpx.Request) -> httpx.Response:
        if delay:
            time.sleep(delay)
        return httpx.Response(
            200, headers={"Content-Type": "application/json"}, content=page.read_bytes()
        )

    return provider
