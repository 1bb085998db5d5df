"""The raising wrapper around the verifier's result objects."""

from __future__ import annotations

import os

from .verify_file import EvidenceError, RecordResult, verify_record

__all__ = ["VerificationError", "verify_or_raise"]


class VerificationError(EvidenceError):
    """A record did not verify; ``result`` holds every finding."""

    def __init__(self, result: RecordResult) -> None:
        codes = ", ".join(sorted({f.code.value for f in result.findings})) or "none"
        super().__init__(f"{result.evidence_id}: {result.outcome.value} ({codes})")
        self.result = result


def verify_or_raise(
    path: str | os.PathLike[str], receipt: object = None, *, full: bool = False
) -> RecordResult:
    """Verify one record like :func:`verify_record`, raising unless it is intact.

    Raises:
        VerificationError: The outcome is anything but ``ok``.
    """
    result = verify_record(path, receipt, full=full)
    if not result:
        raise VerificationError(result)
    return result
