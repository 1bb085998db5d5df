"""BagIt export (``_bagit``): a bag bagit-python validates and our audit checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import search_record
from notanda_evidence import (
    EvidenceStore,
    audit,
    export_bagit,
)

# ----------------------------------------------------------------- BagIt


def test_bagit_export_validates_with_bagit_python_and_agrees_with_our_manifests(
    tmp_path: Path,
) -> None:
    bagit = pytest.importorskip("bagit", reason="bagit is a test-only dependency")
    root = tmp_path / "root"
    root.mkdir()
    ids = [search_record(root)[0] for _ in range(3)]
    broken = EvidenceStore(root).create()  # incomplete: left out
    count, skipped = export_bagit(root, tmp_path / "bag")
    assert (count, skipped) == (3, [(broken.evidence_id, "incomplete")])
    bag = bagit.Bag(str(tmp_path / "bag"))
    bag.validate()
    lines = dict(
        reversed(line.split("  ", 1))
        for line in (tmp_path / "bag" / "manifest-sha256.txt").read_text().splitlines()
    )
    for evidence_id in ids:
        ours = json.loads((root / evidence_id / "manifest.json").read_bytes())["files"]
        for name, entry in ours.items():
            assert lines[f"data/{evidence_id}/{name}"] == entry["sha256"]
        receipt = (
            audit(root)
            .records[[r.evidence_id for r in audit(root).records].index(evidence_id)]
            .receipt
        )
        assert lines[f"data/{evidence_id}/manifest.json"] == receipt
    assert bag.info["Notanda-Log-Size"] == "3"
    assert audit(tmp_path / "bag").exit_code == 0


def test_a_tampered_bag_fails_bagit_validation_and_our_audit(tmp_path: Path) -> None:
    bagit = pytest.importorskip("bagit", reason="bagit is a test-only dependency")
    root = tmp_path / "root"
    root.mkdir()
    evidence_id, _ = search_record(root)
    export_bagit(root, tmp_path / "bag")
    path = tmp_path / "bag" / "data" / evidence_id / "response.json"
    data = bytearray(path.read_bytes())
    data[30] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(bagit.BagValidationError):
        bagit.Bag(str(tmp_path / "bag")).validate()
    assert audit(tmp_path / "bag").exit_code == 1


def test_export_refuses_an_existing_folder(tmp_path: Path) -> None:
    (tmp_path / "bag").mkdir()
    with pytest.raises(FileExistsError):
        export_bagit(tmp_path, tmp_path / "bag")
