"""The BibTeX grammar: a file split into blocks, each entry into fields of unevaluated pieces.

This module owns where a block starts and ends and what it holds; what the
values mean (macros, ``crossref``, LaTeX) is :mod:`._references`'. It is one
pass over the text with regular expressions that never backtrack, so its cost
is linear in the text's length, whatever the input.

A block starts at an ``@`` that is the first non-blank character of a line
and is followed on that line by a type and ``{`` or ``(``; it ends at its
closing delimiter and never reaches past the next such line, so a broken
entry cannot swallow the entries after it. Text outside blocks is comment.
Between the tokens of an entry, ``%`` starts a comment to the end of the line;
inside a braced or quoted value it is text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["BlockKind", "Piece", "RawBlock", "scan_bibtex"]


class BlockKind(StrEnum):
    """What a block of a BibTeX file is."""

    ENTRY = "entry"
    STRING = "string"
    PREAMBLE = "preamble"
    COMMENT = "comment"
    #: An ``@`` block that does not follow the grammar.
    MALFORMED = "malformed"


@dataclass(frozen=True, slots=True)
class Piece:
    """One operand of a value's ``#`` concatenation: literal text or a macro name."""

    text: str
    macro: bool = False


@dataclass(slots=True)
class RawBlock:
    """One ``@`` block as written: its place in the text and its unevaluated content."""

    kind: BlockKind
    #: Offsets of the block in the text: ``text[start:end]`` is the block.
    start: int
    end: int
    entry_type: str | None = None
    key: str | None = None
    #: ``(lower-case name, pieces)`` in order; a repeated name keeps its first value.
    fields: list[tuple[str, tuple[Piece, ...]]] = field(default_factory=list)


_CANDIDATE = re.compile(r"^[ \t]*(@)[ \t]*[^\s{}(),=@\"#%]*[ \t]*[{(]", re.MULTILINE)
_HEAD = re.compile(r"@[ \t\r\n]*([A-Za-z][A-Za-z0-9_:.+-]*)[ \t\r\n]*([{(])")
_WS = re.compile(r"(?:[ \t\r\n\f\v]+|%[^\n]*)*")
_KEY_BRACE = re.compile(r"[^,\s{}]+")
_KEY_PAREN = re.compile(r"[^,\s{}()]+")
_NAME = re.compile(r"[^\s=,{}()\"#%'\\]+")
_NUMBER = re.compile(r"[0-9]+")
_MACRO = re.compile(r"[^\s0-9\"#%'(),={}][^\s\"#%'(),={}]*")
_BRACE = re.compile(r"[{}]")
_QUOTE_OR_BRACE = re.compile(r"[{}\"]")


class _Malformed(Exception):
    """The block does not follow the grammar."""


def scan_bibtex(text: str) -> Iterator[RawBlock]:
    """Yield every ``@`` block of *text* in order (comments between them are skipped)."""
    position = 0
    candidate = _CANDIDATE.search(text, position)
    while candidate is not None:
        start = candidate.start(1)
        following = _CANDIDATE.search(text, candidate.end())
        limit = following.start(1) if following is not None else len(text)
        try:
            block = _block(text, start, limit)
        except _Malformed:
            block = RawBlock(BlockKind.MALFORMED, start, _trimmed_end(text, start, limit))
        yield block
        position = block.end
        candidate = following
        while candidate is not None and candidate.start(1) < position:
            candidate = _CANDIDATE.search(text, candidate.end())


def _trimmed_end(text: str, start: int, limit: int) -> int:
    """*limit* without the whitespace before it (a broken block is its text up to the next one)."""
    end = limit
    while end > start + 1 and text[end - 1].isspace():
        end -= 1
    return end


def _block(text: str, start: int, limit: int) -> RawBlock:
    head = _HEAD.match(text, start, limit)
    if head is None:
        raise _Malformed
    kind_name = head.group(1).lower()
    closer = "}" if head.group(2) == "{" else ")"
    position = head.end()
    if kind_name == "comment":
        # BibTeX ignores everything after @comment; a balanced group is its body.
        end = _group_end(text, head.end(2) - 1, limit) if closer == "}" else None
        if end is None:
            newline = text.find("\n", position, limit)
            end = limit if newline < 0 else newline
        return RawBlock(BlockKind.COMMENT, start, end)
    scanner = _Scanner(text, position, limit)
    if kind_name == "preamble":
        scanner.value()
        scanner.close(closer)
        return RawBlock(BlockKind.PREAMBLE, start, scanner.position)
    if kind_name == "string":
        name = scanner.name()
        scanner.expect("=")
        value = scanner.value()
        scanner.skip()
        if scanner.peek() == ",":  # a trailing comma, as some writers leave it
            scanner.position += 1
        scanner.close(closer)
        return RawBlock(
            BlockKind.STRING, start, scanner.position, key=name, fields=[(name.lower(), value)]
        )
    key = scanner.key(closer)
    block = RawBlock(BlockKind.ENTRY, start, 0, entry_type=head.group(1), key=key)
    seen: set[str] = set()
    while True:
        scanner.skip()
        if scanner.peek() == closer:
            break
        scanner.expect(",")
        scanner.skip()
        if scanner.peek() == closer:
            break
        name = scanner.name().lower()
        scanner.expect("=")
        value = scanner.value()
        if name not in seen:
            seen.add(name)
            block.fields.append((name, value))
    scanner.position += 1
    block.end = scanner.position
    return block


def _group_end(text: str, opening: int, limit: int) -> int | None:
    """The position after the brace that closes the one at *opening*, or ``None``."""
    depth = 0
    for match in _BRACE.finditer(text, opening, limit):
        depth += 1 if match.group(0) == "{" else -1
        if depth == 0:
            return match.end()
    return None


class _Scanner:
    """A cursor over one block, never past *limit*."""

    __slots__ = ("limit", "position", "text")

    def __init__(self, text: str, position: int, limit: int) -> None:
        self.text, self.position, self.limit = text, position, limit

    def skip(self) -> None:
        self.position = _WS.match(self.text, self.position, self.limit).end()  # type: ignore[union-attr]

    def peek(self) -> str:
        return self.text[self.position] if self.position < self.limit else ""

    def expect(self, char: str) -> None:
        self.skip()
        if self.peek() != char:
            raise _Malformed
        self.position += 1
        self.skip()

    def close(self, closer: str) -> None:
        self.skip()
        if self.peek() != closer:
            raise _Malformed
        self.position += 1

    def name(self) -> str:
        self.skip()
        match = _NAME.match(self.text, self.position, self.limit)
        if match is None:
            raise _Malformed
        self.position = match.end()
        return match.group(0)

    def key(self, closer: str) -> str:
        self.skip()
        pattern = _KEY_BRACE if closer == "}" else _KEY_PAREN
        match = pattern.match(self.text, self.position, self.limit)
        if match is None:
            raise _Malformed
        self.position = match.end()
        self.skip()
        if self.peek() not in (",", closer):
            raise _Malformed  # ``@article{title = ...}``: no key
        return match.group(0)

    def value(self) -> tuple[Piece, ...]:
        pieces: list[Piece] = []
        while True:
            self.skip()
            char = self.peek()
            if char == "{":
                end = _group_end(self.text, self.position, self.limit)
                if end is None:
                    raise _Malformed
                pieces.append(Piece(self.text[self.position + 1 : end - 1]))
                self.position = end
            elif char == '"':
                end = self._quoted_end()
                pieces.append(Piece(self.text[self.position + 1 : end - 1]))
                self.position = end
            else:
                number = _NUMBER.match(self.text, self.position, self.limit)
                macro = None if number else _MACRO.match(self.text, self.position, self.limit)
                if number is not None:
                    pieces.append(Piece(number.group(0)))
                    self.position = number.end()
                elif macro is not None:
                    pieces.append(Piece(macro.group(0), macro=True))
                    self.position = macro.end()
                else:
                    raise _Malformed
            self.skip()
            if self.peek() != "#":
                return tuple(pieces)
            self.position += 1

    def _quoted_end(self) -> int:
        depth = 0
        for match in _QUOTE_OR_BRACE.finditer(self.text, self.position + 1, self.limit):
            char = match.group(0)
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth < 0:
                    raise _Malformed
            elif depth == 0:
                return match.end()
        raise _Malformed
