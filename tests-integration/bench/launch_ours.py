"""Serve the installed notanda-mcp on stdio through its documented seam, offline.

Started by the benchmark as an MCP client would start a server::

    python launch_ours.py --evidence-dir DIR --page PAGE.json [--delay S] [--pid-file F]
        [--timestamp-url URL --timestamp-every S]
    python launch_ours.py --evidence-dir DIR --references [--pid-file F]

``notanda_mcp.build_server(DIR, transport=..., config=...)`` gets an
``httpx.MockTransport`` that answers every provider request with the bytes of
PAGE.json (read afresh per request, as a network read would hold them only
for the request), after ``--delay`` seconds when given. The process writes its
PID to ``--pid-file`` so that the benchmark can read its memory from ``/proc``.
With ``--references`` the server also offers ``check_references`` and the
transport answers the bench's 100-reference check instead
(``references_fixture.check_provider``, 200 ms per request).
"""

from __future__ import annotations

from launch_common import BENCH_KEY, page_provider, parse_launch_args


def main() -> None:
    args = parse_launch_args(__doc__.splitlines()[0])

    import httpx
    import notanda_mcp

    if args.references:
        from references_fixture import check_provider

        provider = check_provider()
        toolsets = ("search", "references")
    else:
        provider = page_provider(args.page, args.delay)
        toolsets = ("search",)
    server = notanda_mcp.build_server(
        args.evidence_dir,
        transport=httpx.MockTransport(provider),
        toolsets=toolsets,
        config={"HARVESTER_OPENALEX_API_KEY": BENCH_KEY},
        timestamp_url=args.timestamp_url,
        timestamp_every=args.timestamp_every,
    )
    server.run()


if __name__ == "__main__":
    main()
