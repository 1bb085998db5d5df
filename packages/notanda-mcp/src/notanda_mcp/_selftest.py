"""A built-in fixture provider, and a server launcher that uses it (``doctor``, ``demo``).

``python -m notanda_mcp._selftest --evidence-dir DIR`` serves exactly like
``notanda-mcp`` through the documented seam ``build_server(..., transport=...)``,
but OpenAlex is replaced by an in-process transport that answers every search
with the same three synthetic works (DOIs under the 10.5555 test prefix).
Records it makes say ``"provider_mode": "injected"``, and ``notanda-evidence
cite`` refuses them unless told ``--allow-injected``. No network is used.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from ._logging import configure_logging
from ._usage import parse_toolsets, resolve_evidence_dir

# httpx and ``_server`` (the MCP SDK) are imported once the folder is checked,
# in the order ``notanda-mcp`` itself follows (``_cli``).

__all__ = ["FIXTURE_KEY", "fixture_page", "fixture_transport", "main"]

#: The key the self-test server is configured with; it never leaves the process.
FIXTURE_KEY = "notanda-selftest-key-not-a-real-openalex-key"


def _work(number: int, title: str, authors: list[str], venue: str, year: int) -> dict[str, Any]:
    doi = f"10.5555/notanda.selftest.{number}"
    return {
        "id": f"https://openalex.org/W90000000{number:02d}",
        "doi": f"https://doi.org/{doi}",
        "title": title,
        "display_name": title,
        "publication_year": year,
        "publication_date": f"{year}-06-01",
        "type": "article",
        "language": "en",
        "is_retracted": False,
        "cited_by_count": 10 * number,
        "is_authors_truncated": False,
        "authorships": [
            {
                "author_position": "first" if i == 0 else "middle",
                "author": {"id": None, "display_name": name, "orcid": None},
            }
            for i, name in enumerate(authors)
        ],
        "primary_location": {"is_oa": True, "source": {"display_name": venue, "type": "journal"}},
        "biblio": {"volume": str(number), "issue": "1", "first_page": "1", "last_page": "9"},
        "open_access": {
            "is_oa": True,
            "oa_status": "gold",
            "oa_url": f"https://example.org/selftest/{number}.pdf",
        },
    }


def fixture_page() -> dict[str, Any]:
    """The OpenAlex-shaped page every self-test search receives."""
    works = [
        _work(
            1,
            "Self-test: reproducible literature search",
            ["Ada Example", "Ben Sample"],
            "Journal of Self-Tests",
            2024,
        ),
        _work(
            2,
            "Self-test: evidence records that verify offline",
            ["Chen Placeholder"],
            "Journal of Self-Tests",
            2025,
        ),
        _work(
            3,
            "Self-test: receipts and logs",
            ["Dana Fixture", "Eli Mock", "Fay Stub"],
            "Proceedings of Fixtures",
            2026,
        ),
    ]
    return {
        "meta": {"count": len(works), "db_response_time_ms": 1, "page": 1, "per_page": 10},
        "results": works,
        "group_by": [],
    }


def fixture_transport() -> Any:
    """An httpx transport that answers every request with :func:`fixture_page`."""
    import httpx  # noqa: PLC0415 - lazy, see the imports

    def answer(request: httpx.Request) -> httpx.Response:
        per_page = int(request.url.params.get("per-page", "10"))
        page = fixture_page()
        page["results"] = page["results"][:per_page]
        return httpx.Response(
            200,
            content=json.dumps(page).encode("utf-8"),
            headers={"content-type": "application/json", "x-ratelimit-cost-usd": "0"},
        )

    return httpx.MockTransport(answer)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve on stdio with the fixture provider."""
    parser = argparse.ArgumentParser(prog="python -m notanda_mcp._selftest")
    parser.add_argument("--evidence-dir", required=True)
    parser.add_argument("--toolsets", default="search")
    args = parser.parse_args(argv)
    root = resolve_evidence_dir(args.evidence_dir, create=True)  # as notanda-mcp does
    configure_logging("warning")
    from ._server import build_server  # noqa: PLC0415 - lazy, see the imports

    build_server(
        root,
        transport=fixture_transport(),
        config={"HARVESTER_OPENALEX_API_KEY": FIXTURE_KEY},
        toolsets=parse_toolsets(args.toolsets),
    ).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
