"""Reading references: every format, every documented rule, hostile input, one property."""

from __future__ import annotations

import json
import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from notanda_openalex import (
    MAX_REFERENCES,
    MAX_REFERENCES_BYTES,
    ErrorCode,
    InputError,
    InputReason,
    ParsedReferences,
    Reference,
    ReferenceAuthor,
    ReferenceFormat,
    ReferenceInputError,
    UnparsedReason,
    parse_references,
)
from notanda_openalex._references import text_blocks


def names(reference: Reference) -> list[tuple[str | None, str | None, str, str | None]]:
    return [(a.given, a.particle, a.family, a.suffix) for a in reference.authors]


def assert_indexes(parsed: ParsedReferences) -> None:
    assert [reference.index for reference in parsed] == list(range(len(parsed)))


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading references contacts nothing: any socket is a failure."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parse_references opened a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


# ------------------------------------------------------------------ BibTeX

BIBTEX = r"""% Exported from a reference manager; this line is a comment.
@string{nat = "Nature"}
@String{ procs = "Proceedings of the " }
@preamble{"\newcommand{\noopsort}[1]{}"}
@comment{Anything here is ignored, even @article{x, title={y}}}

@article{okafor2021sleep,
  author  = {Okafor, Chidi and M{\"u}ller, J{\"o}rg and van der Berg, Anneke and others},
  title   = {{Sleep} Spindles and Memory Consolidation in {\'E}lite Athletes},
  journal = nat,
  year    = 2021,
  volume  = {590},
  number  = {7846},
  pages   = {412--418},
  doi     = {https://doi.org/10.1038/S41586-021-00001-X}
}

@inproceedings{lindqvist2019,
  author    = "Maja Lindqvist and Pierre de la Fontaine and Martin Luther King, Jr.",
  title     = "Federated Learning on a {Budget}",
  booktitle = procs # "Workshop on Frugal Machine Learning",
  year      = "2019",
  doi       = {doi:10.1145/3300001.3300002.}
}

@misc{ferreira2023,
  author        = {Ferreira, Ana and {World Health Organization}},
  title         = {A Survey of Sparse Attention},
  eprint        = {2303.01234v3},
  archivePrefix = {arXiv},
  year          = {2023},
  month         = mar
}

@book{nakamura2015,
  author    = {Nakamura, Kenji and Smith, Jr., John},
  title     = {Tidal Energy Systems},
  publisher = {Springer},
  year      = {2015}
}
"""


def test_bibtex_reads_entries_in_order_with_keys_and_positions() -> None:
    parsed = parse_references(BIBTEX, "bibtex")
    assert parsed.format is ReferenceFormat.BIBTEX
    assert parsed.detected is False
    assert [r.key for r in parsed] == [
        "okafor2021sleep",
        "lindqvist2019",
        "ferreira2023",
        "nakamura2015",
    ]
    assert_indexes(parsed)
    assert all(r.parsed for r in parsed)


def test_bibtex_decodes_latex_and_expands_string_macros() -> None:
    first, second, *_ = parse_references(BIBTEX, "bibtex")
    assert first.title == "Sleep Spindles and Memory Consolidation in Élite Athletes"
    assert first.venue == "Nature"
    assert (first.year, first.volume, first.issue, first.pages) == (
        2021,
        "590",
        "7846",
        "412\u2013418",
    )
    assert first.entry_type == "article"
    assert second.venue == "Proceedings of the Workshop on Frugal Machine Learning"
    assert second.title == "Federated Learning on a Budget"


def test_bibtex_splits_names_in_both_orders_with_von_and_jr() -> None:
    first, second, third, fourth = parse_references(BIBTEX, "bibtex")
    assert names(first) == [
        ("Chidi", None, "Okafor", None),
        ("Jörg", None, "Müller", None),
        ("Anneke", "van der", "Berg", None),
    ]
    assert first.authors_truncated is True
    assert names(second) == [
        ("Maja", None, "Lindqvist", None),
        ("Pierre", "de la", "Fontaine", None),
        ("Martin Luther", None, "King", "Jr."),
    ]
    assert second.authors_truncated is False
    assert names(third) == [
        ("Ana", None, "Ferreira", None),
        (None, None, "World Health Organization", None),
    ]
    assert names(fourth) == [("Kenji", None, "Nakamura", None), ("John", None, "Smith", "Jr.")]
    assert first.authors[1].text == "Müller, Jörg"


def test_bibtex_normalizes_dois_and_reads_arxiv_eprints() -> None:
    first, second, third, _ = parse_references(BIBTEX, "bibtex")
    assert first.doi == "10.1038/s41586-021-00001-x"
    assert second.doi == "10.1145/3300001.3300002"
    assert third.doi is None
    assert third.arxiv_id == "2303.01234"
    assert third.lookup_doi == "10.48550/arxiv.2303.01234"
    assert first.lookup_doi == first.doi


def test_preamble_comment_and_string_produce_no_reference() -> None:
    text = '@preamble{"x"}\n@comment{nothing}\n@string{a = "b"}\n@article{k, title = {Real}}\n'
    parsed = parse_references(text)
    assert [(r.key, r.title) for r in parsed] == [("k", "Real")]


def test_a_malformed_entry_among_good_ones_is_one_unparsed_entry() -> None:
    text = (
        "@article{good1, title = {First Good Paper}, year = 2001}\n"
        "@article{broken, title = {Unbalanced {brace, year = 2002}\n"
        "@article{good2, title = {Second Good Paper}, year = 2003}\n"
    )
    parsed = parse_references(text, "bibtex")
    assert [(r.index, r.key, r.unparsed_reason) for r in parsed] == [
        (0, "good1", None),
        (1, "broken", UnparsedReason.BIBTEX_SYNTAX),
        (2, "good2", None),
    ]
    assert parsed[1].raw.startswith("@article{broken")
    assert parsed[1].title is None


def test_a_repeated_key_is_still_a_reference() -> None:
    text = "@article{same, title = {One}}\n@article{same, title = {Two}}\n"
    assert [(r.key, r.title) for r in parse_references(text)] == [("same", "One"), ("same", "Two")]


def test_bibtex_et_al_marks_truncation_and_undefined_macros_are_empty() -> None:
    text = "@article{k, author = {Doe, Jane and et al.}, title = {T} # undefinedmacro}"
    [reference] = parse_references(text)
    assert names(reference) == [("Jane", None, "Doe", None)]
    assert reference.authors_truncated is True
    assert reference.title == "T"


def test_an_entry_without_title_or_identifier_is_unparsed() -> None:
    [reference] = parse_references("@article{k, author = {Doe, Jane}, year = 2020}")
    assert reference.unparsed_reason is UnparsedReason.NO_TITLE_OR_IDENTIFIER
    assert reference.key == "k"
    assert reference.authors == ()


def test_bibtex_with_only_comments_is_one_unparsed_entry() -> None:
    [reference] = parse_references("@comment{just a note}\n", "bibtex")
    assert reference.unparsed_reason is UnparsedReason.NO_REFERENCE_FOUND


# ------------------------------------------------------------------ RIS

# Each record ends in "ER  - " with its trailing space, as RIS writers emit it.
RIS = """TY  - JOUR
AU  - Haddad, Rania
AU  - Osei, Kwame B.
AU  - et al.
TI  - Microplastics in Alpine Lakes: A Five-Year Survey
T2  - Environmental Science & Technology
PY  - 2022/05/17/
VL  - 56
IS  - 10
SP  - 6120
EP  - 6131
DO  - https://doi.org/10.1021/ACS.EST.2C00001
ID  - haddad2022
ER  -

TY  - CHAP
AU  - Brennan, Siobhan
T1  - Cooperative Housing After 1945
JO  - Urban History Review
PY  - 2018
UR  - https://arxiv.org/abs/1804.05678v2
ER  -
""".replace("ER  -\n", "ER  - \n")


def test_ris_reads_records_with_their_fields() -> None:
    parsed = parse_references(RIS)
    assert parsed.format is ReferenceFormat.RIS
    assert parsed.detected is True
    first, second = parsed
    assert first.key == "haddad2022"
    assert first.entry_type == "JOUR"
    assert first.title == "Microplastics in Alpine Lakes: A Five-Year Survey"
    assert names(first) == [("Rania", None, "Haddad", None), ("Kwame B.", None, "Osei", None)]
    assert first.authors_truncated is True
    assert (first.year, first.venue) == (2022, "Environmental Science & Technology")
    assert (first.volume, first.issue, first.pages) == ("56", "10", "6120-6131")
    assert first.doi == "10.1021/acs.est.2c00001"
    assert second.title == "Cooperative Housing After 1945"
    assert second.venue == "Urban History Review"
    assert second.arxiv_id == "1804.05678"
    assert second.key is None
    assert_indexes(parsed)


def test_ris_without_er_and_text_outside_records_are_kept() -> None:
    text = (
        "exported by some tool\n"
        "TY  - JOUR\nTI  - First Record\nER  - \n"
        "stray line between records\n"
        "TY  - JOUR\nTI  - Cut Off Record\nAU  - Ngata, Hemi\n"
    )
    parsed = parse_references(text, "ris")
    assert [(r.unparsed_reason, r.title) for r in parsed] == [
        (UnparsedReason.RIS_OUTSIDE_RECORD, None),
        (None, "First Record"),
        (UnparsedReason.RIS_OUTSIDE_RECORD, None),
        (None, "Cut Off Record"),
    ]
    assert parsed[0].raw == "exported by some tool"
    assert names(parsed[3]) == [("Hemi", None, "Ngata", None)]


def test_ris_record_after_a_record_without_er_starts_a_new_reference() -> None:
    text = "TY  - JOUR\nTI  - One\nTY  - BOOK\nTI  - Two\nER  - \n"
    assert [r.title for r in parse_references(text)] == ["One", "Two"]


# ------------------------------------------------------------------ CSL-JSON

CSL = [
    {
        "id": "item-1",
        "type": "article-journal",
        "title": "Soil Carbon Under Agroforestry",
        "author": [
            {"family": "Achebe", "given": "Ngozi"},
            {"family": "Beethoven", "given": "Ludwig", "non-dropping-particle": "van"},
            {"family": "Garcia", "given": "Luis", "suffix": "III"},
            {"literal": "Global Soil Partnership"},
            {"literal": "et al."},
        ],
        "issued": {"date-parts": [[2020, 7, 1]]},
        "container-title": "Geoderma",
        "volume": "375",
        "issue": 2,
        "page": "114-129",
        "DOI": "10.1016/J.GEODERMA.2020.114500",
    },
    {
        "id": 42,
        "citation-key": "tanaka2024",
        "type": "article",
        "title": "Scaling Laws for Protein Language Models",
        "author": [{"family": "Tanaka", "given": "Yui"}],
        "issued": {"raw": "2024-02"},
        "URL": "https://arxiv.org/abs/2402.04567",
    },
]


def test_csl_json_reads_items_with_names_dates_and_identifiers() -> None:
    parsed = parse_references(json.dumps(CSL))
    assert parsed.format is ReferenceFormat.CSL_JSON
    first, second = parsed
    assert first.key == "item-1"
    assert names(first) == [
        ("Ngozi", None, "Achebe", None),
        ("Ludwig", "van", "Beethoven", None),
        ("Luis", None, "Garcia", "III"),
        (None, None, "Global Soil Partnership", None),
    ]
    assert first.authors_truncated is True
    assert (first.year, first.venue, first.volume, first.issue, first.pages) == (
        2020,
        "Geoderma",
        "375",
        "2",
        "114-129",
    )
    assert first.doi == "10.1016/j.geoderma.2020.114500"
    assert (second.key, second.year, second.arxiv_id) == ("tanaka2024", 2024, "2402.04567")


def test_csl_json_single_object_is_one_item() -> None:
    [reference] = parse_references(json.dumps(CSL[0]))
    assert reference.title == "Soil Carbon Under Agroforestry"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("42", UnparsedReason.CSL_NOT_A_LIST),
        ('"a string"', UnparsedReason.CSL_NOT_A_LIST),
        ('[{"title": ', UnparsedReason.JSON_SYNTAX),
        ("not json at all", UnparsedReason.JSON_SYNTAX),
        ("[" * 100_000 + "]" * 100_000, UnparsedReason.JSON_TOO_DEEP),
    ],
)
def test_csl_json_that_cannot_be_read_is_one_unparsed_entry(
    text: str, reason: UnparsedReason
) -> None:
    [reference] = parse_references(text, "csl-json")
    assert reference.unparsed_reason is reason


def test_csl_json_elements_that_are_not_objects_are_unparsed_in_place() -> None:
    text = json.dumps([{"title": "Kept"}, 7, [1, 2], {"title": "Also kept"}])
    parsed = parse_references(text, "csl-json")
    assert [(r.title, r.unparsed_reason) for r in parsed] == [
        ("Kept", None),
        (None, UnparsedReason.CSL_NOT_AN_OBJECT),
        (None, UnparsedReason.CSL_NOT_AN_OBJECT),
        ("Also kept", None),
    ]
    assert parsed[1].raw == "7"


def test_csl_json_with_wrongly_typed_fields_never_crashes() -> None:
    item = {"title": ["A", "list"], "author": "nobody", "issued": [], "DOI": 5, "page": {}}
    [reference] = parse_references(json.dumps([item]), "csl-json")
    assert (reference.title, reference.authors, reference.doi) == ("A", (), None)


# ------------------------------------------------------------------ plain text

APA = (
    "Okafor, C., Müller, J., & van der Berg, A. (2021). Sleep spindles and memory "
    "consolidation in elite athletes. Nature, 590(7846), 412\u2013418. "
    "https://doi.org/10.1038/s41586-021-00001-x"
)
VANCOUVER = (
    "Haddad R, Osei KB, Lindqvist M, et al. Microplastics in alpine lakes: a five-year "
    "survey. Environ Sci Technol. 2022;56(10):6120-31. doi:10.1021/acs.est.2c00001."
)
IEEE = (
    '[3] M. Lindqvist, P. de la Fontaine, and K. Tanaka, "Federated learning on a budget," '
    "in Proc. Workshop Frugal ML, vol. 4, no. 2, pp. 11\u201319, 2019."
)


def test_text_reads_apa() -> None:
    [reference] = parse_references(APA, "text")
    assert reference.title == "Sleep spindles and memory consolidation in elite athletes"
    assert names(reference) == [
        ("C.", None, "Okafor", None),
        ("J.", None, "Müller", None),
        ("A.", None, "van der Berg", None),
    ]
    assert (reference.year, reference.venue) == (2021, "Nature")
    assert (reference.volume, reference.issue, reference.pages) == ("590", "7846", "412\u2013418")
    assert reference.doi == "10.1038/s41586-021-00001-x"


def test_text_reads_vancouver() -> None:
    [reference] = parse_references(VANCOUVER, "text")
    assert reference.title == "Microplastics in alpine lakes: a five-year survey"
    assert names(reference) == [
        ("R.", None, "Haddad", None),
        ("K. B.", None, "Osei", None),
        ("M.", None, "Lindqvist", None),
    ]
    assert reference.authors_truncated is True
    assert (reference.year, reference.venue) == (2022, "Environ Sci Technol")
    assert (reference.volume, reference.issue, reference.pages) == ("56", "10", "6120-31")
    assert reference.doi == "10.1021/acs.est.2c00001"


def test_text_reads_ieee() -> None:
    [reference] = parse_references(IEEE, "text")
    assert reference.title == "Federated learning on a budget"
    assert names(reference) == [
        ("M.", None, "Lindqvist", None),
        ("P.", "de la", "Fontaine", None),
        ("K.", None, "Tanaka", None),
    ]
    assert (reference.year, reference.venue) == (2019, "Proc. Workshop Frugal ML")
    assert (reference.volume, reference.issue, reference.pages) == ("4", "2", "11\u201319")
    assert reference.doi is None


def test_text_is_one_reference_per_line_without_blank_lines() -> None:
    text = f"{APA}\n{VANCOUVER}\n{IEEE}\n"
    parsed = parse_references(text)
    assert parsed.format is ReferenceFormat.TEXT
    assert len(parsed) == 3
    assert_indexes(parsed)
    assert parsed[2].raw == IEEE


def test_text_with_blank_lines_is_one_reference_per_block() -> None:
    wrapped_apa = APA.replace(" consolidation", "\nconsolidation")
    text = f"\n\n{wrapped_apa}\n\n  \n{VANCOUVER}\n\n"
    first, second = parse_references(text, "text")
    assert first.title == "Sleep spindles and memory consolidation in elite athletes"
    assert first.raw == wrapped_apa
    assert second.doi == "10.1021/acs.est.2c00001"


def test_leading_and_trailing_blank_lines_do_not_switch_to_blocks() -> None:
    assert len(parse_references(f"\n\n{APA}\n{VANCOUVER}\n\n", "text")) == 2


@pytest.mark.parametrize(
    "written",
    [
        "10.1000/ABC.123",
        "doi:10.1000/abc.123",
        "DOI: 10.1000/abc.123.",
        "https://doi.org/10.1000/ABC.123",
        "http://dx.doi.org/10.1000/abc.123;",
        "<https://doi.org/10.1000/abc.123>",
    ],
)
def test_a_bare_doi_is_a_reference_normalized(written: str) -> None:
    [reference] = parse_references(written)
    assert reference.parsed
    assert reference.doi == "10.1000/abc.123"
    assert reference.title is None


def test_a_doi_with_parentheses_keeps_them() -> None:
    [reference] = parse_references("See 10.1016/S0140-6736(20)30367-6.")
    assert reference.doi == "10.1016/s0140-6736(20)30367-6"


@pytest.mark.parametrize(
    ("written", "arxiv_id"),
    [
        ("arXiv:2101.00001v2", "2101.00001"),
        ("https://arxiv.org/abs/1706.03762", "1706.03762"),
        ("arXiv:hep-th/9901001", "hep-th/9901001"),
        ("10.48550/arXiv.2207.12345", "2207.12345"),
    ],
)
def test_arxiv_ids_are_found_and_become_the_arxiv_doi(written: str, arxiv_id: str) -> None:
    [reference] = parse_references(written)
    assert reference.arxiv_id == arxiv_id
    assert reference.lookup_doi == f"10.48550/arxiv.{arxiv_id}"


def test_a_line_with_nothing_to_look_up_is_unparsed_not_dropped() -> None:
    parsed = parse_references(f"{APA}\nsee the appendix\n{IEEE}")
    assert [r.unparsed_reason for r in parsed] == [
        None,
        UnparsedReason.NO_TITLE_OR_IDENTIFIER,
        None,
    ]
    assert parsed[1].raw == "see the appendix"


# ------------------------------------------------------------------ auto-detection


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (json.dumps(CSL), ReferenceFormat.CSL_JSON),
        ("  \n" + json.dumps(CSL[0]), ReferenceFormat.CSL_JSON),
        ("% header\n@article{k, title={T}}", ReferenceFormat.BIBTEX),
        ("  @Book ( k, title = {T} )", ReferenceFormat.BIBTEX),
        (RIS, ReferenceFormat.RIS),
        (IEEE, ReferenceFormat.TEXT),  # starts with "[" but is not JSON
        ('{"title": broken', ReferenceFormat.TEXT),
        ("Write to me@example.org about 10.1000/x", ReferenceFormat.TEXT),
    ],
)
def test_auto_detection_follows_the_documented_order(text: str, expected: ReferenceFormat) -> None:
    parsed = parse_references(text)
    assert (parsed.format, parsed.detected) == (expected, True)


# ------------------------------------------------------------------ limits and errors


@pytest.mark.parametrize("fmt", ["BibTeX", "bib", "json", "", "csl_json"])
def test_an_unknown_format_is_invalid_arguments(fmt: str) -> None:
    with pytest.raises(ReferenceInputError) as caught:
        parse_references(APA, fmt)
    assert caught.value.code is ErrorCode.INVALID_ARGUMENTS
    assert (caught.value.field, caught.value.reason) == ("format", InputReason.INVALID_VALUE)
    assert isinstance(caught.value, InputError)
    assert fmt not in str(caught.value) or fmt == ""


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\n"])
def test_empty_input_is_invalid_arguments(text: str) -> None:
    with pytest.raises(ReferenceInputError) as caught:
        parse_references(text)
    assert caught.value.to_record() == {
        "code": "invalid_arguments",
        "field": "text",
        "reason": "empty",
    }


def test_non_strings_are_invalid_arguments() -> None:
    with pytest.raises(ReferenceInputError) as caught:
        parse_references(b"@article{k, title={T}}")  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.reason) == ("text", InputReason.NOT_A_STRING)
    with pytest.raises(ReferenceInputError) as caught:
        parse_references(APA, None)  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.reason) == ("format", InputReason.NOT_A_STRING)


def test_the_byte_limit_counts_utf8_bytes_and_the_message_says_it() -> None:
    at_limit = "10.1000/x " + "a" * (MAX_REFERENCES_BYTES - 10)
    assert len(parse_references(at_limit)) == 1
    over = "10.1000/x " + "é" * ((MAX_REFERENCES_BYTES - 10) // 2 + 1)
    assert len(over) < MAX_REFERENCES_BYTES
    with pytest.raises(ReferenceInputError) as caught:
        parse_references(over)
    assert caught.value.reason is InputReason.TOO_LONG
    assert caught.value.limit == MAX_REFERENCES_BYTES == 262_144
    assert "at most 262144 UTF-8 bytes" in str(caught.value)


def test_the_reference_limit_counts_unparsed_entries_too() -> None:
    lines = [f"10.1000/n{n}" for n in range(MAX_REFERENCES - 1)] + ["nothing here"]
    assert len(parse_references("\n".join(lines))) == MAX_REFERENCES == 100
    with pytest.raises(ReferenceInputError) as caught:
        parse_references("\n".join([*lines, "one more"]))
    assert (caught.value.reason, caught.value.limit) == (InputReason.TOO_MANY, 100)
    assert "at most 100 references" in str(caught.value)


# ------------------------------------------------------------------ hostile input


def test_deep_and_unbalanced_braces_never_crash() -> None:
    deep = "@article{deep, title = {" + "{" * 20_000 + "Deep" + "}" * 20_000 + "}}"
    [reference] = parse_references(deep, "bibtex")
    assert reference.title == "Deep"
    unbalanced = "@article{open, title = {" + "{" * 5_000 + "x}\n@article{ok, title={Fine}}"
    parsed = parse_references(unbalanced, "bibtex")
    assert parsed[-1].unparsed_reason is UnparsedReason.BIBTEX_SYNTAX or parsed[-1].title
    assert len(parsed) >= 1
    assert_indexes(parsed)


def test_latex_the_decoder_rejects_falls_back_to_plain_text() -> None:
    [reference] = parse_references(r"@article{k, title = {Broken \textbf{ {bold}}", "bibtex")
    assert reference.unparsed_reason is UnparsedReason.BIBTEX_SYNTAX
    [reference] = parse_references(r"@article{k, title = {A $x^2 \frac{1} end}}", "bibtex")
    assert reference.title is not None
    assert "end" in reference.title


def test_control_characters_are_removed_from_fields_but_kept_in_raw() -> None:
    text = "Okafor, C. (2021). Sleep\x00 spindles\x1b[31m and\u202e memory. Nature, 1(2), 3-4."
    [reference] = parse_references(text, "text")
    assert reference.title == "Sleep spindles[31m and memory"
    assert "\x00" in reference.raw
    bib = "@article{k\x01ey, title = {Nul\x00 byte}}"
    [entry] = parse_references(bib, "bibtex")
    assert entry.title == "Nul byte"


def test_lone_surrogates_become_replacement_characters() -> None:
    [reference] = parse_references("@article{k, title = {Bad \ud800 text}}")
    assert reference.title == "Bad \ufffd text"
    json.dumps(reference.to_record()).encode("utf-8")  # encodable


def test_huge_fields_and_long_lines_are_read() -> None:
    huge = "@article{big, title = {" + "word " * 40_000 + "}}"
    [reference] = parse_references(huge, "bibtex")
    assert reference.title is not None
    assert len(reference.title) > 100_000
    line = "A" * 100_000
    [unparsed] = parse_references(line)
    assert unparsed.unparsed_reason is UnparsedReason.NO_TITLE_OR_IDENTIFIER
    assert unparsed.raw == line
    long_ris = "TY  - JOUR\nTI  - " + "t" * 100_000 + "\n"
    [ris] = parse_references(long_ris)
    assert ris.title is not None
    assert len(ris.title) == 100_000


def test_records_are_json_safe_with_every_key() -> None:
    parsed = parse_references(BIBTEX)
    record = json.loads(json.dumps(parsed.to_record()))
    assert record["format"] == "bibtex"
    assert record["detected"] is True
    first = record["references"][0]
    assert set(first) == {
        "arxiv_id",
        "authors",
        "authors_truncated",
        "doi",
        "entry_type",
        "index",
        "issue",
        "key",
        "line",
        "pages",
        "raw",
        "title",
        "unparsed_reason",
        "venue",
        "volume",
        "year",
    }
    assert first["authors"][2] == {
        "family": "Berg",
        "given": "Anneke",
        "particle": "van der",
        "suffix": None,
        "text": "van der Berg, Anneke",
    }
    unparsed = parse_references("nothing to see").to_record()["references"][0]
    assert unparsed["unparsed_reason"] == "no_title_or_identifier"


def test_the_public_types_are_immutable() -> None:
    reference = parse_references(APA)[0]
    with pytest.raises(AttributeError):
        reference.title = "changed"  # type: ignore[misc]
    assert isinstance(reference.authors[0], ReferenceAuthor)


# ------------------------------------------------------------------ property

_PIECES = st.sampled_from(
    [
        "@article{",
        "@string{a = ",
        "@comment{",
        "@preamble{",
        "}",
        "{",
        '"',
        "#",
        ",",
        "=",
        "title",
        "author = {Doe, J. and others}",
        "TY  - JOUR\n",
        "ER  - \n",
        "TI  - ",
        "AU  - ",
        "[",
        "]",
        ":",
        "null",
        "\n",
        "\n\n",
        "10.1000/xyz",
        "arXiv:2101.00001",
        "(2020). ",
        "et al.",
        "\\'e",
        "$",
        "\x00",
        "\ud800",
    ]
)
_TEXT = st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=25).map("".join)


@settings(derandomize=True, max_examples=200, deadline=None, database=None)
@given(text=_TEXT, fmt=st.sampled_from([f.value for f in ReferenceFormat]))
def test_any_text_reads_without_other_errors(text: str, fmt: str) -> None:
    refused: ReferenceInputError | None = None
    try:
        parsed = parse_references(text, fmt)
    except ReferenceInputError as exc:
        refused = exc
    if refused is not None:
        assert refused.code is ErrorCode.INVALID_ARGUMENTS
        # Only a blank text is refused here: the pieces cannot reach either limit.
        assert refused.reason is InputReason.EMPTY
        assert not text.strip()
        return
    assert len(parsed) >= 1
    assert_indexes(parsed)
    assert parsed.format is not ReferenceFormat.AUTO
    if parsed.format is ReferenceFormat.TEXT:
        assert len(parsed) == len(text_blocks(text.replace("\ud800", "\ufffd")))
    json.dumps(parsed.to_record()).encode("utf-8")


@pytest.mark.parametrize(
    ("fmt", "one"),
    [
        ("bibtex", "@misc{k{n}, title = {T{n}}}\n"),
        ("ris", "TY  - JOUR\nTI  - T{n}\nER  - \n"),
        ("text", "10.1000/{n}\n"),
    ],
)
def test_every_format_refuses_the_101st_reference(fmt: str, one: str) -> None:
    def bibliography(count: int) -> str:
        return "".join(one.replace("{n}", str(n)) for n in range(count))

    assert len(parse_references(bibliography(MAX_REFERENCES), fmt)) == MAX_REFERENCES
    with pytest.raises(ReferenceInputError) as caught:
        parse_references(bibliography(MAX_REFERENCES + 1), fmt)
    assert caught.value.reason is InputReason.TOO_MANY
    items = json.dumps([{"title": f"T{n}"} for n in range(MAX_REFERENCES + 1)])
    with pytest.raises(ReferenceInputError):
        parse_references(items, "csl-json")
