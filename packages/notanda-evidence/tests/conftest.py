"""Shared fixtures: the golden vectors, materialised into a temporary folder."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from vector_cases import materialize_case

VECTORS = Path(__file__).resolve().parent / "vectors"


def load_expected() -> dict[str, Any]:
    return json.loads((VECTORS / "expected.json").read_text(encoding="utf-8"))


EXPECTED = load_expected()


@pytest.fixture
def materialize(tmp_path: Path) -> Callable[[str], Path]:
    """Copy one vector case (links kept, empty folders made) and return its root."""

    def make(case: str) -> Path:
        empty_dirs = EXPECTED["cases"][case]["empty_dirs"]
        return materialize_case(VECTORS / "cases" / case, empty_dirs, tmp_path / case)

    return make
