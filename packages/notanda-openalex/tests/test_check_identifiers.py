"""Identifiers are data, never filter syntax (issue 24): what each reserved character sends.

A DOI or arXiv ID holding ``,`` or ``|``, or starting with ``!``, ``<`` or ``>``,
never reaches a ``doi:`` filter: its reference is looked up by title, its DOI
compared with the candidates', and its entry says why. Every other DOI goes
into a batch, percent-encoded. The exact request URLs are asserted, through
``httpx.MockTransport``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import quote, quote_plus

import httpx
import pytest
from conftest import FakeClock, json_response, make_client
from notanda_openalex import (
    MAX_DOIS_PER_REQUEST,
    ReferenceCheck,
    ReferenceField,
    Verdict,
    WithheldReason,
    parse_references,
)
from notanda_openalex._checking import filter_safe
from notanda_openalex._matching import normalize_text
from notanda_openalex._works import WORK_SELECT_FIELDS

BASE = "https://api.openalex.org/works"
SELECT = quote(",".join(WORK_SELECT_FIELDS), safe="")
SICI = "10.1002/(sici)1097-4636(199603)31:3<287::aid-jbm1>3.0.co;2-p"
COMMA = "10.9999/x,publication_year:1800"
PIPES = "|".join(f"10.9999/p{number}" for number in range(60))


def _record(number: int, title: str, doi: str | None, venue: str = "Journal of Tests") -> Any:
    return {
        "id": f"https://openalex.org/W{9000 + number}",
        "doi": None if doi is None else f"https://doi.org/{doi}",
        "title": title,
        "publication_year": 2020,
        "authorships": [{"author": {"display_name": "Ada Lovelace"}}],
        "primary_location": {"source": {"display_name": venue}},
        "type": "article",
        "is_retracted": False,
    }


class Catalogue:
    """``/works`` over fixed records: ``doi:A|B`` by DOI, ``title.search`` by shared words."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records

    def __call__(self, request: httpx.Request) -> httpx.Response:
        value = request.url.params["filter"]
        if value.startswith("doi:"):
            wanted = set(value.removeprefix("doi:").split("|"))
            results = [
                r
                for r in self.records
                if (r["doi"] or "").removeprefix("https://doi.org/") in wanted
            ]
        else:
            words = set(normalize_text(value.removeprefix("title.search:")).split())
            results = [r for r in self.records if words <= set(normalize_text(r["title"]).split())]
        return json_response({"meta": {"count": len(results)}, "results": results})


def _bib(key: str, title: str, doi: str) -> str:
    return (
        f"@article{{{key}, title={{{title}}}, author={{Lovelace, Ada}}, year={{2020}},"
        f" journal={{Journal of Tests}}, doi={{{doi}}}}}"
    )


def _title_url(title: str) -> str:
    value = quote_plus("title.search:" + title, safe="")
    return f"{BASE}?filter={value}&per-page=10&select={SELECT}"


def _batch_url(dois: list[str]) -> str:
    value = quote("doi:" + "|".join(dois), safe="")
    return f"{BASE}?filter={value}&per-page=100&select={SELECT}"


def _run(text: str, records: list[dict[str, Any]], clock: FakeClock) -> tuple[ReferenceCheck, Any]:
    client, recorder = make_client(Catalogue(records), clock)
    return client.check_references(parse_references(text)), recorder


@pytest.mark.parametrize(
    ("identifier", "safe"),
    [
        ("10.1/a,b", False),
        ("10.1/a|b", False),
        ("!10.1/a", False),
        ("<10.1/a", False),
        (">10.1/a", False),
        (SICI, True),
        ("10.1/a!b<c>d", True),
        ("10.1/a;b:c(d)", True),
        ("10.48550/arxiv.2101.00001", True),
    ],
)
def test_filter_safe_refuses_exactly_the_reserved_characters(identifier: str, safe: bool) -> None:
    assert filter_safe(identifier) is safe


def test_each_reserved_character_sends_a_title_lookup_and_the_rest_one_batch(
    clock: FakeClock,
) -> None:
    text = "\n".join(
        [
            _bib("comma", "Commas in identifiers considered harmful", COMMA),
            _bib("pipes", "Sixty pipes in one field", PIPES),
            _bib("sici", "Serial item contribution identifiers", SICI),
            _bib("plain", "An ordinary identifier", "10.5555/plain.1"),
        ]
    )
    parsed = parse_references(text)
    assert [reference.doi for reference in parsed] == [COMMA, PIPES, SICI, "10.5555/plain.1"]
    # The parser never reads a DOI starting with "!", "<" or ">"; the library
    # takes references from anyone, so they are built directly.
    extra = [
        replace(parsed[3], index=4, key=f"lead{number}", title=f"Operator {name} leads", doi=doi)
        for number, (name, doi) in enumerate(
            [("bang", "!10.5555/neg"), ("less", "<10.5555/lt"), ("more", ">10.5555/gt")]
        )
    ]
    extra.append(
        replace(
            parsed[3], index=7, key="arxiv", title="An arXiv identifier with a pipe", doi=None,
            arxiv_id="2101.00001|2101.00002",
        )
    )  # fmt: skip
    everything = replace(
        parsed,
        references=(
            *parsed.references,
            *(replace(entry, index=4 + offset) for offset, entry in enumerate(extra)),
        ),
    )
    records = [
        _record(1, "Commas in identifiers considered harmful", COMMA),
        _record(2, "Serial item contribution identifiers", SICI),
        _record(3, "An ordinary identifier", "10.5555/plain.1"),
    ]
    client, recorder = make_client(Catalogue(records), clock)
    result = client.check_references(everything, concurrency=1)
    urls = [str(request.url) for request in recorder.requests]
    assert urls == [
        _batch_url([SICI, "10.5555/plain.1"]),
        _title_url("Commas in identifiers considered harmful"),
        _title_url("Sixty pipes in one field"),
        _title_url("Operator bang leads"),
        _title_url("Operator less leads"),
        _title_url("Operator more leads"),
        _title_url("An arXiv identifier with a pipe"),
    ]
    # The SICI DOI travels percent-encoded: no raw "<", ">", ";", ":" or parenthesis.
    assert "%3C287%3A%3Aaid-jbm1%3E3.0.co%3B2-p" in urls[0]
    assert "%28sici%29" in urls[0]
    for url in urls:
        assert "," not in url
        assert "|" not in url
    entries = {entry.key: entry for entry in result.references}
    withheld = {key: entry.identifier_withheld for key, entry in entries.items()}
    reason = WithheldReason.FILTER_SYNTAX
    assert withheld == {
        "comma": reason, "pipes": reason, "sici": None, "plain": None,
        "lead0": reason, "lead1": reason, "lead2": reason, "arxiv": reason,
    }  # fmt: skip
    assert {entry.to_record()["identifier_withheld"] for entry in result.references} == {
        "filter_syntax",
        None,
    }
    # The comma DOI is the work's own: verified by title, its DOI compared and agreeing.
    assert entries["comma"].verdict is Verdict.VERIFIED
    assert entries["sici"].verdict is Verdict.VERIFIED
    assert entries["plain"].verdict is Verdict.VERIFIED
    assert entries["pipes"].verdict is Verdict.NOT_FOUND


def test_a_pipe_field_cannot_make_a_batch_of_more_than_fifty(clock: FakeClock) -> None:
    text = "\n".join(
        [_bib("pipes", "Sixty pipes in one field", PIPES)]
        + [_bib(f"k{n}", f"Title {n}", f"10.5555/many.{n}") for n in range(MAX_DOIS_PER_REQUEST)]
    )
    result, recorder = _run(text, [], clock)
    batches = [
        request.url.params["filter"].removeprefix("doi:")
        for request in recorder.requests
        if request.url.params["filter"].startswith("doi:")
    ]
    assert [len(batch.split("|")) for batch in batches] == [MAX_DOIS_PER_REQUEST]
    assert "10.9999/p0" not in batches[0]
    assert result.references[0].identifier_withheld is WithheldReason.FILTER_SYNTAX


def test_a_withheld_doi_is_compared_with_the_candidates_dois(clock: FakeClock) -> None:
    text = "\n".join(
        [
            # The title lookup finds the work carrying the DOI: matched by the DOI,
            # though the title is garbled, as a batch would have matched it.
            _bib("garbled", "Commas harmful considered identifiers in", COMMA),
            # The title finds a work with another DOI: the DOI differs.
            _bib("other", "Serial item contribution identifiers", "10.9999/y,z"),
        ]
    )
    records = [
        _record(1, "Commas in identifiers considered harmful", COMMA),
        _record(2, "Serial item contribution identifiers", SICI),
    ]
    result, recorder = _run(text, records, clock)
    garbled, other = result.references
    assert garbled.verdict is Verdict.METADATA_MISMATCH
    assert garbled.differs == (ReferenceField.TITLE,)
    assert garbled.work is not None
    assert garbled.work.doi == COMMA
    assert other.verdict is Verdict.METADATA_MISMATCH
    assert other.differs == (ReferenceField.DOI,)
    assert all(
        entry.identifier_withheld is WithheldReason.FILTER_SYNTAX for entry in (garbled, other)
    )
    assert all(
        request.url.params["filter"].startswith("title.search:") for request in recorder.requests
    )
