"""Reading real bibliographies right: each case is one that real files showed read wrong.

Issue 19 ("Read right") and issue 24 ("Nothing vanishes"): DOIs behind any
resolver, LaTeX logos and commands, accented and catalogue-written names,
``@string`` and ``crossref`` as BibTeX resolves them, byte-order marks, ``%``
in values, AAS journal macros, RIS exports' furniture, and every ``@`` block
accounted for with its line.
"""

from __future__ import annotations

import pytest
from notanda_openalex import (
    MAX_REFERENCES,
    ReferenceFormat,
    UnparsedReason,
    parse_references,
    read_references,
)
from notanda_openalex._matching import _author_agrees


def one(text: str, fmt: str = "auto"):  # type: ignore[no-untyped-def]
    [reference] = parse_references(text, fmt)
    return reference


# ------------------------------------------------------------------ DOIs


@pytest.mark.parametrize(
    "written",
    [
        "http://doi.acm.org/10.1145/1137627.1137631",
        "https://dx.doi.org/10.1145/1137627.1137631",
        "http://dx.doi.org/10.1145/1137627.1137631",
        "https://dl.acm.org/doi/abs/10.1145/1137627.1137631",
        "10.1145%2F1137627.1137631",
        "https://doi.org/10.1145%2F1137627.1137631",
        "https://doi.org/10.1145/1137627.1137631",
        "doi:10.1145/1137627.1137631",
    ],
)
def test_a_doi_field_behind_any_resolver_or_escaped_is_the_doi(written: str) -> None:
    reference = one(f"@inproceedings{{k, title = {{T}}, doi = {{{written}}}}}")
    assert reference.doi == "10.1145/1137627.1137631"


SICI = "10.1002/(SICI)1099-1484(199610)1:4<385::AID-CFM20>3.0.CO;2-0"


@pytest.mark.parametrize(
    "url",
    [
        f"https://onlinelibrary.wiley.com/doi/abs/{SICI}",
        f"http://dx.doi.org/{SICI}",
        "https://doi.org/10.1002/%28SICI%291099-1484%28199610%291%3A4%3C385%3A%3AAID-CFM20%3E3.0.CO%3B2-0",
    ],
)
def test_a_sici_doi_in_url_is_kept_whole(url: str) -> None:
    reference = one(f"@article{{k, title = {{T}}, url = {{{url}}}}}")
    assert reference.doi == SICI.lower()


def test_a_doi_field_with_tex_escapes_is_the_doi() -> None:
    assert one(r"@article{k, title = {T}, doi = {10.1000/a\_b}}").doi == "10.1000/a_b"
    assert one(r"@article{k, title = {T}, doi = {{10.1000/AB}}}").doi == "10.1000/ab"
    assert one(r"@article{k, title = {T}, url = {https://doi.org/10.1000/x\_y}}").doi == (
        "10.1000/x_y"
    )


def test_a_sici_doi_in_a_doi_field_and_in_angle_brackets_in_text() -> None:
    assert one(f"@article{{k, title = {{T}}, doi = {{{SICI}}}}}").doi == SICI.lower()
    line = f"Smith J. A title. Some Journal. 1996;1:385. <https://doi.org/{SICI}>"
    assert one(line, "text").doi == SICI.lower()


# ------------------------------------------------------------------ LaTeX


@pytest.mark.parametrize(
    ("title", "text"),
    [
        (r"The {{\TeX}book}", "The TeXbook"),
        (r"{\LaTeX}: A Document Preparation System", "LaTeX: A Document Preparation System"),
        (r"Input\slash Output", "Input/Output"),
        (r"Well\hyphen{}known", "Well-known"),
        (r"The \textup{up} and \textbf{bold} and \emph{em}", "The up and bold and em"),
        (r"Sorting in $O(\mbox{n log n})$ time", "Sorting in O(n log n) time"),
        (r"The $\alpha$-helix and $\mathcal{O}(n)$", "The \u03b1-helix and O(n)"),
        (r"An \unknowncommand{argument} stays", "An argument stays"),
        (r"A \Logo{} survives", "A Logo survives"),
        (r"{\'E}lite {\"u}ber Dvo\v{r}\'ak \c{c}a \ss", "Élite über Dvořák ça ß"),
        (r"Link \href{https://example.org}{text} kept", "Link text kept"),
        (r"2--3 and 1---2 ``quoted''", "2\u20133 and 1\u20142 \u201cquoted\u201d"),
        (r"A 50\% rise", "A 50% rise"),
    ],
)
def test_latex_commands_keep_their_text(title: str, text: str) -> None:
    assert one(f"@book{{k, title = {{{title}}}}}").title == text


def test_no_command_silently_deletes_an_argument_from_a_title() -> None:
    # Every word of every argument survives, whatever the command.
    words = ["alpha", "beta", "gamma", "delta"]
    for command in ("textsc", "textit", "mbox", "ensuremath", "uppercase", "foo", "text"):
        title = " ".join(f"\\{command}{{{word}}}" for word in words)
        assert one(f"@misc{{k, title = {{{title}}}}}").title == " ".join(words), command


def test_percent_inside_braced_and_quoted_values_is_text() -> None:
    text = (
        "@article{a, title = {Effect of 0.25% Ropivacaine}, year = 2020}\n"
        '@article{b, title = "A 5% rise", year = 2021}\n'
        "% a comment line between entries\n"
        "@article{c,\n  % a commented-out field: note = {x},\n  title = {Third}}\n"
    )
    parsed = parse_references(text)
    assert [(r.key, r.title, r.year) for r in parsed] == [
        ("a", "Effect of 0.25% Ropivacaine", 2020),
        ("b", "A 5% rise", 2021),
        ("c", "Third", None),
    ]


# ------------------------------------------------------------------ names


def families(text: str, fmt: str = "auto") -> list[tuple[str, str | None]]:
    return [(a.family, a.given) for a in one(text, fmt).authors]


def test_an_unbraced_accent_in_a_name_gives_one_family_name() -> None:
    text = (
        r"@article{k, title = {T}, author = {da Conceic\~{a}o, Arlindo and Magalh\~aes, J. "
        r"and Dvo\v{r}\'ak, Anton and {\"O}zt{\"u}rk, Ay\c{s}e}}"
    )
    assert families(text) == [
        ("Conceicão", "Arlindo"),
        ("Magalhães", "J."),
        ("Dvořák", "Anton"),
        ("Öztürk", "Ayşe"),
    ]
    assert one(text).authors[0].particle == "da"


def test_dblp_homonym_numbers_are_not_part_of_a_name() -> None:
    text = "@article{k, title = {T}, author = {Wei Wang 0001 and Zhichao Chen 0003 and Li, Na}}"
    assert families(text) == [("Wang", "Wei"), ("Chen", "Zhichao"), ("Li", "Na")]


def test_ris_family_initials_names_are_read_family_first() -> None:
    text = (
        "TY  - JOUR\nAU  - Eloubeidi M.A.\nAU  - Varadarajulu S.\nAU  - Smith JA\n"
        "AU  - Doe, Jane\nTI  - Endoscopic ultrasound\nER  - \n"
    )
    assert families(text) == [
        ("Eloubeidi", "M. A."),
        ("Varadarajulu", "S."),
        ("Smith", "J. A."),
        ("Doe", "Jane"),
    ]


def test_a_generational_suffix_left_in_the_family_part_matches() -> None:
    [author] = one("@article{k, title = {T}, author = {Casey Jr, HC}}").authors
    assert author.family == "Casey Jr"
    assert _author_agrees(author.family, "H. C. Casey")
    assert _author_agrees(author.family, "Harold C. Casey Jr.")
    assert not _author_agrees(author.family, "H. C. Jones")
    assert not _author_agrees("Jr", "H. C. Casey")


# ------------------------------------------------------------------ @string, @comment, blocks


def test_a_string_defined_twice_takes_the_later_definition() -> None:
    text = '@string{j = "First"}\n@string{J = "Second"}\n@article{k, title = {T}, journal = j}'
    assert one(text).venue == "Second"


def test_well_formed_strings_preambles_and_comments_never_count() -> None:
    # The ACM template repeats @string names; they are not references.
    strings = "".join(f'@string{{acm{i} = "ACM {i}"}}\n' for i in range(MAX_REFERENCES + 50))
    strings += "".join(f'@string{{acm{i} = "Again {i}"}}\n' for i in range(MAX_REFERENCES))
    extras = '@preamble{"\\newcommand{\\x}{y}"}\n@comment{jabref-meta: databaseType:bibtex;}\n'
    entries = "".join(f"@article{{k{i}, title = acm{i}}}\n" for i in range(3))
    parsed = parse_references(strings + extras + entries)
    assert [(r.key, r.title) for r in parsed] == [
        ("k0", "Again 0"),
        ("k1", "Again 1"),
        ("k2", "Again 2"),
    ]


def test_every_malformed_block_is_an_unparsed_reference_with_its_line() -> None:
    text = (
        "@article{good1, title = {First}}\n"
        "@art\x01icle{ctrl, title = {Control character in the type}}\n"
        '@string{broken = "no closing quote}\n'
        "@preamble{ unbalanced \n"
        "@article{, title = {No key}}\n"
        "@article{good2, title = {Second}}\n"
    )
    parsed = parse_references(text)
    assert [(r.line, r.key, r.unparsed_reason) for r in parsed] == [
        (1, "good1", None),
        (2, "ctrl", UnparsedReason.BIBTEX_SYNTAX),
        (3, None, UnparsedReason.BIBTEX_SYNTAX),
        (4, None, UnparsedReason.BIBTEX_SYNTAX),
        (5, None, UnparsedReason.BIBTEX_SYNTAX),
        (6, "good2", None),
    ]
    assert parsed[1].raw == "@art\x01icle{ctrl, title = {Control character in the type}}"


def test_text_between_entries_stays_a_comment() -> None:
    text = (
        "This file was written by hand. Mail me@example.org about it.\n"
        "@article{a, title = {One}} trailing words\n"
        "some notes (with parentheses) and {braces}\n"
        "@article{b, title = {Two}}\n"
    )
    assert [r.key for r in parse_references(text)] == ["a", "b"]


# ------------------------------------------------------------------ byte-order mark


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        ("\ufeff@article{k, title = {Marked}}\n", ReferenceFormat.BIBTEX),
        ("\ufeffTY  - JOUR\nTI  - Marked\nER  - \n", ReferenceFormat.RIS),
        ('\ufeff[{"id": "k", "title": "Marked"}]', ReferenceFormat.CSL_JSON),
        ("\ufeffDoe J. Marked. Journal. 2020;1:2.", ReferenceFormat.TEXT),
    ],
)
def test_a_byte_order_mark_is_ignored(text: str, fmt: ReferenceFormat) -> None:
    for chosen in ("auto", fmt.value):
        parsed = parse_references(text, chosen)
        assert parsed.format is fmt
        [reference] = parsed
        assert reference.title == "Marked"
        assert reference.unparsed_reason is None
        assert "\ufeff" not in reference.raw


# ------------------------------------------------------------------ plain text


def test_apa_reading_needs_the_year_right_after_the_authors() -> None:
    line = 'Smith, John. "A quoted title." Journal of Things 9, no. 3 (2010): 393-404.'
    reference = one(line, "text")
    assert reference.title == "A quoted title"
    assert reference.year == 2010
    assert [(a.family, a.given) for a in reference.authors] == [("Smith", "John")]
    apa = "Smith, J. (2010). A title read the APA way. Journal of Things, 9(3), 393-404."
    assert one(apa, "text").title == "A title read the APA way"


# ------------------------------------------------------------------ crossref


def test_crossref_child_inherits_book_title_year_and_venue_one_level() -> None:
    text = (
        "@inproceedings{child, title = {The Child Paper}, author = {Doe, Jane},"
        " crossref = {PROC}, pages = {1--10}}\n"
        "@proceedings{proc, title = {Proceedings of the Parent Conference},"
        " year = 1999, publisher = {ACM}, crossref = {grand}}\n"
        "@book{grand, title = {Grand}, series = {LNCS}, volume = 7}\n"
        "@inproceedings{own, title = {Own}, booktitle = {Own Book}, year = 2001,"
        " crossref = {proc}}\n"
    )
    child, parent, grand, own = parse_references(text)
    assert (child.title, child.venue, child.year) == (
        "The Child Paper",
        "Proceedings of the Parent Conference",
        1999,
    )
    # One level: the parent's own crossref does not reach the child.
    assert child.volume is None
    assert (parent.venue, parent.volume) == ("Grand", "7")
    assert (own.venue, own.year) == ("Own Book", 2001)
    assert grand.title == "Grand"


def test_a_crossref_cycle_is_unparsed() -> None:
    text = (
        "@inproceedings{a, title = {A}, crossref = {b}}\n"
        "@inproceedings{b, title = {B}, crossref = {a}}\n"
        "@inproceedings{self, title = {S}, crossref = {self}}\n"
        "@inproceedings{c, title = {C}, crossref = {a}}\n"
        "@inproceedings{d, title = {D}, crossref = {missing}}\n"
    )
    parsed = parse_references(text)
    assert [(r.key, r.unparsed_reason) for r in parsed] == [
        ("a", UnparsedReason.CROSSREF_CYCLE),
        ("b", UnparsedReason.CROSSREF_CYCLE),
        ("self", UnparsedReason.CROSSREF_CYCLE),
        ("c", None),
        ("d", None),
    ]


# ------------------------------------------------------------------ smaller ones


@pytest.mark.parametrize(
    ("macro", "venue"),
    [
        (r"{\apj}", "Astrophysical Journal"),
        (r"{\aj}", "Astronomical Journal"),
        (r"{\mnras}", "Monthly Notices of the Royal Astronomical Society"),
        (r"{\aap}", "Astronomy and Astrophysics"),
        (r"{\apjl}", "Astrophysical Journal Letters"),
        (r"{\prd}", "Physical Review D"),
        (r"{\pasp}", "Publications of the Astronomical Society of the Pacific"),
    ],
)
def test_ads_journal_macros_become_venue_names(macro: str, venue: str) -> None:
    assert one(f"@article{{k, title = {{T}}, journal = {macro}}}").venue == venue


def test_ris_short_title_serves_when_there_is_no_title() -> None:
    assert one("TY  - JOUR\nST  - The short one\nER  - \n").title == "The short one"
    both = "TY  - JOUR\nTI  - The full title\nST  - Short\nER  - \n"
    assert one(both).title == "The full title"


def test_ris_export_numbering_and_trailers_are_not_references() -> None:
    text = (
        "1.\nTY  - JOUR\nTI  - One\nER  - \n\n"
        "<2>\nTY  - JOUR\nTI  - Two\nER  - \n\n"
        "Record 3 of 3\nTY  - JOUR\nTI  - Three\nER  - \n"
        "ER  - \n\x1a\n"
    )
    parsed = parse_references(text)
    assert [r.title for r in parsed] == ["One", "Two", "Three"]
    stray = parse_references("TY  - JOUR\nTI  - One\nER  - \nA stray sentence\n")
    assert [r.unparsed_reason for r in stray] == [None, UnparsedReason.RIS_OUTSIDE_RECORD]


# ------------------------------------------------------------------ where each entry is


def test_every_reference_carries_its_line_and_exact_span() -> None:
    cases = {
        "bibtex": "% head\n\n@article{a,\n title = {One}}\n\n@book{b, title = {Two}}\n",
        "ris": "TY  - JOUR\nTI  - One\nER  - \n\nTY  - BOOK\nTI  - Two\nER  - \n",
        "csl-json": '[\n {"id": "a", "title": "One"},\n\n {"id": "b", "title": "Two"}\n]',
        "text": "Doe J. One. J Things. 2020;1:2.\n\nRoe K. Two. J Stuff. 2021;3:4.\n",
    }
    lines = {"bibtex": [3, 6], "ris": [1, 5], "csl-json": [2, 4], "text": [1, 3]}
    for fmt, text in cases.items():
        parsed = read_references(text, fmt)
        assert [r.line for r in parsed] == lines[fmt], fmt
        for reference in parsed:
            assert reference.span is not None
            start, end = reference.span
            assert text[start:end] == reference.raw, fmt
            assert text.count("\n", 0, start) + 1 == reference.line
        joined = "\n".join(r.raw for r in parsed)
        if fmt == "csl-json":  # each raw is one item: a part's text is their array
            joined = "[" + ",\n".join(r.raw for r in parsed) + "]"
        assert [r.title for r in read_references(joined, fmt)] == ["One", "Two"], fmt
