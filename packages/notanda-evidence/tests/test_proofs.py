"""Inclusion proofs (``_proofs``): made, shared, checked and refused when tampered."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from notanda_evidence import (
    EvidenceLog,
    ProofError,
    audit,
    make_proof,
    verify_proof,
)
from test_log import sealed

# ------------------------------------------------------------------ proofs


def test_inclusion_proof_round_trip_reveals_no_other_record(tmp_path: Path) -> None:
    ids = [sealed(tmp_path, EvidenceLog(tmp_path))[0] for _ in range(6)]
    proof = make_proof(tmp_path, ids[3])
    document = json.loads(json.dumps(proof.to_json()))
    text = json.dumps(document)
    assert all(other not in text for other in ids if other != ids[3])
    checked = verify_proof(document, record=tmp_path / ids[3], held=audit(tmp_path).head)
    assert (checked.index, checked.head.size) == (3, 6)


def test_proof_at_an_earlier_held_size(tmp_path: Path) -> None:
    ids = [sealed(tmp_path, EvidenceLog(tmp_path))[0] for _ in range(3)]
    early = audit(tmp_path).head
    sealed(tmp_path, EvidenceLog(tmp_path))
    proof = make_proof(tmp_path, ids[1], size=early.size)
    assert verify_proof(proof.to_json(), held=early).head == early
    with pytest.raises(ProofError) as caught:
        verify_proof(make_proof(tmp_path, ids[1]).to_json(), held=early)
    assert caught.value.code == "head_mismatch"


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (lambda d: d["path"].__setitem__(0, "00" * 32), "path_mismatch"),
        (lambda d: d.update(index=d["index"] + 1), "entry_mismatch"),
        (lambda d: d.update(receipt="ab" * 32), "entry_mismatch"),
        (lambda d: d["head"].update(root="cd" * 32), "path_mismatch"),
        (lambda d: d.update(format="something-else"), "unknown_format"),
        (lambda d: d.pop("entry"), "malformed"),
        (lambda d: d.update(path=["zz"]), "malformed"),
    ],
)
def test_tampered_proofs_fail(
    tmp_path: Path, edit: Callable[[dict[str, Any]], Any], code: str
) -> None:
    ids = [sealed(tmp_path, EvidenceLog(tmp_path))[0] for _ in range(5)]
    document = make_proof(tmp_path, ids[2]).to_json()
    edit(document)
    with pytest.raises(ProofError) as caught:
        verify_proof(document)
    assert caught.value.code == code


def test_proof_against_a_replaced_record_fails(tmp_path: Path) -> None:
    evidence_id, _ = sealed(tmp_path, EvidenceLog(tmp_path))
    document = make_proof(tmp_path, evidence_id).to_json()
    (tmp_path / evidence_id / "manifest.json").write_bytes(b"{}\n")
    with pytest.raises(ProofError) as caught:
        verify_proof(document, record=tmp_path / evidence_id)
    assert caught.value.code == "record_mismatch"


@pytest.mark.parametrize("size", [0, 4])
def test_no_proof_at_a_size_the_log_does_not_have(tmp_path: Path, size: int) -> None:
    ids = [sealed(tmp_path, EvidenceLog(tmp_path))[0] for _ in range(3)]
    with pytest.raises(ProofError) as caught:
        make_proof(tmp_path, ids[0], size=size)
    assert caught.value.code == "bad_size"


def test_no_proof_for_an_unlogged_record(tmp_path: Path) -> None:
    sealed(tmp_path, EvidenceLog(tmp_path))
    unlogged, _ = sealed(tmp_path)
    with pytest.raises(ProofError) as caught:
        make_proof(tmp_path, unlogged)
    assert caught.value.code == "not_logged"
