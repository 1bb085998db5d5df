"""Bounded decoding of a response body read from the raw stream.

httpx would decompress on its own, but without a limit: a few kilobytes of
gzip can expand to gigabytes. Here every call to ``decompress`` is given the
room left under the ceiling (plus one byte, to detect overflow) and at most
64 KiB, so at no point is more than the ceiling plus one step of output held.
"""

from __future__ import annotations

import codecs
import json
import re
import zlib

__all__ = ["OUTPUT_STEP", "BodyDecoder", "BodyTooLarge", "BodyUndecodable", "decode_json_text"]


class BodyTooLarge(Exception):
    """The decoded body exceeded the ceiling."""


class BodyUndecodable(Exception):
    """The body could not be decoded (corrupt, truncated or trailing data)."""


#: Most decoded bytes produced by one ``decompress`` call.
OUTPUT_STEP = 64 * 1024

_GZIP_WBITS = zlib.MAX_WBITS | 16
_ZLIB_WBITS = zlib.MAX_WBITS
_RAW_DEFLATE_WBITS = -zlib.MAX_WBITS


class BodyDecoder:
    """Decode ``identity``, ``gzip`` or ``deflate`` content under a ceiling.

    Use :meth:`for_encoding`; it returns ``None`` for any other encoding.
    """

    def __init__(self, kind: str, ceiling: int) -> None:
        self._kind = kind
        self._ceiling = ceiling
        self._size = 0
        self._first = True
        self._zlib = self._new_decompressor(kind)

    @classmethod
    def for_encoding(cls, content_encoding: str | None, ceiling: int) -> BodyDecoder | None:
        """Return a decoder for a ``Content-Encoding`` value, or ``None`` if unsupported.

        A missing, empty or ``identity`` value means no encoding; ``gzip``,
        ``x-gzip`` and ``deflate`` are decoded (case-insensitively). Anything
        else, including a list of codings, is unsupported: only ``gzip,
        deflate`` is ever offered.
        """
        coding = (content_encoding or "").strip().lower()
        if coding in ("", "identity"):
            return cls("identity", ceiling)
        if coding in ("gzip", "x-gzip"):
            return cls("gzip", ceiling)
        if coding == "deflate":
            return cls("deflate", ceiling)
        return None

    @staticmethod
    def _new_decompressor(kind: str) -> zlib._Decompress | None:
        if kind == "gzip":
            return zlib.decompressobj(_GZIP_WBITS)
        if kind == "deflate":
            return zlib.decompressobj(_ZLIB_WBITS)
        return None

    @property
    def identity(self) -> bool:
        """Whether the body is not compressed (decoded size equals wire size)."""
        return self._zlib is None

    @property
    def size(self) -> int:
        """Decoded bytes produced so far."""
        return self._size

    def feed(self, chunk: bytes, out: bytearray) -> None:
        """Decode one raw chunk, appending the decoded bytes to *out*.

        Raises:
            BodyTooLarge: The decoded total passed the ceiling.
            BodyUndecodable: Corrupt data, or data after the end of the stream.
        """
        if self._zlib is None:
            self._size += len(chunk)
            if self._size > self._ceiling:
                raise BodyTooLarge
            out += chunk
            return
        if not chunk:
            return
        if self._zlib.eof:
            # Trailing bytes (a second gzip member or garbage) would pile up in
            # unused_data without bound; the body is refused instead.
            raise BodyUndecodable
        first, self._first = self._first, False
        try:
            self._decompress(chunk, out)
        except zlib.error as exc:
            if not (first and self._kind == "deflate" and self._size == 0):
                raise BodyUndecodable from exc
        else:
            return
        # Some servers send raw DEFLATE without the zlib wrapper under
        # "Content-Encoding: deflate"; httpx accepts both, and so do we.
        self._zlib = zlib.decompressobj(_RAW_DEFLATE_WBITS)
        try:
            self._decompress(chunk, out)
        except zlib.error as exc:
            raise BodyUndecodable from exc

    def _decompress(self, data: bytes, out: bytearray) -> None:
        decompressor = self._zlib
        if decompressor is None:  # pragma: no cover - identity never gets here
            return
        while data:
            # At most one step of output per call, and never more than one byte
            # past the ceiling: a bomb is stopped after one step, not one ceiling.
            step = min(self._ceiling - self._size + 1, OUTPUT_STEP)
            output = decompressor.decompress(data, step)
            self._size += len(output)
            if self._size > self._ceiling:
                raise BodyTooLarge
            out += output
            tail = decompressor.unconsumed_tail
            if not output and tail == data:  # pragma: no cover - zlib always progresses
                raise BodyUndecodable
            data = tail
        if decompressor.eof and decompressor.unused_data:
            raise BodyUndecodable

    def finish(self) -> None:
        """Check that a compressed stream ended properly.

        Raises:
            BodyUndecodable: The compressed stream is truncated.
        """
        if self._zlib is not None and not self._zlib.eof:
            raise BodyUndecodable


#: Lead bytes of UTF-8 sequences for code points from U+0100 up.
_WIDE_LEAD = re.compile(b"[\xc4-\xf4]")
_TEXT_STEP = 256 * 1024
_ESCAPE_HANDLER = "notanda_openalex.json_escape"


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):  # pragma: no cover - registered for encoding
        raise error
    run = error.object[error.start : error.end]
    # The C encoder escapes the whole run at once, astral characters as surrogate pairs.
    return json.dumps(run, ensure_ascii=True)[1:-1], error.end


codecs.register_error(_ESCAPE_HANDLER, _json_escape)


def decode_json_text(body: bytes | bytearray) -> str:
    r"""Decode a UTF-8 JSON body (strictly) into a compact ``str`` for the parser.

    CPython stores a string with 1, 2 or 4 bytes per character depending on
    its widest character, so one emoji in a 4 MiB page would make the whole
    text 16 MiB. When the body has characters beyond U+00FF, each run of them
    is rewritten as JSON ``\uXXXX`` escapes (surrogate pairs beyond U+FFFF):
    this is only possible inside JSON strings, where it means exactly the same
    thing, and keeps the text at one byte per character.

    A ``bytearray`` body is emptied once it is decoded, before the pieces
    of text are joined: the caller has no use for it after this, and a page
    then never has its bytes, its pieces and its text in memory at once.

    Raises:
        UnicodeDecodeError: The body is not valid UTF-8.
    """
    if _WIDE_LEAD.search(body) is None:
        return body.decode("utf-8")
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    pieces: list[str] = []
    with memoryview(body) as view:
        for start in range(0, len(view), _TEXT_STEP):
            chunk = decoder.decode(view[start : start + _TEXT_STEP], final=False)
            pieces.append(chunk.encode("latin-1", _ESCAPE_HANDLER).decode("latin-1"))
    pieces.append(decoder.decode(b"", final=True))
    if isinstance(body, bytearray):
        body.clear()
    return "".join(pieces)
