"""The package's small rules, each with one home in ``_vocabulary`` and used from there.

The three year rules look alike and are not one: a search filter's bounds
(``MIN_YEAR``..``MAX_YEAR``), a year given as a number in a structured
bibliography (``FIELD_YEARS``), and a year read out of running text
(``TEXT_YEARS``). Each is tested at both of its edges, through the API that
applies it.
"""

from __future__ import annotations

import inspect
import json

import httpx
import pytest
from conftest import FakeClock, json_response, make_client
from notanda_openalex import (
    InputReason,
    OpenAlexClient,
    ReferenceFormat,
    SearchInputError,
    _checking,
    _references,
    _vocabulary,
    parse_references,
    prepare_search,
)
from notanda_openalex._vocabulary import (
    CHECKED_REFERENCE_KEYS,
    DEFAULT_CHECK_CONCURRENCY,
    DEFAULT_CHECK_DEADLINE_S,
    DEFAULT_SEARCH_DEADLINE_S,
    FIELD_YEARS,
    MAX_CHECK_CONCURRENCY,
    MAX_YEAR,
    MIN_YEAR,
    TEXT_YEARS,
)

# ---------------------------------------------------------------- the years


def _text_year(year: str) -> int | None:
    [reference] = parse_references(f"Lovelace, A. ({year}). Notes on the engine. Sketches.", "text")
    return reference.year


def _csl_year(year: int) -> int | None:
    item = {"id": "a", "title": "Notes on the engine", "issued": {"date-parts": [[year]]}}
    [reference] = parse_references(json.dumps([item]), "csl-json")
    return reference.year


def test_a_year_in_running_text_is_one_in_text_years_at_both_edges() -> None:
    first, last = TEXT_YEARS[0], TEXT_YEARS[-1]
    assert _text_year(str(first)) == first
    assert _text_year(str(last)) == last
    assert _text_year(str(first - 1)) is None
    assert _text_year(str(last + 1)) is None


def test_an_apa_year_outside_text_years_leaves_the_next_one_to_be_read() -> None:
    # "(1066)" is no year in running text: the citation's year is the APA one after it.
    [reference] = parse_references(
        "Bayeux Society (1066) Staff. (2019). A tapestry, read again. Journal of Tests.", "text"
    )
    assert reference.year == 2019
    assert reference.title == "A tapestry, read again"


def test_a_year_in_running_text_starts_with_ascii_digits() -> None:
    assert _text_year("19\u0669\u0669") == 1999  # ARABIC-INDIC NINE in the last two places
    assert _text_year("\u0661\u0669\u0669\u0669") is None


def test_a_number_year_of_a_structured_entry_is_one_in_field_years_at_both_edges() -> None:
    first, last = FIELD_YEARS[0], FIELD_YEARS[-1]
    assert (_csl_year(first), _csl_year(last)) == (first, last)
    assert _csl_year(first - 1) is None
    assert _csl_year(last + 1) is None


def test_a_filter_year_is_one_within_the_filter_bounds_at_both_edges() -> None:
    for year in (MIN_YEAR, MAX_YEAR):
        assert prepare_search("q", 1, {"from_year": year}).effective.filters.from_year == year
    for year in (MIN_YEAR - 1, MAX_YEAR + 1):
        with pytest.raises(SearchInputError) as refused:
            prepare_search("q", 1, {"from_year": year})
        assert refused.value.field == "filters.from_year"
        assert refused.value.reason is InputReason.OUT_OF_RANGE


def test_the_three_year_rules_are_three() -> None:
    # Not a copy kept equal: each means something else, and they differ.
    assert len({(MIN_YEAR, MAX_YEAR + 1), (FIELD_YEARS.start, FIELD_YEARS.stop)}) == 2
    assert (TEXT_YEARS.start, TEXT_YEARS.stop) != (FIELD_YEARS.start, FIELD_YEARS.stop)


# ---------------------------------------------------------- check defaults


def test_the_check_defaults_live_in_the_vocabulary() -> None:
    for name in ("DEFAULT_CHECK_CONCURRENCY", "DEFAULT_CHECK_DEADLINE_S", "MAX_CHECK_CONCURRENCY"):
        assert getattr(_checking, name) is getattr(_vocabulary, name)
    parameters = inspect.signature(OpenAlexClient.check_references).parameters
    assert parameters["concurrency"].default is DEFAULT_CHECK_CONCURRENCY
    assert parameters["deadline_s"].default is DEFAULT_CHECK_DEADLINE_S
    assert inspect.signature(OpenAlexClient).parameters["deadline_s"].default is (
        DEFAULT_SEARCH_DEADLINE_S
    )


def test_the_concurrency_refusal_states_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    import notanda_openalex._client as client_module

    monkeypatch.setattr(client_module, "MAX_CHECK_CONCURRENCY", 5)
    client, _ = make_client(lambda request: json_response({"results": []}), FakeClock())
    parsed = parse_references("Lovelace, A. (1843). Notes. Sketches.", "text")
    with pytest.raises(ValueError, match=r"from 1 to 5$"):
        client.check_references(parsed, concurrency=6)
    assert MAX_CHECK_CONCURRENCY > DEFAULT_CHECK_CONCURRENCY


# ------------------------------------------------------------ record shapes


def test_a_checked_reference_holds_every_key_of_the_vocabulary_in_order() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return json_response({"meta": {"count": 0}, "results": []})

    client, _ = make_client(handler, FakeClock())
    parsed = parse_references("Lovelace, A. (1843). Notes on the engine. Sketches.", "text")
    [entry] = client.check_references(parsed).references
    assert tuple(entry.to_record()) == CHECKED_REFERENCE_KEYS


def test_the_reader_formats_live_in_the_vocabulary() -> None:
    assert _references.ReferenceFormat is _vocabulary.ReferenceFormat is ReferenceFormat
    assert set(_references._READERS) == set(ReferenceFormat) - {ReferenceFormat.AUTO}
