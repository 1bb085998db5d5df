"""The checkpoint text a TSA stamps, and the names of stored tokens."""

from __future__ import annotations

import hashlib

import pytest
from notanda_evidence._timestamps import (
    checkpoint_bytes,
    checkpoint_digest,
    token_name,
    token_size,
)

ROOT = "ab" * 32


def test_the_checkpoint_is_the_documented_line() -> None:
    assert checkpoint_bytes(12, ROOT) == f"notanda log head v1 12 {ROOT}\n".encode()
    assert checkpoint_digest(12, ROOT) == hashlib.sha256(checkpoint_bytes(12, ROOT)).digest()


@pytest.mark.parametrize(
    ("size", "root"), [(-1, ROOT), (True, ROOT), (1, ROOT.upper()), (1, ROOT[:-1]), (1, None)]
)
def test_a_checkpoint_needs_a_real_head(size: object, root: object) -> None:
    with pytest.raises(ValueError, match="a checkpoint's"):
        checkpoint_bytes(size, root)  # type: ignore[arg-type]


def test_token_names_round_trip_and_nothing_else_is_a_token() -> None:
    assert [token_size(token_name(size)) for size in (0, 1, 10, 4096)] == [0, 1, 10, 4096]
    for name in ("007.tsr", "1.tsr.tmp", "-1.tsr", "1.TSR", "x.tsr", ".tsr", "1", "1 .tsr"):
        assert token_size(name) is None, name
