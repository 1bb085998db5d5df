"""The citation block: text hygiene, authors, wrong types, the core's corrections."""

from __future__ import annotations

from typing import Any

from conftest import FakeClock, json_response, make_client
from harvester.providers.openalex import _authors as core_authors
from notanda_openalex import AUTHOR_CAP, Work, prepare_search
from notanda_openalex._secrets import SecretScrubber
from notanda_openalex._works import normalize_work

SCRUBBER = SecretScrubber()


def work(**fields: Any) -> Work:
    record = {"id": "https://openalex.org/W123", **fields}
    result = normalize_work(record, SCRUBBER)
    assert result is not None
    return result


def test_complete_record() -> None:
    result = work(
        doi="https://doi.org/10.1000/XYZ.1",
        title="A title",
        publication_year=2021,
        publication_date="2021-03-04",
        authorships=[
            {
                "author": {
                    "display_name": "Ada Lovelace",
                    "orcid": "https://orcid.org/0000-0002-1825-0097",
                }
            },
            {"author": {"display_name": None}, "raw_author_name": "C. Babbage"},
        ],
        is_authors_truncated=False,
        primary_location={"source": {"display_name": "Journal of Things"}},
        biblio={"volume": "12", "issue": "3", "first_page": "45", "last_page": "67"},
        type="article",
        language="en",
        open_access={"is_oa": True, "oa_status": "gold", "oa_url": "https://example.org/a.pdf"},
        is_retracted=False,
        cited_by_count=7,
    )
    assert result.to_record() == {
        "openalex_id": "W123",
        "doi": "10.1000/xyz.1",
        "title": "A title",
        "publication_year": 2021,
        "publication_date": "2021-03-04",
        "authors": [
            {"name": "Ada Lovelace", "orcid": "0000-0002-1825-0097"},
            {"name": "C. Babbage"},
        ],
        "authors_total": 2,
        "authors_truncated_by_provider": False,
        "venue": "Journal of Things",
        "volume": "12",
        "issue": "3",
        "first_page": "45",
        "last_page": "67",
        "type": "article",
        "language": "en",
        "is_oa": True,
        "oa_status": "gold",
        "oa_url": "https://example.org/a.pdf",
        "is_retracted": False,
        "cited_by_count": 7,
    }


def test_wrong_types_become_none() -> None:
    result = work(
        doi=10.1,
        title=42,
        publication_year="2020",
        publication_date=20200101,
        authorships={"not": "a list"},
        is_authors_truncated="yes",
        primary_location=["x"],
        biblio={"volume": 12, "issue": None, "first_page": ["1"], "last_page": {"p": 2}},
        type=True,
        language=["en"],
        open_access={"is_oa": "true", "oa_status": 1, "oa_url": 5},
        is_retracted=1,
        cited_by_count=True,
    )
    assert all(
        getattr(result, name) is None
        for name in Work.model_fields
        if name not in ("openalex_id", "authors")
    )
    # The answer form (changed on purpose, issue 11): the identity fields stay,
    # null or not; every other null field is left out.
    assert result.to_record() == {
        "openalex_id": "W123",
        "doi": None,
        "title": None,
        "authors": [],
        "publication_year": None,
    }


def test_an_author_answer_names_the_orcid_only_when_known() -> None:
    known = work(authorships=[{"author": {"display_name": "Ada", "orcid": " 0000-0002-1825-0097"}}])
    assert known.to_record()["authors"] == [{"name": "Ada", "orcid": "0000-0002-1825-0097"}]
    unknown = work(authorships=[{"author": {"display_name": None, "orcid": "not an orcid"}}])
    assert unknown.to_record()["authors"] == [{"name": None}]


def test_bools_and_negatives_are_not_counts() -> None:
    assert work(cited_by_count=-1).cited_by_count is None
    assert work(publication_year=False).publication_year is None
    assert work(cited_by_count=0).cited_by_count == 0


def test_ids() -> None:
    assert work(id="W42").openalex_id == "W42"
    assert work(id=" https://openalex.org/W42 ").openalex_id == "W42"
    for bad in ("https://openalex.org/A42", "https://example.org/W42", "W", "W42x", "", None, 42):
        assert normalize_work({"id": bad}, SCRUBBER) is None
    assert normalize_work("W42", SCRUBBER) is None


def test_title_falls_back_to_display_name_only_when_absent() -> None:
    assert work(display_name="Shown").title == "Shown"
    assert work(title=None, display_name="Shown").title == "Shown"
    assert work(title="", display_name="Shown").title is None
    assert work(title="   ").title is None


def test_author_cap_and_total() -> None:
    authorships = [{"author": {"display_name": f"Author {n}"}} for n in range(57)]
    result = work(authorships=authorships, is_authors_truncated=True)
    assert AUTHOR_CAP == 20
    assert len(result.authors) == AUTHOR_CAP
    assert result.authors[0].name == "Author 0"
    assert result.authors[-1].name == "Author 19"
    assert result.authors_total == 57
    assert result.authors_truncated_by_provider is True


def test_authors_sharing_a_name_are_all_kept() -> None:
    authorships = [
        {"author": {"id": "https://openalex.org/A1", "display_name": "J. Smith"}},
        {"author": {"id": "https://openalex.org/A2", "display_name": "K. Jones"}},
        {"author": {"id": "https://openalex.org/A3", "display_name": "J. Smith"}},
        "garbage",
        {"author": "garbage"},
    ]
    result = work(authorships=authorships)
    assert [author.name for author in result.authors] == [
        "J. Smith",
        "K. Jones",
        "J. Smith",
        None,
        None,
    ]
    assert result.authors_total == 5
    # The core merges the two people called J. Smith.
    assert core_authors({"authorships": authorships}) == ["J. Smith", "K. Jones"]


def test_orcid_forms() -> None:
    def orcid(value: Any) -> str | None:
        return (
            work(authorships=[{"author": {"display_name": "A", "orcid": value}}]).authors[0].orcid
        )

    # Bare iDs since issue 11, whatever form the provider gives.
    assert orcid("https://orcid.org/0000-0002-1825-0097") == "0000-0002-1825-0097"
    assert orcid("0000-0002-1694-233X") == "0000-0002-1694-233X"
    assert orcid("http://www.orcid.org/0000-0002-1694-233X") == "0000-0002-1694-233X"
    assert orcid("https://evil.example/0000-0002-1694-233X") is None
    assert orcid("0000-0002-1694") is None
    assert orcid(12) is None


def test_control_bidi_and_zero_width_characters_are_removed() -> None:
    result = work(
        title="Safe\u202e txt.exe\u202c title\u200b with\x07 bell\tand\ntab",
        primary_location={"source": {"display_name": "\ufeffJournal\u2066 of\u2069 X\u00ad"}},
        authorships=[{"author": {"display_name": "A\u200d\u200cB \U000e0041tag"}}],
        biblio={"volume": "\x00 7 \x1f"},
        publication_date="2020-01-01\u2028",
    )
    assert result.title == "Safe txt.exe title with bell and tab"
    assert result.venue == "Journal of X"
    assert result.authors[0].name == "AB tag"
    assert result.volume == "7"
    assert result.publication_date == "2020-01-01"


def test_private_use_and_ordinary_unicode_survive() -> None:
    assert work(title="Ω \ue000 😀 é").title == "Ω \ue000 😀 é"


def test_lone_surrogates_in_provider_data(clock: FakeClock) -> None:
    body = (
        b'{"meta":{"count":1},"results":[{"id":"https://openalex.org/W1",'
        b'"title":"bad \\ud83d here","authorships":[{"author":{"display_name":"\\udc00x"}}],'
        b'"primary_location":{"source":{"display_name":"ok \\ud83d\\ude00"}}}]}'
    )
    client, _ = make_client(lambda request: json_response(body), clock)
    result = client.search(prepare_search("q"))
    assert result.ok
    (citation,) = result.works
    assert citation.title == "bad \ufffd here"
    assert citation.authors[0].name == "\ufffdx"
    assert citation.venue == "ok 😀"
    stored = result.observation.body_json["results"][0]
    assert stored["title"] == "bad \ufffd here"
    assert stored["primary_location"]["source"]["display_name"] == "ok 😀"
    assert stored["authorships"][0]["author"]["display_name"] == "\ufffdx"


def test_observation_keeps_the_provider_text(clock: FakeClock) -> None:
    title = "Tricky\u202e title\u200b\x07"
    page = {"results": [{"id": "https://openalex.org/W1", "title": title}]}
    client, _ = make_client(lambda request: json_response(page), clock)
    result = client.search(prepare_search("q"))
    assert result.works[0].title == "Tricky title"
    assert result.observation.body_json["results"][0]["title"] == title
