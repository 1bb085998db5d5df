"""The request-line reader: bounded lines, each byte looked at once, ids of refused lines."""

from __future__ import annotations

import json
from typing import Any, SupportsIndex

import pytest
from notanda_mcp._stdin import (
    CHUNK_BYTES,
    MAX_LINE_BYTES,
    LineSplitter,
    LineTooLong,
    request_id_in,
)


class _CountingChunk(bytes):
    """A chunk that counts the bytes each newline search looks at."""

    scanned = 0

    def find(self, sub: Any, start: SupportsIndex | None = None, *args: Any) -> int:
        begin = 0 if start is None else int(start)
        found = super().find(sub, begin, *args)
        _CountingChunk.scanned += (len(self) if found < 0 else found + 1) - begin
        return found


def _feed(splitter: LineSplitter, data: bytes) -> list[bytes | LineTooLong]:
    lines: list[bytes | LineTooLong] = []
    for start in range(0, len(data), CHUNK_BYTES):
        lines += splitter.feed(_CountingChunk(data[start : start + CHUNK_BYTES]))
    return lines + splitter.finish()


def test_the_limit_is_documented_and_fits_the_largest_escaped_call() -> None:
    # 262,144 characters of arguments, each JSON-escaped as \uXXXX, still fit.
    assert MAX_LINE_BYTES == 4 * 1024 * 1024
    assert 262_144 * 6 < 2 * 1024 * 1024 <= MAX_LINE_BYTES


def test_a_line_at_the_limit_passes_and_one_byte_more_is_refused() -> None:
    at_limit = b'{"id":1,' + b" " * (MAX_LINE_BYTES - 9) + b"}"
    over = b'{"id":2,' + b" " * (MAX_LINE_BYTES - 8) + b"}"
    assert (len(at_limit), len(over)) == (MAX_LINE_BYTES, MAX_LINE_BYTES + 1)
    lines = _feed(LineSplitter(), at_limit + b"\n" + over + b"\n" + b'{"id":3}\n')
    assert lines == [at_limit, LineTooLong(2), b'{"id":3}']


def test_a_40_mb_line_is_read_in_linear_work_and_bounded_memory() -> None:
    """Structural, not timed: every byte is searched once and the buffer stays bounded."""
    _CountingChunk.scanned = 0
    head = b'{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"x":"'
    line = head + b"a" * (40_000_000 - len(head)) + b'"}}'
    data = line + b"\n" + b'{"id":4}\n'
    splitter = LineSplitter()
    lines = _feed(splitter, data)
    assert lines == [LineTooLong("big"), b'{"id":4}']
    assert _CountingChunk.scanned == len(data)  # no byte is searched twice
    assert splitter.high_water <= MAX_LINE_BYTES + CHUNK_BYTES


def test_lines_split_anywhere_across_chunks_come_out_whole() -> None:
    text = "".join(json.dumps({"id": n, "q": "é" * n}) + "\n" for n in range(50)).encode()
    for size in (1, 2, 7, 64):
        splitter = LineSplitter(limit=1000)
        lines: list[bytes | LineTooLong] = []
        for start in range(0, len(text), size):
            lines += splitter.feed(text[start : start + size])
        assert lines == text.splitlines()
        assert splitter.finish() == []


def test_an_unterminated_last_line_is_still_a_line() -> None:
    splitter = LineSplitter(limit=10)
    assert splitter.feed(b"abc") == []
    assert splitter.finish() == [b"abc"]
    splitter.feed(b"x" * 11)
    assert splitter.finish() == [LineTooLong(None)]


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"jsonrpc": "2.0", "id": 17, "method": "tools/call"', 17),
        (b'{"method":"tools/call","id":"a-\\"b","params":{', 'a-"b'),
        (b'{"params": {"id": 5, "x": "y"}, "id": 6', 6),
        (b'{"params": {"arguments": {"q": "\\"id\\": 9"}', None),
        (b'{"x": ["id", 1], "id" : -3}', -3),
        (b'{"id": 1.5}', None),
        (b'{"id": true}', None),
        (b'{"id": null}', None),
        (b"[" * 5000, None),
        (b'{"id": "unterminated', None),
        (b"", None),
    ],
)
def test_the_request_id_of_a_refused_line(head: bytes, expected: Any) -> None:
    assert request_id_in(head) == expected
