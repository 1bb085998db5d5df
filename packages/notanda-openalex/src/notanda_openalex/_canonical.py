"""The canonical JSON form shared with the evidence package.

Sorted keys, compact separators, UTF-8 without escaping non-ASCII, no NaN or
Infinity and no trailing newline. The bytes are exactly those of
``json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
allow_nan=False).encode("utf-8")``; the evidence package adds one newline to
whole payload files and splices these bytes in verbatim.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

__all__ = ["ENCODER", "SPLIT_DEPTH", "canonical_json_bytes", "iter_canonical_pieces"]

ENCODER = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
)

#: Objects and arrays this close to the top are split into pieces so that a large
#: page is never held as one giant ``str`` next to its UTF-8 bytes: the results
#: array of a works page becomes one piece per work.
SPLIT_DEPTH = 2


def iter_canonical_pieces(value: Any) -> Iterator[bytes]:
    """Yield the canonical encoding of *value* as consecutive UTF-8 pieces.

    Joining the pieces gives exactly :func:`canonical_json_bytes`. Every JSON
    string lies entirely inside one piece, and an object key near the top is
    yielded together with its colon (``"key":``).

    Raises:
        ValueError: NaN, Infinity or a circular reference.
        TypeError: A value that is not JSON.
        UnicodeEncodeError: A lone surrogate in a string.
    """
    return _pieces(value, 0)


def canonical_json_bytes(value: Any) -> bytes:
    """Return the canonical JSON bytes of *value*, without a trailing newline.

    Raises:
        ValueError: NaN, Infinity or a circular reference.
        TypeError: A value that is not JSON.
        UnicodeEncodeError: A lone surrogate in a string.
    """
    return b"".join(_pieces(value, 0))


def _pieces(value: Any, depth: int) -> Iterator[bytes]:
    if depth < SPLIT_DEPTH:
        # Only string keys are split: json sorts other keys before turning them
        # into strings, and the whole-object encoder below reproduces that exactly.
        if isinstance(value, dict) and value and all(isinstance(key, str) for key in value):
            separator = b"{"
            for key in sorted(value):
                yield separator + ENCODER.encode(key).encode("utf-8") + b":"
                separator = b","
                yield from _pieces(value[key], depth + 1)
            yield b"}"
            return
        if isinstance(value, (list, tuple)) and value:
            separator = b"["
            for item in value:
                yield separator
                separator = b","
                yield from _pieces(item, depth + 1)
            yield b"]"
            return
    yield ENCODER.encode(value).encode("utf-8")
