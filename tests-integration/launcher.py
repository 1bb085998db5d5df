"""Serve notanda-mcp on stdio through the documented seam, with a fake provider.

The integration tests start this file with ``sys.executable`` as a real
process, exactly as an MCP client starts the installed server, except that the
provider is an in-process httpx transport chosen on the command line and
``on_stage`` can stop the process at a named stage:

* ``--provider canned`` answers every search with a real OpenAlex page from
  ``tests-support/fixtures/openalex`` (``--fixture NAME``); a query
  holding ``provider-http-400`` gets OpenAlex's recorded 400 answer instead;
* ``--delay S`` makes the provider wait S seconds first (only for queries
  holding ``--delay-only-for``, when given);
* ``--provider echo`` echoes the bearer token it receives, and every value in
  the ``NOTANDA_IT_ECHO`` environment variable (a JSON list), in the body, the
  headers, a redirect ``Location``, error text and an exception message; the
  query picks which (``echo-body``, ``echo-redirect``, ...);
* ``--provider surrogate`` answers with a page whose strings hold lone
  surrogates (``\\ud800`` escapes, valid JSON, not encodable as UTF-8);
* ``--kill-at STAGE`` sends SIGKILL to this process at the ``--kill-nth``
  occurrence of STAGE (a :class:`notanda_evidence.Stage` value, or
  ``in_provider`` for the middle of the provider call);
* ``--hold-file FILE`` makes the provider create ``FILE.entered``, then wait
  (up to 60 s) until FILE exists: a slow search the test releases;
* ``--provider-log FILE`` appends one line per provider call (to prove none was made);
* ``--fsize BYTES`` sets ``RLIMIT_FSIZE`` before serving (writes then fail with EFBIG);
* ``--provider bibliography`` answers a reference check's DOI batches and title
  lookups from the works of the ``--fixture`` page (the notanda-mcp tests'
  ``fake_openalex.bibliography``); ``--toolsets`` is the server's;
* ``launcher.py check-references ARGS...`` runs ``notanda-mcp check-references
  ARGS`` through its seam with that provider instead of serving.
* ``--timestamp-url URL`` (and ``--timestamp-every S``, ``--tsa-ca FILE``)
  stamps the log's heads at that TSA, over real HTTP beside the injected
  provider.

The key comes from a fixed test value unless ``--config env``, in which case
the process environment is the configuration (``HARVESTER_OPENALEX_API_KEY``
or ``HARVESTER_CONFIG``). Only the installed wheels are imported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
import sysconfig
import threading
import time
from pathlib import Path
from typing import Any

#: The key used unless ``--config env``; it never appears in a record either.
DEFAULT_KEY = "integration-test-key-0f3b9c"


def _guard_installed() -> None:
    purelib = Path(sysconfig.get_paths()["purelib"]).resolve()
    for name in ("notanda_evidence", "notanda_openalex", "notanda_mcp"):
        module = __import__(name)
        where = Path(module.__file__ or "").resolve()
        if purelib not in where.parents:
            sys.stderr.write(f"launcher: {name} imported from {where}, not {purelib}\n")
            sys.exit(70)


def _kill_self() -> None:
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)  # never reached: SIGKILL cannot be caught


class _Killer:
    """An ``on_stage`` callback that SIGKILLs the process at the n-th occurrence of a stage."""

    def __init__(self, stage: str | None, nth: int) -> None:
        self.stage = stage
        self.nth = nth
        self.seen = 0
        self._lock = threading.Lock()

    def hit(self, stage: str) -> None:
        if stage != self.stage:
            return
        with self._lock:
            self.seen += 1
            if self.seen == self.nth:
                _kill_self()

    def __call__(self, stage: Any, evidence_id: str) -> None:
        self.hit(str(stage))


def _fixture_bytes(name: str) -> bytes:
    """One recorded OpenAlex body from the repository (``$NOTANDA_REPO_ROOT`` or this file's)."""
    repo = Path(os.environ.get("NOTANDA_REPO_ROOT") or Path(__file__).resolve().parent.parent)
    sys.path.insert(0, str(repo / "tests-support"))
    from openalex_fixtures import fixture_bytes

    return fixture_bytes(name)


def _surrogate_page() -> bytes:
    # Written by hand on purpose: json.dumps would refuse nothing, but a real
    # provider sends exactly these escapes, which decode to lone surrogates.
    work = (
        '{"id":"https://openalex.org/W7000000001","doi":"https://doi.org/10.5555/lone.1",'
        '"title":"Lone \\ud800 high and \\udfff low surrogates","display_name":"x",'
        '"publication_year":2024,"type":"article","language":"en",'
        '"authorships":[{"author":{"display_name":"Ann \\udbff Surrogate","orcid":null}}],'
        '"primary_location":{"source":{"display_name":"Journal \\ud83d of Halves"}},'
        '"open_access":{"is_oa":true,"oa_status":"gold","oa_url":null},'
        '"biblio":{"volume":"1","issue":"2","first_page":"3","last_page":"4"},'
        '"is_retracted":false,"cited_by_count":7,"\\ud800key":"value \\ude00"}'
    )
    return ('{"meta":{"count":1,"note":"\\udc00"},"results":[' + work + "]}").encode("ascii")


def _echo_values(request: Any) -> list[str]:
    values = json.loads(os.environ.get("NOTANDA_IT_ECHO", "[]"))
    bearer = request.headers.get("authorization", "")
    if bearer.startswith("Bearer "):
        values.append(bearer[len("Bearer ") :])
    return [value for value in values if value]


def _echo_response(request: Any) -> Any:
    import httpx

    query = request.url.params.get("search", "")
    values = _echo_values(request)
    joined = " ".join(values)
    from urllib.parse import quote

    encoded = "&".join(f"api_key={quote(value, safe='')}" for value in values)
    headers = {
        "content-type": "application/json",
        "x-openalex-edge-reject": f"echo {joined}",
        "x-ratelimit-remaining": joined,
        "x-echo": joined,
        "date": f"Mon, 30 Nov 2026 00:00:00 GMT {joined}",
    }
    if "echo-redirect" in query:
        headers["location"] = f"https://api.openalex.org/works?{encoded}&mailto={joined}"
        return httpx.Response(302, headers=headers, content=f"moved to {joined}".encode())
    if "echo-error-text" in query:
        headers["content-type"] = "text/plain"
        return httpx.Response(500, headers=headers, content=f"internal error: {joined}".encode())
    if "echo-error-json" in query:
        body = {"error": f"Invalid query parameters error. {joined}", "message": joined}
        return httpx.Response(400, headers=headers, content=json.dumps(body).encode())
    if "echo-429" in query:
        headers["retry-after"] = "1"
        body = {"error": f"Rate limit exceeded for key {joined}", "message": joined}
        return httpx.Response(429, headers=headers, content=json.dumps(body).encode())
    if "echo-raise" in query:
        raise httpx.ConnectError(f"connection refused for {joined}", request=request)
    work = {
        "id": "https://openalex.org/W7100000001",
        "doi": f"https://doi.org/10.5555/{quote(values[0] if values else 'x', safe='')}",
        "title": f"A title that quotes the key {joined}",
        "display_name": joined,
        "publication_year": 2025,
        "type": "article",
        "language": "en",
        "authorships": [{"author": {"display_name": f"Author {joined}", "orcid": None}}],
        "primary_location": {"source": {"display_name": f"Journal of {joined}"}},
        "open_access": {
            "is_oa": True,
            "oa_status": "gold",
            "oa_url": f"https://example.org/paper.pdf?{encoded}",
        },
        "api_key": joined,
        "contact_email": joined,
        "abstract_inverted_index": {value: [0] for value in values},
        "is_retracted": False,
        "cited_by_count": 1,
    }
    page = {"meta": {"count": 1, "echo": joined, "mailto": joined}, "results": [work]}
    return httpx.Response(200, headers=headers, content=json.dumps(page).encode())


def _fake_openalex() -> Any:
    """The notanda-mcp tests' fake provider module (test code, not in any wheel)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "packages/notanda-mcp/tests"))
    import fake_openalex

    return fake_openalex


def _bibliography(fixture: str) -> Any:
    """The notanda-mcp tests' catalogue responder over a real page's works."""
    return _fake_openalex().bibliography(json.loads(_fixture_bytes(fixture))["results"])


def _transport(args: argparse.Namespace, killer: _Killer) -> Any:
    import httpx

    if args.provider == "bibliography":
        return httpx.MockTransport(_bibliography(args.fixture))

    canned = _fixture_bytes(args.fixture) if args.provider == "canned" else b""

    def answer(request: httpx.Request) -> httpx.Response:
        if args.provider_log:
            # The bearer token only as a digest: the test proves the key was sent
            # without this file ever holding it.
            bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
            seen = hashlib.sha256(bearer.encode()).hexdigest()
            with open(args.provider_log, "a", encoding="utf-8") as calls:
                calls.write(f"{os.getpid()} {request.method} {seen}\n")
        killer.hit("in_provider")
        if args.hold_file:
            _fake_openalex().FileGate(Path(args.hold_file)).wait(60)
        if args.delay and args.delay_only_for in request.url.params.get("search", ""):
            time.sleep(args.delay)
        if args.provider == "echo":
            echoed: httpx.Response = _echo_response(request)
            return echoed
        if "provider-http-400" in request.url.params.get("search", ""):
            # OpenAlex's own answer to a bad filter, byte for byte.
            return httpx.Response(
                400,
                content=_fixture_bytes("error_400_works_invalid-filter_2026-05.json"),
                headers={"content-type": "application/json"},
            )
        body = _surrogate_page() if args.provider == "surrogate" else canned
        return httpx.Response(
            200,
            content=body,
            headers={"content-type": "application/json", "x-ratelimit-remaining": "99"},
        )

    return httpx.MockTransport(answer)


def main() -> int:
    """Parse the options, build the server through ``build_server`` and serve on stdio."""
    parser = argparse.ArgumentParser(prog="launcher.py")
    parser.add_argument("--evidence-dir", required=True)
    parser.add_argument(
        "--provider", choices=["canned", "echo", "surrogate", "bibliography"], default="canned"
    )
    parser.add_argument(
        "--fixture", default="works_list_2025-05_sample-5_chinese-korean-titles.json"
    )
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--delay-only-for", default="", help="delay only queries holding this")
    parser.add_argument("--kill-at", default=None)
    parser.add_argument("--kill-nth", type=int, default=1)
    parser.add_argument("--fsize", type=int, default=None)
    parser.add_argument("--provider-log", default=None, help="append a line per provider call")
    parser.add_argument("--hold-file", default=None, help="hold each search until this exists")
    parser.add_argument("--config", choices=["fixed", "env"], default="fixed")
    parser.add_argument("--log-level", default="warning")
    parser.add_argument("--search-slots", type=int, default=2)
    parser.add_argument("--toolsets", default="search")
    parser.add_argument("--timestamp-url", default=None, help="stamp log heads at this TSA")
    parser.add_argument("--timestamp-every", type=float)
    parser.add_argument("--tsa-ca", default=None, help="trust only TSA chains to these CAs")
    if sys.argv[1:2] == ["check-references"]:
        return _check_references(sys.argv[2:])
    args = parser.parse_args()

    from notanda_mcp._logging import configure_logging

    configure_logging(args.log_level)
    _guard_installed()
    if args.fsize is not None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (args.fsize, args.fsize))
    from notanda_mcp import build_server

    killer = _Killer(args.kill_at, args.kill_nth)
    config = None if args.config == "env" else {"HARVESTER_OPENALEX_API_KEY": DEFAULT_KEY}
    server = build_server(
        args.evidence_dir,
        transport=_transport(args, killer),
        config=config,
        on_stage=killer if args.kill_at else None,
        search_slots=args.search_slots,
        toolsets=args.toolsets.split(","),
        timestamp_url=args.timestamp_url,
        timestamp_every=args.timestamp_every,
        tsa_ca=args.tsa_ca,
    )
    server.run()
    return 0


def _check_references(argv: list[str]) -> int:
    """``notanda-mcp check-references`` with the bibliography provider and the fixed key."""
    _guard_installed()
    from notanda_mcp._check_cli import main as check_references

    fixture = os.environ.get("NOTANDA_IT_FIXTURE", "")
    # NOTANDA_IT_SYNTHETIC=N: a catalogue of N synthetic works instead of the
    # fixture's (fake_openalex.synthetic_work); NOTANDA_IT_DELAY_S: each answer
    # that late (the benchmark's 200 ms, the Ctrl-C test's running check).
    fake = _fake_openalex()
    synthetic = int(os.environ.get("NOTANDA_IT_SYNTHETIC") or 0)
    responder = (
        fake.bibliography([fake.synthetic_work(n) for n in range(1, synthetic + 1)])
        if synthetic
        else _bibliography(fixture)
    )
    provider = fake.FakeOpenAlex(
        responder, delay_s=float(os.environ.get("NOTANDA_IT_DELAY_S") or 0)
    )
    return check_references(
        argv,
        transport=provider.transport(),
        env={"HARVESTER_OPENALEX_API_KEY": DEFAULT_KEY},
    )


if __name__ == "__main__":
    sys.exit(main())
