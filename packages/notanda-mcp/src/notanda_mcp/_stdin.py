"""Request lines from fd 0: bounded, linear in their length, and stoppable.

The SDK's own reader blocks in a worker thread that cannot be cancelled
(``docs/known-issues.md``, 6), so the server passes this one to
``stdio_server(stdin=...)``. :class:`LineSplitter` is the pure part: bytes in,
complete lines out, never holding more than :data:`MAX_LINE_BYTES` plus one
chunk, and never looking at a byte twice, so a line of any length costs time
linear in its length. A line over the limit is dropped as it arrives and
reported as :class:`LineTooLong`, with the request id when its first bytes
name one, so that the client can be answered instead of left waiting.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

__all__ = ["CHUNK_BYTES", "MAX_LINE_BYTES", "LineSplitter", "LineTooLong", "StoppableStdin"]

#: The longest request line accepted, newline excluded (``docs/input-boundary.md``).
#: The largest valid call fits even with every character JSON-escaped (6 bytes each).
MAX_LINE_BYTES = 4 * 1024 * 1024
#: Bytes asked of ``os.read`` at a time.
CHUNK_BYTES = 64 * 1024
#: How much of a refused line is kept to look for its request id.
_HEAD_BYTES = 4096
_INTEGER = re.compile(r"-?\d{1,18}")

RequestId = int | str


@dataclass(frozen=True, slots=True)
class LineTooLong:
    """A request line over :data:`MAX_LINE_BYTES`, already dropped."""

    #: The top-level ``id`` found in the line's first bytes, if any.
    request_id: RequestId | None


def request_id_in(head: bytes) -> RequestId | None:
    """The top-level JSON-RPC ``id`` in the first bytes of a request line, if found there.

    Only strings are decoded (each once) and nesting is counted, so a key
    ``"id"`` inside ``params`` is not mistaken for the request's own.
    """
    text = head.decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    depth, index, previous = 0, 0, ""
    while index < len(text):
        char = text[index]
        if char == '"':
            try:
                value, end = decoder.raw_decode(text, index)
            except ValueError:
                return None
            rest = text[end:].lstrip()
            if depth == 1 and previous in "{," and value == "id" and rest.startswith(":"):
                return _id_value(decoder, rest[1:].lstrip())
            index, previous = end, '"'
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        if not char.isspace():
            previous = char
        index += 1
    return None


def _id_value(decoder: json.JSONDecoder, text: str) -> RequestId | None:
    if text.startswith('"'):
        try:
            value, _ = decoder.raw_decode(text)
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    match = _INTEGER.match(text)
    if match is None or text[match.end() : match.end() + 1] in (".", "e", "E"):
        return None
    return int(match.group(0))


class LineSplitter:
    """Split a byte stream into lines of at most *limit* bytes; pure, no I/O.

    Each chunk is searched for newlines once and appended once, so the work
    is linear in the input; :attr:`high_water` records the most bytes held
    at once (at most *limit* plus one chunk).
    """

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self._limit = limit
        self._partial = bytearray()
        self._head: bytes | None = None  # set while a line over the limit is dropped
        self.high_water = 0

    def feed(self, chunk: bytes) -> list[bytes | LineTooLong]:
        """The lines *chunk* completes (without their newline), in order."""
        self.high_water = max(self.high_water, len(self._partial) + len(chunk))
        lines: list[bytes | LineTooLong] = []
        start = 0
        while start <= len(chunk):
            end = chunk.find(b"\n", start)
            stop = len(chunk) if end < 0 else end
            self._take(chunk, start, stop)
            if end < 0:
                break
            lines.append(self._line())
            start = end + 1
        return lines

    def finish(self) -> list[bytes | LineTooLong]:
        """At the end of input: the last line, if it was not terminated."""
        if self._head is None and not self._partial:
            return []
        return [self._line()]

    def _take(self, chunk: bytes, start: int, stop: int) -> None:
        if self._head is not None:
            return  # dropping the rest of a line over the limit
        if len(self._partial) + (stop - start) > self._limit:
            self._partial += chunk[start : min(stop, start + _HEAD_BYTES)]
            self._head = bytes(self._partial[:_HEAD_BYTES])
            self._partial = bytearray()
            return
        self._partial += chunk[start:stop]

    def _line(self) -> bytes | LineTooLong:
        if self._head is not None:
            refused = LineTooLong(request_id_in(self._head))
            self._head = None
            return refused
        line = bytes(self._partial)
        self._partial = bytearray()
        return line


class StoppableStdin:
    """Lines from a descriptor for ``stdio_server(stdin=...)``, readable without a thread.

    It waits with ``anyio.wait_readable`` where it can and can be stopped.
    At the end of input it awaits *on_end* before telling the SDK, so calls
    in flight are answered while the transport's write side is still open.
    A line over the limit is passed to *on_too_long* and skipped.
    """

    def __init__(
        self,
        on_end: Callable[[], Awaitable[None]],
        on_too_long: Callable[[LineTooLong], Awaitable[None]],
        fd: int = 0,
        *,
        limit: int = MAX_LINE_BYTES,
    ) -> None:
        self._fd = fd
        self._on_end = on_end
        self._on_too_long = on_too_long
        self._splitter = LineSplitter(limit)
        self._ready: deque[bytes | LineTooLong] = deque()
        self._eof = False
        self._stopped = False
        self._scope: anyio.CancelScope | None = None
        mode = os.fstat(fd).st_mode
        # Pipes, sockets and terminals can be polled; other character devices
        # cannot (epoll refuses /dev/null with EPERM), so they are read in a thread.
        self._pollable = sys.platform != "win32" and (
            stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))
        )

    def stop(self) -> None:
        """End the input now, as if it had closed (a signal)."""
        self._stopped = True
        if self._scope is not None:
            self._scope.cancel()

    def __aiter__(self) -> StoppableStdin:
        return self

    async def _chunk(self) -> bytes:
        if self._pollable:
            await anyio.wait_readable(self._fd)
            return os.read(self._fd, CHUNK_BYTES)
        return await anyio.to_thread.run_sync(
            os.read, self._fd, CHUNK_BYTES, abandon_on_cancel=True
        )

    async def __anext__(self) -> str:
        while not self._stopped:
            if self._ready:
                item = self._ready.popleft()
                if isinstance(item, LineTooLong):
                    await self._on_too_long(item)
                    continue
                if item.strip():
                    # A newline never falls inside a UTF-8 sequence: lines decode alone.
                    return item.decode("utf-8", "replace") + "\n"
                continue
            if self._eof:
                break
            with anyio.CancelScope() as self._scope:
                chunk = await self._chunk()
                if chunk:
                    self._ready.extend(self._splitter.feed(chunk))
                else:
                    self._eof = True
                    self._ready.extend(self._splitter.finish())
            self._scope = None
        await self._on_end()
        raise StopAsyncIteration
