"""The writer: fresh IDs, permissions, write order, durability steps and failure handling."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import notanda_evidence
import pytest
from notanda_evidence import (
    EvidenceStorageError,
    EvidenceStore,
    EvidenceValueError,
    Outcome,
    ParsedJSON,
    Stage,
    StorageReason,
    _store,
    encode_canonical,
    verify_file,
    verify_record,
)


def write_record(store: EvidenceStore, *, provider: Any = None, status: str = "ok") -> Any:
    writer = store.create()
    writer.write_request({"evidence_id": writer.evidence_id, "query": "q"})
    writer.write_provider(provider if provider is not None else {"attempts": []})
    writer.write_response({"evidence_id": writer.evidence_id, "status": status})
    return writer, writer.seal()


def test_a_sealed_record_verifies_with_its_receipt(tmp_path: Path) -> None:
    writer, seal = write_record(EvidenceStore(tmp_path))
    result = verify_record(writer.path, seal.receipt, full=True)
    assert result.outcome is Outcome.OK
    assert result.receipt == seal.receipt
    manifest = (writer.path / "manifest.json").read_bytes()
    assert hashlib.sha256(manifest).hexdigest() == seal.receipt
    assert json.loads(manifest)["evidence_id"] == writer.evidence_id
    assert seal.outcome == "ok"


def test_sealed_error_outcome_is_recorded_in_the_manifest(tmp_path: Path) -> None:
    writer, seal = write_record(EvidenceStore(tmp_path), status="error")
    assert seal.outcome == "error"
    assert json.loads((writer.path / "manifest.json").read_bytes())["outcome"] == "error"
    assert verify_record(writer.path).outcome is Outcome.OK


def test_ids_are_fresh_lowercase_hex_and_never_reused(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path)
    ids = {store.create().evidence_id for _ in range(200)}
    assert len(ids) == 200
    assert all(notanda_evidence.is_evidence_id(i) for i in ids)


def test_an_existing_directory_is_never_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = "a" * 32
    (tmp_path / taken).mkdir()
    (tmp_path / taken / "keep.txt").write_text("mine")
    tokens = iter([taken, "b" * 32])
    monkeypatch.setattr(_store.secrets, "token_hex", lambda n: next(tokens))
    writer = EvidenceStore(tmp_path).create()
    assert writer.evidence_id == "b" * 32
    assert (tmp_path / taken / "keep.txt").read_text() == "mine"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_directories_are_0700_and_files_0600(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        writer, _ = write_record(EvidenceStore(tmp_path))
    finally:
        os.umask(old)
    assert stat.S_IMODE(writer.path.stat().st_mode) == 0o700
    for child in writer.path.iterdir():
        assert stat.S_IMODE(child.stat().st_mode) == 0o600, child.name


def test_stages_are_called_in_order(tmp_path: Path) -> None:
    seen: list[tuple[Stage, str]] = []
    store = EvidenceStore(tmp_path, on_stage=lambda stage, i: seen.append((stage, i)))
    writer, _ = write_record(store)
    assert [s for s, _ in seen] == [
        Stage.BEFORE_REQUEST,
        Stage.AFTER_REQUEST,
        Stage.AFTER_PROVIDER,
        Stage.AFTER_RESPONSE,
        Stage.BEFORE_MANIFEST,
        Stage.AFTER_MANIFEST,
    ]
    assert {i for _, i in seen} == {writer.evidence_id}


class Stop(Exception):
    pass


@pytest.mark.parametrize(
    ("stop_at", "present"),
    [
        (Stage.BEFORE_REQUEST, set()),
        (Stage.AFTER_REQUEST, {"request.json"}),
        (Stage.AFTER_PROVIDER, {"request.json", "provider.json"}),
        (Stage.AFTER_RESPONSE, {"request.json", "provider.json", "response.json"}),
        (Stage.BEFORE_MANIFEST, {"request.json", "provider.json", "response.json"}),
    ],
)
def test_stopping_before_the_manifest_leaves_an_incomplete_record(
    tmp_path: Path, stop_at: Stage, present: set[str]
) -> None:
    def on_stage(stage: Stage, evidence_id: str) -> None:
        if stage is stop_at:
            raise Stop

    store = EvidenceStore(tmp_path, on_stage=on_stage)
    with pytest.raises(Stop):
        write_record(store)
    [record] = list(tmp_path.iterdir())
    assert {p.name for p in record.iterdir()} == present
    result = verify_record(record)
    assert result.outcome is Outcome.INCOMPLETE
    assert [f.code.value for f in result.findings] == ["record.no_manifest"]


def test_stopping_after_the_manifest_leaves_a_complete_record(tmp_path: Path) -> None:
    def on_stage(stage: Stage, evidence_id: str) -> None:
        if stage is Stage.AFTER_MANIFEST:
            raise Stop

    with pytest.raises(Stop):
        write_record(EvidenceStore(tmp_path, on_stage=on_stage))
    [record] = list(tmp_path.iterdir())
    assert verify_record(record, full=True).outcome is Outcome.OK


def test_hashes_come_from_memory_not_from_a_reread(tmp_path: Path) -> None:
    """A payload changed on disk between its write and the seal is not sealed as genuine."""

    def on_stage(stage: Stage, evidence_id: str) -> None:
        if stage is Stage.BEFORE_MANIFEST:
            path = tmp_path / evidence_id / "provider.json"
            path.write_bytes(path.read_bytes().replace(b"attempts", b"attempt5"))

    writer, seal = write_record(EvidenceStore(tmp_path, on_stage=on_stage))
    result = verify_record(writer.path, seal.receipt)
    assert [f.code.value for f in result.findings] == ["payload.digest_mismatch"]


def test_lone_surrogates_are_replaced_and_the_stored_value_is_returned(tmp_path: Path) -> None:
    writer = EvidenceStore(tmp_path).create()
    value = {
        "evidence_id": writer.evidence_id,
        "title": "half \ud83d emoji",
        "\udc00key": ["\ud800"],
    }
    stored = writer.write_request(value)
    assert stored == {
        "evidence_id": writer.evidence_id,
        "title": "half \ufffd emoji",
        "\ufffdkey": ["\ufffd"],
    }
    assert json.loads((writer.path / "request.json").read_bytes()) == stored
    clean = {"evidence_id": writer.evidence_id, "status": "ok"}
    writer.write_provider({})
    assert writer.write_response(clean) is clean


@pytest.mark.parametrize(
    "bad",
    [
        {"x": float("nan")},
        {"x": float("inf")},
        {"x": object()},
        {"x": {1: "int key"}},
        {"x": {None: "none key"}},
        {"x": b"bytes"},
        {"x": {1.5, 2.5}},
    ],
    ids=["nan", "inf", "object", "int-key", "none-key", "bytes", "set"],
)
def test_values_json_cannot_hold_are_rejected_before_anything_is_written(
    tmp_path: Path, bad: dict[str, Any]
) -> None:
    writer = EvidenceStore(tmp_path).create()
    with pytest.raises(EvidenceValueError):
        writer.write_request(bad)
    assert list(writer.path.iterdir()) == []


def test_response_status_must_be_ok_or_error(tmp_path: Path) -> None:
    writer = EvidenceStore(tmp_path).create()
    writer.write_request({})
    writer.write_provider({})
    with pytest.raises(EvidenceValueError):
        writer.write_response({"status": "maybe"})
    assert {p.name for p in writer.path.iterdir()} == {"request.json", "provider.json"}


def test_sealing_needs_all_three_payloads_and_payloads_are_written_once(tmp_path: Path) -> None:
    writer = EvidenceStore(tmp_path).create()
    writer.write_request({})
    with pytest.raises(RuntimeError, match=r"provider\.json, response\.json"):
        writer.seal()
    with pytest.raises(RuntimeError, match="already written"):
        writer.write_request({})


def test_a_parsed_value_is_encoded_in_place(tmp_path: Path) -> None:
    body = {"results": [{"title": "Ünïcode", "n": 1.5}], "meta": {"count": 1}}
    data, stored = encode_canonical({"b": 1, "observed_json": ParsedJSON(body), "a": [2]})
    assert data == notanda_evidence.canonical_bytes({"a": [2], "b": 1, "observed_json": body})
    assert isinstance(stored["observed_json"], ParsedJSON)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({1: "one"}, id="int"),
        pytest.param({"a": [{None: 1}]}, id="none-nested"),
        pytest.param({"a": ParsedJSON({2.5: 1})}, id="inside-parsed"),
        pytest.param({"a": {True: 1}}, id="bool"),
    ],
)
def test_a_non_string_key_is_refused_by_every_encoder(value: Any) -> None:
    """One rule: json would write ``1`` as ``"1"``, and the value read back would differ."""
    with pytest.raises(TypeError, match="keys must be strings"):
        notanda_evidence.canonical_bytes(value)
    with pytest.raises(TypeError, match="keys must be strings"):
        notanda_evidence.canonical_pieces(value)
    with pytest.raises(EvidenceValueError, match="keys must be strings"):
        encode_canonical(value)


def test_a_missing_root_is_not_created(tmp_path: Path) -> None:
    with pytest.raises(EvidenceStorageError) as caught:
        EvidenceStore(tmp_path / "missing").create()
    assert caught.value.reason is StorageReason.NOT_FOUND
    assert caught.value.evidence_id is None
    assert not (tmp_path / "missing").exists()


def test_a_root_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(EvidenceStorageError) as caught:
        EvidenceStore(tmp_path / "file").create()
    assert caught.value.reason is StorageReason.NOT_A_DIRECTORY
    assert str(tmp_path) not in str(caught.value)


@pytest.mark.skipif(os.name != "posix", reason="symlinks and O_NOFOLLOW")
def test_a_planted_symlink_at_the_pending_name_is_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("original")
    root = tmp_path / "root"
    root.mkdir()

    def on_stage(stage: Stage, evidence_id: str) -> None:
        if stage is Stage.BEFORE_REQUEST:
            os.symlink(victim, root / evidence_id / "request.json.pending")

    writer = EvidenceStore(root, on_stage=on_stage).create()
    with pytest.raises(EvidenceStorageError) as caught:
        writer.write_request({"evidence_id": writer.evidence_id})
    assert caught.value.reason is StorageReason.EXISTS
    assert caught.value.evidence_id == writer.evidence_id
    assert caught.value.file == "request.json"
    assert victim.read_text() == "original"
    assert not (writer.path / "request.json").exists()


def test_a_storage_failure_mid_write_leaves_no_half_written_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    writer = EvidenceStore(tmp_path).create()
    writer.write_request({"evidence_id": writer.evidence_id})
    real_write = os.write

    def full_disk(fd: int, data: Any) -> int:
        real_write(fd, bytes(data)[:10])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_store.os, "write", full_disk)
    with pytest.raises(EvidenceStorageError) as caught:
        writer.write_provider({"attempts": ["x" * 1000]})
    monkeypatch.undo()
    assert caught.value.reason is StorageReason.NO_SPACE
    assert {p.name for p in writer.path.iterdir()} == {"request.json"}
    assert verify_record(writer.path).outcome is Outcome.INCOMPLETE


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="needs RLIMIT_FSIZE")
def test_a_file_size_limit_gives_file_too_large(tmp_path: Path) -> None:
    """RLIMIT_FSIZE gives EFBIG, which is not ENOSPC and has its own reason."""
    script = textwrap.dedent(
        f"""
        import resource, sys
        sys.path[:0] = {sys.path!r}
        from notanda_evidence import EvidenceStore, EvidenceStorageError
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        writer = EvidenceStore({str(tmp_path)!r}).create()
        writer.write_request({{"evidence_id": writer.evidence_id}})
        try:
            writer.write_provider({{"blob": "x" * 100000}})
        except EvidenceStorageError as exc:
            print(exc.reason.value, exc.file)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["file_too_large", "provider.json"]
    [record] = list(tmp_path.iterdir())
    assert {p.name for p in record.iterdir()} == {"request.json"}


def test_windows_code_path_writes_the_same_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forced path-based writing (no dir_fd, no directory fsync) yields identical bytes."""
    monkeypatch.setattr(verify_file, "USE_DIR_FD", False)
    fsyncs: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        fsyncs.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(_store.os, "fsync", counting_fsync)
    writer, seal = write_record(EvidenceStore(tmp_path))
    assert len(fsyncs) == 4  # one per file; Windows cannot fsync a directory
    monkeypatch.undo()
    assert verify_record(writer.path, seal.receipt, full=True).outcome is Outcome.OK


def test_posix_path_fsyncs_every_file_and_the_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not verify_file.USE_DIR_FD:
        pytest.skip("descriptor-relative writing is POSIX only")
    kinds: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        kinds.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(_store.os, "fsync", recording_fsync)
    write_record(EvidenceStore(tmp_path))
    # The root after mkdir; request.json and its folder entry before any provider
    # call; provider.json and response.json, whose renames one folder fsync covers;
    # then the manifest and its entry, before the receipt is returned.
    assert kinds == ["dir", "file", "dir", "file", "file", "dir", "file", "dir"]


def test_storage_errors_never_carry_paths_or_os_text(tmp_path: Path) -> None:
    secret_dir = tmp_path / "sk-private-folder-name"
    with pytest.raises(EvidenceStorageError) as caught:
        EvidenceStore(secret_dir).create()
    assert "sk-private" not in str(caught.value)
    assert "No such file" not in str(caught.value)


def test_an_unlisted_os_error_is_classified_as_io_error() -> None:
    import errno

    error = EvidenceStorageError.from_os_error(OSError(errno.EIO, "Input/output error"))
    assert error.reason is StorageReason.IO_ERROR
    assert "Input/output" not in str(error)


# ------------------------------------------------------- format limits


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("name", ["request.json", "provider.json", "response.json"])
def test_the_depth_limit_is_the_verifiers_a_sealed_record_at_the_limit_verifies(
    tmp_path: Path, name: str
) -> None:
    limit = verify_file.MAX_JSON_DEPTH
    payloads = {"request.json": {}, "provider.json": {}, "response.json": {"status": "ok"}}
    payloads[name]["x"] = _nested(limit - 1)  # the object itself is the first level
    writer = EvidenceStore(tmp_path).create()
    writer.write_request({"evidence_id": writer.evidence_id, **payloads["request.json"]})
    writer.write_provider(payloads["provider.json"])
    writer.write_response({"evidence_id": writer.evidence_id, **payloads["response.json"]})
    result = verify_record(writer.path, writer.seal().receipt, full=True)
    assert result.outcome is Outcome.OK, result.findings


@pytest.mark.parametrize(
    "deep",
    [
        pytest.param(lambda limit: {"x": _nested(limit)}, id="value"),
        pytest.param(lambda limit: {"x": ParsedJSON(_nested(limit))}, id="parsed"),
        pytest.param(lambda limit: {"x": _nested(100_000)}, id="100000-deep"),
        pytest.param(
            # A bound that leaves no room is no reason to skip the scan.
            lambda limit: {"x": ParsedJSON(_nested(limit), limit)},
            id="parsed-bound-too-high",
        ),
    ],
)
@pytest.mark.parametrize("name", ["request.json", "provider.json", "response.json"])
def test_a_payload_over_the_depth_limit_is_refused_before_it_is_written(
    tmp_path: Path, name: str, deep: Any
) -> None:
    writer = EvidenceStore(tmp_path).create()
    value = deep(verify_file.MAX_JSON_DEPTH)
    steps = {
        "request.json": lambda v: writer.write_request(v),
        "provider.json": lambda v: writer.write_provider(v),
        "response.json": lambda v: writer.write_response({"status": "ok", **v}),
    }
    for step in ("request.json", "provider.json", "response.json"):
        if step == name:
            break
        steps[step]({})
    with pytest.raises(EvidenceStorageError) as caught:
        steps[name](value)
    assert (caught.value.reason, caught.value.file) == (StorageReason.TOO_DEEP, name)
    assert name not in {p.name for p in writer.path.iterdir()}
    assert not any(p.name.endswith(".pending") for p in writer.path.iterdir())
    assert verify_record(writer.path).outcome is Outcome.INCOMPLETE


def test_a_cyclic_value_is_refused_rather_than_followed(tmp_path: Path) -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    writer = EvidenceStore(tmp_path).create()
    with pytest.raises(EvidenceStorageError) as caught:
        writer.write_request(cyclic)
    assert caught.value.reason is StorageReason.TOO_DEEP


def test_the_size_limit_is_the_verifiers_and_is_checked_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer reads the verifier's constant: one limit, so a sealed record never fails it."""
    monkeypatch.setattr(verify_file, "MAX_PAYLOAD_BYTES", 1000)
    writer = EvidenceStore(tmp_path).create()
    writer.write_request({"evidence_id": writer.evidence_id})
    exact = encode_canonical({"blob": ""})[0]
    at_limit = {"blob": "x" * (1000 - len(exact))}
    assert len(encode_canonical(at_limit)[0]) == 1000
    writer.write_provider(at_limit)
    with pytest.raises(EvidenceStorageError) as caught:
        writer.write_response({"status": "ok", "blob": "x" * 1000})
    assert (caught.value.reason, caught.value.file) == (StorageReason.TOO_LARGE, "response.json")
    assert "response.json" not in {p.name for p in writer.path.iterdir()}
    writer.write_response({"evidence_id": writer.evidence_id, "status": "ok"})
    seal = writer.seal()
    assert verify_record(writer.path, seal.receipt, full=True).outcome is Outcome.OK
    big = ParsedJSON("y" * 1000)
    other = EvidenceStore(tmp_path).create()
    other.write_request({})
    with pytest.raises(EvidenceStorageError) as caught:
        other.write_provider({"observed_json": big})
    assert caught.value.reason is StorageReason.TOO_LARGE


def test_the_payload_limit_leaves_room_for_the_largest_provider_body() -> None:
    """A 4 MiB body of the numbers that grow most when re-encoded still fits, with room."""
    body = b"[" + b",".join([b"1e15"] * ((4 << 20) // 5)) + b"]"
    assert len(body) <= 4 << 20
    stored = encode_canonical(json.loads(body))[0]
    assert len(stored) > 3 * len(body)
    assert 3 * len(stored) < verify_file.MAX_PAYLOAD_BYTES


def test_a_parsed_value_with_a_depth_bound_that_fits_is_not_walked_again() -> None:
    room = verify_file.MAX_JSON_DEPTH - 1  # one level down in the payload
    # The caller's bound is trusted: a value it lies about is not walked.
    verify_file.check_json_value({"observed_json": ParsedJSON(_nested(room + 5), room)})
    with pytest.raises(verify_file.JSONTooDeep):
        verify_file.check_json_value({"observed_json": ParsedJSON(_nested(room + 1), room + 1)})
