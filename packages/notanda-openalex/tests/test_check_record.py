"""A check's provider record, from notanda-openalex as a search's is: fields and ``max_attempts``.

``ReferenceCheck.record_fields`` and ``ReferenceCheck.not_run_record_fields``
are what the server writes as ``provider.json`` (after formatting the times
and wrapping the bodies). ``max_attempts`` is counted from the batches the
check plans, so it is checked here against the requests a check really makes
when every reference needs its title lookup (the worst case it bounds).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import httpx
import pytest
from conftest import FakeClock, fixture_json, json_response
from notanda_openalex import (
    AttemptPurpose,
    Capture,
    CheckAttempt,
    ProviderObservation,
    ReferenceCheck,
    Verdict,
    parse_references,
)
from test_checking import MYERS, MYERS_DOI, MYERS_TITLE, bib, check

PROVIDER_KEYS = {"provider", "pagination", "max_attempts", "attempts"}
ATTEMPT_KEYS = {
    "method",
    "url",
    "started_at",
    "finished_at",
    "request_headers",
    "http_status",
    "response_headers",
    "body_bytes",
    "wire_bytes",
    "error_type",
}


def titled(count: int, doi: Any = None, *, unparsed: int = 0) -> str:
    """*count* BibTeX entries with distinct titles; ``doi(number)`` gives each one's DOI.

    *unparsed* entries that cannot be read follow (they are never looked up).
    """
    entries = []
    for number in range(count):
        fields: dict[str, object] = {"title": f"Imaginary engines volume {number} revisited"}
        value = None if doi is None else doi(number)
        if value is not None:
            fields["doi"] = value
        entries.append(bib(f"r{number}", **fields))
    entries += ["@article{broken, title={never closed"] * unparsed
    return "\n".join(entries)


def doi_batches(requests: list[httpx.Request]) -> list[httpx.Request]:
    return [request for request in requests if request.url.params["filter"].startswith("doi:")]


@pytest.mark.parametrize(
    ("text", "batches", "readable"),
    [
        pytest.param(titled(3), 0, 3, id="no-doi"),
        pytest.param(titled(50, lambda n: f"10.5555/plan.{n}"), 1, 50, id="50-dois"),
        pytest.param(titled(51, lambda n: f"10.5555/plan.{n}"), 2, 51, id="51-dois"),
        pytest.param(titled(100, lambda n: f"10.5555/plan.{n}"), 2, 100, id="100-dois"),
        pytest.param(
            titled(52, lambda n: f"10.5555/plan.{n % 50}"), 1, 52, id="52-references-50-dois"
        ),
        pytest.param(titled(6, lambda n: "10.5555/same"), 1, 6, id="one-doi-six-times"),
        pytest.param(
            titled(4, lambda n: f"10.5555/plan.{n}" if n % 2 else None, unparsed=1),
            1,
            4,
            id="some-dois-and-an-unparsed-entry",
        ),
        # A DOI holding filter syntax is never batched: 50 safe ones make one
        # batch, and the 51st reference is looked up by its title alone.
        pytest.param(
            titled(51, lambda n: f"10.5555/plan.{n}" if n < 50 else "10.5555/a|b"),
            1,
            51,
            id="50-dois-and-one-withheld",
        ),
    ],
)
def test_max_attempts_is_every_planned_batch_plus_a_title_lookup_each(
    clock: FakeClock, text: str, batches: int, readable: int
) -> None:
    # Nothing is found by DOI, so every readable reference gets its title lookup.
    result, requests = check(text, clock, works=[])
    assert len(doi_batches(requests)) == batches
    assert len(requests) == batches + readable
    assert result.max_attempts == batches + readable == len(result.attempts)
    assert result.record_fields()["max_attempts"] == result.max_attempts
    parsed = parse_references(text)
    assert sum(reference.parsed for reference in parsed) == readable
    assert ReferenceCheck.not_run_record_fields(parsed)["max_attempts"] == result.max_attempts


def test_a_found_doi_needs_no_title_lookup_so_max_attempts_is_an_upper_bound(
    clock: FakeClock,
) -> None:
    text = bib("m", title=MYERS_TITLE, doi=MYERS_DOI) + "\n" + titled(1)
    result, requests = check(text, clock, works=[fixture_json(MYERS)])
    assert len(requests) == 2  # the batch, and the second reference's title lookup
    assert result.max_attempts == 3


def test_record_fields_hold_each_attempt_with_its_purpose_capture_and_body(
    clock: FakeClock,
) -> None:
    text = bib("m", title=MYERS_TITLE, doi=MYERS_DOI) + "\n" + titled(1)
    result, _ = check(text, clock, works=[fixture_json(MYERS)])
    fields = result.record_fields()
    assert set(fields) == PROVIDER_KEYS
    assert (fields["provider"], fields["pagination"], fields["max_attempts"]) == (
        "openalex",
        False,
        3,
    )
    assert [entry["purpose"] for entry in fields["attempts"]] == ["doi_batch", "title"]
    for entry, attempt in zip(fields["attempts"], result.attempts, strict=True):
        observation = attempt.observation
        assert observation.attempt is not None
        assert set(entry) == ATTEMPT_KEYS | {"purpose", "capture", "observed_json"}
        assert entry["capture"] == Capture.PARSED_JSON.value
        # The body is the check's own value (shared, never copied); the times stay aware.
        assert entry["observed_json"] is observation.body_json
        assert isinstance(entry["started_at"], dt.datetime)
        assert entry["started_at"].tzinfo is not None
        assert {key: entry[key] for key in ATTEMPT_KEYS} == observation.attempt.to_record()
    matched = result.references[0]
    assert matched.verdict is Verdict.VERIFIED
    body = fields["attempts"][matched.attempt_index]["observed_json"]
    assert body["results"][0]["id"] == "https://openalex.org/W2162348455"


def test_an_attempt_without_a_body_or_a_request_has_no_body_key(clock: FakeClock) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, content=b"not json")

    result, _ = check(titled(1), clock, handler=fail)
    (entry,) = result.record_fields()["attempts"]
    assert entry["capture"] == Capture.NON_JSON_BODY_NOT_RETAINED.value
    assert entry["http_status"] == 500
    assert "observed_json" not in entry

    nothing_sent = CheckAttempt(
        AttemptPurpose.TITLE, ProviderObservation(capture=Capture.NOT_ATTEMPTED, attempt=None)
    )
    assert nothing_sent.record_fields() == {"capture": "not_attempted", "purpose": "title"}


def test_a_check_refused_as_a_whole_records_no_attempt_and_its_plan(clock: FakeClock) -> None:
    text = titled(3, lambda n: f"10.5555/plan.{n}")
    result, requests = check(text, clock, client_kwargs={"api_key": None})
    assert requests == []
    assert result.failure is not None
    assert result.record_fields() == {
        "attempts": [],
        "max_attempts": 4,
        "pagination": False,
        "provider": "openalex",
    }
    assert result.record_fields() == ReferenceCheck.not_run_record_fields(parse_references(text))


def test_a_check_that_never_read_its_input_may_make_no_request() -> None:
    assert ReferenceCheck.not_run_record_fields(None) == {
        "attempts": [],
        "max_attempts": 0,
        "pagination": False,
        "provider": "openalex",
    }


def test_a_json_null_body_is_kept_as_a_body(clock: FakeClock) -> None:
    def null(request: httpx.Request) -> httpx.Response:
        return json_response(None)

    result, _ = check(titled(1), clock, handler=null)
    (entry,) = result.record_fields()["attempts"]
    assert entry["capture"] == Capture.PARSED_JSON.value
    assert "observed_json" in entry
    assert entry["observed_json"] is None
    assert result.references[0].verdict is Verdict.UNCHECKED
