"""The ``notanda-evidence`` command line (``_cli``): cite, find, prove, adopt, prune, export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import search_record
from notanda_evidence import (
    _cli,
)


def test_cli_cite_find_prove_adopt_prune_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    evidence_id, _ = search_record(root)
    monkeypatch.setenv("NOTANDA_EVIDENCE_DIR", str(root))
    assert _cli.main(["cite", evidence_id, "--format", "ris"]) == 0
    assert "TY  - JOUR" in capsys.readouterr().out
    assert _cli.main(["find", "--doi", "10.1234/example.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["matches"][0]["evidence_id"] == evidence_id
    assert _cli.main(["find", "--doi", "10.1/none"]) == 1
    capsys.readouterr()
    proof = tmp_path / "proof.json"
    assert _cli.main(["prove", evidence_id, "--output", str(proof)]) == 0
    assert _cli.main(["prove", "--verify", str(proof), "--record", str(root / evidence_id)]) == 0
    assert _cli.main(["adopt", "--dry-run"]) == 0
    assert _cli.main(["export", "--bagit", str(tmp_path / "bag")]) == 0
    assert _cli.main(["export", "--bagit", str(tmp_path / "bag")]) == 2
    assert _cli.main(["prune", evidence_id, "--reason", "test"]) == 0
    assert _cli.main(["cite", evidence_id]) == 1
    monkeypatch.delenv("NOTANDA_EVIDENCE_DIR")
    assert _cli.main(["cite", evidence_id]) == 2
    assert "NOTANDA_EVIDENCE_DIR" in capsys.readouterr().err
