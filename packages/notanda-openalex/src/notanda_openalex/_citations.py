r"""Which entries a manuscript cites: the citation keys of ``.aux``, ``.bcf``, LaTeX and Markdown.

Pure readers, no I/O: each takes the text of one file and returns the keys it
cites, in order of first citation, once each, and whether it cites every
entry (``\citation{*}``, ``\nocite{*}``, Pandoc's ``@*``). They are total and
linear in the size of their input: no backtracking pattern, no nested scan
that restarts, every argument bounded (:data:`MAX_ARGUMENT_CHARS`), the input
itself bounded (:data:`MAX_CITATION_BYTES`). The rules are documented in
``docs/reference-checking.md`` ("Only what is cited").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePath
from typing import Any
from xml.etree import ElementTree

from ._errors import ErrorCode, OpenAlexError

__all__ = [
    "MAX_CITATION_BYTES",
    "CitationError",
    "CitationReason",
    "CitationSource",
    "Citations",
    "citation_source",
    "read_citations",
]

#: The largest manuscript or auxiliary file read for its citations (UTF-8 bytes).
MAX_CITATION_BYTES = 32 << 20
#: The longest optional or key argument of one citation command; a longer
#: one is not a citation (an unclosed ``[`` must not swallow the file).
MAX_ARGUMENT_CHARS = 4096


class CitationSource(StrEnum):
    """What kind of file the citations are read from."""

    #: A LaTeX ``.aux`` file: ``\\citation{a,b}`` (BibTeX), ``\\abx@aux@cite`` (biblatex).
    AUX = "aux"
    #: A biber control file ``.bcf``: its ``citekey`` elements.
    BCF = "bcf"
    #: LaTeX source: ``\\cite`` and its natbib and biblatex relatives.
    LATEX = "latex"
    #: Markdown for Pandoc: ``[@key]``, ``[see @a; @b, p. 3]``, ``@key``.
    MARKDOWN = "markdown"


class CitationReason(StrEnum):
    """Why a file could not be read for its citations."""

    #: Its name's suffix is none of the kinds :func:`citation_source` knows.
    UNKNOWN_KIND = "unknown_kind"
    #: Larger than :data:`MAX_CITATION_BYTES`.
    TOO_LARGE = "too_large"
    #: A ``.bcf`` that is not well-formed XML.
    MALFORMED_XML = "malformed_xml"
    #: A ``.bcf`` with a document type declaration (entities are never expanded).
    XML_DOCTYPE = "xml_doctype"


class CitationError(OpenAlexError):
    """A file that cannot be read for its citations; ``reason`` says why.

    Its code is ``invalid_arguments``: the file given is the argument at fault.
    """

    code = ErrorCode.INVALID_ARGUMENTS

    def __init__(self, reason: CitationReason, detail: str | None = None) -> None:
        super().__init__(reason.value if detail is None else f"{reason.value}: {detail}")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Citations:
    """The keys one file cites, in order of first citation, each once."""

    source: CitationSource
    keys: tuple[str, ...]
    #: The file cites every entry of the bibliography (``*``).
    every: bool = False


_SUFFIXES = {
    ".aux": CitationSource.AUX,
    ".bcf": CitationSource.BCF,
    ".tex": CitationSource.LATEX,
    ".ltx": CitationSource.LATEX,
    ".latex": CitationSource.LATEX,
    ".md": CitationSource.MARKDOWN,
    ".markdown": CitationSource.MARKDOWN,
    ".qmd": CitationSource.MARKDOWN,
    ".rmd": CitationSource.MARKDOWN,
}


def citation_source(name: str) -> CitationSource:
    """The kind of a file from its name: ``.aux``, ``.bcf``, ``.tex``/``.ltx``, ``.md``/``.qmd``.

    Raises:
        CitationError: ``unknown_kind``, for any other suffix.
    """
    kind = _SUFFIXES.get(PurePath(name).suffix.lower())
    if kind is None:
        known = ", ".join(sorted(_SUFFIXES))
        raise CitationError(CitationReason.UNKNOWN_KIND, f"give a file ending in one of {known}")
    return kind


def read_citations(text: str, source: CitationSource | str) -> Citations:
    """The keys *text* cites, read as *source*.

    Raises:
        CitationError: *text* is over :data:`MAX_CITATION_BYTES`, or a
            ``.bcf`` is not well-formed XML or declares a document type.
    """
    kind = CitationSource(source)
    if len(text) > MAX_CITATION_BYTES or len(text.encode("utf-8", "replace")) > MAX_CITATION_BYTES:
        raise CitationError(CitationReason.TOO_LARGE, f"over {MAX_CITATION_BYTES} bytes")
    if kind is CitationSource.AUX:
        found = _aux_keys(text)
    elif kind is CitationSource.BCF:
        found = _bcf_keys(text)
    elif kind is CitationSource.LATEX:
        found = _latex_keys(text)
    else:
        found = _markdown_keys(text)
    return _collected(kind, found)


def _collected(kind: CitationSource, found: Iterable[str]) -> Citations:
    seen: dict[str, None] = {}
    every = False
    for key in found:
        if key == "*":
            every = True
        elif key:
            seen.setdefault(key, None)
    return Citations(source=kind, keys=tuple(seen), every=every)


def _split_keys(argument: str) -> list[str]:
    return [key.strip() for key in argument.split(",") if key.strip()]


# ------------------------------------------------------------------ .aux

_AUX_CITATION = re.compile(
    r"\\(?:citation|abx@aux@cite)\{((?:[^{}\n]{0,4096}\}\{)?[^{}\n]{0,4096})\}"
)


def _aux_keys(text: str) -> Iterable[str]:
    for match in _AUX_CITATION.finditer(text):
        argument = match.group(1)
        # biblatex 3.8+ writes \abx@aux@cite{<refsection>}{<key>}: the key is the last group.
        if "}{" in argument:
            argument = argument.rsplit("}{", 1)[1]
        yield from _split_keys(argument)


# ------------------------------------------------------------------ .bcf


def _bcf_keys(text: str) -> Iterable[str]:
    # Entities are never expanded: a document type declaration is refused
    # before the parser sees it (expat would otherwise define entities).
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise CitationError(CitationReason.XML_DOCTYPE, "a .bcf has no document type declaration")
    parser: ElementTree.XMLPullParser[ElementTree.Element] = ElementTree.XMLPullParser(
        events=("end",)
    )
    keys: list[str] = []
    try:
        step = 1 << 16
        for start in range(0, len(text), step):
            parser.feed(text[start : start + step])
            keys.extend(_citekeys(parser))
        parser.close()
        keys.extend(_citekeys(parser))
    except ElementTree.ParseError as exc:
        raise CitationError(CitationReason.MALFORMED_XML, f"line {exc.position[0]}") from None
    return keys


def _citekeys(parser: ElementTree.XMLPullParser[ElementTree.Element]) -> list[str]:
    keys = []
    # With events=("end",) each event is ("end", element); typeshed's union is wider.
    events: Iterable[Any] = parser.read_events()
    for _, element in events:
        if isinstance(element, ElementTree.Element) and (
            element.tag == "citekey" or element.tag.endswith("}citekey")
        ):
            keys.append((element.text or "").strip())
        if isinstance(element, ElementTree.Element):
            element.clear()  # bounded memory: nothing kept once read
    return keys


# ------------------------------------------------------------------ LaTeX

#: The commands whose mandatory arguments are citation keys (natbib, biblatex, LaTeX).
_CITE_COMMANDS = frozenset(
    {
        "cite",
        "Cite",
        "citep",
        "citet",
        "Citep",
        "Citet",
        "citealp",
        "citealt",
        "Citealp",
        "Citealt",
        "citeauthor",
        "Citeauthor",
        "citeyear",
        "citeyearpar",
        "citenum",
        "citetitle",
        "citedate",
        "citeurl",
        "parencite",
        "Parencite",
        "textcite",
        "Textcite",
        "autocite",
        "Autocite",
        "footcite",
        "footcitetext",
        "smartcite",
        "Smartcite",
        "supercite",
        "fullcite",
        "footfullcite",
        "nocite",
    }
)
#: biblatex's multicite commands: ``\\cites(pre)(post)[pre][post]{a}[post]{b}``.
_MULTI_CITE_COMMANDS = frozenset(
    {"cites", "Cites", "parencites", "Parencites", "textcites", "Textcites", "autocites"}
    | {"Autocites", "footcites", "smartcites", "Smartcites", "supercites"}
)
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_CLOSERS = {"[": "]", "(": ")", "{": "}"}


def _uncommented(text: str) -> str:
    r"""*text* with every ``%`` comment removed (to the end of its line); ``\%`` is kept."""
    lines = []
    for written in text.split("\n"):
        line = written
        at = line.find("%")
        while at != -1:
            before = at
            while before > 0 and line[before - 1] == "\\":
                before -= 1
            if (at - before) % 2 == 0:
                line = line[:at]
                break
            at = line.find("%", at + 1)
        lines.append(line)
    return "\n".join(lines)


def _group(text: str, start: int) -> tuple[bool, int]:
    """Whether the group opening at *start* closes, and where the scan ended.

    Closed: one past the closer. Unclosed: where the scan gave up, and the
    reader goes on from there (never back), so that the whole text is read
    in one pass. Braces nest inside any group; the scan stops at
    :data:`MAX_ARGUMENT_CHARS` and at a blank line.
    """
    closer = _CLOSERS[text[start]]
    depth = 0
    limit = min(len(text), start + MAX_ARGUMENT_CHARS)
    position = start + 1
    while position < limit:
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return closer == "}", position + 1
            depth -= 1
        elif char == closer and depth == 0:
            return True, position + 1
        elif char == "\n" and text.startswith("\n", position + 1):
            return False, position
        position += 1
    return False, min(position, len(text))


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _latex_keys(text: str) -> Iterable[str]:
    source = _uncommented(text)
    position = 0
    while True:
        match = _COMMAND.search(source, position)
        if match is None:
            return
        name = match.group(1)
        position = match.end()
        multi = name in _MULTI_CITE_COMMANDS
        if name not in _CITE_COMMANDS and not multi:
            continue
        if source.startswith("*", position):
            position += 1
        while True:
            at = _skip_space(source, position)
            opener = source[at : at + 1]
            if (opener == "(" and multi) or opener == "[":
                closed, end = _group(source, at)
                position = end
                if not closed:
                    break
            elif opener == "{":
                closed, end = _group(source, at)
                if not closed:
                    position = end
                    break
                yield from _split_keys(source[at + 1 : end - 1])
                position = end
                if not multi:
                    break
                follow = source[_skip_space(source, position) : _skip_space(source, position) + 1]
                if follow not in ("[", "{"):
                    break
            else:
                break


# ------------------------------------------------------------------ Markdown

_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*>")
#: Pandoc's key: a letter, digit or ``_``, then word characters and internal
#: punctuation; or any text in braces, ``@{...}``. ``@`` after a word
#: character (an e-mail address) or a backslash is no citation.
_PANDOC_KEY = re.compile(
    r"(?<![\w\\@])@(?:\{([^{}\n]{1,4096})\}|(\*)|([\w][\w:.#$%&+?<>~/-]{0,4095}))"
)
_TRAILING_PUNCTUATION = ":.#$%&+?<>~/-"


def _markdown_keys(text: str) -> Iterable[str]:
    fence: str | None = None
    for written in text.split("\n"):
        opened = _FENCE.match(written)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        line = _AUTOLINK.sub(" ", _CODE_SPAN.sub(" ", written))
        for match in _PANDOC_KEY.finditer(line):
            braced, star, bare = match.groups()
            if star:
                yield "*"
            elif braced is not None:
                yield braced.strip()
            else:
                yield bare.rstrip(_TRAILING_PUNCTUATION)
