"""The matching rules on their own: titles, authors, years, venues, choosing a candidate."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from conftest import fixture_json, fixture_names
from notanda_openalex import Reference, ReferenceAuthor, ReferenceField, Verdict, Work
from notanda_openalex._matching import (
    compare,
    decide_by_title,
    normalize_text,
    title_query,
    titles_agree,
    venues_disagree,
)
from notanda_openalex._secrets import SecretScrubber
from notanda_openalex._works import normalize_work

YEAR = 2026


def work(record: dict[str, Any]) -> Work:
    built = normalize_work(record, SecretScrubber(()))
    assert built is not None
    return built


def synthetic(
    number: int,
    title: str,
    names: list[str],
    *,
    year: int | None = 2020,
    venue: str | None = None,
    doi: str | None = None,
    kind: str = "article",
) -> Work:
    return work(
        {
            "id": f"https://openalex.org/W{number}",
            "doi": doi,
            "title": title,
            "publication_year": year,
            "authorships": [{"author": {"display_name": name}} for name in names],
            "primary_location": {"source": {"display_name": venue}} if venue else None,
            "type": kind,
        }
    )


def names(*families: str) -> tuple[ReferenceAuthor, ...]:
    return tuple(ReferenceAuthor(text=family, family=family) for family in families)


def ref(**fields: Any) -> Reference:
    return Reference(index=0, raw="", **fields)


# ------------------------------------------------------------------ titles


def test_normalize_text_folds_case_punctuation_diacritics_html_and_compatibility_forms() -> None:
    assert normalize_text("<i>Planck</i>2018 results") == "planck 2018 results"
    assert (
        normalize_text("\uff25\uff46\uff46icient  Caf\u00e9\u2014Stra\u00dfe & co.")
        == "efficient cafe strasse and co"
    )
    assert normalize_text("\ufb01nite") == "finite"


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("the state of oa a large scale analysis", "The State of OA: A Large-Scale Analysis"),
        ("Modelling the spread", "Modeling the spread"),
        ("A survey of the methods", "Survey of methods"),
        (
            "3D visualisations should not be displayed alone: encouraging multivocality",
            "3D Visualisations Should Not be Displayed Alone - Encouraging Multivocality",
        ),
        ("Attention is all you need", "Attention is all you need: a retrospective"),
    ],
)
def test_titles_that_agree(ours: str, theirs: str) -> None:
    assert titles_agree(ours, theirs)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("Attention is all you want", "Attention is all you need"),
        ("Deep residual learning", "Deep recurrent learning"),
        ("Results of 2018", "Results of 2019"),
        ("Planck results", "Planck 2018 results: cosmology"),
        # Two real titles merged into one: the reference adds a subtitle.
        (
            "Biodiversity hotspots for conservation priorities: initial sequencing of the genome",
            "Biodiversity hotspots for conservation priorities",
        ),
        (
            "Biodiversity hotspots for conservation planning",
            "Biodiversity hotspots for conservation priorities",
        ),
    ],
)
def test_titles_that_differ(ours: str, theirs: str) -> None:
    assert not titles_agree(ours, theirs)


def test_title_query_keeps_only_letters_and_digits() -> None:
    query = title_query('Does X, or Y | Z, improve "A*"? !Not: a 50% rise')
    assert query == "Does X or Y Z improve A Not a 50 rise"
    assert title_query("?!*") is None
    long = title_query("word " * 200)
    assert long is not None
    assert len(long) <= 300
    assert not long.endswith(" ")


# ----------------------------------------------------------------- authors


def test_real_authors_agree_despite_initials_diacritics_and_particles() -> None:
    myers = work(fixture_json("work_W2162348455_2026-05.json"))
    reference = ref(
        title=myers.title,
        authors=(
            ReferenceAuthor(text="Myers N", family="Myers", given="N"),
            ReferenceAuthor(text="Mittermeier RA", family="Mittermeier", given="R A"),
            ReferenceAuthor(text="Mittermeier CG", family="Mittermeier", given="C G"),
            ReferenceAuthor(text="da Fonseca GAB", family="Fonseca", particle="da"),
            ReferenceAuthor(text="Kent J", family="Kent", given="J"),
        ),
        year=2000,
        venue="Nature",
    )
    assert compare(reference, myers, current_year=YEAR) == ()
    piwowar = work(fixture_json("work_W2741809807_2025-10.json"))
    # OpenAlex spells him "Lariviére", the reference "Larivière": both fold to "lariviere".
    reference = ref(
        authors=names("Piwowar", "Priem", "Larivière", "Alperin"), authors_truncated=True
    )
    assert compare(reference, piwowar, current_year=YEAR) == ()


def test_author_lists_that_differ() -> None:
    target = synthetic(1, "T", ["Ada Lovelace", "Charles Babbage", "Mary Somerville"])
    swapped = ref(authors=names("Babbage", "Lovelace", "Somerville"))
    partial = ref(authors=names("Lovelace", "Babbage"))
    placeholder = ref(authors=names("Doe", "Smith", "Author"))
    longer = ref(authors=names("Lovelace", "Babbage", "Somerville", "Herschel"))
    for reference in (swapped, partial, placeholder, longer):
        assert compare(reference, target, current_year=YEAR) == (ReferenceField.AUTHORS,)
    # "et al." lets the list be shorter, never different.
    assert (
        compare(ref(authors=names("Lovelace"), authors_truncated=True), target, current_year=YEAR)
        == ()
    )
    # Family name first ("Zhang Wei") and last ("Wei Zhang") both agree.
    assert (
        compare(ref(authors=names("Zhang")), synthetic(2, "T", ["Zhang Wei"]), current_year=YEAR)
        == ()
    )


def test_a_work_without_authors_is_not_compared_on_authors() -> None:
    # OpenAlex lists no author for many books and chapters ("Classical Electrodynamics", 2020).
    book = synthetic(1, "Classical Electrodynamics", [], year=2020)
    assert compare(ref(authors=names("Jackson")), book, current_year=YEAR) == ()


def test_html_entities_in_an_openalex_title_do_not_count() -> None:
    assert titles_agree("Rock & roll: a history", "Rock &amp; Roll: A History")
    assert titles_agree("CO2 and climate", "CO<sub>2</sub> and climate")


def test_provider_truncated_author_list_is_not_a_difference() -> None:
    record = {
        "id": "https://openalex.org/W9",
        "title": "Big",
        "authorships": [{"author": {"display_name": f"Person Number{i}"}} for i in range(3)],
        "is_authors_truncated": True,
    }
    reference = ref(authors=names("Number0", "Number1", "Number2", "Number3"))
    assert compare(reference, work(record), current_year=YEAR) == ()


# ------------------------------------------------------------- year, venue


def test_year_differs_when_wrong_or_in_the_future() -> None:
    target = synthetic(1, "T", [], year=2020)
    assert compare(ref(year=2019), target, current_year=YEAR) == (ReferenceField.YEAR,)
    assert compare(ref(year=2031), synthetic(2, "T", [], year=None), current_year=YEAR) == (
        ReferenceField.YEAR,
    )
    assert compare(ref(year=2020), target, current_year=YEAR) == ()


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("NeurIPS", "Neural Information Processing Systems"),
        (
            "Advances in Neural Information Processing Systems 30",
            "Neural Information Processing Systems",
        ),
        ("Phys. Rev. Lett.", "Physical Review Letters"),
        (
            "IEEE Trans. Pattern Anal. Mach. Intell.",
            "IEEE Transactions on Pattern Analysis and Machine Intelligence",
        ),
        ("JMLR", "Journal of Machine Learning Research"),
        ("N Engl J Med", "New England Journal of Medicine"),
        ("Proc. Natl. Acad. Sci. U.S.A.", "Proceedings of the National Academy of Sciences"),
        ("The Lancet", "Lancet"),
        ("arXiv preprint arXiv:2108.04680", "arXiv (Cornell University)"),
        ("CoRR", "arXiv (Cornell University)"),
        ("Computer Vision - ECCV 2018", "Lecture notes in computer science"),
        ("Handbook of Climate Change", "Springer eBooks"),
        ("Journal of Structural Geology", "DOAJ (DOAJ: Directory of Open Access Journals)"),
    ],
)
def test_venues_that_are_no_clear_disagreement(ours: str, theirs: str) -> None:
    assert not venues_disagree(ours, theirs)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("Science", "Nature"),
        ("Nature Communications", "Nature"),
        ("IEEE Transactions on Visualization and Computer Graphics", "arXiv (Cornell University)"),
        ("bioRxiv", "Cell"),
        ("medRxiv", "arXiv (Cornell University)"),
        ("Journal of Informetrics", "PeerJ"),
    ],
)
def test_venues_that_clearly_disagree(ours: str, theirs: str) -> None:
    assert venues_disagree(ours, theirs)


# --------------------------------------------------------------- choosing


def test_the_twin_whose_year_and_venue_agree_wins() -> None:
    preprint = synthetic(
        1,
        "Same title here",
        ["Ada Lovelace"],
        year=2020,
        venue="arXiv (Cornell University)",
        kind="preprint",
    )
    published = synthetic(
        2, "Same title here", ["Ada Lovelace"], year=2021, venue="Journal of Engines"
    )
    cited_published = ref(
        title="Same title here", authors=names("Lovelace"), year=2021, venue="J. Engines"
    )
    cited_preprint = ref(
        title="Same title here", authors=names("Lovelace"), year=2020, venue="arXiv"
    )
    assert decide_by_title(cited_published, [preprint, published], current_year=YEAR).chosen == 1
    decision = decide_by_title(cited_preprint, [published, preprint], current_year=YEAR)
    assert (decision.verdict, decision.chosen) == (Verdict.VERIFIED, 1)
    # Nothing tells them apart: the published version is the one cited.
    bare = decide_by_title(ref(title="Same title here"), [preprint, published], current_year=YEAR)
    assert (bare.verdict, bare.chosen) == (Verdict.VERIFIED, 1)


def test_two_different_works_with_one_title_are_ambiguous() -> None:
    one = synthetic(1, "Introduction", ["Ada Lovelace"], year=2020, venue="Journal A")
    two = synthetic(2, "Introduction", ["Charles Babbage"], year=2020, venue="Journal B")
    decision = decide_by_title(ref(title="Introduction", year=2020), [one, two], current_year=YEAR)
    assert decision.verdict is Verdict.AMBIGUOUS
    assert decision.chosen is None


def test_near_miss_title_needs_agreeing_authors() -> None:
    target = synthetic(
        1,
        "Biodiversity hotspots for conservation priorities",
        ["Norman Myers", "Jennifer Kent"],
        year=2000,
    )
    near = "Biodiversity hotspots for conservation planning"
    with_authors = decide_by_title(
        ref(title=near, authors=names("Myers", "Kent"), year=2000), [target], current_year=YEAR
    )
    assert (with_authors.verdict, with_authors.differs) == (
        Verdict.METADATA_MISMATCH,
        (ReferenceField.TITLE,),
    )
    assert (
        decide_by_title(ref(title=near), [target], current_year=YEAR).verdict is Verdict.NOT_FOUND
    )
    other = decide_by_title(ref(title=near, authors=names("Smith")), [target], current_year=YEAR)
    assert other.verdict is Verdict.NOT_FOUND
    chimeric = decide_by_title(
        ref(title="Marine fishery collapse in the tropics", authors=names("Myers", "Kent")),
        [target],
        current_year=YEAR,
    )
    assert chimeric.verdict is Verdict.NOT_FOUND


# ------------------------------------------- every real work in the fixtures


def _fixture_works() -> list[Work]:
    works = []
    for name in fixture_names("*.json"):
        data = fixture_json(name)
        records = data.get("results", [data] if "id" in data else [])
        for record in records:
            built = normalize_work(record, SecretScrubber(()))
            if built is not None and built.title:
                works.append(built)
    return works


def _as_reference(target: Work) -> Reference:
    """The reference a careful author writes for *target*: family names only."""
    authors = tuple(
        ReferenceAuthor(text=author.name, family=author.name.split()[-1])
        for author in target.authors
        if author.name
    )
    return ref(
        title=target.title,
        authors=authors,
        authors_truncated=(target.authors_total or 0) > len(authors),
        year=target.publication_year,
        venue=target.venue,
        doi=target.doi,
    )


def test_every_real_work_verifies_against_itself_and_one_change_is_caught() -> None:
    works = _fixture_works()
    assert len(works) > 100
    for target in works:
        reference = _as_reference(target)
        decision = decide_by_title(reference, [target], current_year=YEAR)
        assert (decision.verdict, decision.differs) == (Verdict.VERIFIED, ()), target.openalex_id
        words = (target.title or "").split()
        if len(words) >= 4:
            words[len(words) // 2] = "xylophone"
            changed = replace(reference, title=" ".join(words))
            assert ReferenceField.TITLE in compare(changed, target, current_year=YEAR)
        if target.publication_year is not None:
            later = replace(reference, year=target.publication_year + 1)
            assert compare(later, target, current_year=YEAR) == (ReferenceField.YEAR,)
        if len(reference.authors) >= 2 and not reference.authors_truncated:
            shorter = replace(reference, authors=reference.authors[:-1])
            assert compare(shorter, target, current_year=YEAR) == (ReferenceField.AUTHORS,)
