"""Shared test fixtures: the fake clock, the real OpenAlex fixtures, log capture."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from notanda_openalex import OpenAlexClient

REPO_ROOT = Path(__file__).resolve().parents[3]
# Helpers shared by the three packages' tests (public_names.py, openalex_fixtures.py).
# The recorded OpenAlex bodies are in the repository (tests-support/fixtures/openalex);
# one missing is an error naming it, never a skip.
sys.path.insert(0, str(REPO_ROOT / "tests-support"))
from openalex_fixtures import fixture_names, fixture_path  # noqa: E402

# Re-exported: the test modules take the fixture helpers from here.
__all__ = ["fixture_names"]

#: A distinctive key: it must never appear in any record, log or message.
SECRET_KEY = "oa-SECRET-kq7Zx9Wv3Lm2"
#: A contact address treated as secret by the core configuration.
SECRET_EMAIL = "owner+alerts@secret-mail.example"
#: An advisor key (ANTHROPIC_API_KEY), also secret.
SECRET_ADVISOR = "sk-ant-SECRET-advisor-55Qp"
ALL_SECRETS = (SECRET_KEY, SECRET_EMAIL, SECRET_ADVISOR)


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 5, 22, 12, 0, 0, 123456, tzinfo=UTC)
        self._monotonic = 5000.0

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._monotonic

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
        self._monotonic += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def fixture_bytes(name: str) -> bytes:
    return fixture_path(name).read_bytes()


def fixture_json(name: str) -> Any:
    return json.loads(fixture_bytes(name))


Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A MockTransport handler wrapper that records every request it sees."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.handler(request)


def json_response(
    payload: Any, status: int = 200, headers: dict[str, str] | None = None
) -> httpx.Response:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    merged = {"Content-Type": "application/json"}
    merged.update(headers or {})
    return httpx.Response(status, content=body, headers=merged)


def make_client(
    handler: Handler, clock: FakeClock, *, api_key: str | None = SECRET_KEY, **kwargs: Any
) -> tuple[OpenAlexClient, Recorder]:
    recorder = Recorder(handler)
    client = OpenAlexClient(
        api_key=api_key,
        transport=httpx.MockTransport(recorder),
        clock=clock,
        secrets=kwargs.pop("secrets", (SECRET_EMAIL, SECRET_ADVISOR)),
        **kwargs,
    )
    return client, recorder


class LogCapture(logging.Handler):
    """Every record any logger emits, formatted with its exception text."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def text(self) -> str:
        return "\n".join(self.format(record) for record in self.records)


@pytest.fixture
def all_logs() -> Iterator[LogCapture]:
    capture = LogCapture()
    root = logging.getLogger()
    names = ("httpx", "httpcore", "harvester", "notanda_openalex")
    saved = {
        name: (logging.getLogger(name).level, logging.getLogger(name).disabled) for name in names
    }
    previous = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    for name in names:
        logging.getLogger(name).setLevel(logging.DEBUG)
        logging.getLogger(name).disabled = False
    try:
        yield capture
    finally:
        root.removeHandler(capture)
        root.setLevel(previous)
        for name, (level, disabled) in saved.items():
            logging.getLogger(name).setLevel(level)
            logging.getLogger(name).disabled = disabled


def stored_body(observation: Any) -> bytes:
    """The observation's body as text a record could hold (``b""`` when there is none).

    Not the evidence writer's canonical bytes (this package never encodes
    them): a secret in any string of the value shows here all the same.
    """
    if not observation.has_body:
        return b""
    return json.dumps(observation.body_json, ensure_ascii=False).encode("utf-8", "surrogatepass")


def assert_no_secret(*texts: str | bytes) -> None:
    for text in texts:
        data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        for secret in ALL_SECRETS:
            for form in {secret, secret.replace("@", "%40"), secret.replace("+", "%2B")}:
                assert form.encode("utf-8") not in data, "a secret leaked"
