"""Whether every part of a checked bibliography is present: one run, many records.

``notanda-mcp check-references`` checks a large file in parts, each its own
record, whose ``request.json`` holds a ``run`` object (``run_id``, ``part``,
``parts``, the file's SHA-256) and whose ``response.json`` says ``stopped``
on the part a run stopped after (``docs/evidence-format.md``, 2.7).
:class:`RunTracker` is fed each intact record and, at the end, says per run
which parts are present out of the number planned: a missing part of a run
that did not stop early is a warning naming it; a run that stopped early is
reported as stopped after its part. Only records that verified are fed: a
part that does not verify is missing, besides its own findings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .verify_file import (
    Finding,
    FindingCode,
    Severity,
)

__all__ = ["RunCode", "RunTracker"]

_RUN_ID = re.compile(r"[0-9a-f]{32}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
#: A part number or count past this is not one a run could have made.
_MAX_PARTS = 1 << 20


class RunCode(FindingCode):
    """Stable codes for findings about the parts of one checked bibliography."""

    def report_keys(self) -> tuple[str, ...]:
        """A run finding names the record it is about, when there is one."""
        return ("evidence_id",)

    #: Every planned part of the run is present (info).
    COMPLETE = "run.complete"
    #: A planned part is not among the intact records, and the run did not stop before it.
    PART_MISSING = "run.part_missing"
    #: The run stopped early, after the part named (info; its parts up to it are checked).
    STOPPED = "run.stopped"
    #: Parts that disagree: the number of parts, the file, or one part twice.
    INCONSISTENT = "run.inconsistent"

    @property
    def remedy(self) -> str | None:
        """What to do about it, in one line (``docs/errors.md``); None when nothing is to do."""
        return RUN_REMEDIES.get(self)

    def has_remedies(self) -> bool:
        """The run's findings state their remedies (null for ``run.complete``)."""
        return True


#: What to do about each run finding, printed under it by ``audit`` and given
#: as ``remedy`` in ``--json``; ``docs/errors.md`` states the same text (a test
#: compares them).
RUN_REMEDIES: dict[RunCode, str] = {
    RunCode.PART_MISSING: "restore the part's record from a backup, or check that part of the"
    " file again; the run's other parts still stand",
    RunCode.STOPPED: "check the parts after it: run notanda-mcp check-references on the file"
    " again when the provider allows",
    RunCode.INCONSISTENT: "a record was copied in from another run, or a run ID was reused: ask"
    " the author which records belong together",
}


def _integer(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= _MAX_PARTS:
        return value
    return None


@dataclass(slots=True)
class _Run:
    parts: int
    file_sha256: str | None
    present: dict[int, str] = field(default_factory=dict)
    stopped: tuple[int, str, str] | None = None  # part, reason, evidence ID
    problems: list[tuple[str, str]] = field(default_factory=list)  # evidence ID, detail


class RunTracker:
    """Fed ``(evidence_id, request, response)`` per intact record; :meth:`findings` at the end."""

    def __init__(self) -> None:
        self._runs: dict[str, _Run] = {}

    def add(
        self,
        evidence_id: str,
        request: Mapping[str, Any] | None,
        response: Mapping[str, Any] | None,
    ) -> None:
        """Take one record's part of a run, if it is one (others are ignored)."""
        if not isinstance(request, Mapping) or request.get("tool") != "check_references":
            return
        run = request.get("run")
        if not isinstance(run, Mapping):
            return
        run_id = run.get("run_id")
        part, parts = _integer(run.get("part")), _integer(run.get("parts"))
        if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
            return
        digest = run.get("file_sha256")
        sha = digest if isinstance(digest, str) and _HEX64.fullmatch(digest) else None
        if part is None or parts is None or part > parts:
            tracked = self._runs.setdefault(run_id, _Run(parts=0, file_sha256=sha))
            tracked.problems.append((evidence_id, "its part number or number of parts is invalid"))
            return
        tracked = self._runs.setdefault(run_id, _Run(parts=parts, file_sha256=sha))
        if tracked.parts == 0:
            tracked.parts = parts
        if parts != tracked.parts:
            tracked.problems.append(
                (evidence_id, f"says {parts} parts, another part {tracked.parts}")
            )
        if sha != tracked.file_sha256:
            tracked.problems.append((evidence_id, "names another file than the run's other parts"))
        if part in tracked.present:
            tracked.problems.append((evidence_id, f"is part {part} again"))
            return
        tracked.present[part] = evidence_id
        stopped = response.get("stopped") if isinstance(response, Mapping) else None
        if isinstance(stopped, str) and (tracked.stopped is None or part < tracked.stopped[0]):
            tracked.stopped = (part, stopped, evidence_id)

    def findings(self) -> list[Finding]:
        """Per run (by ID): its problems, its missing parts, and complete or stopped."""
        found: list[Finding] = []
        for run_id in sorted(self._runs):
            run = self._runs[run_id]
            for evidence_id, detail in run.problems:
                found.append(
                    Finding(
                        RunCode.INCONSISTENT,
                        Severity.WARNING,
                        detail=f"run {run_id}: the record {detail}",
                        evidence_id=evidence_id,
                    )
                )
            if run.parts == 0:
                continue
            last = run.parts if run.stopped is None else run.stopped[0]
            missing = [part for part in range(1, last + 1) if part not in run.present]
            for part in missing:
                found.append(
                    Finding(
                        RunCode.PART_MISSING,
                        Severity.WARNING,
                        detail=f"run {run_id}: part {part} of {run.parts} is missing",
                    )
                )
            present = sum(1 for part in run.present if part <= last)
            if run.stopped is not None:
                part, reason, evidence_id = run.stopped
                found.append(
                    Finding(
                        RunCode.STOPPED,
                        Severity.INFO,
                        detail=f"run {run_id}: stopped after part {part} of {run.parts} "
                        f"({reason}); {present} of {part} parts present",
                        evidence_id=evidence_id,
                    )
                )
            elif not missing:
                found.append(
                    Finding(
                        RunCode.COMPLETE,
                        Severity.INFO,
                        detail=f"run {run_id}: all {run.parts} parts present",
                        evidence_id=run.present[run.parts],
                    )
                )
        return found
