"""Reading a bibliography: :func:`parse_references` and the reference data model.

This module owns the formats a bibliography may arrive in (BibTeX, RIS,
CSL-JSON, plain text), the deterministic auto-detection between them, the
limits of one call (:func:`parse_references`; :func:`read_references` reads a
whole file without them), the bounds of BibTeX macro expansion, ``crossref``
and the reasons an entry could not be read. The BibTeX grammar is
:mod:`._bibtex`'s and LaTeX decoding :mod:`._latex`'s. It contacts nothing:
resolution against OpenAlex builds on its output. The rules are documented in
``docs/openalex-client.md`` ("Reading references").
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import rispy
from bibtexparser.middlewares.names import (
    parse_single_name_into_parts,
    split_multiple_persons_names,
)
from harvester.identity import normalize_doi as _core_normalize_doi

from ._bibtex import BlockKind, Piece, RawBlock, scan_bibtex
from ._errors import InputReason, ReferenceInputError
from ._latex import decode_accents, latex_to_text
from ._text import clean_display_text, replace_lone_surrogates
from ._vocabulary import (
    FIELD_YEARS,
    MAX_REFERENCES,
    MAX_REFERENCES_BYTES,
    TEXT_YEARS,
    ReferenceFormat,
)

__all__ = [
    "ARXIV_DOI_PREFIX",
    "MACRO_EXPANSION_FACTOR",
    "MAX_MACRO_BYTES",
    "ParsedReferences",
    "Reference",
    "ReferenceAuthor",
    "ReferenceFormat",
    "UnparsedReason",
    "parse_references",
    "read_references",
]

#: The DataCite prefix under which arXiv registers a DOI for every preprint.
ARXIV_DOI_PREFIX = "10.48550/arxiv."
#: The largest value a BibTeX macro expansion may produce, in UTF-8 bytes.
MAX_MACRO_BYTES = 262_144
#: All macro expansions of one text together produce at most this many times its UTF-8 bytes.
MACRO_EXPANSION_FACTOR = 16


class UnparsedReason(StrEnum):
    """Why an entry of the input could not be read as a reference."""

    #: An ``@`` block that does not follow the BibTeX grammar (unbalanced
    #: braces, no key, a bad type, cut off), ``@string`` and ``@preamble`` included.
    BIBTEX_SYNTAX = "bibtex_syntax"
    #: Non-blank RIS lines outside any ``TY`` .. ``ER`` record.
    RIS_OUTSIDE_RECORD = "ris_outside_record"
    #: An RIS record the RIS reader failed on.
    RIS_SYNTAX = "ris_syntax"
    #: CSL-JSON that is not JSON.
    JSON_SYNTAX = "json_syntax"
    #: CSL-JSON nested deeper than the JSON parser allows.
    JSON_TOO_DEEP = "json_too_deep"
    #: CSL-JSON whose top level is neither an array nor an object.
    CSL_NOT_A_LIST = "csl_not_a_list"
    #: An element of a CSL-JSON array that is not an object.
    CSL_NOT_AN_OBJECT = "csl_not_an_object"
    #: An entry without a title, a DOI or an arXiv ID: nothing to look up.
    NO_TITLE_OR_IDENTIFIER = "no_title_or_identifier"
    #: Non-blank input in which the format's reader found no entry at all.
    NO_REFERENCE_FOUND = "no_reference_found"
    #: A BibTeX entry or ``@string`` whose macro expansion would pass
    #: :data:`MAX_MACRO_BYTES`, or the text's expansion budget.
    MACRO_TOO_LARGE = "macro_too_large"
    #: A BibTeX entry whose ``crossref`` chain comes back to itself.
    CROSSREF_CYCLE = "crossref_cycle"


@dataclass(frozen=True)
class ReferenceAuthor:
    """One name of a reference's author list.

    ``family`` is always set (a corporate or single-word name is all family);
    the von part (``van der``, ``de la``) and the suffix (``Jr.``, ``III``)
    are kept apart from it.
    """

    #: The name as it was written, decoded and cleaned.
    text: str
    family: str
    given: str | None = None
    particle: str | None = None
    suffix: str | None = None

    def to_record(self) -> dict[str, str | None]:
        """Return the JSON-safe record of the name (every key always present)."""
        return {
            "family": self.family,
            "given": self.given,
            "particle": self.particle,
            "suffix": self.suffix,
            "text": self.text,
        }


@dataclass(frozen=True)
class Reference:
    """One entry of the input, read or not.

    Every field but ``index`` and ``raw`` may be empty. An entry that could
    not be read has ``unparsed_reason`` set and keeps only ``raw`` (and its
    key when one was visible).
    """

    #: 0-based position in the input, counting unparsed entries.
    index: int
    #: The entry's own text, exactly as supplied (lone surrogates become U+FFFD).
    raw: str
    #: The citation key (BibTeX key, RIS ``ID``, CSL ``citation-key`` or ``id``).
    key: str | None = None
    #: The entry type as the format names it (``article``, ``JOUR``, ``article-journal``).
    entry_type: str | None = None
    title: str | None = None
    authors: tuple[ReferenceAuthor, ...] = ()
    #: The author list ended in ``and others`` / ``et al.``: more authors exist.
    authors_truncated: bool = False
    year: int | None = None
    venue: str | None = None
    #: Canonical lower-case DOI without a resolver prefix.
    doi: str | None = None
    #: arXiv identifier without ``arXiv:`` and without a version (``2101.00001``).
    arxiv_id: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    unparsed_reason: UnparsedReason | None = None
    #: 1-based line of the text on which the entry starts.
    line: int | None = None
    #: ``(start, end)`` offsets (code points) of the entry in the text read:
    #: ``text[start:end]`` is its exact text (for CSL-JSON, the item's JSON as written).
    span: tuple[int, int] | None = None
    #: BibTeX: the key of the ``crossref`` parent the entry names (its fields are
    #: already inherited); not part of the record, which holds the resolved fields.
    crossref: str | None = None

    @property
    def parsed(self) -> bool:
        """Whether the entry was read as a reference."""
        return self.unparsed_reason is None

    @property
    def lookup_doi(self) -> str | None:
        """The DOI to look up: the DOI, else the arXiv DOI ``10.48550/arxiv.<id>``."""
        if self.doi is not None:
            return self.doi
        if self.arxiv_id is not None:
            return ARXIV_DOI_PREFIX + self.arxiv_id.lower()
        return None

    def to_record(self) -> dict[str, Any]:
        """Return the JSON-safe record of the entry (every key always present)."""
        return {
            "arxiv_id": self.arxiv_id,
            "authors": [author.to_record() for author in self.authors],
            "authors_truncated": self.authors_truncated,
            "doi": self.doi,
            "entry_type": self.entry_type,
            "index": self.index,
            "issue": self.issue,
            "key": self.key,
            "line": self.line,
            "pages": self.pages,
            "raw": self.raw,
            "title": self.title,
            "unparsed_reason": None if self.unparsed_reason is None else self.unparsed_reason.value,
            "venue": self.venue,
            "volume": self.volume,
            "year": self.year,
        }


@dataclass(frozen=True)
class ParsedReferences:
    """What :func:`parse_references` read: the format used and every entry in order.

    A sequence of :class:`Reference` (``len``, iteration, indexing) that also
    says which format was used, so that a record can state how the text was read.
    """

    #: The format the text was read as (never ``auto``).
    format: ReferenceFormat
    #: Whether the format was chosen by auto-detection.
    detected: bool
    references: tuple[Reference, ...] = field(default_factory=tuple)

    def __len__(self) -> int:
        return len(self.references)

    def __iter__(self) -> Iterator[Reference]:
        return iter(self.references)

    def __getitem__(self, index: int) -> Reference:
        return self.references[index]

    def to_record(self) -> dict[str, Any]:
        """Return the JSON-safe record ``{"detected", "format", "references"}``."""
        return {
            "detected": self.detected,
            "format": self.format.value,
            "references": [reference.to_record() for reference in self.references],
        }


# ------------------------------------------------------------------ entry point


def parse_references(text: str, format: str = "auto") -> ParsedReferences:
    """Read a bibliography for one check: :func:`read_references` within one call's limits.

    Args:
        text: The bibliography, at most :data:`MAX_REFERENCES_BYTES` bytes as UTF-8.
        format: ``auto`` (the default), ``bibtex``, ``ris``, ``csl-json`` or ``text``.

    Returns:
        The format used and one :class:`Reference` per entry; an entry that
        cannot be read is kept with its :class:`UnparsedReason`.

    Raises:
        ReferenceInputError: ``text`` is not a string, blank or too large, the
            format is unknown, or the text holds more than :data:`MAX_REFERENCES`
            entries. Its code is ``invalid_arguments``.
    """
    chosen = _format_argument(format)
    if not isinstance(text, str):
        raise ReferenceInputError("text", InputReason.NOT_A_STRING)
    # A lone surrogate is one code point of three UTF-8 bytes, as is U+FFFD.
    if len(text) > MAX_REFERENCES_BYTES or _utf8_length(text) > MAX_REFERENCES_BYTES:
        raise ReferenceInputError("text", InputReason.TOO_LONG, limit=MAX_REFERENCES_BYTES)
    parsed = read_references(text, chosen.value)
    if len(parsed) > MAX_REFERENCES:
        raise ReferenceInputError("text", InputReason.TOO_MANY, limit=MAX_REFERENCES)
    return parsed


def read_references(text: str, format: str = "auto") -> ParsedReferences:
    """Read a whole bibliography into references, one per entry, in input order.

    There is no limit on the text's size or its number of entries: the cost is
    linear in the text (BibTeX macro expansion is bounded by
    :data:`MAX_MACRO_BYTES` per value and :data:`MACRO_EXPANSION_FACTOR` times
    the text's size in all). Macros and ``crossref`` are resolved file-wide.
    Each reference carries its :attr:`~Reference.line` and
    :attr:`~Reference.span` in *text*. A leading byte-order mark is ignored.

    Raises:
        ReferenceInputError: ``text`` is not a string or blank, or the format
            is unknown. Its code is ``invalid_arguments``.
    """
    chosen = _format_argument(format)
    if not isinstance(text, str):
        raise ReferenceInputError("text", InputReason.NOT_A_STRING)
    text = replace_lone_surrogates(text)
    if text.startswith("\ufeff"):
        # A space keeps every offset of the text as given.
        text = " " + text[1:]
    if not text.strip():
        raise ReferenceInputError("text", InputReason.EMPTY)
    detected = chosen is ReferenceFormat.AUTO
    if detected:
        chosen = detect_format(text)
    entries = _READERS[chosen](text)
    if not entries:
        first = len(text) - len(text.lstrip())
        last = len(text.rstrip())
        entries = [_unparsed(text, (first, last), UnparsedReason.NO_REFERENCE_FOUND, _Lines(text))]
    references = tuple(_numbered(position, entry) for position, entry in enumerate(entries))
    return ParsedReferences(format=chosen, detected=detected, references=references)


def _format_argument(format: object) -> ReferenceFormat:
    if not isinstance(format, str):
        raise ReferenceInputError("format", InputReason.NOT_A_STRING)
    try:
        return ReferenceFormat(format)
    except ValueError:
        raise ReferenceInputError("format", InputReason.INVALID_VALUE) from None


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


_BIBTEX_START = re.compile(r"^[ \t]*@[ \t]*[A-Za-z]+[ \t]*[{(]", re.MULTILINE)
_RIS_START = re.compile(r"^[ \t]*TY  -", re.MULTILINE)


def detect_format(text: str) -> ReferenceFormat:
    """Choose the format of *text*, first rule that holds (``docs/openalex-client.md``).

    1. it starts (after whitespace) with ``[`` or ``{`` and is valid JSON: ``csl-json``;
    2. a line starts with ``@type{`` or ``@type(``: ``bibtex``;
    3. a line starts with ``TY  -``: ``ris``;
    4. otherwise ``text``.
    """
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped[:1] in ("[", "{"):
        try:
            json.loads(stripped)
        except (ValueError, RecursionError):
            pass
        else:
            return ReferenceFormat.CSL_JSON
    if _BIBTEX_START.search(text):
        return ReferenceFormat.BIBTEX
    if _RIS_START.search(text):
        return ReferenceFormat.RIS
    return ReferenceFormat.TEXT


# ------------------------------------------------------------------ shared pieces


class _Lines:
    """Line numbers of offsets asked for in increasing order (linear over a whole text)."""

    __slots__ = ("line", "offset", "text")

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 1

    def at(self, offset: int) -> int:
        if offset < self.offset:
            self.offset, self.line = 0, 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _placed(text: str, span: tuple[int, int], lines: _Lines) -> dict[str, Any]:
    """The ``raw``, ``line`` and ``span`` of the entry at *span* of *text*."""
    return {"raw": text[span[0] : span[1]], "line": lines.at(span[0]), "span": span}


def _unparsed(
    text: str,
    span: tuple[int, int],
    reason: UnparsedReason,
    lines: _Lines,
    key: str | None = None,
) -> Reference:
    """An entry that could not be read; :func:`read_references` numbers it."""
    return Reference(index=0, key=_clean(key), unparsed_reason=reason, **_placed(text, span, lines))


def _numbered(index: int, reference: Reference) -> Reference:
    """*reference* at its position, unparsed when it holds nothing to look up."""
    if reference.parsed and not (reference.title or reference.doi or reference.arxiv_id):
        reference = Reference(
            index=index,
            raw=reference.raw,
            key=reference.key,
            unparsed_reason=UnparsedReason.NO_TITLE_OR_IDENTIFIER,
            line=reference.line,
            span=reference.span,
        )
    elif index:
        # The reference was made by a reader a moment ago and is not shared yet;
        # dataclasses.replace would cost more than reading a short entry.
        object.__setattr__(reference, "index", index)
    return reference


def _clean(value: object) -> str | None:
    """Cleaned text (no control or format characters, whitespace collapsed) or ``None``."""
    return None if value is None else clean_display_text(value)


_DOI_IN_TEXT = re.compile(r"10\.\d{4,9}/[^\s\"{}]+")
_DOI_START = re.compile(r"10\.\d{4,9}/")
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_ARXIV_IN_TEXT = re.compile(
    r"(?:arxiv(?:\.org/(?:abs|pdf)/|:\s*|\s+)|10\.48550/arxiv\.)"
    r"(\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7})(?:v\d+)?",
    re.IGNORECASE,
)
_ARXIV_ID = re.compile(r"^(?:arxiv:\s*)?(\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7})(?:v\d+)?$", re.I)
_FOUR_DIGITS = re.compile(r"(?<!\d)(\d{4})(?!\d)")


def normalize_doi(value: str | None) -> str | None:
    """A DOI field's DOI: behind any resolver, ``%``-escaped or not, then the core's rule.

    The core's normalization takes case, ``https://doi.org/``, ``doi:``,
    surrounding brackets and trailing punctuation; before it, ``%XX`` escapes
    are decoded and anything without a space before the first ``10.NNNN/``
    (``http://doi.acm.org/``, ``https://dx.doi.org/``, a publisher's
    ``/doi/abs/``) is dropped.
    """
    if value is None:
        return None
    value = value.strip()
    if _PERCENT_ESCAPE.search(value):
        value = urllib.parse.unquote(value)
    start = _DOI_START.search(value)
    if (
        start is not None
        and start.start() > 0
        and not any(char.isspace() for char in value[: start.start()])
    ):
        value = value[start.start() :]
    doi: str | None = _core_normalize_doi(value)
    return doi


def find_doi(text: str | None) -> str | None:
    """Return the first DOI written in *text*, normalized, or ``None``.

    A DOI runs to the next space, quote or brace, so a SICI DOI keeps its
    ``<`` and ``>``; a ``>`` that closes an ``<`` before the DOI is dropped.
    """
    if not text:
        return None
    for match in _DOI_IN_TEXT.finditer(text):
        found = match.group(0)
        if _PERCENT_ESCAPE.search(found):
            found = urllib.parse.unquote(found)
        while found.endswith(">") and found.count(">") > found.count("<"):
            found = found[:-1]
        doi = normalize_doi(found)
        if doi is not None:
            return doi
    return None


def find_arxiv_id(text: str | None) -> str | None:
    """Return the first arXiv ID in *text* (``arXiv:…``, an arxiv.org URL, the arXiv DOI)."""
    if not text:
        return None
    match = _ARXIV_IN_TEXT.search(text)
    return None if match is None else match.group(1)


def _arxiv_from_doi(doi: str | None) -> str | None:
    if doi is not None and doi.startswith(ARXIV_DOI_PREFIX):
        return doi[len(ARXIV_DOI_PREFIX) :]
    return None


def _year(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value in FIELD_YEARS else None
    if isinstance(value, str):
        match = _FOUR_DIGITS.search(value)
        return int(match.group(1)) if match else None
    return None


_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv", "v", "2nd", "3rd"})
_TRUNCATION = re.compile(r"^(?:others|et\.?\s*al\.?|\.\.\.|…)$", re.IGNORECASE)


def _is_truncation(name: str) -> bool:
    return _TRUNCATION.match(name.strip()) is not None


def _person(written: str, decode: Any = None) -> ReferenceAuthor | None:
    """Split one name, ``Last, First``, ``Last, Jr, First`` or ``First von Last``.

    The BibTeX rules decide (bibtexparser's name splitter); ``First Last, Jr.``
    is read as a suffix rather than BibTeX's given name ``Jr.``. *decode*
    turns each part into plain text (the LaTeX decoder for BibTeX).
    """

    def plain(words: list[str]) -> str | None:
        joined = " ".join(words)
        return _clean(decode(joined) if decode is not None and joined else joined)

    parts_text = written.strip().rstrip(",").strip()
    if not parts_text:
        return None
    suffix_after: str | None = None
    pieces = _split_outside_braces(parts_text, ",")
    if len(pieces) == 2 and pieces[1].strip().lower() in _SUFFIXES:
        parts_text, suffix_after = pieces[0], pieces[1].strip()
    try:
        parts = parse_single_name_into_parts(parts_text, strict=False)
    except Exception:  # a third-party reader on hostile input: never crash
        parts = None
    text = plain([written]) or ""
    if parts is None or not (parts.last or parts.first):
        return ReferenceAuthor(text=text, family=text) if text else None
    family = plain(parts.last) or plain(parts.first) or text
    given = plain(parts.first) if parts.last else None
    suffix = plain(parts.jr) or suffix_after
    if not family:
        return None
    return ReferenceAuthor(
        text=text, family=family, given=given, particle=plain(parts.von), suffix=suffix
    )


def _split_outside_braces(text: str, separator: str, *, quotes: bool = False) -> list[str]:
    """Split *text* on *separator* where it is outside braces (and, if *quotes*, quotes)."""
    pieces, depth, quoted, start = [], 0, False, 0
    for position, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif quotes and char == '"' and depth == 0:
            quoted = not quoted
        elif char == separator and depth == 0 and not quoted:
            pieces.append(text[start:position])
            start = position + 1
    pieces.append(text[start:])
    return pieces


_FAMILY_INITIALS = re.compile(r"(?P<family>[^,\d]+?)\s+(?P<initials>(?:[A-Z]\.?-?\s?){1,4})")


def _people(
    names: list[str], decode: Any = None, *, family_initials: bool = False
) -> tuple[list[ReferenceAuthor], bool]:
    """The authors of *names* and whether the list was cut short (``et al.``).

    With *family_initials* (RIS), a name without a comma that ends in initials
    (``Eloubeidi M.A.``, as Embase writes it) is read family first.
    """
    authors: list[ReferenceAuthor] = []
    truncated = False
    for name in names:
        if _is_truncation(name):
            truncated = True
            continue
        written = name.strip()
        inverted = _FAMILY_INITIALS.fullmatch(written) if family_initials else None
        if inverted is not None:
            family = _clean(inverted.group("family"))
            given = _dotted_initials(" ".join(re.findall(r"[A-Z]", inverted.group("initials"))))
            if family:
                authors.append(
                    ReferenceAuthor(text=_clean(written) or family, family=family, given=given)
                )
                continue
        person = _person(name, decode)
        if person is not None:
            authors.append(person)
    return authors, truncated


# ------------------------------------------------------------------ BibTeX

_MONTHS = {
    month: str(number)
    for number, month in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}

#: The AAS journal macros ADS writes in ``journal`` (``{\apj}``) and their names.
_AAS_JOURNALS = {
    "aj": "Astronomical Journal",
    "actaa": "Acta Astronomica",
    "araa": "Annual Review of Astronomy and Astrophysics",
    "apj": "Astrophysical Journal",
    "apjl": "Astrophysical Journal Letters",
    "apjlett": "Astrophysical Journal Letters",
    "apjs": "Astrophysical Journal Supplement Series",
    "apjsupp": "Astrophysical Journal Supplement Series",
    "ao": "Applied Optics",
    "apss": "Astrophysics and Space Science",
    "aap": "Astronomy and Astrophysics",
    "astap": "Astronomy and Astrophysics",
    "aapr": "Astronomy and Astrophysics Reviews",
    "aaps": "Astronomy and Astrophysics Supplement Series",
    "azh": "Astronomicheskii Zhurnal",
    "baas": "Bulletin of the American Astronomical Society",
    "bac": "Bulletin of the Astronomical Institutes of Czechoslovakia",
    "caa": "Chinese Astronomy and Astrophysics",
    "cjaa": "Chinese Journal of Astronomy and Astrophysics",
    "icarus": "Icarus",
    "jcap": "Journal of Cosmology and Astroparticle Physics",
    "jrasc": "Journal of the Royal Astronomical Society of Canada",
    "memras": "Memoirs of the Royal Astronomical Society",
    "mnras": "Monthly Notices of the Royal Astronomical Society",
    "na": "New Astronomy",
    "nar": "New Astronomy Review",
    "pra": "Physical Review A",
    "prb": "Physical Review B",
    "prc": "Physical Review C",
    "prd": "Physical Review D",
    "pre": "Physical Review E",
    "prl": "Physical Review Letters",
    "pasa": "Publications of the Astronomical Society of Australia",
    "pasp": "Publications of the Astronomical Society of the Pacific",
    "pasj": "Publications of the Astronomical Society of Japan",
    "psj": "Planetary Science Journal",
    "rmxaa": "Revista Mexicana de Astronomia y Astrofisica",
    "qjras": "Quarterly Journal of the Royal Astronomical Society",
    "skytel": "Sky and Telescope",
    "solphys": "Solar Physics",
    "sovast": "Soviet Astronomy",
    "ssr": "Space Science Reviews",
    "zap": "Zeitschrift fuer Astrophysik",
    "nat": "Nature",
    "iaucirc": "IAU Circulars",
    "aplett": "Astrophysics Letters",
    "apspr": "Astrophysics Space Physics Research",
    "bain": "Bulletin Astronomical Institute of the Netherlands",
    "fcp": "Fundamental Cosmic Physics",
    "gca": "Geochimica Cosmochimica Acta",
    "grl": "Geophysics Research Letters",
    "jcp": "Journal of Chemical Physics",
    "jgr": "Journal of Geophysics Research",
    "jqsrt": "Journal of Quantitative Spectroscopy and Radiative Transfer",
    "memsai": "Memorie della Societa Astronomica Italiana",
    "nphysa": "Nuclear Physics A",
    "physrep": "Physics Reports",
    "physscr": "Physica Scripta",
    "planss": "Planetary and Space Science",
    "procspie": "Proceedings of the SPIE",
    "sci": "Science",
}
_AAS_MACRO = re.compile(r"\\([a-z]+)\s*")

#: The fields a ``crossref`` child takes from its parent when it lacks them.
_INHERITED = (
    "booktitle", "year", "date", "journal", "journaltitle", "volume", "series",
    "publisher", "editor", "month",
)  # fmt: skip


class _Macros:
    """``@string`` macros and the expansion budget of one text."""

    def __init__(self, text_bytes: int) -> None:
        #: Each macro's value and its UTF-8 length; ``None`` when it was too large.
        self.values: dict[str, tuple[str, int] | None] = {
            name: (value, len(value)) for name, value in _MONTHS.items()
        }
        self.budget = MACRO_EXPANSION_FACTOR * max(text_bytes, 1)

    def evaluate(self, pieces: tuple[Piece, ...]) -> tuple[str, int] | None:
        """The value of *pieces* and its UTF-8 length, or ``None`` when it would be too large.

        An undefined macro is empty, as BibTeX makes it. A value without a macro
        is its own text, whatever its size; one with a macro is at most
        :data:`MAX_MACRO_BYTES`, and what macros produce is charged to the budget.
        """
        if not any(piece.macro for piece in pieces):
            joined = "".join(piece.text for piece in pieces)
            return joined, -1
        out: list[str] = []
        size = produced = 0
        for piece in pieces:
            if piece.macro:
                found = self.values.get(piece.text.lower(), ("", 0))
                if found is None:
                    return None
                value, length = found
                produced += length
            else:
                value, length = piece.text, _utf8_length(piece.text)
            size += length
            if size > MAX_MACRO_BYTES or produced > self.budget:
                return None
            out.append(value)
        self.budget -= produced
        return "".join(out), size


def _read_bibtex(text: str) -> list[Reference]:
    lines = _Lines(text)
    macros = _Macros(_utf8_length(text))
    # Macros are defined in file order; every entry sees the final definitions.
    slots: list[Reference | RawBlock] = []
    for block in scan_bibtex(text):
        span = (block.start, block.end)
        if block.kind is BlockKind.MALFORMED:
            raw = text[block.start : block.end]
            slots.append(
                _unparsed(text, span, UnparsedReason.BIBTEX_SYNTAX, lines, _bibtex_key(raw))
            )
        elif block.kind is BlockKind.STRING:
            name, pieces = block.fields[0]
            value = macros.evaluate(pieces)
            if value is not None and value[1] < 0:
                value = (value[0], _utf8_length(value[0]))
            macros.values[name] = value
            if value is None:
                slots.append(
                    _unparsed(text, span, UnparsedReason.MACRO_TOO_LARGE, lines, block.key)
                )
        elif block.kind is BlockKind.ENTRY:
            slots.append(block)
    evaluated: list[dict[str, str] | None] = []
    parents: dict[str, int] = {}
    for slot in slots:
        if not isinstance(slot, RawBlock):
            evaluated.append(None)
            continue
        fields: dict[str, str] | None = {}
        for name, pieces in slot.fields:
            value = macros.evaluate(pieces)
            if value is None:
                fields = None
                break
            fields[name] = value[0]  # type: ignore[index]
        evaluated.append(fields)
        if slot.key is not None:
            parents.setdefault(slot.key.lower(), len(evaluated) - 1)
    cycles = _crossref_cycles(evaluated, parents)
    entries: list[Reference] = []
    for position, slot in enumerate(slots):
        if not isinstance(slot, RawBlock):
            entries.append(slot)
            continue
        span = (slot.start, slot.end)
        fields = evaluated[position]
        if fields is None:
            entries.append(_unparsed(text, span, UnparsedReason.MACRO_TOO_LARGE, lines, slot.key))
        elif position in cycles:
            entries.append(_unparsed(text, span, UnparsedReason.CROSSREF_CYCLE, lines, slot.key))
        else:
            parent = _parent(fields, evaluated, parents)
            entries.append(
                _bibtex_entry(slot, _inherit(fields, parent), _placed(text, span, lines))
            )
    return entries


def _parent(
    fields: Mapping[str, str], evaluated: list[dict[str, str] | None], parents: Mapping[str, int]
) -> dict[str, str] | None:
    target = fields.get("crossref", "").strip().lower()
    position = parents.get(target) if target else None
    return None if position is None else evaluated[position]


def _crossref_cycles(
    evaluated: list[dict[str, str] | None], parents: Mapping[str, int]
) -> set[int]:
    """The entries whose ``crossref`` chain comes back to themselves (one pass, linear)."""

    def target(position: int) -> int | None:
        fields = evaluated[position]
        key = fields.get("crossref", "").strip().lower() if fields else ""
        return parents.get(key) if key else None

    state = [0] * len(evaluated)  # 0 unseen, 1 on the current path, 2 finished
    cycles: set[int] = set()
    for first in range(len(evaluated)):
        path: list[int] = []
        node: int | None = first
        while node is not None and state[node] == 0:
            state[node] = 1
            path.append(node)
            node = target(node)
        if node is not None and state[node] == 1:
            cycles.update(path[path.index(node) :])
        for visited in path:
            state[visited] = 2
    return cycles


def _inherit(fields: dict[str, str], parent: Mapping[str, str] | None) -> dict[str, str]:
    """*fields* with what BibTeX's ``crossref`` gives a child from its parent (one level)."""
    if parent is None:
        return fields
    merged = dict(fields)
    for name in _INHERITED:
        if name not in merged and name in parent:
            merged[name] = parent[name]
    # biblatex: a parent's title is the book title of its child.
    if "booktitle" not in merged and "title" in parent:
        merged["booktitle"] = parent["title"]
    return merged


def _bibtex_key(raw: str) -> str | None:
    match = re.match(r"\s*@[^{(\n]*[{(]\s*([^\s,{}()=\"#%']+)\s*,", raw)
    return match.group(1) if match else None


_DBLP_NUMBER = re.compile(r"\s+\d{4}(?=\s*(?:,|$))")


def _bibtex_names(people: str) -> list[str]:
    """The names of an ``author`` field, accents decoded and dblp homonym numbers dropped."""
    people = decode_accents(people)
    try:
        names = split_multiple_persons_names(people) if people.strip() else []
    except Exception:  # a third-party reader on hostile input: never crash
        names = [people]
    # dblp tells homonyms apart by a number (``Wei Wang 0001``) that is not a name.
    return [_DBLP_NUMBER.sub("", name) if " " in name.strip() else name for name in names]


def _bibtex_entry(block: RawBlock, fields: Mapping[str, str], place: dict[str, Any]) -> Reference:
    def decoded(*names: str) -> str | None:
        for name in names:
            value = _clean(latex_to_text(fields[name])) if name in fields else None
            if value:
                return value
        return None

    authors, truncated = _people(
        _bibtex_names(fields.get("author") or fields.get("editor") or ""), latex_to_text
    )
    doi = normalize_doi(_identifier(fields.get("doi"))) or find_doi(_identifier(fields.get("url")))
    eprint = _clean(fields.get("eprint"))
    prefix = (fields.get("archiveprefix") or fields.get("eprinttype") or "").strip().lower()
    eprint_match = _ARXIV_ID.match(eprint) if eprint else None
    if eprint_match and prefix in ("", "arxiv"):
        arxiv_id: str | None = eprint_match.group(1)
    else:
        arxiv_id = _arxiv_from_doi(doi) or _first_arxiv(
            fields, ("journal", "url", "note", "howpublished")
        )
    return Reference(
        index=0,
        key=_clean(block.key),
        entry_type=_clean((block.entry_type or "").lower()),
        title=decoded("title"),
        authors=tuple(authors),
        authors_truncated=truncated,
        year=_year(fields.get("year")) or _year(fields.get("date")),
        venue=_aas_journal(fields.get("journal"))
        or decoded("journal", "journaltitle", "booktitle"),
        doi=doi,
        arxiv_id=arxiv_id,
        volume=decoded("volume"),
        issue=decoded("number", "issue"),
        pages=decoded("pages"),
        crossref=_clean(fields.get("crossref")),
        **place,
    )


_TEX_ESCAPE = re.compile(r"\\([_%#&$~])|[{}]")


def _identifier(value: str | None) -> str | None:
    r"""A DOI or URL field as text: braces dropped and ``\_``, ``\%``, ``\#``, ``\&`` unescaped."""
    if value is None:
        return None
    return _clean(_TEX_ESCAPE.sub(lambda match: match.group(1) or "", value))


def _aas_journal(value: str | None) -> str | None:
    r"""The journal an AAS macro names (``\apj``), when the field is only that macro."""
    match = _AAS_MACRO.fullmatch(value.strip()) if value else None
    return _AAS_JOURNALS.get(match.group(1)) if match else None


def _first_arxiv(fields: Mapping[str, object], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = fields.get(name)
        found = find_arxiv_id(value) if isinstance(value, str) else None
        if found is not None:
            return found
    return None


# ------------------------------------------------------------------ RIS

_RIS_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")


#: Lines outside a record that are an export's numbering or trailer, not a reference:
#: Ovid and EndNote number their records (``1.``, ``<1>``, ``Record 2 of 40``), Ovid
#: follows each with its links (``Link to the Ovid Full Text or citation: ...``), and
#: an export may end with a stray ``ER`` or an end-of-file character.
_RIS_FURNITURE = re.compile(
    r"(?:\d{1,6}\.?|<\d{1,6}>|\[\d{1,6}\]|(?:record|reference)\s+\d+(?:\s+of\s+\d+)?"
    r"|ER  -.*|Link to the (?:Ovid|External) .*|[\x1a\s.*=_-]*)",
    re.IGNORECASE,
)


def _ris_records(text: str) -> Iterator[tuple[tuple[int, int], bool]]:
    """Yield each record's span (``TY`` up to ``ER`` or the next ``TY``) and whether it is one.

    Non-blank lines outside a record come out as one span flagged ``False``,
    unless they are only an export's numbering or trailer.
    """
    record: tuple[int, int] | None = None
    outside: tuple[int, int] | None = None
    # Ovid writes a tag (``NL``) after a record's ER: it trails that record.
    trailing = False
    offset = 0
    for line in text.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        stripped = line.strip()
        end = start + len(line.rstrip())
        tag = _RIS_TAG.match(stripped)
        name = tag.group(1) if tag else None
        if name == "TY":
            if outside is not None:
                yield outside, False
                outside = None
            if record is not None:
                yield record, True
            record = (start + len(line) - len(line.lstrip()), end)
        elif record is not None:
            if stripped:
                record = (record[0], end)
            if name == "ER":
                yield record, True
                record, trailing = None, True
        elif trailing and name is not None:
            pass
        elif stripped and not _RIS_FURNITURE.fullmatch(stripped):
            first = start + len(line) - len(line.lstrip())
            outside = (first, end) if outside is None else (outside[0], end)
        if record is None and not (stripped and name is not None):
            trailing = False
    if outside is not None:
        yield outside, False
    if record is not None:
        yield record, True


def _read_ris(text: str) -> list[Reference]:
    lines = _Lines(text)
    entries: list[Reference] = []
    for span, is_record in _ris_records(text):
        if not is_record:
            entries.append(_unparsed(text, span, UnparsedReason.RIS_OUTSIDE_RECORD, lines))
            continue
        chunk = text[span[0] : span[1]]
        # A record cut off before its ER is read as far as it goes.
        last = chunk.splitlines()[-1].strip()
        closed = chunk if last.startswith("ER  -") else chunk + "\nER  - "
        try:
            [record] = rispy.loads(closed)
        except Exception:  # a third-party reader on hostile input: never crash
            entries.append(_unparsed(text, span, UnparsedReason.RIS_SYNTAX, lines))
            continue
        entries.append(_ris_entry(record, _placed(text, span, lines)))
    return entries


def _ris_first(record: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = record.get(name)
        if isinstance(value, list):
            value = next((item for item in value if isinstance(item, str) and item.strip()), None)
        cleaned = _clean(value)
        if cleaned:
            return cleaned
    return None


def _ris_entry(record: Mapping[str, Any], place: dict[str, Any]) -> Reference:
    names = [
        name
        for tag in ("authors", "first_authors")
        for name in record.get(tag) or []
        if isinstance(name, str)
    ]
    authors, truncated = _people(names, family_initials=True)
    urls = record.get("urls") or []
    url_text = " ".join(url for url in urls if isinstance(url, str))
    start = _ris_first(record, "start_page")
    end = _ris_first(record, "end_page")
    doi = normalize_doi(_ris_first(record, "doi")) or find_doi(url_text)
    return Reference(
        index=0,
        key=_ris_first(record, "id"),
        entry_type=_ris_first(record, "type_of_reference"),
        title=_ris_first(record, "title", "primary_title", "short_title"),
        authors=tuple(authors),
        authors_truncated=truncated,
        year=_year(_ris_first(record, "year", "publication_year", "date")),
        venue=_ris_first(
            record,
            "secondary_title",
            "alternate_title3",
            "journal_name",
            "alternate_title2",
            "alternate_title1",
        ),
        doi=doi,
        arxiv_id=_arxiv_from_doi(doi)
        or find_arxiv_id(url_text)
        or find_arxiv_id(_ris_first(record, "secondary_title", "journal_name")),
        volume=_ris_first(record, "volume"),
        issue=_ris_first(record, "number"),
        pages=f"{start}-{end}" if start and end else start,
        **place,
    )


# ------------------------------------------------------------------ CSL-JSON


_JSON_SPACE = re.compile(r"[ \t\r\n]*")


def _read_csl_json(text: str) -> list[Reference]:
    # The C parser raises RecursionError (never overflows the stack) on deep
    # nesting; notanda-openalex cannot import the evidence package's depth
    # guard, and nothing below walks the parsed value recursively.
    lines = _Lines(text)
    whole = (len(text) - len(text.lstrip()), len(text.rstrip()))
    try:
        data = json.loads(text)
    except RecursionError:
        return [_unparsed(text, whole, UnparsedReason.JSON_TOO_DEEP, lines)]
    except ValueError:
        return [_unparsed(text, whole, UnparsedReason.JSON_SYNTAX, lines)]
    if isinstance(data, dict):
        return [_csl_entry(data, _placed(text, whole, lines))]
    if not isinstance(data, list):
        return [_unparsed(text, whole, UnparsedReason.CSL_NOT_A_LIST, lines)]
    entries: list[Reference] = []
    for item, span in zip(data, _json_array_spans(text, whole[0]), strict=True):
        if not isinstance(item, dict):
            entries.append(_unparsed(text, span, UnparsedReason.CSL_NOT_AN_OBJECT, lines))
            continue
        entries.append(_csl_entry(item, _placed(text, span, lines)))
    return entries


def _json_array_spans(text: str, start: int) -> Iterator[tuple[int, int]]:
    """The span of each element of the valid JSON array at *start* (each decoded once)."""
    decoder = json.JSONDecoder()
    position = _JSON_SPACE.match(text, start + 1).end()  # type: ignore[union-attr]
    while position < len(text) and text[position] != "]":
        _, end = decoder.raw_decode(text, position)
        yield position, end
        position = _JSON_SPACE.match(text, end).end()  # type: ignore[union-attr]
        if position < len(text) and text[position] == ",":
            position = _JSON_SPACE.match(text, position + 1).end()  # type: ignore[union-attr]


def _csl_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        value = next((item for item in value if isinstance(item, str)), None)
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    return _clean(value)


def _csl_year(issued: object) -> int | None:
    if isinstance(issued, dict):
        parts = issued.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            year = _year(parts[0][0])
            if year is not None:
                return year
        return _year(issued.get("raw")) or _year(issued.get("literal"))
    return _year(issued)


def _csl_name(name: object) -> ReferenceAuthor | bool | None:
    """A CSL name object; ``True`` when it marks a truncated list."""
    if isinstance(name, str):
        return True if _is_truncation(name) else _person(name)
    if not isinstance(name, dict):
        return None
    family = _csl_text(name.get("family"))
    literal = _csl_text(name.get("literal"))
    given = _csl_text(name.get("given"))
    if (family and _is_truncation(family) and not given) or (literal and _is_truncation(literal)):
        return True
    particle = " ".join(
        part
        for part in (
            _csl_text(name.get("dropping-particle")),
            _csl_text(name.get("non-dropping-particle")),
        )
        if part
    )
    suffix = _csl_text(name.get("suffix"))
    if family is None:
        if literal is None:
            return None
        return ReferenceAuthor(text=literal, family=literal)
    text = " ".join(part for part in (given, particle, family, suffix) if part)
    return ReferenceAuthor(
        text=text, family=family, given=given, particle=particle or None, suffix=suffix
    )


def _csl_entry(item: Mapping[str, Any], place: dict[str, Any]) -> Reference:
    names: list[Any] = []
    for role in ("author", "editor"):
        value = item.get(role)
        if isinstance(value, list):
            names = value
            break
    authors: list[ReferenceAuthor] = []
    truncated = False
    for name in names:
        person = _csl_name(name)
        if person is True:
            truncated = True
        elif isinstance(person, ReferenceAuthor):
            authors.append(person)
    doi_field = _csl_text(item.get("DOI")) or _csl_text(item.get("doi"))
    url = _csl_text(item.get("URL")) or ""
    doi = normalize_doi(doi_field) or find_doi(url)
    key = _csl_text(item.get("citation-key")) or _csl_text(item.get("id"))
    return Reference(
        index=0,
        key=key,
        entry_type=_csl_text(item.get("type")),
        title=_csl_text(item.get("title")),
        authors=tuple(authors),
        authors_truncated=truncated,
        year=_csl_year(item.get("issued")),
        venue=_csl_text(item.get("container-title"))
        or _csl_text(item.get("container-title-short")),
        doi=doi,
        arxiv_id=_arxiv_from_doi(doi)
        or find_arxiv_id(url)
        or find_arxiv_id(_csl_text(item.get("number")))
        or find_arxiv_id(_csl_text(item.get("container-title"))),
        volume=_csl_text(item.get("volume")),
        issue=_csl_text(item.get("issue")),
        pages=_csl_text(item.get("page")),
        **place,
    )


# ------------------------------------------------------------------ plain text


def text_blocks(text: str) -> list[str]:
    """Split plain text into entries: one per line, or per block when blank lines separate them."""
    return [text[start:end] for start, end in _text_spans(text)]


def _text_spans(text: str) -> list[tuple[int, int]]:
    """The span of each entry of plain text (see :func:`text_blocks`), without outer whitespace."""
    lines: list[tuple[int, int]] = []  # each line's span, blank lines as (start, start)
    offset = 0
    for line in text.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        body = line.strip()
        first = start + (len(line) - len(line.lstrip())) if body else start
        lines.append((first, first + len(body)))
    blank = [start == end for start, end in lines]
    first = next((n for n, empty in enumerate(blank) if not empty), len(blank))
    last = next((n for n in range(len(blank) - 1, -1, -1) if not blank[n]), -1)
    if not any(blank[first : last + 1]):
        return [span for span, empty in zip(lines, blank, strict=True) if not empty]
    blocks: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for span, empty in zip(lines, blank, strict=True):
        if not empty:
            current = span if current is None else (current[0], span[1])
        elif current is not None:
            blocks.append(current)
            current = None
    if current is not None:
        blocks.append(current)
    return blocks


_NUMBERING = re.compile(r"^\s*(?:\[\d{1,4}\]|\(\d{1,4}\)|\d{1,4}[.)])\s+")
_URLISH = re.compile(
    r"(?:https?://|www\.)\S+|\bdoi:\s*\S+|\b10\.\d{4,9}/\S+|\barxiv:\s*\S+", re.IGNORECASE
)
#: ``(2020)``, ``(2020a)``, ``(2020, May 3)``: an APA year, if in :data:`TEXT_YEARS`.
_APA_YEAR = re.compile(r"\((\d{4})[a-z]?(?:,[^()]{0,30})?\)\.?")
_QUOTED = re.compile(r"[\"“”]([^\"“”]{3,}?)[,.]?[\"“”]")
_INITIALS = re.compile(r"^(?:[A-Z][a-z]?\.?[\s-]*){1,4}$")
_VANCOUVER_NAME = re.compile(r"^[^\d,.;()]+?\s[A-Z]{1,4}$")
_VOL_ISSUE_PAGES = (
    re.compile(r";\s*(?P<volume>\d+)\s*(?:\((?P<issue>[^)]+)\))?\s*:\s*(?P<pages>[\w\u2013-]+)"),
    re.compile(r",\s*(?P<volume>\d+)\s*\((?P<issue>[^)]+)\),\s*(?P<pages>[\w\u2013-]+)"),
)


def _read_text(text: str) -> list[Reference]:
    lines = _Lines(text)
    return [_text_entry(_placed(text, span, lines)) for span in _text_spans(text)]


def _text_entry(place: dict[str, Any]) -> Reference:
    line = _clean(place["raw"]) or ""
    doi = find_doi(line)
    arxiv_id = _arxiv_from_doi(doi) or find_arxiv_id(line)
    body = _NUMBERING.sub("", _URLISH.sub(" ", line)).strip()
    body = re.sub(r"\b(?:Available|Retrieved)(?: from| at)?:?\s*$", "", body).strip()
    if not body.strip(" .,;:[]()"):
        return Reference(index=0, doi=doi, arxiv_id=arxiv_id, **place)  # a bare DOI or URL
    return Reference(index=0, doi=doi, arxiv_id=arxiv_id, **place, **_read_citation(body))


def _text_years(text: str) -> list[str]:
    """The four-digit numbers of *text* that are years in running text (:data:`TEXT_YEARS`)."""
    return [digits for digits in _FOUR_DIGITS.findall(text) if _is_text_year(digits)]


def _is_text_year(digits: str) -> bool:
    r"""Four digits that name a year in running text: in :data:`TEXT_YEARS`, century in ASCII.

    ``\d`` also matches other scripts' digits; a year's first two are ASCII here
    (``19٩٩`` is read as 1999, ``١٩٩٩`` is not), as the readers have always had it.
    """
    return digits[:2].isascii() and int(digits) in TEXT_YEARS


def _read_citation(body: str) -> dict[str, Any]:
    """Best-effort reading of APA, IEEE-like and Vancouver citations (documented rules)."""
    apa = next((m for m in _APA_YEAR.finditer(body) if _is_text_year(m.group(1))), None)
    quoted = _QUOTED.search(body)
    authors_text: str | None = None
    title: str | None = None
    venue: str | None = None
    rest: str | None = None
    year: int | None = None
    # APA only when the year in parentheses follows the authors: not after a quoted title.
    if apa is not None and quoted is not None and quoted.start() < apa.start():
        apa = None
    if apa is not None:
        year = int(apa.group(1))
        authors_text = body[: apa.start()]
        title, rest = _sentence(body[apa.end() :].strip())
        venue = _venue(rest)
    elif quoted is not None:
        authors_text = body[: quoted.start()]
        title = _clean(quoted.group(1).strip(" ,."))
        rest = body[quoted.end() :].strip(" ,.")
        head = re.sub(r"^in\s+", "", rest, flags=re.IGNORECASE).split(",", 1)[0].strip(" .")
        venue = None if _text_years(head) == [head] else _clean(head)
    else:
        vancouver = re.match(r"^([^.]*?)\.\s+(.*)$", body)
        if vancouver is not None and _vancouver_authors(vancouver.group(1)):
            authors_text = vancouver.group(1)
            title, rest = _sentence(vancouver.group(2))
            venue = _venue(rest)
    if year is None:
        years = _text_years(body)
        year = int(years[-1]) if years else None
    authors, truncated = (
        _text_authors(authors_text, inverted_first=apa is None and quoted is not None)
        if authors_text
        else ([], False)
    )
    volume, issue, pages = _text_numbers(rest) if rest else (None, None, None)
    return {
        "title": title,
        "authors": tuple(authors),
        "authors_truncated": truncated,
        "year": year,
        "venue": venue,
        "volume": volume,
        "issue": issue,
        "pages": pages,
    }


def _sentence(text: str) -> tuple[str | None, str | None]:
    """Split off the first sentence (up to ``. ``, ``? `` or ``! ``; ``?``/``!`` stay)."""
    match = re.search(r"(?<=[^\s.A-Z])[.?!](?:\s+|$)|(?<=[a-z]{2}\.)\s+", text)
    if match is None:
        return _clean(text.strip(" .")), None
    head = text[: match.start() + 1] if text[match.start()] in "?!" else text[: match.start()]
    return _clean(head.strip(" .")), text[match.end() :].strip() or None


def _venue(rest: str | None) -> str | None:
    if not rest:
        return None
    head = re.split(r",|;|\.\s|\s\d|\(", rest, maxsplit=1)[0]
    head = re.sub(r"\b(?:vol|no|pp)\.?$", "", head).strip(" .,:")
    if not head or head.isdigit():
        return None
    return _clean(head)


def _text_numbers(rest: str) -> tuple[str | None, str | None, str | None]:
    """Volume, issue and pages from the text after the title."""
    for pattern in _VOL_ISSUE_PAGES:
        match = pattern.search(rest)
        if match:
            return match.group("volume"), match.group("issue"), match.group("pages")
    volume = re.search(r"\bvol\.\s*(\w+)", rest)
    issue = re.search(r"\bno\.\s*(\w+)", rest)
    pages = re.search(r"\bpp?\.\s*([\w]+(?:\s*[\u2013-]+\s*\w+)?)", rest)
    return (
        volume.group(1) if volume else None,
        issue.group(1) if issue else None,
        pages.group(1).replace(" ", "") if pages else None,
    )


def _vancouver_authors(text: str) -> bool:
    names = [name.strip() for name in text.split(",")]
    names = [name for name in names if not _is_truncation(name)]
    return bool(names) and all(_VANCOUVER_NAME.match(name) for name in names)


def _text_authors(text: str, *, inverted_first: bool = False) -> tuple[list[ReferenceAuthor], bool]:
    """Authors from the text before the year or title.

    Tokens are separated by ``;``, ``,``, ``&`` and ``and``. A token of
    initials after another token is that token's given name (``Smith, J. A.``);
    ``Smith JA`` (Vancouver) has its initials last; anything else is read as
    ``First Last``. With *inverted_first* (before a quoted title, as Chicago
    and MLA write it), ``Smith, John`` starting the list is one name, family first.
    """
    truncated = False
    text = text.strip(" .,")
    if re.search(r"\bet\.?\s*al\b\.?|\band others\b|…|\.\.\.", text, re.IGNORECASE):
        truncated = True
        text = re.sub(r",?\s*(?:\bet\.?\s*al\b\.?|\band others\b|…|\.\.\.)", "", text, flags=re.I)
    tokens = [
        token.strip(" .")
        for token in re.split(r"\s*(?:;|,|&|\band\b)\s*", text)
        if token.strip(" .")
    ]
    authors: list[ReferenceAuthor] = []
    position = 0
    if (
        inverted_first
        and len(tokens) >= 2
        and len(tokens[0].split()) == 1
        and 1 <= len(tokens[1].split()) <= 2
        and re.match(r"^[^,;&]+,\s*[^,;&]+?(?:,|$)", text)
    ):
        family, given = tokens[0], tokens[1]
        authors.append(ReferenceAuthor(text=f"{family}, {given}", family=family, given=given))
        position = 2
    while position < len(tokens):
        token = tokens[position]
        following = tokens[position + 1] if position + 1 < len(tokens) else None
        if (
            following is not None
            and _INITIALS.match(following + ".")
            and not _INITIALS.match(token + ".")
        ):
            given = _dotted_initials(following)
            authors.append(ReferenceAuthor(text=f"{token}, {given}", family=token, given=given))
            position += 2
            continue
        vancouver = re.match(r"^(.+?)\s([A-Z]{1,4})$", token)
        if vancouver:
            family, letters = vancouver.groups()
            given = " ".join(f"{letter}." for letter in letters)
            authors.append(ReferenceAuthor(text=token, family=family, given=given))
        else:
            person = _person(token)
            if person is not None:
                authors.append(person)
        position += 1
    return authors, truncated


def _dotted_initials(text: str) -> str:
    """Initials as a given name is written: each letter group ends with a full stop (``J. R.``)."""
    return " ".join(part if part.endswith(".") else part + "." for part in text.split())


_READERS = {
    ReferenceFormat.BIBTEX: _read_bibtex,
    ReferenceFormat.RIS: _read_ris,
    ReferenceFormat.CSL_JSON: _read_csl_json,
    ReferenceFormat.TEXT: _read_text,
}
