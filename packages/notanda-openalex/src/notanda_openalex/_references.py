"""Reading a bibliography: :func:`parse_references` and the reference data model.

This module owns the formats a bibliography may arrive in (BibTeX, RIS,
CSL-JSON, plain text), the deterministic auto-detection between them, the
limits of one call and the reasons an entry could not be read. It contacts
nothing: resolution against OpenAlex builds on its output. The rules are
documented in ``docs/openalex-client.md`` ("Reading references").
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import bibtexparser
import rispy
from bibtexparser import model
from bibtexparser.middlewares.names import (
    parse_single_name_into_parts,
    split_multiple_persons_names,
)
from harvester.identity import normalize_doi as _core_normalize_doi
from pylatexenc.latex2text import LatexNodes2Text

from ._errors import InputReason, ReferenceInputError
from ._text import clean_display_text, replace_lone_surrogates
from ._vocabulary import MAX_REFERENCES, MAX_REFERENCES_BYTES

__all__ = [
    "ARXIV_DOI_PREFIX",
    "ParsedReferences",
    "Reference",
    "ReferenceAuthor",
    "ReferenceFormat",
    "UnparsedReason",
    "parse_references",
    "read_bibliography",
]

#: The DataCite prefix under which arXiv registers a DOI for every preprint.
ARXIV_DOI_PREFIX = "10.48550/arxiv."
#: Longer fields are not given to the LaTeX decoder (it is slow on long text);
#: their braces are removed instead.
_LATEX_DECODE_MAX = 4096


class ReferenceFormat(StrEnum):
    """The ``format`` argument of :func:`parse_references`."""

    AUTO = "auto"
    BIBTEX = "bibtex"
    RIS = "ris"
    CSL_JSON = "csl-json"
    TEXT = "text"


class UnparsedReason(StrEnum):
    """Why an entry of the input could not be read as a reference."""

    #: BibTeX that the parser could not read (unbalanced braces, no key, cut off).
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
    """Read a bibliography into references, one per entry, in input order.

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
    if not isinstance(format, str):
        raise ReferenceInputError("format", InputReason.NOT_A_STRING)
    try:
        chosen = ReferenceFormat(format)
    except ValueError:
        raise ReferenceInputError("format", InputReason.INVALID_VALUE) from None
    if not isinstance(text, str):
        raise ReferenceInputError("text", InputReason.NOT_A_STRING)
    # A lone surrogate is one code point of three UTF-8 bytes, as is U+FFFD.
    text = replace_lone_surrogates(text)
    if len(text) > MAX_REFERENCES_BYTES or len(text.encode("utf-8")) > MAX_REFERENCES_BYTES:
        raise ReferenceInputError("text", InputReason.TOO_LONG, limit=MAX_REFERENCES_BYTES)
    if not text.strip():
        raise ReferenceInputError("text", InputReason.EMPTY)
    return _read_all(text, chosen, MAX_REFERENCES)


def read_bibliography(text: str, format: str = "auto") -> ParsedReferences:
    """Read a whole bibliography file, of any size and any number of entries.

    The same reading as :func:`parse_references` (macros and the rest are
    file-wide), without its limits of one tool call: the caller checks the
    result in parts (``notanda-mcp check-references``). It is linear in the
    size of *text*; the caller bounds what it reads.

    Raises:
        ReferenceInputError: ``text`` is not a string or is blank, or the
            format is unknown.
    """
    if not isinstance(format, str):
        raise ReferenceInputError("format", InputReason.NOT_A_STRING)
    try:
        chosen = ReferenceFormat(format)
    except ValueError:
        raise ReferenceInputError("format", InputReason.INVALID_VALUE) from None
    if not isinstance(text, str):
        raise ReferenceInputError("text", InputReason.NOT_A_STRING)
    text = replace_lone_surrogates(text)
    if not text.strip():
        raise ReferenceInputError("text", InputReason.EMPTY)
    return _read_all(text, chosen, None)


def _read_all(text: str, chosen: ReferenceFormat, most: int | None) -> ParsedReferences:
    """Detect the format when asked, read every entry, and number them (at most *most*)."""
    detected = chosen is ReferenceFormat.AUTO
    if detected:
        chosen = detect_format(text)
    entries = _READERS[chosen](text, most)
    if not entries:
        entries = [_unparsed(text.strip(), UnparsedReason.NO_REFERENCE_FOUND)]
    _check_count(len(entries), most)
    references = tuple(_numbered(position, entry) for position, entry in enumerate(entries))
    return ParsedReferences(format=chosen, detected=detected, references=references)


_BIBTEX_START = re.compile(r"^[ \t]*@[ \t]*[A-Za-z]+[ \t]*[{(]", re.MULTILINE)
_RIS_START = re.compile(r"^[ \t]*TY  -", re.MULTILINE)


def _check_count(count: int, most: int | None = MAX_REFERENCES) -> None:
    """Refuse more than *most* entries (readers call it before the costly part); None: any."""
    if most is not None and count > most:
        raise ReferenceInputError("text", InputReason.TOO_MANY, limit=MAX_REFERENCES)


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


def _unparsed(raw: str, reason: UnparsedReason, key: str | None = None) -> Reference:
    """An entry that could not be read; :func:`parse_references` numbers it."""
    return Reference(index=0, raw=raw, key=_clean(key), unparsed_reason=reason)


def _numbered(index: int, reference: Reference) -> Reference:
    """*reference* at its position, unparsed when it holds nothing to look up."""
    if reference.parsed and not (reference.title or reference.doi or reference.arxiv_id):
        reference = _unparsed(reference.raw, UnparsedReason.NO_TITLE_OR_IDENTIFIER, reference.key)
    return replace(reference, index=index)


def _clean(value: object) -> str | None:
    """Cleaned text (no control or format characters, whitespace collapsed) or ``None``."""
    return clean_display_text(value)


_DOI_IN_TEXT = re.compile(r"10\.\d{4,9}/[^\s\"<>{}]+")
_ARXIV_IN_TEXT = re.compile(
    r"(?:arxiv(?:\.org/(?:abs|pdf)/|:\s*|\s+)|10\.48550/arxiv\.)"
    r"(\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7})(?:v\d+)?",
    re.IGNORECASE,
)
_ARXIV_ID = re.compile(r"^(?:arxiv:\s*)?(\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7})(?:v\d+)?$", re.I)
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")


def normalize_doi(value: str | None) -> str | None:
    """The core's DOI normalization (case, resolver and ``doi:`` prefixes, trailing punctuation)."""
    doi: str | None = _core_normalize_doi(value)
    return doi


def find_doi(text: str | None) -> str | None:
    """Return the first DOI written in *text*, normalized, or ``None``."""
    if not text:
        return None
    for match in _DOI_IN_TEXT.finditer(text):
        doi = normalize_doi(match.group(0))
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
        return value if 1000 <= value <= 2999 else None
    if isinstance(value, str):
        match = re.search(r"(?<!\d)(\d{4})(?!\d)", value)
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


def _people(names: list[str], decode: Any = None) -> tuple[list[ReferenceAuthor], bool]:
    authors: list[ReferenceAuthor] = []
    truncated = False
    for name in names:
        if _is_truncation(name):
            truncated = True
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


def _bibtex_value(value: object, macros: Mapping[str, str]) -> str:
    """Evaluate a raw field value: braces, quotes, numbers, ``@string`` macros and ``#``.

    An undefined macro is empty, as BibTeX makes it.
    """
    if not isinstance(value, str):
        return str(value)
    out: list[str] = []
    # BibTeX's concatenation operator, outside braces and quotes.
    for piece in (p.strip() for p in _split_outside_braces(value, "#", quotes=True)):
        if (len(piece) >= 2 and piece[0] == "{" and piece[-1] == "}") or (
            len(piece) >= 2 and piece[0] == '"' and piece[-1] == '"'
        ):
            out.append(piece[1:-1])
        elif piece.isdigit():
            out.append(piece)
        else:
            out.append(macros.get(piece.lower(), ""))
    return "".join(out)


@functools.cache
def _latex_decoder() -> Any:
    """One decoder for every call: building its macro tables costs more than decoding."""
    return LatexNodes2Text(strict_latex_spaces=True)


def _latex_to_text(value: str) -> str:
    """Decode LaTeX with pylatexenc; on text it cannot take, drop the braces instead."""
    if "--" not in value and not any(char in value for char in "\\{}$~%"):
        return value
    if len(value) <= _LATEX_DECODE_MAX:
        try:
            decoded = _latex_decoder().latex_to_text(value)
        except (RecursionError, Exception):  # hostile LaTeX must never crash the reader
            decoded = None
        if isinstance(decoded, str):
            return decoded
    return value.replace("{", "").replace("}", "")


def _read_bibtex(text: str, most: int | None = MAX_REFERENCES) -> list[Reference]:
    # The documented entry point; bibtexparser re-exports it without __all__.
    library = bibtexparser.parse_string(text, parse_stack=[])  # type: ignore[attr-defined]
    macros = dict(_MONTHS)
    for string in library.strings:
        macros[string.key.lower()] = _bibtex_value(string.value, macros)
    entries: list[Reference] = []
    _check_count(
        sum(isinstance(b, model.Entry | model.ParsingFailedBlock) for b in library.blocks), most
    )
    for found in library.blocks:
        block = found
        # A repeated key is still a citation to check; only the key is shared.
        if isinstance(found, model.DuplicateBlockKeyBlock) and isinstance(
            found.ignore_error_block, model.Entry
        ):
            block = found.ignore_error_block
        if isinstance(block, model.Entry):
            entries.append(_bibtex_entry(block, macros))
        elif isinstance(block, model.ParsingFailedBlock):
            raw = replace_lone_surrogates(block.raw or "")
            entries.append(_unparsed(raw.strip(), UnparsedReason.BIBTEX_SYNTAX, _bibtex_key(raw)))
    return entries


def _bibtex_key(raw: str) -> str | None:
    match = re.match(r"\s*@\s*[A-Za-z]+\s*[{(]\s*([^\s,{}()=\"#%']+)\s*,", raw)
    return match.group(1) if match else None


def _bibtex_entry(block: model.Entry, macros: Mapping[str, str]) -> Reference:
    fields = {str(f.key).lower(): _bibtex_value(f.value, macros) for f in block.fields}

    def decoded(*names: str) -> str | None:
        for name in names:
            value = _clean(_latex_to_text(fields[name])) if name in fields else None
            if value:
                return value
        return None

    people = fields.get("author") or fields.get("editor") or ""
    try:
        names = split_multiple_persons_names(people) if people.strip() else []
    except Exception:  # a third-party reader on hostile input: never crash
        names = [people]
    authors, truncated = _people(names, _latex_to_text)
    doi = normalize_doi(_clean(fields.get("doi"))) or find_doi(_clean(fields.get("url")))
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
        raw=(block.raw or "").strip(),
        key=_clean(block.key),
        entry_type=_clean(block.entry_type.lower()),
        title=decoded("title"),
        authors=tuple(authors),
        authors_truncated=truncated,
        year=_year(fields.get("year")) or _year(fields.get("date")),
        venue=decoded("journal", "journaltitle", "booktitle"),
        doi=doi,
        arxiv_id=arxiv_id,
        volume=decoded("volume"),
        issue=decoded("number", "issue"),
        pages=decoded("pages"),
    )


def _first_arxiv(fields: Mapping[str, object], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = fields.get(name)
        found = find_arxiv_id(value) if isinstance(value, str) else None
        if found is not None:
            return found
    return None


# ------------------------------------------------------------------ RIS

_RIS_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")


def _ris_records(text: str) -> Iterator[tuple[str, bool]]:
    """Yield each record's text (``TY`` up to ``ER`` or the next ``TY``) and whether it is one.

    Non-blank lines outside a record come out as one chunk flagged ``False``.
    """
    current: list[str] = []
    outside: list[str] = []
    in_record = False
    for line in text.splitlines():
        tag = _RIS_TAG.match(line.strip())
        name = tag.group(1) if tag else None
        if name == "TY":
            if outside:
                yield "\n".join(outside), False
                outside = []
            if in_record:
                yield "\n".join(current), True
            current, in_record = [line.strip()], True
        elif in_record:
            current.append(line.rstrip())
            if name == "ER":
                yield "\n".join(current), True
                current, in_record = [], False
        elif line.strip():
            outside.append(line.rstrip())
    if outside:
        yield "\n".join(outside), False
    if in_record:
        yield "\n".join(current), True


def _read_ris(text: str, most: int | None = MAX_REFERENCES) -> list[Reference]:
    entries: list[Reference] = []
    chunks = list(_ris_records(text))
    _check_count(len(chunks), most)
    for chunk, is_record in chunks:
        if not is_record:
            entries.append(_unparsed(chunk.strip(), UnparsedReason.RIS_OUTSIDE_RECORD))
            continue
        # A record cut off before its ER is read as far as it goes.
        closed = (
            chunk
            if _RIS_TAG.match(chunk.splitlines()[-1].strip() or "")
            and (chunk.splitlines()[-1].strip().startswith("ER"))
            else chunk + "\nER  - "
        )
        try:
            [record] = rispy.loads(closed)
        except Exception:  # a third-party reader on hostile input: never crash
            entries.append(_unparsed(chunk.strip(), UnparsedReason.RIS_SYNTAX))
            continue
        entries.append(_ris_entry(chunk.strip(), record))
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


def _ris_entry(raw: str, record: Mapping[str, Any]) -> Reference:
    names = [
        name
        for tag in ("authors", "first_authors")
        for name in record.get(tag) or []
        if isinstance(name, str)
    ]
    authors, truncated = _people(names)
    urls = record.get("urls") or []
    url_text = " ".join(url for url in urls if isinstance(url, str))
    start = _ris_first(record, "start_page")
    end = _ris_first(record, "end_page")
    doi = normalize_doi(_ris_first(record, "doi")) or find_doi(url_text)
    return Reference(
        index=0,
        raw=raw,
        key=_ris_first(record, "id"),
        entry_type=_ris_first(record, "type_of_reference"),
        title=_ris_first(record, "title", "primary_title"),
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
    )


# ------------------------------------------------------------------ CSL-JSON


def _read_csl_json(text: str, most: int | None = MAX_REFERENCES) -> list[Reference]:
    # The C parser raises RecursionError (never overflows the stack) on deep
    # nesting; notanda-openalex cannot import the evidence package's depth
    # guard, and nothing below walks the parsed value recursively.
    try:
        data = json.loads(text.lstrip("\ufeff"))
    except RecursionError:
        return [_unparsed(text.strip(), UnparsedReason.JSON_TOO_DEEP)]
    except ValueError:
        return [_unparsed(text.strip(), UnparsedReason.JSON_SYNTAX)]
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return [_unparsed(text.strip(), UnparsedReason.CSL_NOT_A_LIST)]
    entries: list[Reference] = []
    _check_count(len(data), most)
    for item in data:
        raw = _json_text(item)
        if not isinstance(item, dict):
            entries.append(_unparsed(raw, UnparsedReason.CSL_NOT_AN_OBJECT))
            continue
        entries.append(_csl_entry(raw, item))
    return entries


def _json_text(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (ValueError, RecursionError):
        return "<too deep to show>"


def _csl_text(value: object) -> str | None:
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


def _csl_entry(raw: str, item: Mapping[str, Any]) -> Reference:
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
        raw=raw,
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
    )


# ------------------------------------------------------------------ plain text


def text_blocks(text: str) -> list[str]:
    """Split plain text into entries: one per line, or per block when blank lines separate them."""
    lines = text.splitlines()
    if any(not line.strip() for line in _trimmed(lines)):
        blocks: list[str] = []
        current: list[str] = []
        for line in lines:
            if line.strip():
                current.append(line)
            elif current:
                blocks.append("\n".join(current))
                current = []
        if current:
            blocks.append("\n".join(current))
        return blocks
    return [line for line in lines if line.strip()]


def _trimmed(lines: list[str]) -> list[str]:
    """The lines without the blank ones at the start and the end."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


_NUMBERING = re.compile(r"^\s*(?:\[\d{1,4}\]|\(\d{1,4}\)|\d{1,4}[.)])\s+")
_URLISH = re.compile(
    r"(?:https?://|www\.)\S+|\bdoi:\s*\S+|\b10\.\d{4,9}/\S+|\barxiv:\s*\S+", re.IGNORECASE
)
_APA_YEAR = re.compile(r"\((1[5-9]\d\d|20\d\d)[a-z]?(?:,[^()]{0,30})?\)\.?")
_QUOTED = re.compile(r"[\"“”]([^\"“”]{3,}?)[,.]?[\"“”]")
_INITIALS = re.compile(r"^(?:[A-Z][a-z]?\.?[\s-]*){1,4}$")
_VANCOUVER_NAME = re.compile(r"^[^\d,.;()]+?\s[A-Z]{1,4}$")
_VOL_ISSUE_PAGES = (
    re.compile(r";\s*(?P<volume>\d+)\s*(?:\((?P<issue>[^)]+)\))?\s*:\s*(?P<pages>[\w\u2013-]+)"),
    re.compile(r",\s*(?P<volume>\d+)\s*\((?P<issue>[^)]+)\),\s*(?P<pages>[\w\u2013-]+)"),
)


def _read_text(text: str, most: int | None = MAX_REFERENCES) -> list[Reference]:
    blocks = text_blocks(text)
    _check_count(len(blocks), most)
    return [_text_entry(block) for block in blocks]


def _text_entry(block: str) -> Reference:
    raw = block.strip()
    line = _clean(raw) or ""
    doi = find_doi(line)
    reference = Reference(
        index=0, raw=raw, doi=doi, arxiv_id=_arxiv_from_doi(doi) or find_arxiv_id(line)
    )
    body = _NUMBERING.sub("", _URLISH.sub(" ", line)).strip()
    body = re.sub(r"\b(?:Available|Retrieved)(?: from| at)?:?\s*$", "", body).strip()
    if not body.strip(" .,;:[]()"):
        return reference  # a bare DOI or URL
    return _read_citation(reference, body)


def _read_citation(reference: Reference, body: str) -> Reference:
    """Best-effort reading of APA, IEEE-like and Vancouver citations (documented rules)."""
    apa = _APA_YEAR.search(body)
    quoted = _QUOTED.search(body)
    authors_text: str | None = None
    title: str | None = None
    venue: str | None = None
    rest: str | None = None
    year: int | None = None
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
        venue = None if _YEAR.fullmatch(head) else _clean(head)
    else:
        vancouver = re.match(r"^([^.]*?)\.\s+(.*)$", body)
        if vancouver is not None and _vancouver_authors(vancouver.group(1)):
            authors_text = vancouver.group(1)
            title, rest = _sentence(vancouver.group(2))
            venue = _venue(rest)
    if year is None:
        years = _YEAR.findall(body)
        year = int(years[-1]) if years else None
    authors, truncated = _text_authors(authors_text) if authors_text else ([], False)
    volume, issue, pages = _text_numbers(rest) if rest else (None, None, None)
    return replace(
        reference,
        title=title,
        authors=tuple(authors),
        authors_truncated=truncated,
        year=year,
        venue=venue,
        volume=volume,
        issue=issue,
        pages=pages,
    )


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


def _text_authors(text: str) -> tuple[list[ReferenceAuthor], bool]:
    """Authors from the text before the year or title.

    Tokens are separated by ``;``, ``,``, ``&`` and ``and``. A token of
    initials after another token is that token's given name (``Smith, J. A.``);
    ``Smith JA`` (Vancouver) has its initials last; anything else is read as
    ``First Last``.
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
    while position < len(tokens):
        token = tokens[position]
        following = tokens[position + 1] if position + 1 < len(tokens) else None
        if (
            following is not None
            and _INITIALS.match(following + ".")
            and not _INITIALS.match(token + ".")
        ):
            given = _initials(following)
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


def _initials(text: str) -> str:
    return " ".join(part if part.endswith(".") else part + "." for part in text.split())


_READERS = {
    ReferenceFormat.BIBTEX: _read_bibtex,
    ReferenceFormat.RIS: _read_ris,
    ReferenceFormat.CSL_JSON: _read_csl_json,
    ReferenceFormat.TEXT: _read_text,
}
