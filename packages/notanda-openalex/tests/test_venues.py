"""Venues compared by rule, across fields (issue 20): each part of the rule both ways.

The OpenAlex side is written by hand in OpenAlex's shape: the venue is
``primary_location.source.display_name`` exactly as OpenAlex spells its
sources (years, ordinals, publishers and acronyms in parentheses included).
The references are real works from public bibliographies in security,
systems, human-computer interaction, databases, software engineering,
biology and physics; each correct one must stay verified and the same
reference with another venue must be caught.
"""

from __future__ import annotations

from typing import Any

import pytest
from notanda_openalex import Reference, ReferenceAuthor, ReferenceField, Verdict, Work
from notanda_openalex._matching import VENUE_NAMES, compare, decide_by_title, venues_disagree
from notanda_openalex._secrets import SecretScrubber
from notanda_openalex._works import normalize_work

YEAR = 2026


def openalex_work(
    number: int, title: str, authors: list[str], year: int, venue: str | None
) -> Work:
    """A work as OpenAlex answers it (the fields the check selects)."""
    record: dict[str, Any] = {
        "id": f"https://openalex.org/W{number}",
        "doi": None,
        "title": title,
        "publication_year": year,
        "authorships": [
            {
                "author_position": "first" if rank == 0 else "middle",
                "author": {"display_name": name},
            }
            for rank, name in enumerate(authors)
        ],
        "is_authors_truncated": False,
        "primary_location": {
            "is_oa": False,
            "source": None if venue is None else {"display_name": venue, "type": "conference"},
        },
        "type": "article",
        "is_retracted": False,
    }
    built = normalize_work(record, SecretScrubber(()))
    assert built is not None
    return built


def reference(title: str, families: list[str], year: int, venue: str | None) -> Reference:
    return Reference(
        index=0,
        raw="",
        title=title,
        authors=tuple(ReferenceAuthor(text=name, family=name) for name in families),
        authors_truncated=True,
        year=year,
        venue=venue,
    )


#: (field, title, first authors' family names, year, OpenAlex's venue, the
#: reference's venue as bibliographies write it, another venue that is wrong).
WORKS = [
    ("security", "Spectre Attacks: Exploiting Speculative Execution", ["Kocher", "Horn"], 2019,
     "2019 IEEE Symposium on Security and Privacy (SP)", "IEEE S&P", "NDSS"),
    ("security", "Deep Learning with Differential Privacy", ["Abadi", "Chu"], 2016,
     "Proceedings of the 2016 ACM SIGSAC Conference on Computer and Communications Security",
     "CCS", "USENIX Security"),
    ("security", "Meltdown: Reading Kernel Memory from User Space", ["Lipp", "Schwarz"], 2018,
     "USENIX Security Symposium", "Proceedings of the 27th USENIX Security Symposium", "ACM CCS"),
    ("security", "Keepers of the Machines: Examining How System Administrators Manage Software "
     "Updates For Multiple Machines", ["Tiefenau", "Häring"], 2019,
     "Symposium on Usable Privacy and Security", "SOUPS @ USENIX Security Symposium", "NDSS"),
    ("systems", "Spanner: Google's Globally-Distributed Database", ["Corbett", "Dean"], 2012,
     "USENIX Symposium on Operating Systems Design and Implementation", "OSDI", "SOSP"),
    ("systems", "The Google file system", ["Ghemawat", "Gobioff"], 2003,
     "Proceedings of the nineteenth ACM symposium on Operating systems principles", "SOSP '03",
     "OSDI"),
    ("systems", "Large-scale cluster management at Google with Borg", ["Verma", "Pedrosa"], 2015,
     "Proceedings of the Tenth European Conference on Computer Systems", "EuroSys", "NSDI"),
    ("hci", "Principles of mixed-initiative user interfaces", ["Horvitz"], 1999,
     "Proceedings of the SIGCHI conference on Human Factors in Computing Systems", "CHI", "UIST"),
    ("hci", "Guidelines for Human-AI Interaction", ["Amershi", "Weld"], 2019,
     "Proceedings of the 2019 CHI Conference on Human Factors in Computing Systems",
     "Proceedings of the CHI Conference on Human Factors in Computing Systems", "CSCW"),
    ("web", "Item-based collaborative filtering recommendation algorithms", ["Sarwar", "Karypis"],
     2001, "Proceedings of the tenth international conference on World Wide Web", "WWW", "KDD"),
    ("databases", "Spark SQL: Relational Data Processing in Spark", ["Armbrust", "Xin"], 2015,
     "Proceedings of the 2015 ACM SIGMOD International Conference on Management of Data",
     "SIGMOD", "VLDB"),
    ("data mining", "Isolation Forest", ["Liu", "Ting"], 2008,
     "2008 Eighth IEEE International Conference on Data Mining", "ICDM", "ICDE"),
    ("software engineering", "Are mutants a valid substitute for real faults in software testing?",
     ["Just", "Jalali"], 2014,
     "Proceedings of the 22nd ACM SIGSOFT International Symposium on Foundations of Software "
     "Engineering", "FSE", "ICSE"),
    ("biology", "Fiji: an open-source platform for biological-image analysis",
     ["Schindelin", "Arganda-Carreras"], 2012, "Nature Methods", "Nat. Methods", "Nature"),
    ("biology", "Highly accurate protein structure prediction with AlphaFold", ["Jumper", "Evans"],
     2021, "Nature", "Nature", "Nature Communications"),
    ("physics", "Observation of Gravitational Waves from a Binary Black Hole Merger",
     ["Abbott", "Abbott"], 2016, "Physical Review Letters", "Phys. Rev. Lett.", "Phys. Rev. D"),
]  # fmt: skip


@pytest.mark.parametrize("row", [pytest.param(row, id=f"{row[0]}: {row[5]}") for row in WORKS])
def test_a_correct_venue_stays_verified_and_a_wrong_one_is_caught(row: tuple[Any, ...]) -> None:
    _, title, families, year, theirs, ours, wrong = row
    work = openalex_work(1, title, [*families, "Somebody Else"], year, theirs)
    right = reference(title, families, year, ours)
    assert compare(right, work, current_year=YEAR) == ()
    assert decide_by_title(right, [work], current_year=YEAR).verdict is Verdict.VERIFIED
    altered = reference(title, families, year, wrong)
    assert compare(altered, work, current_year=YEAR) == (ReferenceField.VENUE,)
    decision = decide_by_title(altered, [work], current_year=YEAR)
    assert decision.verdict is Verdict.METADATA_MISMATCH
    assert decision.differs == (ReferenceField.VENUE,)


def test_a_venue_openalex_does_not_give_is_no_difference() -> None:
    title = "Spectre Attacks: Exploiting Speculative Execution"
    work = openalex_work(2, title, ["Paul Kocher", "Jann Horn"], 2019, None)
    for venue in ("IEEE S&P", "Nature", "arXiv"):
        assert compare(reference(title, ["Kocher"], 2019, venue), work, current_year=YEAR) == ()


def test_differs_names_the_venue_only_beside_the_fields_that_really_differ() -> None:
    title = "Isolation Forest"
    work = openalex_work(
        3, title, ["Fei Tony Liu", "Kai Ming Ting"], 2008,
        "2008 Eighth IEEE International Conference on Data Mining",
    )  # fmt: skip
    assert compare(reference(title, ["Liu"], 2009, "IEEE ICDM '08"), work, current_year=YEAR) == (
        ReferenceField.YEAR,
    )
    assert compare(reference(title, ["Liu"], 2009, "KDD"), work, current_year=YEAR) == (
        ReferenceField.YEAR,
        ReferenceField.VENUE,
    )


# Each part of the rule, both ways, on venue names as OpenAlex writes them.
AGREE = {
    "publisher and SIG prefix, Proceedings of the": [
        ("CCS", "Proceedings of the ACM SIGSAC Conference on Computer and Communications Security"),
        ("ACM Conference on Computer and Communications Security",
         "Proceedings of the 2017 ACM SIGSAC Conference on Computer and Communications Security"),
        ("OSDI", "USENIX Symposium on Operating Systems Design and Implementation"),
        ("SOSP", "Proceedings of the ACM SIGOPS Symposium on Operating Systems Principles"),
        ("IEEE Trans. Softw. Eng.", "IEEE Transactions on Software Engineering"),
        ("Commun. ACM", "Communications of the ACM"),
    ],
    "years, ordinals, '23": [
        ("SOSP '19", "Proceedings of the 27th ACM Symposium on Operating Systems Principles"),
        ("ACM CCS '23",
         "Proceedings of the 2023 ACM SIGSAC Conference on Computer and Communications Security"),
        ("Proceedings of the Thirty-Third International Joint Conference on Artificial "
         "Intelligence", "International Joint Conference on Artificial Intelligence"),
        ("14th USENIX Symposium on Operating Systems Design and Implementation (OSDI 20)",
         "Operating Systems Design and Implementation"),
    ],
    "acronym in parentheses": [
        ("ICDM", "2023 IEEE International Conference on Data Mining (ICDM)"),
        ("ICDE", "2023 IEEE 39th International Conference on Data Engineering (ICDE)"),
        ("EuroS&P", "2022 IEEE 7th European Symposium on Security and Privacy (EuroS&P)"),
        ("S&P", "2022 IEEE Symposium on Security and Privacy (SP)"),
        ("OSDI", "16th USENIX Symposium on Operating Systems Design and Implementation (OSDI 22)"),
        ("USENIX Security", "33rd USENIX Security Symposium (USENIX Security 24)"),
    ],
    "acronym written in an event's name": [
        ("CHI", "Proceedings of the CHI Conference on Human Factors in Computing Systems"),
        ("KDD",
         "Proceedings of the 28th ACM SIGKDD Conference on Knowledge Discovery and Data Mining"),
        ("VLDB", "Proceedings of the VLDB Endowment"),
        ("SIGCOMM", "Proceedings of the ACM SIGCOMM 2022 Conference"),
        ("INFOCOM", "IEEE INFOCOM 2022 - IEEE Conference on Computer Communications"),
    ],
    "acronym from the significant words": [
        ("SOUPS", "Symposium on Usable Privacy and Security"),
        ("NDSS", "Proceedings 2022 Network and Distributed System Security Symposium"),
        ("ASPLOS", "Proceedings of the 28th ACM International Conference on Architectural Support "
         "for Programming Languages and Operating Systems, Volume 2"),
        ("UIST", "Proceedings of the 35th Annual ACM Symposium on User Interface Software and "
         "Technology"),
        ("ICSE", "Proceedings of the 44th International Conference on Software Engineering"),
        ("USENIX ATC", "USENIX Annual Technical Conference"),
        ("FAST", "USENIX Conference on File and Storage Technologies"),
        ("RecSys", "Proceedings of the 16th ACM Conference on Recommender Systems"),
        ("ICWSM", "Proceedings of the International AAAI Conference on Web and Social Media"),
        ("TOCHI", "ACM Transactions on Computer-Human Interaction"),
        ("ESORICS", "European Symposium on Research in Computer Security"),
        ("STOC", "Symposium on the Theory of Computing"),
        ("ACSAC", "Annual Computer Security Applications Conference"),
    ],
    "exceptions table": [
        ("WWW", "Proceedings of the ACM Web Conference"),
        ("WWW '22", "Proceedings of the ACM Web Conference 2022"),
        ("CHI", "Human Factors in Computing Systems"),
        ("EuroSys", "Proceedings of the Eighteenth European Conference on Computer Systems"),
        ("SIGMOD", "Proceedings of the ACM on Management of Data"),
        ("PLDI", "Proceedings of the ACM on Programming Languages"),
        ("FSE", "Proceedings of the ACM on Software Engineering"),
        ("CSCW", "Proceedings of the ACM on Human-Computer Interaction"),
        ("NAACL", "Proceedings of the 2019 Conference of the North"),
        ("ACM MM", "Proceedings of the 30th ACM International Conference on Multimedia"),
        ("SIGCSE", "Proceedings of the 53rd ACM Technical Symposium on Computer Science Education"),
        ("MobiSys", "Proceedings of the 20th Annual International Conference on Mobile Systems, "
         "Applications and Services"),
    ],
    "qualified forms": [
        ("CHI Extended Abstracts",
         "Extended Abstracts of the CHI Conference on Human Factors in Computing Systems"),
        ("ICSE Companion", "Proceedings of the IEEE/ACM International Conference on Software "
         "Engineering: Companion Proceedings"),
        ("ICSE Companion", "2022 IEEE/ACM 44th International Conference on Software Engineering: "
         "Companion Proceedings (ICSE-Companion)"),
        ("SOUPS @ USENIX Security Symposium", "Symposium on Usable Privacy and Security"),
        ("ICSE '22: Proceedings of the 44th International Conference on Software Engineering",
         "Proceedings of the 44th International Conference on Software Engineering"),
        ("CCS '19: Proceedings of the 2019 ACM SIGSAC Conference on Computer and Communications "
         "Security", "Computer and Communications Security"),
        ("CVPR Workshops", "2022 IEEE/CVF Conference on Computer Vision and Pattern Recognition "
         "Workshops (CVPRW)"),
        ("Findings of EMNLP",
         "Findings of the Association for Computational Linguistics: EMNLP 2021"),
    ],
    "journal abbreviations and OpenAlex's spellings": [
        ("Nat. Commun.", "Nature Communications"),
        ("Phys. Rev. D", "Physical review. D. Particles, fields, gravitation, and cosmology/"
         "Physical review. D, Particles, fields, gravitation, and cosmology"),
        ("Phys. Rev. B", "Physical review. B./Physical review. B"),
        ("Proc. R. Soc. A", "Proceedings of the Royal Society A: Mathematical, Physical and "
         "Engineering Sciences"),
        ("Mon. Not. R. Astron. Soc.", "Monthly Notices of the Royal Astronomical Society"),
        ("Nucleic Acids Res.", "Nucleic Acids Research"),
        ("PLoS Comput. Biol.", "PLoS Computational Biology"),
        ("Sci. Adv.", "Science Advances"),
        ("Proceedings of the National Academy of Sciences of the United States of America",
         "Proceedings of the National Academy of Sciences"),
    ],
    "not a venue: repositories and series of proceedings": [
        ("CCS", "Zenodo (CERN European Organization for Nuclear Research)"),
        ("SOUPS", "HAL (Le Centre pour la Communication Scientifique Directe)"),
        ("Workshop on Semantic Web", "CEUR Workshop Proceedings"),
        ("ICALP", "Leibniz International Proceedings in Informatics"),
        ("PLDI '09", "ACM SIGPLAN Notices"),
        ("SOSP", "ACM SIGOPS Operating Systems Review"),
        ("CHI", "Proceedings"),
        ("Proceedings", "Nature"),
    ],
}  # fmt: skip

DISAGREE = {
    "publisher and SIG prefix, Proceedings of the": [
        ("CCS", "USENIX Security Symposium"),
        ("USENIX Security",
         "Proceedings of the ACM SIGSAC Conference on Computer and Communications Security"),
        ("OSDI", "Proceedings of the ACM SIGOPS Symposium on Operating Systems Principles"),
        ("IEEE Trans. Softw. Eng.", "ACM Transactions on Software Engineering and Methodology"),
        ("Commun. ACM", "ACM Computing Surveys"),
        ("CCS", "Communications of the ACM"),
    ],
    "years, ordinals, '23": [
        ("SOSP '19", "USENIX Symposium on Operating Systems Design and Implementation"),
        ("ACM CCS '23", "Network and Distributed System Security Symposium"),
        ("Proceedings of the Thirty-Third International Joint Conference on Artificial "
         "Intelligence", "Proceedings of the AAAI Conference on Artificial Intelligence"),
        ("TSE", "Proceedings of the 44th International Conference on Software Engineering"),
    ],
    "acronym in parentheses": [
        ("ICDE", "2023 IEEE International Conference on Data Mining (ICDM)"),
        ("ICDM", "2023 IEEE 39th International Conference on Data Engineering (ICDE)"),
        ("EuroS&P", "2022 IEEE Symposium on Security and Privacy (SP)"),
        ("SOSP", "2022 IEEE Symposium on Security and Privacy (SP)"),
        ("CCS", "33rd USENIX Security Symposium (USENIX Security 24)"),
        ("ICML", "2022 21st IEEE International Conference on Machine Learning and Applications "
         "(ICMLA)"),
    ],
    "acronym written in an event's name": [
        ("UIST", "Proceedings of the CHI Conference on Human Factors in Computing Systems"),
        ("WWW",
         "Proceedings of the 28th ACM SIGKDD Conference on Knowledge Discovery and Data Mining"),
        ("SIGMOD", "Proceedings of the VLDB Endowment"),
        ("MobiCom", "Proceedings of the ACM SIGCOMM 2022 Conference"),
    ],
    "a journal's name is not an acronym": [
        ("Nature", "Nature Communications"),
        ("NATURE", "Nature Communications"),
        ("JAMA", "JAMA Network Open"),
        ("PNAS", "PNAS Nexus"),
        ("BMJ", "BMJ Open"),
        ("Cell", "Cell Reports"),
        ("Science", "Science Advances"),
    ],
    "acronym from the significant words": [
        ("NAACL", "Knowledge Discovery and Data Mining"),
        ("NAACL",
         "Proceedings of the 28th ACM SIGKDD Conference on Knowledge Discovery and Data Mining"),
        ("NSDI", "Operating Systems Design and Implementation"),
        ("ASE", "2023 IEEE/ACM 45th International Conference on Software Engineering (ICSE)"),
        ("ICMLA", "International Conference on Machine Learning"),
        ("EMNLP", "The Lancet"),
        ("EMNLP", "JAMA Internal Medicine"),
    ],
    "exceptions table": [
        ("ACL", "Proceedings of the 2022 Conference of the North American Chapter of the "
         "Association for Computational Linguistics: Human Language Technologies"),
        ("ICML", "Transactions on Machine Learning Research"),
        ("ICCV", "International Journal of Computer Vision"),
        ("KDD", "Proceedings of the ACM Web Conference 2022"),
        ("PLDI", "Proceedings of the ACM on Software Engineering"),
        ("CHI", "Proceedings of the ACM on Human-Computer Interaction"),
        ("EuroSys", "Symposium on Operating Systems Principles"),
        ("MM", "IEEE Transactions on Multimedia"),
    ],
    "qualified forms": [
        ("CHI Extended Abstracts",
         "Proceedings of the 35th Annual ACM Symposium on User Interface Software and Technology"),
        ("ICSE Companion", "Proceedings of the ACM on Software Engineering"),
        ("SOUPS @ USENIX Security Symposium",
         "Proceedings of the ACM SIGSAC Conference on Computer and Communications Security"),
        ("ICSE '22: Proceedings of the 44th International Conference on Software Engineering",
         "Proceedings of the 30th ACM Joint European Software Engineering Conference and "
         "Symposium on the Foundations of Software Engineering"),
        ("Findings of EMNLP", "Proceedings of the 60th Annual Meeting of the Association for "
         "Computational Linguistics (Volume 1: Long Papers)"),
    ],
    "journal abbreviations and OpenAlex's spellings": [
        ("Phys. Rev. B", "Physical review. D/Physical review. D."),
        ("Phys. Rev.", "Physical Review Letters"),
        ("Proc. R. Soc. A", "Proceedings of the Royal Society B: Biological Sciences"),
        ("Genome Research", "Genome Biology"),
        ("IEEE Transactions on Information Forensics and Security",
         "IEEE Transactions on Dependable and Secure Computing"),
    ],
    "preprint servers": [
        ("AISTATS", "bioRxiv (Cold Spring Harbor Laboratory)"),
        ("IEEE S&P", "arXiv (Cornell University)"),
        ("bioRxiv", "Nature Methods"),
    ],
}  # fmt: skip


def _cases(table: dict[str, list[tuple[str, str]]]) -> list[Any]:
    return [
        pytest.param(ours, theirs, id=f"{part}: {ours} | {theirs[:40]}")
        for part, pairs in table.items()
        for ours, theirs in pairs
    ]


@pytest.mark.parametrize(("ours", "theirs"), _cases(AGREE))
def test_venues_that_name_the_same_venue_agree(ours: str, theirs: str) -> None:
    assert not venues_disagree(ours, theirs)


@pytest.mark.parametrize(("ours", "theirs"), _cases(DISAGREE))
def test_venues_that_name_different_venues_disagree(ours: str, theirs: str) -> None:
    assert venues_disagree(ours, theirs)


def test_every_part_of_the_rule_is_tested_both_ways() -> None:
    shared = set(AGREE) & set(DISAGREE)
    assert shared >= {
        "publisher and SIG prefix, Proceedings of the",
        "years, ordinals, '23",
        "acronym in parentheses",
        "acronym written in an event's name",
        "acronym from the significant words",
        "exceptions table",
        "qualified forms",
        "journal abbreviations and OpenAlex's spellings",
    }


def test_every_row_of_the_exceptions_table_is_a_venue_of_its_own() -> None:
    """Each row's acronym agrees with each of its long names, and with no other row's."""
    for row, names in enumerate(VENUE_NAMES):
        acronym, *long_names = names
        for long_name in long_names:
            assert not venues_disagree(acronym.upper(), long_name.title()), (acronym, long_name)
        for other, other_names in enumerate(VENUE_NAMES):
            if other == row:
                continue
            for long_name in other_names[1:]:
                if long_name in long_names:
                    continue  # the PACM journals publish several conferences
                assert venues_disagree(acronym.upper(), long_name.title()), (acronym, long_name)
