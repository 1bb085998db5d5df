"""Adopt and prune (``_adopt``): logging records' fates, never rewriting their files."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import EXPECTED
from notanda_evidence import (
    EntryType,
    EvidenceLog,
    EvidenceStorageError,
    EvidenceStore,
    LogStatus,
    Outcome,
    _adopt,
    adopt,
    audit,
    prune,
)
from test_log import sealed

# ------------------------------------------------------------------ adopt


def test_adopt_logs_legacy_and_unlogged_records_only_once(
    materialize: Callable[[str], Path], tmp_path: Path
) -> None:
    root = tmp_path / "root"
    shutil.copytree(materialize("b3_ok"), root)
    shutil.copytree(materialize("b3_error"), root, dirs_exist_ok=True)
    sealed(root, EvidenceLog(root))
    assert audit(root).exit_code == 3
    report = adopt(root)
    legacy = {*EXPECTED["cases"]["b3_ok"]["records"], *EXPECTED["cases"]["b3_error"]["records"]}
    assert {i for i, _ in report.adopted} == legacy
    assert sorted(index for _, index in report.adopted) == [1, 2]
    result = audit(root)
    assert result.exit_code == 0
    # String enums: equal to the documented words, and members of LogStatus.
    assert sorted(result.log_status.values()) == ["adopted", "adopted", "logged"]
    assert set(map(type, result.log_status.values())) == {LogStatus}
    assert adopt(root).adopted == ()
    assert audit(root).head == result.head


def test_adopt_refuses_records_that_do_not_verify(materialize: Callable[[str], Path]) -> None:
    root = materialize("flip_response")
    report = adopt(root)
    assert report.adopted == ()
    assert [outcome for _, outcome in report.refused] == [Outcome.INTEGRITY_FAILURE]
    assert all(type(outcome) is Outcome for _, outcome in report.refused)


def test_adopt_never_rewrites_record_files(materialize: Callable[[str], Path]) -> None:
    root = materialize("b3_ok")
    before = {p: p.read_bytes() for p in root.rglob("*.json")}
    adopt(root)
    assert {p: p.read_bytes() for p in before} == before


def _first_look_sees_half_deleted(
    monkeypatch: pytest.MonkeyPatch, target: str, *, then_gone: bool
) -> None:
    """Make adopt's first, unlocked look at *target* race a prune's deletion.

    The first look finds the record with its payloads already deleted (an
    integrity failure); by the locked second look the folder is gone
    (*then_gone*) or still half-deleted.
    """
    real = _adopt.verify_record
    looks: list[str] = []

    def racing(path: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(path).name == target and not looks:
            looks.append(target)
            for payload in Path(path).glob("[!m]*.json"):  # all but manifest.json
                payload.unlink()
            result = real(path, *args, **kwargs)
            if then_gone:
                shutil.rmtree(path)
            return result
        return real(path, *args, **kwargs)

    monkeypatch.setattr(_adopt, "verify_record", racing)


def test_adopt_does_not_refuse_a_record_pruned_during_its_first_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept, _ = sealed(tmp_path)  # unlogged: a candidate
    raced, _ = sealed(tmp_path)  # unlogged, deleted while adopt looks at it
    _first_look_sees_half_deleted(monkeypatch, raced, then_gone=True)
    report = adopt(tmp_path, min_age_s=0)
    assert report.refused == ()
    assert [evidence_id for evidence_id, _ in report.adopted] == [kept]


def test_adopt_refuses_a_record_still_damaged_under_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    damaged, _ = sealed(tmp_path)
    _first_look_sees_half_deleted(monkeypatch, damaged, then_gone=False)
    report = adopt(tmp_path, min_age_s=0)
    assert report.refused == ((damaged, "integrity_failure"),)
    assert report.adopted == ()


def test_adopt_never_revives_a_tombstoned_record_whose_folder_survived(tmp_path: Path) -> None:
    evidence_id, receipt = sealed(tmp_path, EvidenceLog(tmp_path))
    EvidenceLog(tmp_path).append(evidence_id, receipt, EntryType.TOMBSTONE, reason="withdrawn")
    report = adopt(tmp_path, min_age_s=0)
    assert (report.adopted, report.refused) == ((), ())
    assert audit(tmp_path).log_status == {evidence_id: "tombstoned"}


# ------------------------------------------------------------------ prune


def test_prune_logs_a_tombstone_before_deleting(tmp_path: Path) -> None:
    keep, _ = sealed(tmp_path, EvidenceLog(tmp_path))
    gone, receipt = sealed(tmp_path, EvidenceLog(tmp_path))
    [(pruned, index)] = prune(tmp_path, [gone], reason="participant withdrew consent")
    assert (pruned, index) == (gone, 2)
    assert not (tmp_path / gone).exists()
    result = audit(tmp_path)
    assert result.exit_code == 0
    assert result.log_status == {keep: "logged", gone: "tombstoned"}
    tombstone = result.entries[-1]
    assert (tombstone.receipt, tombstone.reason) == (receipt, "participant withdrew consent")


def test_audit_reports_adopted_and_tombstoned_entries_as_information(
    materialize: Callable[[str], Path], tmp_path: Path
) -> None:
    root = tmp_path / "root"
    shutil.copytree(materialize("b3_ok"), root)
    [legacy] = EXPECTED["cases"]["b3_ok"]["records"]
    gone, _ = sealed(root, EvidenceLog(root))
    adopt(root)
    prune(root, [gone], reason="withdrawn")
    result = audit(root)
    assert result.exit_code == 0
    assert {(f.code.value, f.severity.value, f.evidence_id) for f in result.log_findings} == {
        ("log.adopted", "info", legacy),
        ("log.tombstoned", "info", gone),
    }


def test_prune_old_incomplete_records_only(tmp_path: Path) -> None:
    sealed(tmp_path, EvidenceLog(tmp_path))
    old = EvidenceStore(tmp_path).create()
    old.write_request({"evidence_id": old.evidence_id})
    fresh = EvidenceStore(tmp_path).create()
    past = time.time() - 3 * 86400
    for path in (old.path / "request.json", old.path):
        os.utime(path, (past, past))
    done = prune(tmp_path, reason="abandoned searches", incomplete_older_than_s=86400)
    assert [evidence_id for evidence_id, _ in done] == [old.evidence_id]
    assert fresh.path.exists()
    assert audit(tmp_path).entries[-1].receipt is None


def test_prune_removes_a_folder_in_one_step_and_cleans_up_after_an_interrupted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = sealed(tmp_path, EvidenceLog(tmp_path))
    second, _ = sealed(tmp_path, EvidenceLog(tmp_path))
    real = shutil.rmtree
    seen: list[bool] = []

    def interrupted(path: Any, *args: Any, **kwargs: Any) -> None:
        # The record left the root before any of its files was deleted.
        seen.append((tmp_path / first).exists())
        raise PermissionError(13, "interrupted", str(path))

    monkeypatch.setattr(_adopt.shutil, "rmtree", interrupted)
    with pytest.raises(EvidenceStorageError):
        prune(tmp_path, [first], reason="withdrawn")
    assert seen == [False]
    aside = tmp_path / ".notanda" / f"pruning-{first}"
    assert (aside / "manifest.json").is_file()
    result = audit(tmp_path)
    assert result.exit_code == 0, result.log_findings
    assert result.log_status == {first: "tombstoned", second: "logged"}
    monkeypatch.setattr(_adopt.shutil, "rmtree", real)
    prune(tmp_path, [second], reason="withdrawn")
    assert not aside.exists()
    assert sorted(p.name for p in (tmp_path / ".notanda").iterdir()) == ["lock", "log.jsonl"]


@pytest.mark.parametrize("reason", ["", "x" * 201, "line\nbreak"])
def test_prune_needs_a_printable_reason(tmp_path: Path, reason: str) -> None:
    evidence_id, _ = sealed(tmp_path)
    with pytest.raises(ValueError, match="reason"):
        prune(tmp_path, [evidence_id], reason=reason)
    assert (tmp_path / evidence_id).exists()


def test_prune_dry_run_changes_nothing(tmp_path: Path) -> None:
    evidence_id, _ = sealed(tmp_path, EvidenceLog(tmp_path))
    assert prune(tmp_path, [evidence_id], reason="test", dry_run=True) == [(evidence_id, -1)]
    assert (tmp_path / evidence_id).exists()
    assert len(audit(tmp_path).entries) == 1
