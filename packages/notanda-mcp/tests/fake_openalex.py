"""Offline stand-ins for OpenAlex: httpx.MockTransport handlers that record every request.

Shared by the in-memory tests (through ``conftest.py``) and by the stdio
launcher, which runs in another process. Nothing here opens a socket.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import httpx

REPO_ROOT = Path(os.environ.get("NOTANDA_REPO_ROOT") or Path(__file__).resolve().parents[3])
# The recorded OpenAlex bodies are the repository's (tests-support/fixtures/openalex); this
# module also runs in the launcher's process, which finds them through NOTANDA_REPO_ROOT.
sys.path.insert(0, str(REPO_ROOT / "tests-support"))
# Re-exported to the tests and the launcher.
from openalex_fixtures import REFERENCE_DIR, fixture_bytes, fixture_names, fixture_path  # noqa: E402, F401

Responder = Callable[[httpx.Request], httpx.Response]


def synthetic_work(number: int, **overrides: Any) -> dict[str, Any]:
    """One OpenAlex-shaped work with a distinct ID, DOI and title."""
    work: dict[str, Any] = {
        "id": f"https://openalex.org/W{7000000000 + number}",
        "doi": f"https://doi.org/10.5555/notanda.test.{number}",
        "title": f"Synthetic work number {number}",
        "display_name": f"Synthetic work number {number}",
        "publication_year": 2020 + number % 5,
        "publication_date": f"{2020 + number % 5}-01-0{1 + number % 9}",
        "type": "article",
        "language": "en",
        "is_retracted": False,
        "cited_by_count": number,
        "is_authors_truncated": False,
        "authorships": [
            {"author": {"display_name": f"Author {number}", "orcid": None}},
        ],
        "primary_location": {"source": {"display_name": "Journal of Tests"}},
        "biblio": {"volume": "1", "issue": "2", "first_page": "3", "last_page": "4"},
        "open_access": {"is_oa": True, "oa_status": "gold", "oa_url": None},
    }
    work.update(overrides)
    return work


def page_body(works: list[dict[str, Any]], count: int | None = None) -> dict[str, Any]:
    return {"meta": {"count": len(works) if count is None else count}, "results": works}


def json_response(
    payload: Any, status: int = 200, headers: dict[str, str] | None = None
) -> httpx.Response:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    return httpx.Response(
        status, content=body, headers={"content-type": "application/json", **(headers or {})}
    )


def per_page(request: httpx.Request) -> int:
    return int(request.url.params.get("per-page", "10"))


def works_page(works: list[dict[str, Any]] | None = None) -> Responder:
    """Answer every search with *works* (ten synthetic ones by default), cut to per-page."""
    chosen = works if works is not None else [synthetic_work(n) for n in range(1, 11)]

    def respond(request: httpx.Request) -> httpx.Response:
        return json_response(page_body(chosen[: per_page(request)], count=len(chosen)))

    return respond


def fixture_page(name: str) -> Responder:
    """Answer every search with a recorded OpenAlex body, byte for byte."""
    body = fixture_bytes(name)

    def respond(request: httpx.Request) -> httpx.Response:
        return json_response(body)

    return respond


def status_response(
    status: int, body: bytes | dict[str, Any] = b"", headers: dict[str, str] | None = None
) -> Responder:
    def respond(request: httpx.Request) -> httpx.Response:
        return json_response(body, status, headers)

    return respond


def lone_surrogate_page() -> Responder:
    """A page whose title holds an escaped lone surrogate (valid JSON, not valid UTF-8 text)."""
    title = "Lone \ud800 surrogate"
    # json.dumps writes the lone surrogate as the escape \ud800, as a provider might.
    body = json.dumps(page_body([synthetic_work(1, title=title, display_name=title)]))
    assert "\\ud800" in body

    def respond(request: httpx.Request) -> httpx.Response:
        return json_response(body.encode("ascii"))

    return respond


#: Characters a hostile provider puts in titles to forge lines on a terminal:
#: ESC, BEL, a C1 control, right-to-left override, zero-width space, line separator.
HOSTILE_TEXT = "Forged \x1b[2J\x07 \x85 \u202eevil\u202c \u200b \u2028 \u00e9tude"


def hostile_text_page() -> Responder:
    """A page whose titles and venue hold terminal control, bidi and zero-width characters."""
    works = [
        synthetic_work(
            n,
            title=f"{HOSTILE_TEXT} {n}",
            display_name=f"{HOSTILE_TEXT} {n}",
            primary_location={"source": {"display_name": HOSTILE_TEXT}},
        )
        for n in range(1, 3)
    ]
    return works_page(works)


def key_echo() -> Responder:
    """Echo the key the server sent back in the body, the headers and a Location header.

    The first search gets a 200 page, the second a redirect, the third a 500:
    every place a careless server could copy provider text from.
    """
    calls = iter(range(1_000_000))

    def respond(request: httpx.Request) -> httpx.Response:
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        echoed = {
            "x-echo": key,
            "x-ratelimit-echo": key,
            "location": f"https://api.openalex.org/works?api_key={key}",
            "link": f"<https://api.openalex.org/works?api_key={key}>; rel=next",
        }
        number = next(calls)
        if number % 3 == 1:
            return json_response(b"", 302, echoed)
        if number % 3 == 2:
            return json_response({"error": f"bad key {key}", "key": key}, 500, echoed)
        work = synthetic_work(1, title=f"Title with {key}", display_name=f"Title with {key}")
        work["authorships"] = [{"author": {"display_name": key, "orcid": None}}]
        body = page_body([work])
        body["meta"]["echo"] = key
        body["meta"]["api_key"] = key
        return json_response(body, 200, echoed)

    return respond


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def catalogue_works() -> list[dict[str, Any]]:
    """A small catalogue for reference checks: three works with real-looking metadata."""
    people = (["Ada Lovelace", "Charles Babbage"], ["Emmy Noether"], ["Alan Turing"])
    titles = (
        "Sketch of the analytical engine",
        "Invariant variation problems",
        "On computable numbers, with an application to the Entscheidungsproblem",
    )
    return [
        synthetic_work(
            number,
            title=title,
            display_name=title,
            authorships=[{"author": {"display_name": name, "orcid": None}} for name in names],
        )
        for number, (title, names) in enumerate(zip(titles, people, strict=True), start=1)
    ]


def bibliography(works: list[dict[str, Any]] | None = None) -> Responder:
    """OpenAlex's two kinds of check request over a catalogue of works.

    ``filter=doi:A|B|...`` returns the works with those DOIs; ``filter=title.search:Q``
    (or ``search=Q``) the works whose title holds every word of Q. Anything else is a 400.
    """
    catalogue = catalogue_works() if works is None else works

    def respond(request: httpx.Request) -> httpx.Response:
        params = request.url.params
        wanted = params.get("filter", "")
        if wanted.startswith("doi:"):
            dois = {doi.lower() for doi in wanted.removeprefix("doi:").split("|")}
            found = [
                w
                for w in catalogue
                if (w.get("doi") or "").removeprefix("https://doi.org/") in dois
            ]
        elif wanted.startswith("title.search:") or "search" in params:
            words = _words(wanted.removeprefix("title.search:") or params.get("search", ""))
            found = [w for w in catalogue if words and words <= _words(w.get("title") or "")]
        else:
            return json_response({"error": "unsupported request"}, 400)
        return json_response(page_body(found[: per_page(request)]))

    return respond


#: How long a gated request waits for the test at most.
GATE_LIMIT_S = 20.0


class Gate(Protocol):
    """What a request waits at: a :class:`threading.Event`, or a :class:`FileGate`."""

    def wait(self, timeout: float | None = None) -> bool: ...


class FileGate:
    """A gate across processes, for a provider in a child process: the file *path*.

    The provider marks its arrival (``<path>.entered``) and waits until the
    test creates *path*, polling for it; the test waits for the mark, then
    creates the file. Both stdio launchers take it as ``--hold-file``.
    """

    def __init__(self, path: Path) -> None:
        self._arrived = path.with_name(f"{path.name}.entered")
        self._open = path

    def wait(self, timeout: float | None = None) -> bool:
        self._arrived.touch()
        deadline = time.monotonic() + (GATE_LIMIT_S if timeout is None else timeout)
        while not self._open.exists():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def has_arrived(self) -> bool:
        return self._arrived.exists()

    def set(self) -> None:
        self._open.touch()

    def is_set(self) -> bool:
        return self._open.exists()


class FakeOpenAlex:
    """A MockTransport handler: optional delay or gate, then the responder; every request recorded.

    With *gate*, each request waits until the test sets it (at most
    :data:`GATE_LIMIT_S`, so a test that never releases it fails instead of
    hanging); :attr:`arrived` is set once a request has reached the provider.
    Tests that show something happens *while* a search waits hold the search
    at the gate, so they prove it by order, not by a clock; across processes
    the gate is a :class:`FileGate`.
    """

    def __init__(
        self,
        respond: Responder | None = None,
        *,
        delay_s: float = 0.0,
        gate: Gate | None = None,
    ) -> None:
        self.respond = respond or works_page()
        self.delay_s = delay_s
        self.gate = gate
        self.arrived = threading.Event()
        self.requests: list[httpx.Request] = []
        self._lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.requests.append(request)
        self.arrived.set()
        if self.gate is not None and not self.gate.wait(GATE_LIMIT_S):
            raise RuntimeError("the test never released the provider's gate")
        if self.delay_s:
            time.sleep(self.delay_s)
        return self.respond(request)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


def responder_by_name(name: str) -> Responder:
    """The responders the stdio launcher can be told to use."""
    if name.startswith("fixture:"):
        return fixture_page(name.removeprefix("fixture:"))
    return {
        "page": works_page,
        "bibliography": bibliography,
        "echo": key_echo,
        "surrogate": lone_surrogate_page,
        "hostile": hostile_text_page,
    }[name]()
