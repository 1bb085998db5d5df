"""Reference-check records: what ``cite`` and ``find --doi`` take from them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import EXPECTED
from notanda_evidence import EvidenceLog, _cli, collect_citations, find_doi
from notanda_evidence.verify_file import Code, Outcome, verify_root


def _only_record(root: Path) -> str:
    [evidence_id] = EXPECTED["cases"][root.name]["records"]
    return str(evidence_id)


def test_cite_takes_only_the_works_of_verified_references(
    materialize: Callable[[str], Path],
) -> None:
    root = materialize("check_ok")
    evidence_id = _only_record(root)
    citations = collect_citations(root, [evidence_id], allow_injected=True)
    # The second reference matched W1000000002 with differences: not vouched for.
    assert [c.work["openalex_id"] for c in citations] == ["W1000000001"]
    assert [c.position for c in citations] == [0]


def test_find_doi_finds_a_verified_reference_and_not_a_mismatched_one(
    materialize: Callable[[str], Path],
) -> None:
    root = materialize("check_ok")
    evidence_id = _only_record(root)
    found, skipped = find_doi(root, "https://doi.org/10.1000/ALPHA")
    assert [m.evidence_id for m in found] == [evidence_id]
    assert not skipped
    assert find_doi(root, "10.1000/beta") == ([], [])


def test_the_observation_rule_names_the_reference(materialize: Callable[[str], Path]) -> None:
    root = materialize("check_observation_wrong")
    [record] = verify_root(root, full=True).records
    assert record.outcome is Outcome.INTEGRITY_FAILURE
    [finding] = record.findings
    assert finding.code is Code.OBSERVATION_WORK_MISSING
    assert finding.detail == "reference 1: attempt 0 did not return W1000000002"
    # The default pass does not read provider.json: the record looks intact.
    assert verify_root(root).records[0].outcome is Outcome.OK


def _logged_check(root: Path) -> str:
    """The ``check_ok`` record, logged as its writer would have logged it."""
    evidence_id = _only_record(root)
    receipt = hashlib.sha256((root / evidence_id / "manifest.json").read_bytes()).hexdigest()
    EvidenceLog(root).append(evidence_id, receipt)
    return evidence_id


def test_a_logged_check_record_audits_proves_and_exports(
    materialize: Callable[[str], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = materialize("check_ok")
    evidence_id = _logged_check(root)
    capsys.readouterr()
    assert _cli.main(["audit", str(root), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    [record] = report["records"]
    assert (record["evidence_id"], record["outcome"]) == (evidence_id, "ok")
    assert report["log_status"] == {evidence_id: "logged"}
    assert report["summary"]["log_entries"] == 1
    proof = tmp_path / "proof.json"
    assert _cli.main(["prove", evidence_id, "--root", str(root), "--output", str(proof)]) == 0
    assert _cli.main(["prove", "--verify", str(proof), "--record", str(root / evidence_id)]) == 0
    bag = tmp_path / "bag"
    assert _cli.main(["export", "--bagit", str(bag), "--root", str(root)]) == 0
    for name in ("manifest.json", "request.json", "provider.json", "response.json"):
        carried = bag / "data" / evidence_id / name
        assert carried.read_bytes() == (root / evidence_id / name).read_bytes()
    capsys.readouterr()
    assert _cli.main(["audit", str(bag), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["log_status"] == {evidence_id: "logged"}
