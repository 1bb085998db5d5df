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
    "VENUE_NAMES",
    "Decision",
    "ReferenceField",
    "compare",
    "decide_by_doi",
    "decide_by_title",
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
    # Repositories hold a copy; the reference names where it was published.
    ("repository",),
    ("repositorio",),
    ("zenodo",),
    ("figshare",),
    ("hal",),
    ("dspace",),
    ("eprints",),
    ("escholarship",),
    ("infoscience",),
    ("research", "portal"),
    ("research", "explorer"),
    ("research", "online"),
    ("research", "archive"),
    ("research", "collection"),
    ("digital", "commons"),
    ("scholarly", "commons"),
    ("archive", "ouverte"),
    # The SIG newsletters OpenAlex files many conferences' papers under (PLDI and
    # ASPLOS under SIGPLAN Notices, SOSP under Operating Systems Review, ...).
    ("sigplan", "notices"),
    ("operating", "systems", "review"),
    ("computer", "communication", "review"),
    ("sigmod", "record"),
    ("computer", "architecture", "news"),
    ("performance", "evaluation", "review"),
    ("software", "engineering", "notes"),
    # Series of proceedings: each volume is another conference or workshop.
    ("ceur", "workshop", "proceedings"),
    ("leibniz", "international", "proceedings", "informatics"),
    ("electronic", "proceedings", "theoretical", "computer", "science"),
    ("communications", "computer", "information", "science"),
    ("advances", "intelligent", "systems", "computing"),
    ("studies", "computational", "intelligence"),
    ("ifip", "advances", "information", "communication", "technology"),
    ("smart", "innovation", "systems", "technologies"),
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

#: Words that name who publishes or sponsors a venue, not which venue it is.
_VENUE_PUBLISHERS = frozenset({"acm", "ieee", "usenix", "cvf", "siam", "ifip", "iapr"})
#: ACM special interest groups: a sponsor when the name says more (``ACM SIGSAC
#: Conference on ...``), the venue itself when it is all there is (``SIGMOD``).
_VENUE_SIGS = frozenset(
    {
        "sigaccess", "sigact", "sigai", "sigapp", "sigarch", "sigbed", "sigchi", "sigcomm",
        "sigcse", "sigda", "sigdoc", "sigecom", "sigevo", "siggraph", "sighpc", "sigir",
        "sigkdd", "siglog", "sigmetrics", "sigmicro", "sigmis", "sigmm", "sigmobile", "sigmod",
        "sigops", "sigplan", "sigsac", "sigsim", "sigsoft", "sigspatial", "sigweb",
    }
)  # fmt: skip
#: Words that say which part or edition of a venue a paper is in, not which venue.
_VENUE_QUALIFIERS = frozenset(
    {
        "extended", "abstracts", "companion", "adjunct", "findings", "volume", "vol", "papers",
        "paper", "long", "short", "posters", "poster", "demos", "demo", "demonstrations",
        "track", "main", "supplement", "supplementary", "workshops", "conferences", "symposia",
    }
)  # fmt: skip
#: Words that make a name the name of an event or of its proceedings: only such
#: a name carries an acronym as an all-capital word (``CHI Conference on ...``);
#: a journal's capitals are its name (``JAMA`` is not ``JAMA Network Open``).
_VENUE_EVENTS = frozenset(
    {
        "proceedings", "proc", "conference", "conf", "symposium", "symp", "workshop",
        "workshops", "meeting", "congress", "colloquium", "findings", "companion", "abstracts",
    }
)  # fmt: skip
#: Ordinals written as words (``Thirty-Third``); numerals are numbers already.
_ORDINAL_WORDS = frozenset(
    {
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
        "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
        "seventeenth", "eighteenth", "nineteenth", "twentieth", "thirtieth", "fortieth",
        "fiftieth", "sixtieth", "seventieth", "eightieth", "ninetieth",
    }
)  # fmt: skip
#: The only stopwords that give acronyms letters: Principles *of* Programming
#: Languages, Symposium *on* Usable Privacy and Security, File *and* Storage
#: Technologies, European Symposium on Research *in* Computer Security.
_ACRONYM_STOPWORDS = frozenset({"of", "on", "and", "in"})
_ORDINAL_ENDINGS = frozenset({"st", "nd", "rd", "th"})
_ORDINAL_TENS = frozenset({"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty"})
#: A core of fewer letters keeps the publisher and generic words it was read without.
_CORE_MIN_LETTERS = 3
#: The most letters one word gives an acronym (``Neur`` of NeurIPS, ``Stats`` of AISTATS).
_ACRONYM_LETTERS_PER_WORD = 5

#: The exceptions to the venue rules, as data: venues whose short name is not
#: derived from their long one (``CHI``, ``WWW`` for "The Web Conference"), and
#: conferences whose papers OpenAlex files under a journal (the PACM journals,
#: *ACM Transactions on Graphics*). One row per venue, each name normalized as
#: venue names are (stopwords and numbers left out). A one-word name is an
#: acronym: it counts when it is the whole venue or an acronym the other name
#: carries; a longer name counts wherever it stands, and where names of several
#: rows stand in one venue, the longest says which row it is (NAACL's name holds
#: ACL's). A row is added only for a real venue, with a test of it both ways.
VENUE_NAMES: tuple[tuple[str, ...], ...] = (
    ("neurips", "nips", "neural information processing systems"),
    ("icml", "international conference on machine learning"),
    ("iclr", "learning representations"),
    ("cvpr", "computer vision and pattern recognition"),
    ("iccv", "international conference on computer vision"),
    ("eccv", "european computer vision"),
    ("acl", "association for computational linguistics"),
    # OpenAlex cuts NAACL 2019's name to "Proceedings of the 2019 Conference of the North".
    ("naacl", "north american chapter of association for computational linguistics",
     "conference of the north"),
    ("emnlp", "empirical methods in natural language processing"),
    ("aaai", "aaai artificial intelligence"),
    ("ijcai", "joint artificial intelligence"),
    ("aistats", "artificial intelligence and statistics"),
    ("kdd", "knowledge discovery and data mining"),
    ("sdm", "siam international conference on data mining"),
    ("sigir", "research and development in information retrieval"),
    ("www", "thewebconf", "webconf", "world wide web", "web conference"),
    ("chi", "human factors in computing systems"),
    ("cscw", "computer supported cooperative work",
     "proceedings acm on human computer interaction"),
    ("ubicomp", "imwut", "ubiquitous computing",
     "proceedings acm on interactive mobile wearable and ubiquitous technologies"),
    ("eurosys", "european conference on computer systems"),
    ("mobicom", "mobile computing and networking"),
    ("micro", "microarchitecture"),
    ("mobisys", "mobile systems applications and services"),
    ("sensys", "embedded networked sensor systems"),
    ("hotnets", "hot topics in networks"),
    ("hotos", "hot topics in operating systems"),
    ("sc", "high performance computing networking storage and analysis"),
    ("hpdc", "high performance parallel and distributed computing"),
    ("mm", "multimedia"),
    ("sigcse", "technical symposium on computer science education"),
    ("sp", "oakland", "symposium on security and privacy"),
    ("sigmod", "management of data"),
    ("cidr", "innovative data systems research"),
    ("edbt", "extending database technology"),
    ("sigcomm", "applications technologies architectures and protocols for computer communication"),
    ("sigmetrics", "measurement and modeling of computer systems",
     "proceedings acm on measurement and analysis of computing systems"),
    ("siggraph", "acm transactions on graphics"),
    ("pvldb", "vldb", "very large data bases", "vldb endowment"),
    ("pldi", "programming language design and implementation",
     "proceedings acm on programming languages"),
    ("popl", "principles of programming languages", "proceedings acm on programming languages"),
    ("oopsla", "splash", "object oriented programming systems languages and applications",
     "proceedings acm on programming languages"),
    ("icfp", "functional programming", "proceedings acm on programming languages"),
    ("fse", "foundations of software engineering", "proceedings acm on software engineering"),
    ("conext", "emerging networking experiments and technologies",
     "proceedings acm on networking"),
    ("popets", "pets", "privacy enhancing technologies"),
    ("pnas", "national academy of sciences"),
    ("nejm", "new england journal of medicine", "n engl j med"),
    ("jama", "journal of american medical association"),
    ("bmj", "british medical journal"),
    ("jmlr", "journal of machine learning research"),
    ("tpami", "ieee transactions pattern analysis and machine intelligence"),
)  # fmt: skip

_PARENTHESES = re.compile(r"\(([^()]*)\)")
#: ``'23`` and ``CHI'23``: a year written with an apostrophe.
_SHORT_YEAR = re.compile(r"['\u2018\u2019`]\d{2}(?!\d)")
_FULL_YEAR = re.compile(r"(?<![\w.])(?:19|20)\d{2}(?!\d)")
#: Where a co-located venue names its host (``SOUPS @ USENIX Security Symposium``).
_COLOCATED = re.compile(r"\s*@\s*|\bco-?located\s+with\b", re.IGNORECASE)
#: A label before a colon (``CCS '19: Proceedings of the 2019 ACM SIGSAC ...``).
_LABEL = re.compile(r"^\s*([^:]{1,60}?)\s*:\s*(\S.*)$", re.DOTALL)
#: A word as written, for telling acronyms apart (``S&P`` is one word).
_RAW_WORD = re.compile(r"[^\W_](?:[\w&]*[^\W_])?")
#: Where a name's head ends and what qualifies it begins.
_HEAD_END = re.compile(r"\s*(?::|,|;|\.\s|\s[-\u2013\u2014]\s)")
_ACRONYM_SEPARATORS = re.compile(r"[\s/\-\u2010-\u2015,;:.]+")


def _without_suffix(words: tuple[str, ...]) -> tuple[str, ...]:
    for suffix in _VENUE_SUFFIXES:
        if len(words) > len(suffix) and words[-len(suffix) :] == suffix:
            return words[: -len(suffix)]
    return words


def _venue_tokens(text: str) -> tuple[str, ...]:
    words = _without_suffix(tuple(normalize_text(text).split()))
    return tuple(
        token for token in words if token not in _VENUE_STOPWORDS and not _NUMBER.match(token)
    )


def _acronym_like(word: str) -> bool:
    """An all-capital word (``CHI``, ``S&P``) or a capitalized one with inner capitals."""
    letters = [char for char in word if char.isalpha()]
    capitals = sum(char.isupper() for char in letters)
    return len(letters) >= 2 and capitals >= 2 and (capitals == len(letters) or word[0].isupper())


def _acronym_key(word: str) -> str:
    """``S&P`` is ``sp``, ``NeurIPS`` is ``neurips``: an acronym's letters, folded."""
    return normalize_text(word.replace("&", "")).replace(" ", "")


def _optional(token: str) -> bool:
    """A word that does not name a venue: an acronym may take a letter from it or leave it out."""
    return (
        token in _VENUE_STOPWORDS
        or token in _VENUE_GENERIC
        or token in _VENUE_PUBLISHERS
        or token in _VENUE_SIGS
        or token in _VENUE_QUALIFIERS
    )


def _silent(token: str) -> bool:
    """A word that gives an acronym no letter.

    A publisher or SIG (``ACM`` is not the A of ASE), or a stopword other than
    *of*, *on*, *and* and *in* (POPL, SOUPS, FAST, ESORICS).
    """
    return (
        token in _VENUE_PUBLISHERS
        or token in _VENUE_SIGS
        or (token in _VENUE_STOPWORDS and token not in _ACRONYM_STOPWORDS)
    )


def _dated(token: str) -> bool:
    """A number, an ordinal or an ordinal's ending (``28th`` reads as ``28 th``)."""
    return (
        bool(_NUMBER.match(token))
        or token in _ORDINAL_WORDS
        or token in _ORDINAL_TENS
        or token in _ORDINAL_ENDINGS
    )


def _with_sig_variants(keys: set[str]) -> frozenset[str]:
    """``SIGKDD`` stands for ``KDD`` too: a SIG's acronym is also its conference's."""
    return frozenset(keys | {key[3:] for key in keys if key in _VENUE_SIGS and len(key) > 5})


@dataclass(frozen=True, slots=True)
class _Venue:
    """One venue name as the rules read it (:func:`venues_disagree`)."""

    #: Normalized words without stopwords, numbers, years, ordinals and parentheses.
    plain: tuple[str, ...]
    #: :attr:`plain` without publishers, SIGs, generic words and qualifiers
    #: (:attr:`plain` itself when nothing else is left).
    core: tuple[str, ...]
    #: The normalized words in order, stopwords included: what acronyms derive from.
    words: tuple[str, ...]
    #: Per word of :attr:`words`: whether an acronym may leave it out (a stopword,
    #: publisher, SIG, generic word, qualifier, or an acronym the name is written with).
    optional: tuple[bool, ...]
    #: Per word of :attr:`words`: whether it gives an acronym no letter (:func:`_silent`).
    silent: tuple[bool, ...]
    #: The publishers the name names (``acm``, ``ieee``, ``usenix``...).
    publishers: frozenset[str]
    #: The acronyms the name is written as, when it is nothing but acronyms and
    #: words that do not name a venue (``Proc. CHI '23``, ``IEEE S&P``); else empty.
    acronyms: frozenset[str]
    #: Acronyms the name carries: in parentheses, or as all-capital words of
    #: an event's name (``CHI Conference on ...``, ``ACM SIGKDD Conference``).
    carried: frozenset[str]
    #: The acronyms in parentheses alone: the name's own word on what it is called.
    bracketed: frozenset[str]
    #: The cores of the name cut at each ``:``, ``,`` or ``. `` (``Physical review.
    #: D. Particles, fields ...`` is also ``Physical review. D``).
    heads: tuple[tuple[str, ...], ...]


@functools.lru_cache(maxsize=4096)
def _read_venue(text: str) -> _Venue:
    text = _HTML_TAG.sub(" ", html.unescape(unicodedata.normalize("NFKC", text)))
    text = _FULL_YEAR.sub(" ", _SHORT_YEAR.sub(" ", text))
    carried: set[str] = set()
    for inside in _PARENTHESES.findall(text):
        carried.update(
            _acronym_key(word) for word in _ACRONYM_SEPARATORS.split(inside) if _acronym_like(word)
        )
    bracketed = frozenset(carried - _VENUE_PUBLISHERS)
    # What parentheses hold is an acronym, a place or a volume: never what names the venue.
    outside = _PARENTHESES.sub(" ", text)
    words, plain, core = _words_of(outside)
    written: set[str] = set()
    names_more = False
    whole_words = outside.split()
    shouting = not any(char.islower() for char in outside)
    for whole in whole_words:
        for word in _RAW_WORD.findall(_ACRONYM_SEPARATORS.sub(" ", whole)):
            key = _acronym_key(word)
            if not key or _dated(key) or key in _VENUE_PUBLISHERS:
                continue
            if _acronym_like(word) and not (
                shouting and key not in _VENUE_SIGS and len(whole_words) > 2
            ):
                written.add(key)
            elif any(not _optional(token) for token in normalize_text(word).split()):
                names_more = True
    if any(token in _VENUE_EVENTS for token in plain):
        carried |= written
    acronyms: set[str] = set()
    if written and not names_more:
        acronyms = {key for key in written if key not in _VENUE_SIGS} or written
    heads = tuple(_words_of(outside[: match.start()])[2] for match in _HEAD_END.finditer(outside))
    return _Venue(
        plain=plain,
        core=core,
        words=words,
        optional=tuple(_optional(word) or word in written for word in words),
        silent=tuple(_silent(word) for word in words),
        publishers=frozenset(word for word in words if word in _VENUE_PUBLISHERS),
        acronyms=_with_sig_variants(acronyms),
        carried=_with_sig_variants(carried - _VENUE_PUBLISHERS),
        bracketed=_with_sig_variants(set(bracketed)),
        heads=tuple(head for head in heads if head),
    )


def _words_of(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """A name's words (without years, numbers, ordinals), its plain words and its core."""
    words = _without_suffix(tuple(normalize_text(text).split()))
    words = tuple(token for token in words if not _dated(token))
    if words[:1] == ("advances",):
        # "Advances in ..." says what kind of volume; "Science Advances" is a journal's name.
        words = words[1:]
    plain = tuple(token for token in words if token not in _VENUE_STOPWORDS)
    core = tuple(token for token in plain if not _optional(token))
    if sum(len(token) for token in core) < _CORE_MIN_LETTERS:
        # "J. ACM" is not just "J": what little is left keeps its publisher.
        core = plain
    return words, plain, core


def _alternatives(text: str) -> list[str]:
    """The names one venue string gives.

    An acronym and the full name it labels (``ICSE '22: Proceedings of the 44th
    International Conference on Software Engineering``, as ACM exports them), a
    co-located venue and its host (``SOUPS @ USENIX Security``), or the two
    spellings OpenAlex joins with ``/`` (``Physical review. B./Physical review. B``).
    """
    names: list[str] = []
    labelled = _LABEL.match(text)
    if labelled is not None and all(
        _acronym_like(word) or not _read_venue(word).plain for word in labelled.group(1).split()
    ):
        # ACM's "ICSE '22: Proceedings of the 44th International Conference on ...".
        return [labelled.group(1), labelled.group(2)]
    for part in _COLOCATED.split(text):
        pieces = part.split("/")
        if len(pieces) > 1 and all(len(_read_venue(piece).core) >= 2 for piece in pieces):
            names.extend(pieces)
        else:
            names.append(part)
    return [name for name in names if name.strip()] or [text]


def _derives(acronym: str, venue: _Venue) -> bool:
    """Whether *acronym* is made from the words of *venue*, in order.

    Every word that names the venue gives it at least one letter; a word that
    does not (``of``, ``Conference``, an acronym the name is written with) may
    give letters or none, and a publisher or SIG (``ACM``, ``SIGSAC``) none. A
    word gives a beginning of itself of at most :data:`_ACRONYM_LETTERS_PER_WORD`
    letters (``Neur`` of Neural), and at least two words give letters.
    """
    words, optional, silent = venue.words, venue.optional, venue.silent
    if len(acronym) < 2 or not acronym.isalpha() or len(words) > 24:
        return False

    @functools.cache
    def rest(at: int, word: int, used: int) -> bool:
        if word == len(words):
            return at == len(acronym) and used >= 2
        if optional[word] and rest(at, word + 1, used):
            return True
        if silent[word]:
            return False
        longest = min(_ACRONYM_LETTERS_PER_WORD, len(acronym) - at)
        return any(
            words[word].startswith(acronym[at : at + size])
            and rest(at + size, word + 1, min(used + 1, 2))
            for size in range(1, longest + 1)
        )

    return rest(0, 0, 0)


@functools.cache
def _table() -> tuple[tuple[int, tuple[str, ...]], ...]:
    return tuple(
        (row, _venue_tokens(name)) for row, names in enumerate(VENUE_NAMES) for name in names
    )


@functools.lru_cache(maxsize=4096)
def _rows(venue: _Venue) -> frozenset[int]:
    """The rows of :data:`VENUE_NAMES` that *venue* names, by its longest matching name.

    A name with an acronym in parentheses is known by that acronym alone: the
    "International Conference on Machine Learning and Applications (ICMLA)" is
    not ICML for holding "machine learning".
    """
    best, rows = 0, set[int]()
    for row, name in _table():
        if len(name) == 1:
            (acronym,) = name
            hit = acronym in venue.acronyms or acronym in venue.carried or venue.core == name
        else:
            hit = not venue.bracketed and _contains(venue.plain, name)
        if hit and len(name) >= best:
            if len(name) > best:
                best, rows = len(name), set()
            rows.add(row)
    return frozenset(rows)


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


def _abbreviates(short: tuple[str, ...], full: tuple[str, ...]) -> bool:
    """Word by word, each word of *short* abbreviates the word of *full* (ISO 4 style)."""
    return len(short) == len(full) and all(
        _abbreviates_word(word, long) for word, long in zip(short, full, strict=True)
    )


def _is_initialism(short: tuple[str, ...], full: tuple[str, ...]) -> bool:
    """*short* is one word made of the initials of *full* (``JMLR``)."""
    return len(short) == 1 and len(full) >= 2 and short[0] == "".join(word[0] for word in full)


def _acronyms_agree(acronyms: frozenset[str], other: _Venue) -> bool:
    """One of *acronyms* is one *other* carries or is written as, or derives from its words.

    A name with an acronym in parentheses has said what it is called: only
    that acronym agrees (or it with the ``W`` of its workshops: ``CVPRW``).
    """
    if other.bracketed:
        return any(
            acronym in other.bracketed
            or acronym + "w" in other.bracketed
            or acronym in other.acronyms
            for acronym in acronyms
        )
    return any(
        acronym in other.carried or acronym in other.acronyms or _derives(acronym, other)
        for acronym in acronyms
    )


def _names_agree(ours: _Venue, theirs: _Venue) -> bool:
    if ours.plain == theirs.plain or ours.core == theirs.core:
        return True
    for short, full in ((ours, theirs), (theirs, ours)):
        if short.acronyms:
            # An acronym is compared as one, never as an abbreviated word (CCS is
            # not "Communications").
            if _acronyms_agree(short.acronyms, full):
                return True
            continue
        if _abbreviates(short.core, full.core) or _abbreviates(short.plain, full.plain):
            return True
        if _is_initialism(short.core, full.core):
            return True
        if any(short.core == head or _abbreviates(short.core, head) for head in full.heads):
            return True
    if _rows(ours) & _rows(theirs):
        return True
    if ours.publishers and theirs.publishers and not ours.publishers & theirs.publishers:
        # Near names of two publishers' venues are two venues: IEEE Transactions on
        # Software Engineering is not ACM Transactions on Software Engineering and Methodology.
        return False
    for short, full in ((ours, theirs), (theirs, ours)):
        if len(short.core) >= _MAIN_TITLE_MIN_WORDS and _contains(full.core, short.core):
            return True
    from rapidfuzz import fuzz  # noqa: PLC0415 - as in title_score

    return fuzz.ratio(" ".join(ours.core), " ".join(theirs.core)) >= VENUE_FUZZY_SCORE


def venues_disagree(reference_venue: str, work_venue: str) -> bool:
    """Whether two venue names clearly name different venues.

    An OpenAlex venue that is a collection, a book series, a series of
    proceedings, a repository, a SIG newsletter or an index (``Springer
    eBooks``, ``Lecture Notes in Computer Science``, ``CEUR Workshop
    Proceedings``, ``Zenodo``, ``ACM SIGPLAN Notices``, ``DOAJ``...) is not
    compared, nor is a name that says nothing of which venue it is
    (``Proceedings``). A preprint server against anything that is not one (or
    against another server) is a disagreement. Otherwise each name is read
    without years, ``'23``, ordinals and parentheses, its core also without
    publishers and SIGs, generic words and qualifiers (:class:`_Venue`), and
    the names agree when: they or their cores are equal; one is written as
    acronyms and one of them is an acronym the other carries or derives from
    its words (:func:`_acronyms_agree`); one core abbreviates the other word
    by word, or the other's part before a ``:``, ``,`` or ``. ``; one core is
    the initials of the other; both name one row of :data:`VENUE_NAMES`; or,
    unless they name different publishers, one core of three words or more
    stands in the other or the cores score at least :data:`VENUE_FUZZY_SCORE`.
    A label and its name (``ICSE '22: Proceedings of ...``), a co-located venue
    and its host (``SOUPS @ USENIX Security``) and OpenAlex's two spellings
    joined by ``/`` agree by either. Anything else disagrees.
    """
    ours, theirs = _venue_tokens(reference_venue), _venue_tokens(work_venue)
    if not ours or not theirs or any(_contains(theirs, name) for name in _NOT_A_VENUE):
        return False
    our_server, their_server = _preprint_server(ours), _preprint_server(theirs)
    if our_server is not None or their_server is not None:
        return our_server != their_server
    readings = [
        (_read_venue(our_name), _read_venue(their_name))
        for our_name in _alternatives(reference_venue)
        for their_name in _alternatives(work_venue)
    ]
    return not any(_vague(a) or _vague(b) or _names_agree(a, b) for a, b in readings)


def _vague(venue: _Venue) -> bool:
    """A name with nothing that says which venue it is (``Proceedings``, ``IEEE Conference``)."""
    return not venue.acronyms and not venue.carried and all(_optional(t) for t in venue.plain)


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
    #: Index of the chosen work in the candidates given to :func:`decide_by_title`
    #: (or :func:`decide_by_doi`).
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


def decide_by_title(
    reference: Reference, candidates: Sequence[Work], *, current_year: int
) -> Decision:
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
