"""The rules that compare a parsed reference with OpenAlex works. Pure.

This module owns what "the same title", "the same authors", "the same year"
and "the same venue" mean when a reference is checked, and how one work is
chosen among several candidates. It does no I/O and reads no clock: the
current year is an argument. Every rule and threshold here is written down in
``docs/reference-checking.md`` ("Rules"); change both together.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from ._references import Reference
from ._vocabulary import Verdict
from ._works import Work

__all__ = [
    "NEAR_TITLE_SCORE",
    "SPELLING_VARIANT_SCORE",
    "VENUE_FUZZY_SCORE",
    "Decision",
    "ReferenceField",
    "compare",
    "decide",
    "normalize_text",
    "title_query",
    "title_score",
    "titles_agree",
]

#: A candidate whose normalized title scores at least this (rapidfuzz
#: ``fuzz.ratio``, 0 to 100) against the reference's is a near-miss title.
NEAR_TITLE_SCORE = 85.0
#: Two words that score at least this against each other are spellings of
#: one word (``modelling`` / ``modeling``), not a changed word.
SPELLING_VARIANT_SCORE = 80.0
#: Two venue names (after normalization) that score at least this agree.
VENUE_FUZZY_SCORE = 90.0
#: The longest title sent in one lookup, in characters (cut at a word).
TITLE_QUERY_MAX = 300
#: A main title shorter than this many words does not stand for a title with a subtitle.
_MAIN_TITLE_MIN_WORDS = 3


class ReferenceField(StrEnum):
    """A field of a reference that can disagree with the matched work."""

    DOI = "doi"
    TITLE = "title"
    AUTHORS = "authors"
    YEAR = "year"
    VENUE = "venue"


#: Words that may be added or dropped in a title without changing it.
_TITLE_STOPWORDS = frozenset({"a", "an", "the", "of", "and", "in", "on", "for", "to", "with"})
#: Words left out when venue names are compared.
_VENUE_STOPWORDS = frozenset(
    {"a", "an", "the", "of", "and", "in", "on", "for", "to", "at", "de", "la", "und", "der"}
)
#: Words that say what kind of event or volume a venue is, not which one.
_VENUE_GENERIC = frozenset(
    {
        "proceedings",
        "proc",
        "advances",
        "annual",
        "conference",
        "conf",
        "international",
        "intl",
        "int",
        "symposium",
        "symp",
        "workshop",
        "meeting",
        "th",
        "st",
        "nd",
        "rd",
    }
)
#: Names of preprint servers and repositories (normalized tokens): a venue
#: naming one of these is a preprint, one naming none is not.
_PREPRINT_SERVERS = (
    ("arxiv",),
    ("corr",),
    ("biorxiv",),
    ("medrxiv",),
    ("chemrxiv",),
    ("psyarxiv",),
    ("socarxiv",),
    ("edarxiv",),
    ("engrxiv",),
    ("eartharxiv",),
    ("ssrn",),
    ("research", "square"),
    ("osf", "preprints"),
    ("preprints", "org"),
    ("preprints",),
    ("techrxiv",),
    ("authorea",),
)
#: Two names of one server: DBLP calls arXiv "CoRR".
_SAME_SERVER = {("corr",): ("arxiv",), ("preprints", "org"): ("preprints",)}
#: OpenAlex "venues" that are a publisher's collection, a book series or an
#: index rather than the journal or conference a reference names: not compared.
_NOT_A_VENUE = (
    ("ebooks",),
    ("lecture", "notes"),
    ("doaj",),
    ("pubmed",),
    ("europe", "pmc"),
    ("citeseerx",),
    ("citeseer", "x"),
    ("semantic", "scholar"),
    ("osti", "oai"),
)
#: Venues known by a short name that is not the initials of the long one.
_VENUE_ALIASES: tuple[tuple[str, ...], ...] = (
    ("neurips", "nips", "neural information processing systems"),
    ("icml", "machine learning"),
    ("iclr", "learning representations"),
    ("cvpr", "computer vision and pattern recognition"),
    ("iccv", "computer vision"),
    ("eccv", "european computer vision"),
    ("acl", "association for computational linguistics"),
    ("naacl", "north american chapter of association for computational linguistics"),
    ("emnlp", "empirical methods in natural language processing"),
    ("aaai", "aaai artificial intelligence"),
    ("ijcai", "joint artificial intelligence"),
    ("kdd", "knowledge discovery and data mining"),
    ("sigir", "research and development in information retrieval"),
    ("www", "world wide web"),
    ("pnas", "national academy of sciences"),
    ("nejm", "new england journal of medicine", "n engl j med"),
    ("jama", "journal of american medical association"),
    ("bmj", "british medical journal"),
    ("jmlr", "journal of machine learning research"),
    ("tpami", "ieee transactions pattern analysis and machine intelligence"),
)

#: A country written after a venue's name (``Proc. Natl. Acad. Sci. U.S.A.``).
_VENUE_SUFFIXES = (("u", "s", "a"), ("usa",))

_HTML_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>")
#: A boundary between a letter and a digit: ``CO2`` and ``CO<sub>2</sub>`` read alike.
_LETTER_DIGIT = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")
_NUMBER = re.compile(r"^[0-9]+(?:st|nd|rd|th)?$")


@functools.lru_cache(maxsize=4096)
def normalize_text(text: str) -> str:
    """Return *text* folded for comparison.

    Unicode NFKC, HTML entities decoded and tags removed (OpenAlex titles carry ``<i>`` and
    ``<sup>``), case folded, diacritics removed (NFKD without combining
    marks), ``&`` read as ``and``, every character that is not a letter or a
    digit turned into a space (so punctuation and subtitle separators do not
    count), a space put between a letter and a digit that touch (``CO2`` is
    ``co 2``, as ``CO<sub>2</sub>`` is), whitespace collapsed.
    """
    text = _HTML_TAG.sub(" ", html.unescape(unicodedata.normalize("NFKC", text))).casefold()
    text = "".join(
        char
        for char in unicodedata.normalize("NFKD", text.replace("&", " and "))
        if not unicodedata.combining(char)
    )
    text = text.replace("ß", "ss").replace("ø", "o").replace("đ", "d").replace("ł", "l")
    kept = "".join(char if char.isalnum() else " " for char in text)
    return " ".join(_LETTER_DIGIT.sub(" ", kept).split())


def _main_title(title: str) -> str | None:
    """The part of *title* before its first subtitle separator, normalized."""
    match = re.search(r"\s*(?::|\s[-\u2013\u2014]\s|\u2014|\.\s|\?\s|!\s)", title)
    if match is None:
        return None
    main = normalize_text(title[: match.start()])
    return main if len(main.split()) >= _MAIN_TITLE_MIN_WORDS else None


def title_score(reference_title: str, work_title: str) -> float:
    """Return rapidfuzz ``fuzz.ratio`` (0 to 100) of the two normalized titles."""
    # rapidfuzz is imported where it is used: its native library adds about
    # 3.5 MiB resident to a server that only searches, which never compares titles (issue 11).
    from rapidfuzz import fuzz  # noqa: PLC0415 - loaded on the first comparison

    return float(fuzz.ratio(normalize_text(reference_title), normalize_text(work_title)))


def _words_agree(ours: list[str], theirs: list[str]) -> bool:
    """Whether two word lists differ only by stopwords and spelling variants."""
    from rapidfuzz import fuzz  # noqa: PLC0415 - as in title_score
    from rapidfuzz.distance import Levenshtein  # noqa: PLC0415

    for opcode in Levenshtein.opcodes(ours, theirs):
        tag = opcode.tag
        if tag == "equal":
            continue
        left = ours[opcode.src_start : opcode.src_end]
        right = theirs[opcode.dest_start : opcode.dest_end]
        if tag == "replace" and len(left) == len(right):
            if all(
                fuzz.ratio(a, b) >= SPELLING_VARIANT_SCORE and not (a.isdigit() or b.isdigit())
                for a, b in zip(left, right, strict=True)
            ):
                continue
            return False
        if tag in ("insert", "delete") and all(word in _TITLE_STOPWORDS for word in left + right):
            continue
        return False
    return True


def titles_agree(reference_title: str, work_title: str) -> bool:
    """Whether the reference's title is the work's title.

    Equal after :func:`normalize_text`, or differing only by words in
    ``_TITLE_STOPWORDS`` added or dropped and by spelling variants (two words
    scoring at least :data:`SPELLING_VARIANT_SCORE`, neither a number), or the
    reference's title is the work's main title (the part before a subtitle
    separator, at least three words): a reference may leave the subtitle out,
    but not add one.
    """
    ours, theirs = normalize_text(reference_title), normalize_text(work_title)
    if ours == theirs:
        return True
    if _words_agree(ours.split(), theirs.split()):
        return True
    # Only the reference may leave a subtitle out: a reference that adds one
    # to a real title may be two titles merged into one.
    return ours == _main_title(work_title)


def title_query(title: str) -> str | None:
    """Return the ``title.search`` value for *title*, or ``None`` when nothing is left.

    Letters and digits only (diacritics kept: OpenAlex folds them itself), so
    that no comma, pipe, colon, wildcard or negation sign reaches the filter,
    cut at a word to :data:`TITLE_QUERY_MAX` characters.
    """
    text = unicodedata.normalize("NFKC", _HTML_TAG.sub(" ", title))
    words = "".join(char if char.isalnum() else " " for char in text).split()
    kept: list[str] = []
    length = 0
    for word in words:
        length += len(word) + (1 if kept else 0)
        if length > TITLE_QUERY_MAX:
            break
        kept.append(word)
    return " ".join(kept) or None


# ----------------------------------------------------------------- authors


#: Generational suffixes, as folded words, that may end a written family name.
_GENERATIONAL = frozenset({"jr", "sr", "ii", "iii", "iv"})


def _name_tokens(text: str | None) -> tuple[str, ...]:
    return tuple(normalize_text(text).split()) if text else ()


def _contains(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    size = len(needle)
    return size > 0 and any(
        haystack[start : start + size] == needle for start in range(len(haystack) - size + 1)
    )


def _author_agrees(family: str, work_name: str | None) -> bool:
    """A reference family name agrees with a work author's display name.

    The folded family name (hyphens and particles split into words) appears
    as consecutive words of the folded display name, wherever it stands:
    display names come as ``Given Family`` and as ``Family Given``. A family
    name ending in a generational suffix (``Casey Jr``) also agrees without
    it. A work author without a name cannot disagree.
    """
    if work_name is None:
        return True
    written, held = _name_tokens(family), _name_tokens(work_name)
    if _contains(held, written):
        return True
    # Google Scholar leaves the suffix in the family part (``Casey Jr, HC``).
    return len(written) > 1 and written[-1] in _GENERATIONAL and _contains(held, written[:-1])


def authors_agree(reference: Reference, work: Work) -> bool:
    """Whether the reference's author list is the work's.

    The *i*-th reference family name must agree with the *i*-th work author
    (as far as the work lists names). Without ``et al.`` the lists must be
    as long as each other (``authors_total``); with it, the reference may be
    shorter, never longer. When OpenAlex cut the list itself, a longer
    reference list is not a difference; when it lists no author at all,
    there is nothing to compare.
    """
    names = reference.authors
    if not names or not work.authors:
        # OpenAlex lists no author for many books, chapters and reports.
        return True
    for family, author in zip(
        (name.family for name in names), (author.name for author in work.authors), strict=False
    ):
        if not _author_agrees(family, author):
            return False
    total = work.authors_total
    if total is None:
        return True
    if len(names) > total:
        return work.authors_truncated_by_provider is True
    return len(names) == total or reference.authors_truncated


# ------------------------------------------------------------------- venue


def _venue_tokens(text: str) -> tuple[str, ...]:
    words = tuple(normalize_text(text).split())
    for suffix in _VENUE_SUFFIXES:
        if len(words) > len(suffix) and words[-len(suffix) :] == suffix:
            words = words[: -len(suffix)]
            break
    return tuple(
        token for token in words if token not in _VENUE_STOPWORDS and not _NUMBER.match(token)
    )


def _abbreviates_word(short: str, long: str) -> bool:
    """*short* is *long* shortened: same first letter, the rest a subsequence (``natl``)."""
    if short[0] != long[0] or len(short) > len(long):
        return False
    rest = iter(long[1:])
    return all(char in rest for char in short[1:])


def _preprint_server(tokens: tuple[str, ...]) -> tuple[str, ...] | None:
    for server in _PREPRINT_SERVERS:
        if _contains(tokens, server):
            return _SAME_SERVER.get(server, server)
    return None


def _alias_group(tokens: tuple[str, ...]) -> int | None:
    for number, names in enumerate(_VENUE_ALIASES):
        for name in names:
            alias = _venue_tokens(name)
            if alias and (_contains(tokens, alias) if len(alias) > 1 else alias[0] in tokens):
                return number
    return None


def _abbreviates(short: tuple[str, ...], full: tuple[str, ...]) -> bool:
    """Word by word, each word of *short* abbreviates the word of *full* (ISO 4 style)."""
    return len(short) == len(full) and all(
        _abbreviates_word(word, long) for word, long in zip(short, full, strict=True)
    )


def _initials(short: tuple[str, ...], full: tuple[str, ...]) -> bool:
    """*short* is one word made of the initials of *full* (``JMLR``)."""
    return len(short) == 1 and len(full) >= 2 and short[0] == "".join(word[0] for word in full)


def venues_disagree(reference_venue: str, work_venue: str) -> bool:
    """Whether two venue names clearly name different venues.

    An OpenAlex venue that is a collection, a book series or an index
    (``Springer eBooks``, ``Lecture Notes in Computer Science``, ``DOAJ``,
    ``PubMed``...) is not compared. A preprint server against anything that
    is not one (or against another server) is a disagreement. Otherwise the
    names agree (and nothing is listed) when, after normalization without
    stopwords and numbers: they are equal; they
    are equal without generic words (``proceedings``, ``conference``...);
    one is a word-by-word abbreviation of the other; one is the initials of
    the other; both belong to the same known alias group (``NeurIPS``); one
    contains the other and the contained one has three words or more; or
    they score at least :data:`VENUE_FUZZY_SCORE`. Anything else disagrees.
    """
    ours, theirs = _venue_tokens(reference_venue), _venue_tokens(work_venue)
    if not ours or not theirs or any(_contains(theirs, name) for name in _NOT_A_VENUE):
        return False
    our_server, their_server = _preprint_server(ours), _preprint_server(theirs)
    if our_server is not None or their_server is not None:
        return our_server != their_server
    if ours == theirs:
        return False
    our_core = tuple(token for token in ours if token not in _VENUE_GENERIC) or ours
    their_core = tuple(token for token in theirs if token not in _VENUE_GENERIC) or theirs
    if our_core == their_core:
        return False
    for short, full in ((our_core, their_core), (their_core, our_core)):
        if _abbreviates(short, full) or _initials(short, full):
            return False
        if len(short) >= _MAIN_TITLE_MIN_WORDS and _contains(full, short):
            return False
    group = _alias_group(ours)
    if group is not None and group == _alias_group(theirs):
        return False
    from rapidfuzz import fuzz  # noqa: PLC0415 - as in title_score

    return fuzz.ratio(" ".join(our_core), " ".join(their_core)) < VENUE_FUZZY_SCORE


# ---------------------------------------------------------------- decision


def compare(
    reference: Reference, work: Work, *, current_year: int, title_checked: bool = True
) -> tuple[ReferenceField, ...]:
    """Return the fields of *reference* that disagree with *work*, in :class:`ReferenceField` order.

    ``doi``: the reference gave a DOI and the work's differs (or it has none).
    ``title``: both have a title and :func:`titles_agree` is false (skipped
    when *title_checked* is false). ``authors``: the reference names authors
    and :func:`authors_agree` is false. ``year``: the reference's year is
    after *current_year*, or both have a year and they differ. ``venue``:
    both name one and :func:`venues_disagree`.
    """
    differs: list[ReferenceField] = []
    if reference.doi is not None and work.doi != reference.doi:
        differs.append(ReferenceField.DOI)
    if (
        title_checked
        and reference.title is not None
        and work.title is not None
        and not titles_agree(reference.title, work.title)
    ):
        differs.append(ReferenceField.TITLE)
    if not authors_agree(reference, work):
        differs.append(ReferenceField.AUTHORS)
    year = reference.year
    if year is not None and (
        year > current_year or (work.publication_year is not None and year != work.publication_year)
    ):
        differs.append(ReferenceField.YEAR)
    if (
        reference.venue is not None
        and work.venue is not None
        and venues_disagree(reference.venue, work.venue)
    ):
        differs.append(ReferenceField.VENUE)
    return tuple(differs)


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict on one reference and the work it rests on."""

    verdict: Verdict
    #: Index of the chosen work in the candidates given to :func:`decide`.
    chosen: int | None = None
    differs: tuple[ReferenceField, ...] = ()


def _is_preprint(work: Work) -> bool:
    return work.type == "preprint" or (
        work.venue is not None and _preprint_server(_venue_tokens(work.venue)) is not None
    )


def _best(
    reference: Reference,
    candidates: Sequence[Work],
    indices: list[int],
    *,
    current_year: int,
) -> Decision:
    """Among candidates that match, the one with the fewest differences wins.

    A tie on the fewest differences is broken in favour of the only
    candidate that is not a preprint, when there is exactly one; otherwise
    the candidates are not told apart and the verdict is ``ambiguous``.
    """
    scored = [
        (compare(reference, candidates[index], current_year=current_year), index)
        for index in indices
    ]
    fewest = min(len(differs) for differs, _ in scored)
    best = [(differs, index) for differs, index in scored if len(differs) == fewest]
    if len(best) > 1:
        published = [entry for entry in best if not _is_preprint(candidates[entry[1]])]
        if len(published) != 1:
            return Decision(Verdict.AMBIGUOUS)
        best = published
    differs, index = best[0]
    verdict = Verdict.VERIFIED if not differs else Verdict.METADATA_MISMATCH
    return Decision(verdict, index, differs)


def decide_by_doi(reference: Reference, works: Sequence[Work], *, current_year: int) -> Decision:
    """Decide a reference whose DOI OpenAlex knows; *works* all carry that DOI."""
    if not works:
        return Decision(Verdict.NOT_FOUND)
    return _best(reference, works, list(range(len(works))), current_year=current_year)


def decide(reference: Reference, candidates: Sequence[Work], *, current_year: int) -> Decision:
    """Decide a reference from the candidates of its title lookup.

    Candidates whose title agrees (:func:`titles_agree`) are matches: the
    best of them is chosen (:func:`_best`). Without one, candidates with a
    near-miss title (score at least :data:`NEAR_TITLE_SCORE`) whose authors
    agree with the reference's named authors are matches with ``title``
    among the differences; a reference without authors cannot match this
    way. Nothing else matches: ``not_found``.
    """
    title = reference.title
    if title is None or not candidates:
        return Decision(Verdict.NOT_FOUND)
    agreeing = [
        index
        for index, work in enumerate(candidates)
        if work.title is not None and titles_agree(title, work.title)
    ]
    if agreeing:
        return _best(reference, candidates, agreeing, current_year=current_year)
    if not reference.authors:
        return Decision(Verdict.NOT_FOUND)
    near = [
        index
        for index, work in enumerate(candidates)
        if work.title is not None
        and title_score(title, work.title) >= NEAR_TITLE_SCORE
        and authors_agree(reference, work)
        and work.authors
    ]
    if not near:
        return Decision(Verdict.NOT_FOUND)
    return _best(reference, candidates, near, current_year=current_year)
