"""Real bibliographies from public repositories, read entry by entry against independent parsers.

The files, their sources, commits and licences are listed in ``corpus/README.md``.
BibTeX is compared with bibtexparser 2 (its full default stack: ``@string``
resolution and enclosing braces removed), RIS with rispy reading the whole
file, CSL-JSON with the standard library's ``json``. Where a documented rule
departs from what the other parser does, the test says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import bibtexparser
import pytest
import rispy
from bibtexparser.middlewares.names import split_multiple_persons_names
from notanda_openalex import ReferenceFormat, parse_references, read_references
from notanda_openalex._latex import latex_to_text
from notanda_openalex._references import find_doi, normalize_doi

CORPUS = Path(__file__).parent / "corpus"
BIBTEX_FILES = sorted(CORPUS.glob("*.bib"))
RIS_FILES = sorted(CORPUS.glob("*.ris"))


def read(path: Path):  # type: ignore[no-untyped-def]
    return read_references(path.read_text(encoding="utf-8"))


def test_the_corpus_is_listed_with_its_sources() -> None:
    listing = (CORPUS / "README.md").read_text(encoding="utf-8")
    files = [path.name for path in CORPUS.iterdir() if path.name != "README.md"]
    assert len(files) >= 10
    for name in files:
        assert f"`{name}`" in listing, name


@pytest.mark.parametrize("path", BIBTEX_FILES, ids=lambda path: path.name)
def test_bibtex_reads_entry_by_entry_as_bibtexparser_does(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    parsed = read_references(text)
    assert parsed.format is ReferenceFormat.BIBTEX
    library = bibtexparser.parse_string(text)
    theirs = library.entries
    # A repeated key is kept as its own reference (documented); bibtexparser
    # sets the repeat aside as a failed block. Nothing else may differ.
    repeated = [
        block
        for block in library.failed_blocks
        if isinstance(block, bibtexparser.model.DuplicateBlockKeyBlock)
        and isinstance(block.ignore_error_block, bibtexparser.model.Entry)
    ]
    assert len(parsed) == len(theirs) + len(repeated)
    ours = {}
    for reference in parsed:
        ours.setdefault(reference.key, reference)
    assert list(ours) == [entry.key for entry in theirs]
    for entry in theirs:
        reference = ours[entry.key]
        fields = {field.key.lower(): str(field.value) for field in entry.fields}
        start, end = reference.span or (0, 0)
        assert text[start:end] == reference.raw
        assert reference.raw.lstrip().startswith("@")
        if not reference.parsed:  # nothing to look up: only raw and key are kept
            assert not fields.get("title"), entry.key
            assert not fields.get("doi"), entry.key
            continue
        assert reference.entry_type == entry.entry_type.lower()
        if "title" in fields:
            assert reference.title == " ".join(latex_to_text(fields["title"]).split()), entry.key
        if "year" in fields:
            assert reference.year == int(fields["year"]), entry.key
        expected_doi = normalize_doi(fields.get("doi")) or find_doi(fields.get("url"))
        assert reference.doi == expected_doi, entry.key
        people = fields.get("author") or fields.get("editor") or ""
        names = [n for n in split_multiple_persons_names(people) if n.strip() != "others"]
        assert len(reference.authors) == len(names), entry.key


def test_the_acm_template_is_one_check_of_exactly_one_hundred_references() -> None:
    # Its 102 @string definitions (several names defined twice) are not references.
    text = (CORPUS / "acmart-sample-base.bib").read_text(encoding="utf-8")
    parsed = parse_references(text)
    assert len(parsed) == 100
    assert [r.key for r in parsed if not r.parsed] == ["1984:1040142"]  # no title, no DOI


def test_a_jabref_library_keeps_only_its_entries_and_reads_resolver_dois() -> None:
    # @Preamble, @String, free text and JabRef's @Comment{jabref-meta: ...} blocks
    # are not references; a DOI behind doi.acm.org or dx.doi.org reads bare.
    parsed = read(CORPUS / "jabref-complex.bib")
    assert len(parsed) == 20
    assert all(reference.parsed for reference in parsed)
    by_key = {r.key: r for r in parsed}
    assert by_key["1137631"].doi == "10.1145/1137627.1137631"
    assert by_key["1102917"].doi == "10.1007/s00779-005-0347-6"
    # Every one of its 16 doi fields, each behind a resolver, gives a bare DOI.
    dois = [r.doi for r in parsed if r.doi]
    assert len(dois) == 16
    assert all(doi.startswith("10.") for doi in dois)
    assert by_key["deBraga2001"].title.startswith("The postcranial anatomy of Procolophon (")
    assert [(a.particle, a.family, a.given, a.suffix) for a in by_key["10250999"].authors] == [
        ("von", "Hippel", "Eric", None),
        (None, "Reagle", "Joseph M.", "Jr."),
        # "Last, Jr, First" as BibTeX reads it: the fixture's third form puts "Jr." last.
        (None, "Sherry", "Jr.", "John F."),
        ("van den", "Huevel", "Johan A", "Jr."),
    ]
    assert [a.family for a in by_key["1137631"].authors[:3]] == ["Boström", "Wäyrynen", "Bodén"]


def test_a_latex_papers_own_bibliography_reads_as_its_author_wrote_it() -> None:
    parsed = read(CORPUS / "latex-paper-fail-digilat.bib")
    assert len(parsed) == 40
    assert all(reference.parsed for reference in parsed)
    by_key = {r.key: r for r in parsed}
    # "AND" in upper case separates names too; braced accents give one letter each.
    assert [(a.family, a.given) for a in by_key["sela_semhalo"].authors] == [
        ("Šeļa", "Artjoms"),
        ("Plecháč", "Petr"),
        ("Lassche", "Alie"),
    ]
    assert by_key["sela_semhalo"].doi == "10.1371/journal.pone.0266556"
    assert by_key["vanilla_saliency"].arxiv_id == "1312.6034"
    assert by_key["agirrezabal_machine_2016"].title == (
        "Machine Learning for Metrical Analysis of English Poetry"
    )
    assert by_key["agirrezabal_machine_2016"].authors[1].given == "Iñaki"


def test_the_thesis_template_keeps_tex_logos() -> None:
    by_key = {r.key: r for r in read(CORPUS / "thesis-kks32-references.bib")}
    assert by_key["texbook"].title == "The TeXbook"
    assert by_key["latex"].title == "LaTeX: A Document Preparation System"
    assert by_key["cve-2008-1368"].title == "Publication quality tables in LaTeX*"


def test_ads_exports_name_their_journals() -> None:
    parsed = read(CORPUS / "ads-astropy-CITATION.bib")
    assert [(r.key, r.venue, r.year) for r in parsed] == [
        ("astropy:2022", "Astrophysical Journal", 2022),
        ("astropy:2018", "Astronomical Journal", 2018),
        ("astropy:2013", "Astronomy and Astrophysics", 2013),
    ]
    assert parsed[2].authors[0].family == "Astropy Collaboration"
    assert parsed[2].authors[1].family == "Robitaille"


def test_a_better_bibtex_caron_name_is_one_family_name() -> None:
    [reference] = read(CORPUS / "zotero-bbt-caron-152.bib")
    assert ("Brukner", "Časlav") in [(a.family, a.given) for a in reference.authors]
    assert ("Araújo", "Mateus") in [(a.family, a.given) for a in reference.authors]
    assert reference.arxiv_id == "1412.4006"


@pytest.mark.parametrize("path", RIS_FILES, ids=lambda path: path.name)
def test_ris_reads_record_by_record_as_rispy_does(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    parsed = read_references(text)
    assert parsed.format is ReferenceFormat.RIS
    assert all(reference.parsed for reference in parsed)
    # rispy's string reader keeps a byte-order mark and loses the first record
    # behind it (Embase writes one); its file reader strips it, as we do.
    theirs = rispy.loads(text.removeprefix("\ufeff"))
    assert len(parsed) == len(theirs)
    for reference, record in zip(parsed, theirs, strict=True):
        title = record.get("title") or record.get("primary_title") or record.get("short_title")
        assert reference.title == " ".join(title.split())
        dois = record.get("doi")
        assert reference.doi == normalize_doi(dois if isinstance(dois, str) else None)
        written = (record.get("authors") or []) + (record.get("first_authors") or [])
        assert len(reference.authors) == len(written)


def test_embase_names_are_read_family_first() -> None:
    second = read(CORPUS / "ris-embase.ris")[1]
    assert [(a.family, a.given) for a in second.authors[:3]] == [
        ("Eloubeidi", "M. A."),
        ("Cohn", "M."),
        ("Cerfolio", "R. J."),
    ]


def test_ovid_numbering_and_link_lines_are_not_references() -> None:
    parsed = read(CORPUS / "ris-ovid-psycinfo.ris")
    assert [r.line for r in parsed] == [2, 31, 109]
    assert [r.key for r in parsed] == ["2019-65183-001", "2019-29490-001", "2019-19018-006"]


def test_csl_json_reads_item_by_item_as_json_does() -> None:
    path = CORPUS / "zotero-bbt-creators-825.csl.json"
    text = path.read_text(encoding="utf-8")
    parsed = read_references(text)
    assert parsed.format is ReferenceFormat.CSL_JSON
    items = json.loads(text)
    assert len(parsed) == len(items)
    for reference, item in zip(parsed, items, strict=True):
        assert reference.key == item["citation-key"]
        assert reference.title == item.get("title")
        assert reference.doi == normalize_doi(item.get("DOI"))
        assert json.loads(reference.raw) == item
    assert [r.key for r in parsed if not r.parsed] == ["emptybook"]
