"""The raising wrapper (``_verify``): a verdict other than ok becomes a VerificationError."""

from __future__ import annotations

from pathlib import Path

import pytest
from notanda_evidence import Outcome, VerificationError, verify_or_raise
from test_verify_file import sealed


def test_verify_or_raise(tmp_path: Path) -> None:
    evidence_id, receipt = sealed(tmp_path)
    assert verify_or_raise(tmp_path / evidence_id, receipt).outcome is Outcome.OK
    with pytest.raises(VerificationError) as caught:
        verify_or_raise(tmp_path / evidence_id, "f" * 64)
    assert caught.value.result.outcome is Outcome.RECEIPT_MISMATCH
    assert "receipt.mismatch" in str(caught.value)
