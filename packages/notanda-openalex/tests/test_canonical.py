"""Canonical JSON bytes and the compact text decoding of bodies."""

from __future__ import annotations

import json
import sys
from collections import OrderedDict
from typing import Any

import pytest
from conftest import FIXTURES_DIR, fixture_bytes, requires_fixtures
from notanda_openalex import canonical_json_bytes
from notanda_openalex._canonical import iter_canonical_pieces
from notanda_openalex._decode import decode_json_text


def reference(value: Any) -> bytes:
    return json.dumps(
        value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")


VALUES: list[Any] = [
    None,
    True,
    0,
    -1.5e-300,
    10**40,
    "",
    'é中😀\u2028"\\/\x00\x1f',
    [],
    {},
    [[], {}, [[]]],
    {"b": 1, "a": [1, {"z": 0, "y": [{"x": None}]}], "": {"": ""}},
    {"results": [{"id": "W1", "n": 1.0}, {"id": "W2", "t": (1, 2)}], "meta": {"count": 2}},
    {2: "b", 1: "a"},
    (1, (2, 3)),
    OrderedDict([("z", 1), ("a", 2)]),
    {"é": 1, "e": 2, "z": 3, "É": 4, "😀": 5, "中": 6},
    [float("1e16"), 0.1, 1e-7, -0.0],
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_identical_to_json_dumps(value: Any) -> None:
    data = canonical_json_bytes(value)
    assert data == reference(value)
    assert b"".join(iter_canonical_pieces(value)) == data
    assert not data.endswith(b"\n")


@requires_fixtures
@pytest.mark.parametrize(
    "name",
    sorted(path.name for path in FIXTURES_DIR.glob("*.json")) if FIXTURES_DIR.is_dir() else [],
)
def test_identical_on_every_fixture(name: str) -> None:
    value = json.loads(fixture_bytes(name))
    assert canonical_json_bytes(value) == reference(value)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (float("nan"), ValueError),
        ({"a": [float("inf")]}, ValueError),
        ({"a": {1, 2}}, TypeError),
        ({"a": "\ud800"}, UnicodeEncodeError),
        ({"a": 1, 2: 3}, TypeError),
    ],
)
def test_refuses_what_is_not_canonical_json(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        canonical_json_bytes(value)
    with pytest.raises(error):
        reference(value)


def test_circular_reference_is_refused() -> None:
    value: dict[str, Any] = {"a": []}
    value["a"].append(value)
    with pytest.raises(ValueError, match="Circular"):
        canonical_json_bytes(value)


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
    assert json.loads(decode_json_text(bytearray(body))) == value


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
