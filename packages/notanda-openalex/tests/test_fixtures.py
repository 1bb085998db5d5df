"""Real OpenAlex response bodies (CC0) from tests-support/fixtures/openalex, through the client."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from conftest import (
    FakeClock,
    fixture_bytes,
    fixture_json,
    fixture_names,
    make_client,
)
from notanda_openalex import (
    AUTHOR_CAP,
    Capture,
    ProviderReason,
    ProviderResult,
    Work,
    prepare_search,
)
from notanda_openalex._secrets import SecretScrubber
from notanda_openalex._vocabulary import IDENTITY_FIELDS
from notanda_openalex._works import normalize_work

PAGE_2020 = (
    "works_list_2025-10_filter-publication-year-2020_per-page-50"
    "_retracted-and-truncated-authors.json"
)


def list_pages() -> list[str]:
    return fixture_names("works_list_*.json")


def through_client(body: bytes, clock: FakeClock, limit: int = 10) -> ProviderResult:
    client, recorder = make_client(
        lambda request: httpx.Response(
            200, content=body, headers={"Content-Type": "application/json"}
        ),
        clock,
    )
    result = client.search(prepare_search("fixture", limit))
    assert len(recorder.requests) == 1
    return result


def by_id(works: list[Work]) -> dict[str, Work]:
    return {work.openalex_id: work for work in works}


def sub_pages(name: str, size: int = 10) -> list[bytes]:
    payload = fixture_json(name)
    results = payload["results"]
    return [
        json.dumps({"meta": payload["meta"], "results": results[start : start + size]}).encode()
        for start in range(0, len(results), size)
    ]


@pytest.mark.parametrize("name", list_pages())
def test_every_list_page(name: str, clock: FakeClock) -> None:
    body = fixture_bytes(name)
    payload = json.loads(body)
    result = through_client(body, clock)
    assert result.ok, result.error
    assert result.total_count == payload["meta"]["count"]
    expected = [
        record["id"].rsplit("/", 1)[-1]
        for record in payload["results"][:10]
        if isinstance(record.get("id"), str)
    ]
    assert [work.openalex_id for work in result.works] == expected
    assert result.skipped_count == min(len(payload["results"]), 10) - len(expected)
    # The observation is the provider's JSON, canonically re-encoded, unchanged.
    assert result.observation.capture is Capture.PARSED_JSON
    assert result.observation.body_json == payload
    assert result.observation.body_json == payload
    assert result.observation.attempt is not None
    assert result.observation.attempt.body_bytes == len(body)
    json.dumps(result.to_record(), allow_nan=False)


def test_group_by_pages(clock: FakeClock) -> None:
    # Never requested by this client, but a provider could send them: a
    # "key" field is secret-named, so its values are redacted in the record.
    old = through_client(fixture_bytes("works_groupby_2022-05_type_sort.json"), clock)
    assert old.ok
    assert old.works == []
    assert old.total_count == 28
    groups = old.observation.body_json["group_by"]
    assert len(groups) == 28
    assert {group["key"] for group in groups} == {"REDACTED"}
    assert groups[0]["key_display_name"] == "journal-article"
    new = through_client(fixture_bytes("works_groupby_2026-05_filter-groupby-type.json"), clock)
    assert new.error is not None
    assert new.error.reason is ProviderReason.UNEXPECTED_SHAPE
    assert new.observation.body_json["meta"]["groups_count"] == 17


def test_retracted_work(clock: FakeClock) -> None:
    works: dict[str, Work] = {}
    for page in sub_pages(PAGE_2020):
        works.update(by_id(through_client(page, clock).works))
    assert len(works) == 50
    retracted = works["W3046275966"]
    assert retracted.is_retracted is True
    assert retracted.title == (
        "Dementia prevention, intervention, and care: 2020 report of the Lancet Commission"
    )
    assert retracted.doi == "10.1016/s0140-6736(20)30367-6"
    assert retracted.venue == "The Lancet"
    assert (retracted.volume, retracted.issue) == ("396", "10248")
    assert (retracted.first_page, retracted.last_page) == ("413", "446")
    assert retracted.type == "review"
    assert (retracted.is_oa, retracted.oa_status) == (True, "hybrid")
    assert retracted.oa_url == "http://www.thelancet.com/article/S0140673620303676/pdf"
    assert retracted.cited_by_count == 8450
    assert retracted.authors_total == 28
    assert len(retracted.authors) == AUTHOR_CAP
    assert retracted.authors[0].name == "Gill Livingston"
    assert retracted.authors[0].orcid == "0000-0001-6741-5516"  # bare since issue 11
    assert [work.openalex_id for work in works.values() if work.is_retracted] == ["W3046275966"]


def test_works_truncated_by_the_provider(clock: FakeClock) -> None:
    works: dict[str, Work] = {}
    for page in sub_pages(PAGE_2020):
        works.update(by_id(through_client(page, clock).works))
    truncated = sorted(key for key, work in works.items() if work.authors_truncated_by_provider)
    assert truncated == sorted(
        ["W3092849554", "W3103145119", "W4288079944", "W3113178943", "W3029661147"]
    )
    for key in truncated:
        assert works[key].authors_total == 100
        assert len(works[key].authors) == AUTHOR_CAP
    assert works["W3103145119"].authors[0].name == "Pauli Virtanen"
    assert works["W4288079944"].title == "<i>Planck</i>2018 results"


def test_repeated_byline_names_still_count(clock: FakeClock) -> None:
    # W3092849554 lists "Shazia Alam" twice; the core's de-duplication would
    # report 99 authors for a 100-authorship byline.
    payload = fixture_json(PAGE_2020)
    record = next(r for r in payload["results"] if r["id"].endswith("W3092849554"))
    names = [a["author"]["display_name"] for a in record["authorships"]]
    assert names.count("Shazia Alam") == 2
    work = normalize_work(record, SecretScrubber())
    assert work is not None
    assert work.authors_total == 100


def test_non_latin_and_null_titles(clock: FakeClock) -> None:
    cjk = by_id(
        through_client(
            fixture_bytes("works_list_2025-05_sample-5_chinese-korean-titles.json"), clock
        ).works
    )
    assert cjk["W243156089"].title == "经济增加值\uff08EVA\uff09\uff1a财务管理的新视角"
    assert cjk["W243156089"].language == "zh-cn"
    assert cjk["W3183564187"].title.startswith("Herzberg의 동기-위생요인이")  # type: ignore[union-attr]
    assert cjk["W4243976127"].title is None
    assert cjk["W4243976127"].doi == "10.2473/shigentosozai1953.84.959_275"
    japanese = through_client(
        fixture_bytes("works_list_2025-05_sample-1_japanese-title.json"), clock
    ).works
    assert japanese[0].title == "オペラ「ティレジアスの乳房」に寄せる一考察--放蕩児プーランクの実像"
    assert japanese[0].venue == "大阪音楽大学研究紀要"
    cyrillic = by_id(
        through_client(
            fixture_bytes("works_list_2026-07_sample-5_cyrillic-title.json"), clock
        ).works
    )
    assert cyrillic["W578467691"].title.startswith("Методика применения пилатеса")  # type: ignore[union-attr]
    assert cyrillic["W578467691"].language == "ru"


def test_select_response_and_ids_only_page(clock: FakeClock) -> None:
    selected = through_client(
        fixture_bytes("works_list_2025-11_search-filter-sort-select_per-page-20.json"), clock
    )
    assert [work.openalex_id for work in selected.works] == [
        "W2009047091",
        "W2972595232",
        "W3184032449",
    ]
    assert selected.works[2].oa_status == "diamond"
    assert all(work.is_retracted is None for work in selected.works)
    ids_only = through_client(
        fixture_bytes("works_list_2026-05_filter-select-ids_per-page-1.json"), clock
    )
    assert ids_only.ok
    assert ids_only.works == []
    assert ids_only.skipped_count == 1
    assert ids_only.total_count == 148174


def test_2026_schema_page_with_null_author_ids(clock: FakeClock) -> None:
    works = by_id(through_client(fixture_bytes("works_list_2026-03_per-page-2.json"), clock).works)
    assert works["W4393935425"].doi == "10.3322/caac.21834"
    assert works["W4393935425"].authors[0].name == "Freddie Bray"
    assert [a.name for a in works["W4392145873"].authors][4] == "Hadjas, Irka"


@pytest.mark.parametrize(
    "name",
    [
        "work_W2741809807_2026-03.json",
        "work_W2168909179_2025-10_249-authors.json",
        "work_W4230972471_2025-05_null-title.json",
    ],
)
def test_a_singleton_body_is_not_a_works_page(name: str, clock: FakeClock) -> None:
    body = fixture_bytes(name)
    result = through_client(body, clock)
    assert not result.ok
    assert result.error is not None
    assert result.error.reason is ProviderReason.UNEXPECTED_SHAPE
    assert result.observation.body_json == json.loads(body)


@pytest.mark.parametrize(
    ("name", "checks"),
    [
        (
            "work_W2168909179_2025-10_249-authors.json",
            {"authors_total": 249, "authors_truncated_by_provider": None},
        ),
        (
            "work_W4230972471_2025-05_null-title.json",
            {"title": None, "authors_total": 0, "language": None},
        ),
        ("work_W4230972471_2026-07_empty-string-title.json", {"title": None, "authors_total": 2}),
        (
            "work_W4234567890_2026-05_null-title_null-is-retracted_closed.json",
            {"title": None, "is_retracted": None, "language": "ng", "is_oa": False},
        ),
        (
            "work_W2964110630_2025-10_no-doi_closed.json",
            {"doi": None, "language": "es", "is_oa": False},
        ),
        (
            "work_W2741809807_2022-05_host-venue-era.json",
            {"venue": None, "doi": "10.7717/peerj.4375", "authors_total": 9},
        ),
        (
            "work_W2741809807_2026-03.json",
            {"doi": "10.7717/peerj.4375", "authors_total": 9, "venue": "PeerJ"},
        ),
    ],
)
def test_singleton_records(name: str, checks: dict[str, Any]) -> None:
    work = normalize_work(fixture_json(name), SecretScrubber())
    assert work is not None
    record = work.to_record()
    for field, value in checks.items():
        assert getattr(work, field) == value, field
        # The answer form leaves out a null field unless it is an identity field.
        if value is not None or field in IDENTITY_FIELDS:
            assert record[field] == value, field
        else:
            assert field not in record, field
