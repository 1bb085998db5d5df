"""prepare_search (``_query.py``): validation, query hygiene, filters, the request record."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from conftest import FakeClock, json_response, make_client
from notanda_openalex import (
    OA_STATUSES,
    ORDERING,
    WORK_SELECT_FIELDS,
    WORK_TYPES,
    ErrorCode,
    InputError,
    InputReason,
    SearchFilters,
    prepare_search,
    supplied_record,
)

EMPTY_PAGE = {"meta": {"count": 0}, "results": []}


def reject(query: Any = "q", limit: Any = 5, filters: Any = None) -> InputError:
    with pytest.raises(InputError) as info:
        prepare_search(query, limit, filters)
    assert info.value.code is ErrorCode.INVALID_ARGUMENTS
    return info.value


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        (None, InputReason.NOT_A_STRING),
        (42, InputReason.NOT_A_STRING),
        (b"bytes", InputReason.NOT_A_STRING),
        (["list"], InputReason.NOT_A_STRING),
        ("", InputReason.EMPTY),
        ("   \t\n ", InputReason.EMPTY),
        ("x" * 1001, InputReason.TOO_LONG),
        ("  " + "y" * 1001 + "  ", InputReason.TOO_LONG),
        ("?", InputReason.EMPTY_AFTER_HYGIENE),
        ("* ? *", InputReason.EMPTY_AFTER_HYGIENE),
        ("\x00\x01?", InputReason.EMPTY_AFTER_HYGIENE),
    ],
)
def test_query_rejections(query: Any, reason: InputReason) -> None:
    error = reject(query=query)
    assert (error.field, error.reason) == ("query", reason)


def test_query_length_counts_after_strip() -> None:
    request = prepare_search("  " + "z" * 1000 + "  ")
    assert request.effective.query == "z" * 1000


@pytest.mark.parametrize(
    ("limit", "reason"),
    [
        (True, InputReason.NOT_AN_INTEGER),
        (False, InputReason.NOT_AN_INTEGER),
        (5.0, InputReason.NOT_AN_INTEGER),
        ("5", InputReason.NOT_AN_INTEGER),
        (None, InputReason.NOT_AN_INTEGER),
        (0, InputReason.OUT_OF_RANGE),
        (11, InputReason.OUT_OF_RANGE),
        (-1, InputReason.OUT_OF_RANGE),
    ],
)
def test_limit_rejections(limit: Any, reason: InputReason) -> None:
    error = reject(limit=limit)
    assert (error.field, error.reason) == ("limit", reason)


@pytest.mark.parametrize("limit", [1, 5, 10])
def test_limit_accepted(limit: int) -> None:
    assert prepare_search("q", limit).effective.limit == limit


def test_error_message_never_echoes_input() -> None:
    marker = "UNIQUE-INPUT-MARKER"
    for kwargs in (
        {"query": marker * 200},
        {"query": "q", "filters": {marker: 1}},
        {"query": "q", "filters": {"languages": [marker]}},
        {"query": "q", "filters": {"oa_status": [marker]}},
    ):
        with pytest.raises(InputError) as info:
            prepare_search(**kwargs)
        assert marker not in str(info.value)
        assert info.value.__cause__ is None
        assert marker not in json.dumps(info.value.to_record())


def test_wildcard_question_is_not_sent_as_a_wildcard() -> None:
    request = prepare_search("Does X improve Y?")
    assert request.effective.query == "Does X improve Y"
    assert request.supplied["query"] == "Does X improve Y?"


@pytest.mark.parametrize(
    ("supplied", "effective"),
    [
        ("machine learn*", "machine learn"),
        ('"what is it?" and *', '"what is it " and'),
        ("a\tb\nc\r\nd", "a b c d"),
        ("a\x00b\x1bc\x7fd\x85e", "a b c d e"),
        ("deep\x00learning\x1f now", "deep learning now"),
        ("  many    spaces  ", "many spaces"),
        ("ünïcödé\u00a0text", "ünïcödé text"),
        ("bidi \u202egnp.exe\u202c review", "bidi gnp.exe review"),
        ("zero\u200bwidth\ufeff", "zero width"),
    ],
)
def test_query_hygiene(supplied: str, effective: str) -> None:
    assert prepare_search(supplied).effective.query == effective


@pytest.mark.parametrize("invisible", ["\u200b\u200b", "\ufeff", "\u202e\u202c", "\x00\x07"])
def test_a_query_of_invisible_characters_is_empty_after_hygiene(invisible: str) -> None:
    with pytest.raises(InputError) as caught:
        prepare_search(invisible)
    assert caught.value.reason.value == "empty_after_hygiene"


def test_quoted_wildcards_are_replaced_too() -> None:
    # OpenAlex accepts a wildcard inside quotes only in some shapes (and then
    # as a wildcard, never as a literal ?), so none is ever sent.
    request = prepare_search('"smart* phone" OR "is it?"')
    assert "*" not in request.effective.query
    assert "?" not in request.effective.query


def test_lone_surrogates_replaced_where_stored() -> None:
    request = prepare_search("cell \ud83d biology")
    assert request.supplied["query"] == "cell \ufffd biology"
    assert request.effective.query == "cell \ufffd biology"
    json.dumps(request.to_record(), ensure_ascii=False).encode("utf-8")


def test_request_record_shape() -> None:
    request = prepare_search("Does X improve Y?", 3)
    record = request.to_record()
    assert record["supplied"] == {"query": "Does X improve Y?", "limit": 3, "filters": None}
    effective = record["effective"]
    assert effective["query"] == "Does X improve Y"
    assert effective["limit"] == 3
    assert effective["filters"] is None
    assert effective["filter"] == "has_doi:true,is_oa:true"
    assert effective["ordering"] == ORDERING
    assert effective["params"] == [
        ["search", "Does X improve Y"],
        ["filter", "has_doi:true,is_oa:true"],
        ["per-page", "3"],
        ["select", ",".join(WORK_SELECT_FIELDS)],
    ]
    assert effective["core_query"]["filter"] == "has_doi:true,is_oa:true"
    assert json.loads(json.dumps(record)) == record


def test_filters_build_the_core_filter_string() -> None:
    request = prepare_search(
        "q",
        5,
        {
            "from_year": 2015,
            "to_year": 2020,
            "oa_status": ["green", "gold"],
            "types": ["review", "article"],
            "languages": ["EN", "de"],
        },
    )
    assert request.effective.filter == (
        "from_publication_date:2015-01-01,has_doi:true,is_oa:true,language:de|en,"
        "open_access.oa_status:gold|green,to_publication_date:2020-12-31,type:article|review"
    )
    assert request.supplied["filters"]["languages"] == ["EN", "de"]
    assert request.to_record()["effective"]["filters"] == {
        "from_year": 2015,
        "to_year": 2020,
        "oa_status": ["gold", "green"],
        "types": ["article", "review"],
        "languages": ["de", "en"],
    }


def test_filter_model_accepted_directly() -> None:
    filters = SearchFilters(from_year=2001)
    request = prepare_search("q", filters=filters)
    assert request.effective.filter == "from_publication_date:2001-01-01,has_doi:true,is_oa:true"
    assert request.supplied["filters"] == {"from_year": 2001}


@pytest.mark.parametrize(
    ("filters", "field", "reason"),
    [
        ("not a mapping", "filters", InputReason.NOT_AN_OBJECT),
        (["from_year"], "filters", InputReason.NOT_AN_OBJECT),
        ({"from_yaer": 2000}, "filters", InputReason.UNKNOWN_FIELD),
        ({1: 2000}, "filters", InputReason.UNKNOWN_FIELD),
        ({"from_year": "2000"}, "filters.from_year", InputReason.NOT_AN_INTEGER),
        ({"from_year": True}, "filters.from_year", InputReason.NOT_AN_INTEGER),
        ({"from_year": 2000.0}, "filters.from_year", InputReason.NOT_AN_INTEGER),
        ({"to_year": 999}, "filters.to_year", InputReason.OUT_OF_RANGE),
        ({"to_year": 2101}, "filters.to_year", InputReason.OUT_OF_RANGE),
        ({"from_year": 2020, "to_year": 2019}, "filters.to_year", InputReason.FROM_AFTER_TO),
        ({"oa_status": "gold"}, "filters.oa_status", InputReason.NOT_A_LIST),
        ({"oa_status": ("gold",)}, "filters.oa_status", InputReason.NOT_A_LIST),
        ({"oa_status": ["closed"]}, "filters.oa_status", InputReason.INVALID_VALUE),
        ({"oa_status": ["gold", "gold"]}, "filters.oa_status", InputReason.DUPLICATE),
        ({"types": ["journal-article"]}, "filters.types", InputReason.INVALID_VALUE),
        ({"types": ["review", "review"]}, "filters.types", InputReason.DUPLICATE),
        ({"languages": ["xx"]}, "filters.languages", InputReason.UNKNOWN_LANGUAGE),
        ({"languages": [" "]}, "filters.languages", InputReason.UNKNOWN_LANGUAGE),
        ({"languages": ["en", "EN"]}, "filters.languages", InputReason.DUPLICATE),
        ({"languages": [7]}, "filters.languages", InputReason.NOT_A_STRING),
    ],
)
def test_filter_rejections(filters: Any, field: str, reason: InputReason) -> None:
    error = reject(filters=filters)
    assert (error.field, error.reason) == (field, reason)
    assert error.to_record() == {"code": "invalid_arguments", "field": field, "reason": reason}


def test_filter_values_published_for_schemas() -> None:
    assert OA_STATUSES == ("diamond", "gold", "green", "hybrid", "bronze")
    assert "article" in WORK_TYPES
    assert "preprint" in WORK_TYPES
    schema = SearchFilters.model_json_schema()
    assert schema["additionalProperties"] is False
    oa_items = schema["properties"]["oa_status"]["anyOf"][0]["items"]
    assert oa_items["enum"] == list(OA_STATUSES)


@pytest.mark.parametrize(
    "unused",
    [None, {}, SearchFilters(), {"languages": []}, {"oa_status": None, "types": []}],
)
def test_unused_filters_leave_the_request_byte_identical(unused: Any, clock: FakeClock) -> None:
    def send(filters: Any) -> httpx.Request:
        client, recorder = make_client(lambda request: json_response(EMPTY_PAGE), clock)
        assert client.search(prepare_search("Does X improve Y?", 5, filters)).ok
        (request,) = recorder.requests
        return request

    baseline = send(None)
    other = send(unused)
    assert other.method == baseline.method == "GET"
    assert str(other.url) == str(baseline.url)
    assert other.headers.raw == baseline.headers.raw
    assert other.content == baseline.content == b""


def test_supplied_record_is_json_safe_for_any_input() -> None:
    record = supplied_record(b"raw", float("nan"), {"x": {1, 2}, "y": ("a\ud800",)})
    assert record == {
        "query": "<bytes>",
        "limit": "nan",
        "filters": {"x": "<set>", "y": ["a\ufffd"]},
    }
    json.dumps(record, allow_nan=False)
