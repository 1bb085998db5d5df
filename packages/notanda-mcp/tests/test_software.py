"""The server's code digest (``_software.py``): what it covers, and that it is stable."""

from __future__ import annotations

import re

import pytest
from notanda_mcp import _software


def test_the_code_digest_is_stable_within_a_process() -> None:
    first = _software.code_digest()
    assert re.fullmatch(r"[0-9a-f]{64}", first)
    _software.code_digest.cache_clear()
    assert _software.code_digest() == first
    assert _software.software_record()["code_digest"] == first


def test_the_digest_covers_shipped_files_only() -> None:
    lines = _software.digest_lines()
    assert lines == sorted(lines)
    paths = [line.rsplit(" ", 1)[0] for line in lines]
    assert any(p.startswith("notanda_mcp-") and p.endswith(".dist-info/METADATA") for p in paths)
    for path in paths:
        parts = path.split("/")
        assert "__pycache__" not in parts
        assert parts[0] != ".."
        if parts[0].endswith(".dist-info"):
            assert parts[1] in {"METADATA", "WHEEL", "entry_points.txt", "licenses"}, path
    for line in lines:
        assert re.fullmatch(r"\S+ [0-9a-f]{64}", line)


@pytest.mark.parametrize(
    ("path", "counted"),
    [
        ("notanda_mcp/_server.py", True),
        ("notanda_mcp-0.2.0b1.dist-info/METADATA", True),
        ("notanda_mcp-0.2.0b1.dist-info/WHEEL", True),
        ("notanda_mcp-0.2.0b1.dist-info/entry_points.txt", True),
        ("notanda_mcp-0.2.0b1.dist-info/licenses/LICENSE", True),
        ("notanda_mcp-0.2.0b1.dist-info/RECORD", False),
        ("notanda_mcp-0.2.0b1.dist-info/INSTALLER", False),
        ("notanda_mcp-0.2.0b1.dist-info/REQUESTED", False),
        ("notanda_mcp-0.2.0b1.dist-info/direct_url.json", False),
        ("notanda_mcp-0.2.0b1.dist-info/uv_cache.json", False),
        ("../../../bin/notanda-mcp", False),
        ("notanda_mcp/__pycache__/_server.cpython-311.pyc", False),
    ],
)
def test_what_counts_towards_the_digest(path: str, counted: bool) -> None:
    """Installer additions (pip's and uv's alike) never change the digest."""
    assert _software.shipped(path) is counted
