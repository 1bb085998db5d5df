"""The parts of one checked bibliography: ``audit`` says which are present out of the planned."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from notanda_evidence import EvidenceLog, EvidenceStore, _cli, audit
from notanda_evidence._runs import RunCode, RunTracker
from notanda_evidence.verify_file import Severity

RUN = "ab" * 16
FILE = "cd" * 32


def request(part: int, parts: int, run_id: str = RUN, sha: str = FILE) -> dict[str, Any]:
    return {
        "tool": "check_references",
        "run": {"run_id": run_id, "part": part, "parts": parts, "file_sha256": sha},
    }


def codes(tracker: RunTracker) -> list[tuple[str, str, str | None]]:
    return [(f.code.value, f.severity.value, f.detail) for f in tracker.findings()]


def test_a_complete_run_is_one_info_finding() -> None:
    tracker = RunTracker()
    for part in (2, 1, 3):
        tracker.add(f"id{part}", request(part, 3), {"status": "ok"})
    [finding] = tracker.findings()
    assert finding.code is RunCode.COMPLETE
    assert finding.severity is Severity.INFO
    assert finding.detail == f"run {RUN}: all 3 parts present"
    assert finding.evidence_id == "id3"


def test_a_missing_part_is_a_warning_naming_it() -> None:
    tracker = RunTracker()
    for part in (1, 3):
        tracker.add(f"id{part}", request(part, 4), {"status": "ok"})
    assert codes(tracker) == [
        ("run.part_missing", "warning", f"run {RUN}: part 2 of 4 is missing"),
        ("run.part_missing", "warning", f"run {RUN}: part 4 of 4 is missing"),
    ]


def test_a_run_that_stopped_early_is_reported_as_stopped_after_its_part() -> None:
    tracker = RunTracker()
    tracker.add("id1", request(1, 5), {"status": "ok"})
    tracker.add("id2", request(2, 5), {"status": "ok", "stopped": "budget"})
    assert codes(tracker) == [
        (
            "run.stopped",
            "info",
            f"run {RUN}: stopped after part 2 of 5 (budget); 2 of 2 parts present",
        )
    ]
    # A part before the stop that is gone is still missing.
    gone = RunTracker()
    gone.add("id2", request(2, 5), {"status": "ok", "stopped": "interrupted"})
    assert [c[0] for c in codes(gone)] == ["run.part_missing", "run.stopped"]


def test_parts_that_disagree_are_inconsistent() -> None:
    tracker = RunTracker()
    tracker.add("a", request(1, 2), {})
    tracker.add("b", request(1, 2), {})
    tracker.add("c", request(2, 3), {})
    tracker.add("d", request(2, 2, sha="ef" * 32), {})
    details = [detail for code, _, detail in codes(tracker) if code == "run.inconsistent"]
    assert details == [
        f"run {RUN}: the record is part 1 again",
        f"run {RUN}: the record says 3 parts, another part 2",
        f"run {RUN}: the record names another file than the run's other parts",
        f"run {RUN}: the record is part 2 again",
    ]


def test_what_is_not_a_run_part_is_ignored() -> None:
    tracker = RunTracker()
    tracker.add("s", {"tool": "search_literature", "run": request(1, 1)["run"]}, {})
    tracker.add("c", {"tool": "check_references"}, {})
    tracker.add("x", None, None)
    tracker.add("b", request(1, 1, run_id="not hex"), {})
    assert tracker.findings() == []
    bad = RunTracker()
    bad.add("z", request(True, 2), {})  # type: ignore[arg-type]
    assert [c[0] for c in codes(bad)] == ["run.inconsistent"]


def _part(root: Path, part: int, parts: int) -> str:
    writer = EvidenceStore(root).create()
    writer.write_request(
        {
            "evidence_id": writer.evidence_id,
            "schema_version": 1,
            **request(part, parts),
        }
    )
    writer.write_provider({"attempts": [], "provider": "openalex"})
    writer.write_response({"evidence_id": writer.evidence_id, "status": "ok", "references": []})
    seal = writer.seal()
    EvidenceLog(root).append(writer.evidence_id, seal.receipt)
    return writer.evidence_id


def test_audit_reports_the_run_and_names_a_removed_part(tmp_path: Path, capsys: Any) -> None:
    root = tmp_path / "evidence"
    root.mkdir()
    ids = [_part(root, part, 3) for part in (1, 2, 3)]
    result = audit(root)
    assert [f.code for f in result.log_findings] == [RunCode.COMPLETE]
    assert result.exit_code == 0
    import shutil

    shutil.rmtree(root / ids[1])
    result = audit(root, jobs=2)
    found = {(f.code, f.detail) for f in result.log_findings}
    assert (RunCode.PART_MISSING, f"run {RUN}: part 2 of 3 is missing") in found
    assert _cli.main(["audit", str(root)]) == 1  # the log names the deleted record too
    out = capsys.readouterr().out
    assert re.search(rf"warning run\.part_missing: run {RUN}: part 2 of 3 is missing", out)
    # The records come back without their payloads, as audit always gave them.
    assert all(record.request is None for record in result.records)
