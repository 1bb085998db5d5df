"""Citations from verified records (``_cite``): rendering, refusals and ``find``."""

from __future__ import annotations

from pathlib import Path

from notanda_evidence import CitationCode, ProofCode

_ERRORS_MD = Path(__file__).resolve().parents[3] / "docs" / "errors.md"


def test_errors_md_names_every_cite_and_proof_code() -> None:
    # The paragraph after the log findings table lists what cite, find and
    # prove refuse with; a code added to an enum must be documented there.
    text = _ERRORS_MD.read_text(encoding="utf-8")
    paragraph = text.split("`cite` refuses a record with one of:")[1].split("## ")[0]
    missing = [c.value for c in (*CitationCode, *ProofCode) if f"`{c.value}`" not in paragraph]
    assert missing == []
