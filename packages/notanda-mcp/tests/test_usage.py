"""What every notanda-mcp command shares: the check verdict lines of doctor and demo."""

from __future__ import annotations

import pytest
from notanda_mcp._usage import CheckVerdict, verdict_line


@pytest.mark.parametrize(
    ("verdict", "line"),
    [
        (CheckVerdict.OK, "ok    Python 3.12.1"),
        (CheckVerdict.WARN, "warn  Python 3.12.1"),
        (CheckVerdict.FAIL, "FAIL  Python 3.12.1"),
    ],
)
def test_a_verdict_line_starts_with_the_verdict_in_six_columns(
    verdict: CheckVerdict, line: str
) -> None:
    assert verdict_line(verdict, "Python 3.12.1") == line
