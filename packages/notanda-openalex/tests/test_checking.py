"""OpenAlexClient.check_references against httpx.MockTransport: requests, verdicts, records.

The works are real OpenAlex records from tests-support/fixtures/openalex, served by a
small fake of the ``/works`` list endpoint that answers ``filter=doi:A|B``
and ``filter=title.search:...`` the way OpenAlex does for these cases.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from checkout import absent
from conftest import (
    ALL_SECRETS,
    REPO_ROOT,
    SECRET_KEY,
    FakeClock,
    LogCapture,
    assert_no_secret,
    fixture_json,
    json_response,
    make_client,
    stored_body,
)
from notanda_openalex import (
    DEFAULT_CHECK_CONCURRENCY,
    DEFAULT_CHECK_DEADLINE_S,
    MAX_DOIS_PER_REQUEST,
    MAX_TITLE_CANDIDATES,
    AttemptPurpose,
    CheckedReference,
    ConfigurationDetail,
    ErrorCode,
    OpenAlexClient,
    ReferenceCheck,
    ReferenceField,
    UncheckedReason,
    Verdict,
    parse_references,
)
from notanda_openalex._matching import normalize_text

MYERS = "work_W2162348455_2026-05.json"
PIWOWAR = "work_W2741809807_2025-10.json"
LANDER = "work_W2168909179_2025-10_249-authors.json"
ROBERTS_PUBLISHED = "work_W3187234764_2025-10_closed.json"
AUTHOR_PAGE = "works_list_2025-10_filter-authorships-author-id_per-page-5.json"
YEAR_2020_PAGE = (
    "works_list_2025-10_filter-publication-year-2020_per-page-50"
    "_retracted-and-truncated-authors.json"
)


def _page_work(name: str, openalex_id: str) -> dict[str, Any]:
    for record in fixture_json(name)["results"]:
        if record["id"] == f"https://openalex.org/{openalex_id}":
            return dict(record)
    raise AssertionError(f"{openalex_id} not in {name}")


def real_works() -> list[dict[str, Any]]:
    """Every real work the fake serves (the arXiv twin of W3187234764 included)."""
    return [
        fixture_json(MYERS),
        fixture_json(PIWOWAR),
        fixture_json(LANDER),
        fixture_json(ROBERTS_PUBLISHED),
        _page_work(AUTHOR_PAGE, "W3188841554"),
        _page_work(YEAR_2020_PAGE, "W4288079944"),
        _page_work(YEAR_2020_PAGE, "W3046275966"),
    ]


def _doi(record: dict[str, Any]) -> str | None:
    doi = record.get("doi")
    return doi.removeprefix("https://doi.org/").lower() if isinstance(doi, str) else None


class FakeOpenAlex:
    """``/works`` list requests over a fixed set of work records.

    ``filter=doi:A|B`` returns the records with those DOIs; ``title.search``
    returns the records sharing at least half of the query's words, most
    shared first, at most ``per-page``.
    """

    def __init__(
        self,
        works: list[dict[str, Any]],
        *,
        on_request: Callable[[httpx.Request], None] | None = None,
    ) -> None:
        self.works = works
        self.on_request = on_request
        self.requests: list[httpx.Request] = []
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            if self.on_request is not None:
                self.on_request(request)
            return self.answer(request)
        finally:
            with self._lock:
                self.in_flight -= 1

    def answer(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/works"
        params = request.url.params
        filter_value = params["filter"]
        per_page = int(params["per-page"])
        if filter_value.startswith("doi:"):
            wanted = set(filter_value.removeprefix("doi:").split("|"))
            results = [record for record in self.works if _doi(record) in wanted]
        else:
            assert filter_value.startswith("title.search:")
            words = set(normalize_text(filter_value.removeprefix("title.search:")).split())
            scored = []
            for record in self.works:
                title = set(normalize_text(record.get("title") or "").split())
                shared = len(words & title)
                if words and shared * 2 >= len(words):
                    scored.append((-shared, record["id"], record))
            results = [record for _, _, record in sorted(scored, key=lambda item: item[:2])]
        results = results[:per_page]
        return json_response(
            {"meta": {"count": len(results), "page": 1, "per_page": per_page}, "results": results}
        )


def check(
    text: str,
    clock: FakeClock,
    *,
    works: list[dict[str, Any]] | None = None,
    fake: FakeOpenAlex | None = None,
    handler: Callable[[httpx.Request], httpx.Response] | None = None,
    client_kwargs: dict[str, Any] | None = None,
    **kwargs: Any,
) -> tuple[ReferenceCheck, list[httpx.Request]]:
    if handler is None:
        fake = fake or FakeOpenAlex(real_works() if works is None else works)
        handler = fake
    client, recorder = make_client(handler, clock, **(client_kwargs or {}))
    result = client.check_references(parse_references(text), **kwargs)
    assert_consistent(result)
    return result, recorder.requests


def assert_consistent(result: ReferenceCheck) -> None:
    """What must hold of every check: one entry each, indices, observations, record form."""
    assert [entry.index for entry in result.references] == list(range(len(result.references)))
    for entry in result.references:
        record = entry.to_record()
        assert set(record) == {
            "index",
            "key",
            "verdict",
            "differs",
            "retracted",
            "work",
            "observation",
            "error",
            "identifier_withheld",
        }
        json.dumps(record)
        if entry.verdict is not Verdict.METADATA_MISMATCH:
            assert entry.differs == ()
        if entry.work is None:
            assert entry.attempt_index is None
            assert entry.retracted is None
        else:
            assert entry.verdict in (Verdict.VERIFIED, Verdict.METADATA_MISMATCH)
            body = result.attempts[entry.attempt_index].observation.body_json
            ids = {item["id"] for item in body["results"]}
            assert f"https://openalex.org/{entry.work.openalex_id}" in ids
            assert entry.retracted == entry.work.is_retracted
        if entry.verdict in (Verdict.UNCHECKED, Verdict.UNPARSED):
            assert entry.error is not None
        else:
            assert entry.error is None
    assert sum(result.summary().values()) == len(result.references)


def one(text: str, clock: FakeClock, **kwargs: Any) -> CheckedReference:
    result, _ = check(text, clock, **kwargs)
    (entry,) = result.references
    return entry


def verdict_of(entry: CheckedReference) -> tuple[Verdict, tuple[ReferenceField, ...]]:
    return entry.verdict, entry.differs


D = ReferenceField


# ----------------------------------------------------------- the table rows


def bib(key: str, kind: str = "article", **fields: object) -> str:
    """One BibTeX entry with *fields* as braced values."""
    body = ", ".join(f"{name}={{{value}}}" for name, value in fields.items())
    return f"@{kind}{{{key}, {body}}}"


MYERS_TITLE = "Biodiversity hotspots for conservation priorities"
MYERS_DOI = "10.1038/35002501"
MYERS_AUTHORS = (
    "Myers, N. and Mittermeier, R. A. and Mittermeier, C. G. and da Fonseca, G. A. B. and Kent, J."
)
PIWOWAR_TITLE = (
    "The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles"
)
ROBERTS_TITLE = (
    "3D Visualisations Should Not be Displayed Alone -"
    " Encouraging a Need for Multivocality in Visualisation"
)


def test_row_unknown_doi_with_the_title_of_a_real_work(clock: FakeClock) -> None:
    authors = "Piwowar, Heather and Priem, Jason and others"
    text = bib(
        "p",
        author=authors,
        title=PIWOWAR_TITLE,
        journal="PeerJ",
        year=2018,
        doi="10.7717/peerj.99999",
    )
    entry = one(text, clock)
    assert verdict_of(entry) == (Verdict.METADATA_MISMATCH, (D.DOI,))
    assert entry.work is not None
    assert entry.work.doi == "10.7717/peerj.4375"


def test_row_unknown_doi_and_nothing_matches(clock: FakeClock) -> None:
    invented = "Quantum gravitational effects on sourdough fermentation"
    text = bib("x", author="Nobody, Anne", title=invented, year=2021, doi="10.5555/nothing.1")
    result, requests = check(text, clock)
    (entry,) = result.references
    assert verdict_of(entry) == (Verdict.NOT_FOUND, ())
    assert entry.work is None
    assert [request.url.params["filter"].split(":")[0] for request in requests] == [
        "doi",
        "title.search",
    ]


def test_row_real_doi_with_another_title_and_authors(clock: FakeClock) -> None:
    invented = "Deep learning predicts protein folding"
    fields: dict[str, object] = {"journal": "Nature", "year": 2000, "doi": MYERS_DOI}
    both = one(bib("m", author="Smith, John and Doe, Jane", title=invented, **fields), clock)
    assert verdict_of(both) == (Verdict.METADATA_MISMATCH, (D.TITLE, D.AUTHORS))
    title_only = one(bib("m", author=MYERS_AUTHORS, title=invented, **fields), clock)
    assert verdict_of(title_only) == (Verdict.METADATA_MISMATCH, (D.TITLE,))


def test_row_near_miss_title(clock: FakeClock) -> None:
    near = "Biodiversity hotspots for conservation planning"
    via_doi = one(bib("m", title=near, doi=MYERS_DOI, year=2000), clock)
    assert verdict_of(via_doi) == (Verdict.METADATA_MISMATCH, (D.TITLE,))
    via_authors = one(bib("m", author=MYERS_AUTHORS, title=near, year=2000), clock)
    assert verdict_of(via_authors) == (Verdict.METADATA_MISMATCH, (D.TITLE,))
    alone = one(bib("m", title=near, year=2000), clock)
    assert verdict_of(alone) == (Verdict.NOT_FOUND, ())


def test_row_chimeric_title(clock: FakeClock) -> None:
    invented = "Hotspots of biodiversity loss in tropical conservation finance"
    without_doi = one(bib("m", author=MYERS_AUTHORS, title=invented, year=2000), clock)
    assert verdict_of(without_doi) == (Verdict.NOT_FOUND, ())
    with_doi = one(bib("m", author=MYERS_AUTHORS, title=invented, year=2000, doi=MYERS_DOI), clock)
    assert verdict_of(with_doi) == (Verdict.METADATA_MISMATCH, (D.TITLE,))
    # Two real titles merged into one.
    merged = f"{MYERS_TITLE}: initial sequencing and analysis of the human genome"
    alone = one(bib("m", author=MYERS_AUTHORS, title=merged, year=2000), clock)
    assert verdict_of(alone) == (Verdict.NOT_FOUND, ())
    with_doi = one(bib("m", author=MYERS_AUTHORS, title=merged, year=2000, doi=MYERS_DOI), clock)
    assert verdict_of(with_doi) == (Verdict.METADATA_MISMATCH, (D.TITLE,))


@pytest.mark.parametrize(
    "authors",
    [
        "Mittermeier, R. A. and Myers, N. and Mittermeier, C. G. and da Fonseca, G. A. B."
        " and Kent, J.",
        "Myers, N. and Mittermeier, R. A.",
        "Doe, J. and Author, A. and Smith, J.",
    ],
    ids=["swapped", "partial", "placeholder"],
)
@pytest.mark.parametrize("doi", [True, False], ids=["doi", "title"])
def test_row_swapped_partial_or_placeholder_authors(
    clock: FakeClock, authors: str, doi: bool
) -> None:
    extra = {"doi": MYERS_DOI} if doi else {}
    text = bib("m", author=authors, title=MYERS_TITLE, journal="Nature", year=2000, **extra)
    assert verdict_of(one(text, clock)) == (Verdict.METADATA_MISMATCH, (D.AUTHORS,))


@pytest.mark.parametrize("year", [1999, 2031])
def test_row_wrong_or_future_year(clock: FakeClock, year: int) -> None:
    text = bib(
        "m", author=MYERS_AUTHORS, title=MYERS_TITLE, journal="Nature", year=year, doi=MYERS_DOI
    )
    assert verdict_of(one(text, clock)) == (Verdict.METADATA_MISMATCH, (D.YEAR,))


def test_row_wrong_venue(clock: FakeClock) -> None:
    text = bib(
        "m", author=MYERS_AUTHORS, title=MYERS_TITLE, journal="Science", year=2000, doi=MYERS_DOI
    )
    assert verdict_of(one(text, clock)) == (Verdict.METADATA_MISMATCH, (D.VENUE,))


def test_row_preprint_cited_as_published(clock: FakeClock) -> None:
    # Only the arXiv version is in OpenAlex; the reference calls it a 2022 journal article.
    preprint = _page_work(AUTHOR_PAGE, "W3188841554")
    authors = (
        "Roberts, Jonathan C. and Mearman, Joseph and Butcher, Peter and"
        " Al-Maneea, Hayder Mahdi Abdullah and Ritsos, Panagiotis D."
    )
    journal = "IEEE Transactions on Visualization and Computer Graphics"
    text = bib("r", author=authors, title=ROBERTS_TITLE, journal=journal, year=2022)
    entry = one(text, clock, works=[preprint])
    assert verdict_of(entry) == (Verdict.METADATA_MISMATCH, (D.YEAR, D.VENUE))
    assert entry.work is not None
    assert entry.work.openalex_id == "W3188841554"


# ------------------------------------------------- real, correct references

#: Correct references written the way people write them: LaTeX accents, other
#: case and punctuation, initials, both name orders, a resolver prefix and a
#: trailing full stop on a DOI, a colon where OpenAlex has a dash.
REAL_BIBLIOGRAPHY = "\n".join(
    [
        bib(
            "piwowar2018",
            author="Heather Piwowar and Priem, Jason and Lariv{\\`i}ere, Vincent"
            " and Alper{\\'\\i}n, Juan Pablo and others",
            title="The State of {OA}: A Large-Scale Analysis of the Prevalence and Impact"
            " of Open Access Articles",
            journal="PeerJ",
            year=2018,
            doi="https://doi.org/10.7717/PEERJ.4375.",
        ),
        bib(
            "myers2000",
            author=MYERS_AUTHORS,
            title="Biodiversity Hotspots for Conservation Priorities",
            journal="Nature",
            year=2000,
        ),
        bib(
            "lander2001",
            author="Lander, E. S. and Linton, L. M. and Birren, B. and others",
            title="Initial sequencing and analysis of the human genome",
            journal="Nature",
            year=2001,
            doi="doi:10.1038/35057062",
        ),
        bib(
            "roberts2021",
            "inproceedings",
            author="Roberts, J. C. and Mearman, J. and Butcher, P. and Al-Maneea, H. M. A."
            " and Ritsos, P. D.",
            title="{3D} visualisations should not be displayed alone: encouraging a need"
            " for multivocality in visualisation",
            booktitle="Computer Graphics and Visual Computing (CGVC)",
            year=2021,
        ),
        bib(
            "planck2018",
            author="Aghanim, N. and Akrami, Y. and others",
            title="Planck 2018 results",
            year=2020,
        ),
    ]
)


def test_real_correct_references_are_verified(clock: FakeClock) -> None:
    result, requests = check(REAL_BIBLIOGRAPHY, clock)
    by_key = {entry.key: entry for entry in result.references}
    for key, entry in by_key.items():
        assert verdict_of(entry) == (Verdict.VERIFIED, ()), key
    # The preprint twin (W3188841554, arXiv) lost to the published version.
    assert by_key["roberts2021"].work is not None
    assert by_key["roberts2021"].work.openalex_id == "W3187234764"
    assert result.summary()["verified"] == 5
    purposes = [attempt.purpose for attempt in result.attempts]
    assert purposes == ["doi_batch", "title", "title", "title"]
    # Requests run concurrently: they may reach OpenAlex in any order.
    filters = sorted(request.url.params["filter"] for request in requests)
    assert filters[0] == "doi:10.7717/peerj.4375|10.1038/35057062"


def test_plain_text_vancouver_reference_is_verified(clock: FakeClock) -> None:
    entry = one(
        "Myers N, Mittermeier RA, Mittermeier CG, da Fonseca GAB, Kent J. Biodiversity hotspots for"
        " conservation priorities. Nature. 2000;403(6772):853-858.",
        clock,
    )
    assert verdict_of(entry) == (Verdict.VERIFIED, ())


def test_retracted_work_is_reported(clock: FakeClock) -> None:
    entry = one("10.1016/S0140-6736(20)30367-6", clock)
    assert entry.verdict is Verdict.VERIFIED
    assert entry.retracted is True


# ------------------------------------------------------------ the requests


def test_more_than_fifty_dois_take_two_batches(clock: FakeClock) -> None:
    text = "\n".join(f"10.5555/batch.{number}" for number in range(MAX_DOIS_PER_REQUEST + 1))
    result, requests = check(text, clock, works=[])
    batches = [request for request in requests if request.url.params["filter"].startswith("doi:")]
    assert len(batches) == 2
    sizes = [
        len(request.url.params["filter"].removeprefix("doi:").split("|")) for request in batches
    ]
    assert sorted(sizes) == [1, MAX_DOIS_PER_REQUEST]
    assert {request.url.params["per-page"] for request in batches} == {"100"}
    # Bare DOIs have no title to fall back on: not found, with no title lookup.
    assert result.summary()["not_found"] == MAX_DOIS_PER_REQUEST + 1
    assert len(requests) == 2


def test_requests_carry_no_open_access_or_has_doi_filter_and_select_the_work_fields(
    clock: FakeClock,
) -> None:
    _, requests = check(REAL_BIBLIOGRAPHY, clock)
    for request in requests:
        params = request.url.params
        assert "is_oa" not in params["filter"]
        assert "has_doi" not in params["filter"]
        assert "search" not in params
        assert {"is_retracted", "primary_location", "authorships", "doi", "title"} <= set(
            params["select"].split(",")
        )
        if params["filter"].startswith("title.search:"):
            assert params["per-page"] == str(MAX_TITLE_CANDIDATES)


def test_title_lookup_sends_no_character_openalex_rejects(clock: FakeClock) -> None:
    _, requests = check(
        '@article{q, title={Does X, or Y|Z, improve "A*"? Yes: 100%!}, year={2020}}',
        clock,
        works=[],
    )
    (request,) = requests
    value = request.url.params["filter"].removeprefix("title.search:")
    assert value == "Does X or Y Z improve A Yes 100"


def test_dois_are_normalized_and_sent_once(clock: FakeClock) -> None:
    text = "https://doi.org/10.1038/35002501\ndoi:10.1038/35002501.\n10.1038/35002501"
    result, requests = check(text, clock)
    assert [request.url.params["filter"] for request in requests] == ["doi:10.1038/35002501"]
    assert [entry.verdict for entry in result.references] == [Verdict.VERIFIED] * 3
    assert {entry.attempt_index for entry in result.references} == {0}


def test_concurrency_is_bounded(clock: FakeClock) -> None:
    limit = 3
    barrier = threading.Barrier(limit, timeout=30)
    first_round = threading.Semaphore(limit)

    def rendezvous(request: httpx.Request) -> None:
        # The first `limit` requests wait for each other: they were all in flight at once.
        if first_round.acquire(blocking=False):
            barrier.wait()

    fake = FakeOpenAlex([], on_request=rendezvous)
    text = "\n".join(
        f"@misc{{k{number}, title={{Title number {number} about things}}}}" for number in range(12)
    )
    result, _ = check(text, clock, fake=fake, concurrency=limit)
    assert fake.peak == limit
    assert len(fake.requests) == 12
    assert result.summary()["not_found"] == 12


def test_attempt_order_is_planned_not_completion_order(clock: FakeClock) -> None:
    release = threading.Event()
    count = [0]
    lock = threading.Lock()

    def reverse(request: httpx.Request) -> None:
        # Every request but the last one sent waits until that one has been answered.
        with lock:
            count[0] += 1
            last = count[0] == 4
        if last:
            return
        release.wait(timeout=30)

    fake = FakeOpenAlex(real_works(), on_request=reverse)

    def handler(request: httpx.Request) -> httpx.Response:
        response = fake(request)
        with lock:
            if count[0] == 4:
                release.set()
        return response

    result, _ = check(REAL_BIBLIOGRAPHY, clock, handler=handler, concurrency=4)
    urls = [attempt.observation.attempt.url for attempt in result.attempts]
    assert "doi%3A" in urls[0]
    assert ["myers" in url.lower() or "Biodiversity" in url for url in urls[1:]] == [
        True,
        False,
        False,
    ]
    assert "visualisations" in urls[2].lower()
    assert "planck" in urls[3].lower()


def test_observation_points_at_the_attempt_holding_the_work(clock: FakeClock) -> None:
    result, _ = check(REAL_BIBLIOGRAPHY, clock)
    for entry in result.references:
        assert entry.work is not None
        assert entry.attempt_index is not None
        attempt = result.attempts[entry.attempt_index]
        ids = [item["id"] for item in attempt.observation.body_json["results"]]
        assert f"https://openalex.org/{entry.work.openalex_id}" in ids
    assert [entry.attempt_index for entry in result.references] == [0, 1, 0, 2, 3]


# ------------------------------------------------------------------- failures


def test_a_failed_request_leaves_its_references_unchecked_with_the_code(clock: FakeClock) -> None:
    fake = FakeOpenAlex(real_works())

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.params["filter"].startswith("doi:"):
            return json_response({"error": "boom"}, status=500)
        return fake(request)

    result, _ = check(REAL_BIBLIOGRAPHY, clock, handler=handler)
    verdicts = {entry.key: (entry.verdict, entry.error) for entry in result.references}
    assert verdicts["piwowar2018"] == (Verdict.UNCHECKED, "http_error")
    assert verdicts["lander2001"] == (Verdict.UNCHECKED, "http_error")
    assert verdicts["myers2000"] == (Verdict.VERIFIED, None)
    assert result.attempts[0].observation.attempt is not None
    assert result.attempts[0].observation.attempt.http_status == 500
    assert result.summary()["not_found"] == 0


def test_the_deadline_leaves_the_rest_unchecked_never_not_found(clock: FakeClock) -> None:
    def slow(request: httpx.Request) -> None:
        clock.advance(DEFAULT_CHECK_DEADLINE_S + 1)

    fake = FakeOpenAlex(real_works(), on_request=slow)
    result, requests = check(REAL_BIBLIOGRAPHY, clock, fake=fake, concurrency=1)
    assert len(requests) == 1
    assert len(result.attempts) == 1
    assert {entry.verdict for entry in result.references} == {Verdict.UNCHECKED}
    assert {entry.error for entry in result.references} == {UncheckedReason.DEADLINE_EXCEEDED.value}


def test_a_shorter_deadline_is_honoured(clock: FakeClock) -> None:
    def slow(request: httpx.Request) -> None:
        clock.advance(3)

    fake = FakeOpenAlex(real_works(), on_request=slow)
    result, requests = check(REAL_BIBLIOGRAPHY, clock, fake=fake, concurrency=1, deadline_s=5)
    # The DOI batch (3 s) is answered, the first title lookup runs past 5 s, the rest never start.
    assert len(requests) == 2
    by_key = {entry.key: entry for entry in result.references}
    assert by_key["piwowar2018"].verdict is Verdict.VERIFIED
    assert by_key["myers2000"].error == UncheckedReason.DEADLINE_EXCEEDED.value
    assert by_key["planck2018"].error == UncheckedReason.DEADLINE_EXCEEDED.value


def test_cancellation_stops_new_requests(clock: FakeClock) -> None:
    # Cancelled once the DOI batch has been decided: no title lookup starts.
    decided = [0]

    def progress(done: int, total: int) -> None:
        decided[0] = done

    result, requests = check(
        REAL_BIBLIOGRAPHY,
        clock,
        concurrency=1,
        on_progress=progress,
        cancelled=lambda: decided[0] >= 2,
    )
    assert len(requests) == 1
    assert [entry.verdict for entry in result.references] == [
        Verdict.VERIFIED,
        Verdict.UNCHECKED,
        Verdict.VERIFIED,
        Verdict.UNCHECKED,
        Verdict.UNCHECKED,
    ]
    unchecked = [entry for entry in result.references if entry.verdict is Verdict.UNCHECKED]
    assert {entry.error for entry in unchecked} == {UncheckedReason.DEADLINE_EXCEEDED.value}
    assert decided[0] == 5


def test_a_refused_configuration_fails_the_check_as_a_whole(clock: FakeClock) -> None:
    result, requests = check(
        REAL_BIBLIOGRAPHY + "\n@article{broken,", clock, client_kwargs={"api_key": None}
    )
    assert requests == []
    assert result.attempts == ()
    assert result.failure is not None
    assert result.failure.code is ErrorCode.CONFIGURATION_ERROR
    assert result.failure.detail is ConfigurationDetail.MISSING_API_KEY
    assert [entry.verdict for entry in result.references][:5] == [Verdict.UNCHECKED] * 5
    assert {entry.error for entry in result.references[:5]} == {"configuration_error"}
    assert result.references[5].verdict is Verdict.UNPARSED


def test_unparsed_entries_keep_their_place_and_reason(clock: FakeClock) -> None:
    result, _ = check('[{"title": "Biodiversity hotspots for conservation priorities"}, 5]', clock)
    assert [entry.verdict for entry in result.references] == [Verdict.VERIFIED, Verdict.UNPARSED]
    assert result.references[1].error == "csl_not_an_object"


def test_a_body_too_deep_is_unchecked(clock: FakeClock) -> None:
    result, _ = check("10.1038/35002501", clock, too_deep=lambda body: True)
    (entry,) = result.references
    assert (entry.verdict, entry.error) == (Verdict.UNCHECKED, "too_deep")
    assert not result.attempts[0].observation.has_body


def test_progress_counts_up_to_every_reference(clock: FakeClock) -> None:
    seen: list[tuple[int, int]] = []
    check(
        REAL_BIBLIOGRAPHY + "\n@article{broken,",
        clock,
        on_progress=lambda done, total: seen.append((done, total)),
    )
    assert [done for done, _ in seen] == list(range(1, 7))
    assert {total for _, total in seen} == {6}


def test_secrets_never_reach_the_attempts_the_entries_or_the_logs(
    clock: FakeClock, all_logs: LogCapture
) -> None:
    leaky = fixture_json(MYERS)
    leaky["primary_location"]["source"]["display_name"] = f"Nature {SECRET_KEY}"

    def echo(request: httpx.Request) -> httpx.Response:
        return json_response(
            {
                "meta": {"count": 1},
                "results": [leaky],
                "echo": dict(request.headers),
                "note": " ".join(ALL_SECRETS),
            },
            headers={"X-RateLimit-Note": SECRET_KEY},
        )

    result, requests = check(REAL_BIBLIOGRAPHY, clock, handler=echo)
    assert {request.headers["authorization"] for request in requests} == {f"Bearer {SECRET_KEY}"}
    for attempt in result.attempts:
        record = json.dumps(attempt.observation.record_fields(), default=str)
        assert "x-ratelimit-note" in record
        assert_no_secret(record, stored_body(attempt.observation))
    entries = [entry.to_record() for entry in result.references]
    assert any(entry["work"] is not None for entry in entries)
    assert_no_secret(json.dumps(entries), all_logs.text())


def test_arguments_are_checked(clock: FakeClock) -> None:
    client, _ = make_client(FakeOpenAlex([]), clock)
    parsed = parse_references("10.1038/35002501")
    with pytest.raises(TypeError):
        client.check_references("10.1038/35002501")  # type: ignore[arg-type]
    for bad in (0, 17, True, 2.0):
        with pytest.raises(ValueError, match="concurrency"):
            client.check_references(parsed, concurrency=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="deadline_s"):
        client.check_references(parsed, deadline_s=0)
    assert DEFAULT_CHECK_CONCURRENCY == 4
    assert DEFAULT_CHECK_DEADLINE_S == 60.0


def test_codes_are_stable() -> None:
    assert [verdict.value for verdict in Verdict] == [
        "verified",
        "metadata_mismatch",
        "not_found",
        "ambiguous",
        "unchecked",
        "unparsed",
    ]
    assert [field.value for field in ReferenceField] == ["doi", "title", "authors", "year", "venue"]
    assert [purpose.value for purpose in AttemptPurpose] == ["doi_batch", "title"]
    assert [reason.value for reason in UncheckedReason] == ["deadline_exceeded"]


def test_summary_counts_every_verdict(clock: FakeClock) -> None:
    result, _ = check("10.1038/35002501", clock)
    assert result.summary() == {
        "verified": 1,
        "metadata_mismatch": 0,
        "not_found": 0,
        "ambiguous": 0,
        "unchecked": 0,
        "unparsed": 0,
    }


# ------------------------------------------------------------------- the docs


def _table_codes(text: str, header: str) -> set[str]:
    """The first code of every row of the Markdown table whose header starts with *header*."""
    codes: set[str] = set()
    inside = False
    for line in text.splitlines():
        if line.startswith(f"| {header} |"):
            inside = True
            continue
        if inside and not line.startswith("|"):
            break
        if inside and not line.startswith("|---"):
            match = re.search(r"`([^`]+)`", line.split("|")[1])
            if match:
                codes.add(match.group(1))
    return codes


def test_the_docs_list_every_verdict_and_unchecked_code() -> None:
    checking_md = REPO_ROOT / "docs" / "reference-checking.md"
    errors_md = REPO_ROOT / "docs" / "errors.md"
    if not checking_md.is_file() or not errors_md.is_file():
        absent(f"docs not found under {REPO_ROOT}: run from a repository checkout")
    verdicts = _table_codes(checking_md.read_text(encoding="utf-8"), "verdict | meaning")
    assert verdicts == {verdict.value for verdict in Verdict}
    unchecked = _table_codes(errors_md.read_text(encoding="utf-8"), "`error` | when")
    assert unchecked == {reason.value for reason in UncheckedReason}


def test_an_endpoint_off_the_pin_fails_the_check_as_a_whole(
    clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import notanda_openalex._client as client_module

    monkeypatch.setattr(client_module, "ENDPOINT", "http://api.openalex.org/works")
    result, requests = check("10.1038/35002501", clock)
    assert requests == []
    assert result.failure is not None
    assert result.failure.detail is ConfigurationDetail.ENDPOINT_NOT_ALLOWED
    assert [(entry.verdict, entry.error) for entry in result.references] == [
        (Verdict.UNCHECKED, "configuration_error")
    ]


def test_cancelling_cuts_a_request_in_flight_on_the_real_transport() -> None:
    # A loopback server that reads the request and never answers, under a stream
    # that ignores timeouts: only the check's cancellation (through the request's
    # watchdog) can end the exchange before the server gives up after 10 s.
    from test_transport import LoopbackBackend, LoopbackServer

    server = LoopbackServer("stall")
    try:
        backend = LoopbackBackend(server.port, ignore_timeouts=True)
        client = OpenAlexClient(api_key=SECRET_KEY, network_backend=backend)
        result = client.check_references(
            parse_references("10.1038/35002501"), cancelled=lambda: bool(server.requests)
        )
    finally:
        server.close()
    (entry,) = result.references
    assert (entry.verdict, entry.error) == (Verdict.UNCHECKED, "deadline_exceeded")
    (attempt,) = result.attempts
    assert attempt.observation.attempt is not None
    # The cancellation expires the request's deadline. Where the client is then
    # decides what it meets: in the read, the watchdog's shutdown ("timeout");
    # still finishing the write, the expired deadline itself ("WriteTimeout",
    # seen under two test workers). Either way the exchange ended by the deadline.
    assert attempt.observation.attempt.error_type in {"timeout", "WriteTimeout"}
    assert attempt.observation.attempt.http_status is None


def test_an_arxiv_id_is_looked_up_as_its_doi(clock: FakeClock) -> None:
    authors = (
        "Roberts, J. C. and Mearman, J. and Butcher, P. and Al-Maneea, H. M. A. and Ritsos, P. D."
    )
    text = bib("r", author=authors, title=ROBERTS_TITLE, year=2021, eprint="2108.04680")
    result, requests = check(text, clock)
    assert [request.url.params["filter"] for request in requests] == [
        "doi:10.48550/arxiv.2108.04680"
    ]
    (entry,) = result.references
    assert verdict_of(entry) == (Verdict.VERIFIED, ())
    assert entry.work is not None
    assert entry.work.openalex_id == "W3188841554"


def test_two_works_with_one_title_and_nothing_to_tell_them_apart_are_ambiguous(
    clock: FakeClock,
) -> None:
    def work(number: int, name: str) -> dict[str, Any]:
        return {
            "id": f"https://openalex.org/W{number}",
            "title": "Editorial introduction to the special issue",
            "publication_year": 2019,
            "authorships": [{"author": {"display_name": name}}],
            "type": "editorial",
        }

    works = [work(1, "Ada Lovelace"), work(2, "Charles Babbage")]
    entry = one(bib("e", title="Editorial: introduction to the special issue"), clock, works=works)
    assert verdict_of(entry) == (Verdict.AMBIGUOUS, ())
    assert entry.work is None
    named = one(
        bib("e", author="Babbage, C.", title="Editorial introduction to the special issue"),
        clock,
        works=works,
    )
    assert verdict_of(named) == (Verdict.VERIFIED, ())
    assert named.work is not None
    assert named.work.openalex_id == "W2"
