"""The compact text decoding of bodies (``_decode.decode_json_text``)."""

from __future__ import annotations

import json
import sys

import pytest
from notanda_openalex._decode import decode_json_text

TEXTS = [
    "plain ascii",
    "latin-1: café naïve ÿ",
    "cjk: 经济增加值\uff08EVA\uff09",
    "astral: 😀 \U0001d465 \U0001d54f",
    "mixed: é 中 😀 a",
    'escapes stay: \\u00e9 \\\\ " \n',
]


@pytest.mark.parametrize("text", TEXTS)
def test_compact_decoding_parses_identically(text: str) -> None:
    body = json.dumps({"t": text, text: [text]}, ensure_ascii=False).encode("utf-8")
    assert json.loads(decode_json_text(body)) == json.loads(body.decode("utf-8"))


def test_compact_decoding_across_chunk_boundaries() -> None:
    value = {"t": ["é中😀x" * 30_000, "中" * 100_001, "😀" * 70_001]}
    body = json.dumps(value, ensure_ascii=False).encode("utf-8")
    text = decode_json_text(body)
    assert json.loads(text) == value
    # One byte per character, whatever the widest character of the page.
    assert sys.getsizeof(text) - sys.getsizeof("") < len(text) + 64
    held = bytearray(body)
    assert json.loads(decode_json_text(held)) == value
    # The body's memory is released before the text is joined (issue 23).
    assert held == bytearray()
    assert decode_json_text(body) == text  # bytes cannot be emptied, and are left alone


@pytest.mark.parametrize(
    "body",
    [b'{"t": "\xff"}', b'{"t": "\xed\xa0\x80"}', b'{"t": "\xe4\xb8"}', b'"\xe4\xb8\xad\xc3'],
)
def test_compact_decoding_is_strict(body: bytes) -> None:
    with pytest.raises(UnicodeDecodeError):
        decode_json_text(body)


def test_non_ascii_outside_strings_stays_invalid() -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads(decode_json_text("[1中]".encode()))
