"""Reference-check records: what ``cite`` and ``find --doi`` take from them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import EXPECTED
from notanda_evidence import collect_citations, find_doi
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
