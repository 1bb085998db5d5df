"""Interoperability with notanda-mcp 0.1.0b3, in both directions.

Records in the exact 0.1.0b3 byte layout (the golden vectors of
notanda-evidence) verify with our command line and the copied single-file
verifier, are retrieved through ``get_evidence`` (``logged: false``), then
adopted into the log without a byte of theirs changing (``logged: true``).
And our records pass :func:`check_v1_contract`, a verifier written here from
the 0.1.0b3 contract alone (its README's evidence contract), sharing no code
with notanda-evidence.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest
from checkout import absent
from harness import (
    MODERN,
    REPO_ROOT,
    audit_json,
    record_ids,
    run,
    script,
    session,
    tree_digest,
    verify_json,
)

VECTORS = REPO_ROOT / "packages" / "notanda-evidence" / "tests" / "vectors" / "cases"
B3_CASES = ("b3_ok", "b3_error")
V1_PAYLOADS = frozenset({"request.json", "provider.json", "response.json"})


def check_v1_contract(folder: Path, receipt: str | None = None) -> list[str]:
    """Judge one record by the 0.1.0b3 contract only; return the problems (none: it verifies).

    The contract: ``manifest.json`` holds ``schema_version`` 1, ``status``
    ``"complete"`` and ``files`` naming exactly the three payloads with their
    byte length and SHA-256; each payload's bytes match; ``request.json`` and
    ``response.json`` carry the folder name as ``evidence_id``; the receipt is
    the SHA-256 of the manifest's bytes.
    """
    problems: list[str] = []
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        return ["incomplete: no manifest.json"]
    manifest_bytes = manifest_path.read_bytes()
    if receipt is not None and hashlib.sha256(manifest_bytes).hexdigest() != receipt:
        problems.append("receipt_mismatch")
    try:
        manifest = json.loads(manifest_bytes)
    except ValueError:
        return [*problems, "manifest is not JSON"]
    if not isinstance(manifest, dict):
        return [*problems, "manifest is not an object"]
    version = manifest.get("schema_version")
    if type(version) is not int or version != 1:
        problems.append("schema_version is not 1")
    if manifest.get("status") != "complete":
        problems.append('status is not "complete"')
    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != V1_PAYLOADS:
        return [*problems, "files does not name exactly the three payloads"]
    for name in sorted(V1_PAYLOADS):
        entry = files[name]
        path = folder / name
        if not path.is_file():
            problems.append(f"{name} is missing")
            continue
        data = path.read_bytes()
        if not isinstance(entry, dict) or entry.get("bytes") != len(data):
            problems.append(f"{name}: byte length differs")
        if not isinstance(entry, dict) or entry.get("sha256") != hashlib.sha256(data).hexdigest():
            problems.append(f"{name}: sha256 differs")
        if name in ("request.json", "response.json"):
            try:
                value = json.loads(data)
            except ValueError:
                problems.append(f"{name} is not JSON")
                continue
            if not isinstance(value, dict) or value.get("evidence_id") != folder.name:
                problems.append(f"{name}: evidence_id is not the folder name")
    return problems


@pytest.fixture
def b3_root(root: Path) -> dict[str, str]:
    """Copy the two 0.1.0b3 golden records into the root; return their IDs and receipts."""
    if not VECTORS.is_dir():
        absent(f"the golden vectors are absent at {VECTORS} (NOTANDA_REPO_ROOT)")
    receipts = {}
    for case in B3_CASES:  # b3_ok first, then b3_error: the dict keeps that order
        (record,) = (VECTORS / case).iterdir()
        shutil.copytree(record, root / record.name)
        receipts[record.name] = hashlib.sha256((record / "manifest.json").read_bytes()).hexdigest()
    return receipts


def test_b3_records_verify_retrieve_and_adopt(
    root: Path, b3_root: dict[str, str], tmp_path: Path
) -> None:
    receipts_file = tmp_path / "receipts.txt"
    receipts_file.write_text("".join(f"{k} {v}\n" for k, v in b3_root.items()))
    before = tree_digest(root)
    ok_id, error_id = b3_root

    for folder, receipt in b3_root.items():
        assert check_v1_contract(root / folder, receipt) == []
    code, report = verify_json(root, receipts=receipts_file, full=True)
    assert code == 0, report
    assert {r["evidence_id"]: r["outcome"] for r in report["records"]} == dict.fromkeys(
        b3_root, "ok"
    )
    import notanda_evidence

    verifier = Path(
        shutil.copy(Path(notanda_evidence.__file__).with_name("verify_file.py"), tmp_path)
    )
    done = run(
        [sys.executable, "-I", "-S", str(verifier), str(root), "--receipts", str(receipts_file)]
    )
    assert done.returncode == 0, done.stdout + done.stderr

    code, audit = audit_json(root)
    assert code == 3  # sealed but not logged: adopt them
    assert audit["log_status"] == dict.fromkeys(b3_root, "unlogged")

    stored_ok = json.loads((root / ok_id / "response.json").read_bytes())
    with session(root, era=MODERN) as raw:
        content, is_error = raw.get(ok_id, b3_root[ok_id])
        assert not is_error, content
        assert content == {**stored_ok, "logged": False, "receipt": b3_root[ok_id]}
        content, is_error = raw.get(error_id, b3_root[error_id])
        assert not is_error  # retrieving a stored error is a successful retrieval
        assert (content["status"], content["error"], content["logged"]) == (
            "error",
            "provider_error",
            False,
        )
        assert content["content_notice"]

        done = run([script("notanda-evidence"), "adopt", "--root", str(root)])
        assert done.returncode == 0, done.stderr
        assert sorted(
            line.split()[1] for line in done.stdout.splitlines() if line.startswith("adopted")
        ) == sorted(b3_root)

        content, is_error = raw.get(ok_id, b3_root[ok_id])
        assert not is_error
        assert content["logged"] is True
        # Our own records live beside theirs.
        ours, is_error = raw.search("Does X improve Y?")
        assert not is_error, ours

    after = tree_digest(root)
    assert {k: v for k, v in after.items() if not k.startswith(".notanda/")} == {
        **before,
        **{k: v for k, v in after.items() if k.startswith(ours["evidence_id"] + "/")},
    }, "adoption or retrieval rewrote a 0.1.0b3 record"
    code, audit = audit_json(root)
    assert code == 0, audit
    assert audit["log_status"] == {
        **dict.fromkeys(b3_root, "adopted"),
        ours["evidence_id"]: "logged",
    }


def test_our_records_pass_a_v1_only_verifier(root: Path) -> None:
    with session(root) as raw:
        made = [raw.search("Does X improve Y?", limit=3)]  # ok
        made.append(raw.search("   "))  # invalid_arguments record
        made.append(raw.search("provider-http-400 q"))  # provider_error record
    with session(root, "--provider", "surrogate") as raw:
        made.append(raw.search("lone surrogates"))  # ok, U+FFFD in place of surrogates
    outcomes = [(content["status"], content.get("error"), is_error) for content, is_error in made]
    assert outcomes == [
        ("ok", None, False),
        ("error", "invalid_arguments", True),
        ("error", "provider_error", True),
        ("ok", None, False),
    ]
    assert len(record_ids(root)) == 4
    for content, _ in made:
        assert check_v1_contract(root / content["evidence_id"], content["receipt"]) == []


def test_the_v1_only_verifier_can_fail(root: Path) -> None:
    """The checker above is a real verifier: it catches corruption and a wrong receipt."""
    with session(root) as raw:
        content, _ = raw.search("Does X improve Y?")
    folder = root / content["evidence_id"]
    assert check_v1_contract(folder, content["receipt"]) == []
    assert check_v1_contract(folder, "0" * 64) == ["receipt_mismatch"]
    response = folder / "response.json"
    data = bytearray(response.read_bytes())
    data[10] ^= 0x01
    response.write_bytes(bytes(data))
    assert check_v1_contract(folder) == ["response.json: sha256 differs"]
    (folder / "manifest.json").unlink()
    assert check_v1_contract(folder) == ["incomplete: no manifest.json"]
