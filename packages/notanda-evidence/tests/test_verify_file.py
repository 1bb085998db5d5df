"""``verify_file`` beyond the vectors: IDs, special files, precedence, the command line."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import EXPECTED
from notanda_evidence import (
    EvidenceStore,
    Outcome,
    _cli,
    open_record,
    verify_file,
    verify_record,
    verify_root,
)


def sealed(root: Path) -> tuple[str, str]:
    writer = EvidenceStore(root).create()
    writer.write_request({"evidence_id": writer.evidence_id})
    writer.write_provider({"p": 1})
    writer.write_response({"evidence_id": writer.evidence_id, "status": "ok", "results": []})
    return writer.evidence_id, writer.seal().receipt


@pytest.mark.parametrize(
    "bad_id",
    [
        "../" + "a" * 29,
        "a" * 31,
        "a" * 33,
        "A" * 32,
        "a" * 32 + "\n",
        "\n" + "a" * 32,
        "g" * 32,
        "",
        None,
        32,
        ["a" * 32],
        "/etc/passwd",
        "..",
        "a" * 16 + "/" + "a" * 15,
    ],
)
def test_invalid_ids_are_refused_before_the_file_system_is_touched(
    tmp_path: Path, bad_id: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_fs(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file system was touched")

    monkeypatch.setattr(verify_file.os, "open", no_fs)
    monkeypatch.setattr(verify_file.os, "lstat", no_fs)
    monkeypatch.setattr(verify_file.os, "scandir", no_fs)
    result = open_record(tmp_path, bad_id)
    assert result.outcome is Outcome.INVALID_EVIDENCE_ID


def test_open_record_returns_the_stored_response(tmp_path: Path) -> None:
    evidence_id, receipt = sealed(tmp_path)
    result = open_record(tmp_path, evidence_id, receipt)
    assert result.outcome is Outcome.OK
    assert result.response == {"evidence_id": evidence_id, "status": "ok", "results": []}
    assert result.receipt_checked


def test_not_found(tmp_path: Path) -> None:
    assert open_record(tmp_path, "0" * 32).outcome is Outcome.NOT_FOUND


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_payload_is_reported_and_never_blocks(tmp_path: Path) -> None:
    evidence_id, _ = sealed(tmp_path)
    record = tmp_path / evidence_id
    (record / "provider.json").unlink()
    os.mkfifo(record / "provider.json")
    outcome: list[object] = []
    thread = threading.Thread(target=lambda: outcome.append(verify_record(record, full=True)))
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the verifier blocked on a FIFO"
    [result] = outcome
    assert isinstance(result, verify_file.RecordResult)
    assert result.outcome is Outcome.INTEGRITY_FAILURE
    assert [f.code.value for f in result.findings] == ["fs.special_file"]


def test_a_subdirectory_inside_a_record_is_a_special_entry(tmp_path: Path) -> None:
    evidence_id, _ = sealed(tmp_path)
    (tmp_path / evidence_id / "nested").mkdir()
    result = verify_record(tmp_path / evidence_id)
    assert [f.code.value for f in result.findings] == ["fs.special_file"]


def test_an_oversized_manifest_has_its_own_finding(tmp_path: Path) -> None:
    evidence_id, _ = sealed(tmp_path)
    manifest = tmp_path / evidence_id / "manifest.json"
    manifest.write_bytes(b" " * (verify_file.MAX_MANIFEST_BYTES + 1))
    result = verify_record(tmp_path / evidence_id)
    assert result.outcome is Outcome.INTEGRITY_FAILURE
    assert [(f.code.value, f.file) for f in result.findings] == [
        ("manifest.too_large", "manifest.json")
    ]


def test_a_read_error_is_reported_by_its_type_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    evidence_id, _ = sealed(tmp_path)

    def failing_read(fd: int, size: int) -> bytes:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(verify_file, "_read_all", failing_read)
    result = verify_record(tmp_path / evidence_id)
    assert result.outcome is Outcome.INTEGRITY_FAILURE
    assert [(f.code.value, f.file, f.detail) for f in result.findings] == [
        ("fs.unreadable", "manifest.json", "OSError")
    ]


def test_a_regular_file_named_like_a_record(tmp_path: Path) -> None:
    (tmp_path / ("c" * 32)).write_text("not a folder")
    result = open_record(tmp_path, "c" * 32)
    assert result.outcome is Outcome.INTEGRITY_FAILURE
    assert [f.code.value for f in result.findings] == ["fs.special_file"]


def test_precedence_receipt_over_version_over_integrity(
    materialize: Callable[[str], Path],
) -> None:
    """With several problems at once, the documented precedence picks the outcome."""
    root = materialize("schema_version_2")
    [evidence_id] = EXPECTED["cases"]["schema_version_2"]["records"]
    assert open_record(root, evidence_id).outcome is Outcome.UNSUPPORTED_SCHEMA_VERSION
    assert open_record(root, evidence_id, "0" * 64).outcome is Outcome.RECEIPT_MISMATCH
    (root / evidence_id / "extra.txt").write_text("x")
    both = open_record(root, evidence_id)
    assert both.outcome is Outcome.UNSUPPORTED_SCHEMA_VERSION
    assert {f.code.value for f in both.findings} == {
        "record.unexpected_entry",
        "manifest.unsupported_version",
    }


def test_incomplete_wins_over_a_receipt(materialize: Callable[[str], Path]) -> None:
    root = materialize("incomplete_all_payloads")
    [evidence_id] = EXPECTED["cases"]["incomplete_all_payloads"]["records"]
    assert open_record(root, evidence_id, "0" * 64).outcome is Outcome.INCOMPLETE


def test_all_findings_are_listed_not_only_the_first(tmp_path: Path) -> None:
    evidence_id, _ = sealed(tmp_path)
    record = tmp_path / evidence_id
    (record / "notes.txt").write_text("x")
    (record / "request.json").write_bytes(b"{}\n")
    (record / "provider.json").unlink()
    codes = sorted(f.code.value for f in verify_record(record).findings)
    assert codes == ["payload.missing", "payload.size_mismatch", "record.unexpected_entry"]


@pytest.mark.parametrize(
    "case",
    [
        "ok",
        "flip_response",
        "symlink_payload",
        "symlink_record",
        "incomplete_pending_zero",
        "extra_file",
    ],
)
def test_windows_code_path_gives_the_same_verdicts(
    case: str, materialize: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = materialize(case)
    posix = {r.evidence_id: (r.outcome, r.findings) for r in verify_root(root).records}
    monkeypatch.setattr(verify_file, "USE_DIR_FD", False)
    path_based = {r.evidence_id: (r.outcome, r.findings) for r in verify_root(root).records}
    assert path_based == posix


@pytest.mark.parametrize("enabled_before", [True, False])
def test_a_root_pass_pauses_the_collector_and_restores_its_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, enabled_before: bool
) -> None:
    for _ in range(3):
        sealed(tmp_path)
    seen: list[bool] = []
    real = verify_file.verify_record

    def spy(*args: object, **kwargs: object) -> verify_file.RecordResult:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(verify_file, "verify_record", spy)
    was = gc.isenabled()
    (gc.enable if enabled_before else gc.disable)()
    try:
        result = verify_root(tmp_path)
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert [r.outcome for r in result.records] == [Outcome.OK] * 3
    assert seen == [False] * 3
    assert after is enabled_before


def test_root_warnings_name_stray_entries(materialize: Callable[[str], Path]) -> None:
    result = verify_root(materialize("stray_root_entries"))
    warnings = {f.file: f.detail for f in result.findings}
    assert set(warnings) == {
        "notes.txt",
        "41EF11E206E11213AD3A37F42557A473",
        "41ef11e206e11213ad3a37f42557a4730",
    }
    assert warnings["notes.txt"] is None
    assert (
        warnings["41EF11E206E11213AD3A37F42557A473"] == "looks like an evidence ID but is not one"
    )


def test_stray_entries_are_warnings_with_their_own_code(
    materialize: Callable[[str], Path],
) -> None:
    result = verify_root(materialize("stray_root_entries"))
    assert {(f.code.value, f.severity.value) for f in result.findings} == {
        ("root.stray_entry", "warning")
    }


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = _cli.main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_receipt_needs_exactly_one_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, receipt = sealed(tmp_path)
    assert run(["verify", str(tmp_path), "--receipt", receipt], capsys)[0] == 2
    code, out, _ = run(["verify", str(tmp_path / evidence_id), "--receipt", receipt], capsys)
    assert code == 0
    assert "ok (receipt checked)" in out


def test_cli_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(["verify", str(empty)], capsys)[0] == 2
    assert run(["verify", str(tmp_path / "missing")], capsys)[0] == 2
    assert run(["verify", str(tmp_path / ("d" * 32))], capsys)[0] == 2
    bad = tmp_path / "receipts.txt"
    bad.write_text("not a receipt line\n")
    (tmp_path / "root").mkdir()
    sealed(tmp_path / "root")
    code, _, err = run(["verify", str(tmp_path / "root"), "--receipts", str(bad)], capsys)
    assert code == 2
    assert "receipts.txt:1" in err
    with pytest.raises(SystemExit) as exited:
        _cli.main(["verify"])
    assert exited.value.code == 2


def test_cli_receipts_file_with_comments_and_conflicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, receipt = sealed(tmp_path)
    good = tmp_path.parent / "good-receipts.txt"
    good.write_text(f"# held by the author\n\n{evidence_id} {receipt}\n")
    assert run(["verify", str(tmp_path), "--receipts", str(good)], capsys)[0] == 0
    conflict = tmp_path.parent / "conflict-receipts.txt"
    conflict.write_text(f"{evidence_id} {receipt}\n{evidence_id} {'0' * 64}\n")
    assert run(["verify", str(tmp_path), "--receipts", str(conflict)], capsys)[0] == 2


def test_cli_text_report_and_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evidence_id, _ = sealed(tmp_path)
    shutil.copytree(tmp_path / evidence_id, tmp_path / ("e" * 32))
    code, out, _ = run(["verify", str(tmp_path)], capsys)
    assert code == 1
    assert f"{evidence_id}  ok" in out
    assert "identity.mismatch" in out
    assert out.rstrip().endswith("2 record(s), default pass: 1 integrity_failure, 1 ok")
    with pytest.raises(SystemExit):
        _cli.main(["--version"])
    assert "notanda-evidence 0.2.0b1" in capsys.readouterr().out


def test_cli_json_report_never_echoes_payload_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    writer = EvidenceStore(tmp_path).create()
    writer.write_request(
        {"evidence_id": writer.evidence_id, "query": "my private medical question"}
    )
    writer.write_provider({})
    writer.write_response({"evidence_id": writer.evidence_id, "status": "ok"})
    writer.seal()
    code, out, _ = run(["verify", str(tmp_path), "--json", "--full"], capsys)
    assert code == 0
    assert "private medical" not in out
    assert json.loads(out)["pass"] == "full"


# ------------------------------------------------- hostile record files


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _consistent(record: Path, name: str, data: bytes) -> None:
    """Replace payload *name* with *data* and recompute the manifest, as a forger would."""
    (record / name).write_bytes(data)
    manifest = json.loads((record / "manifest.json").read_bytes())
    manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (record / "manifest.json").write_bytes(verify_file.canonical_bytes(manifest))


@pytest.mark.parametrize("depth", [5_000, 100_000])
@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("manifest.json", "manifest.too_deep"),
        ("request.json", "payload.too_deep"),
        ("provider.json", "payload.too_deep"),
        ("response.json", "payload.too_deep"),
    ],
)
def test_deep_nesting_in_any_record_file_is_a_finding_and_the_root_report_goes_on(
    tmp_path: Path, name: str, code: str, depth: int, capsys: pytest.CaptureFixture[str]
) -> None:
    bad, _ = sealed(tmp_path)
    good, _ = sealed(tmp_path)
    data = _deep(depth) + b"\n"
    if name == "manifest.json":
        (tmp_path / bad / name).write_bytes(data)
    else:
        _consistent(tmp_path / bad, name, data)
    root = verify_root(tmp_path, full=True)
    results = {r.evidence_id: r for r in root.records}
    assert [(f.code.value, f.file) for f in results[bad].findings] == [(code, name)]
    assert results[bad].outcome is Outcome.INTEGRITY_FAILURE
    assert results[good].outcome is Outcome.OK
    assert verify_file.main([str(tmp_path), "--full"]) == 1
    out = capsys.readouterr().out
    assert f"error {code} [{name}]" in out
    assert "1 integrity_failure, 1 ok" in out


def test_json_depth_is_checked_before_any_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evidence_id, _ = sealed(tmp_path)
    limit = verify_file.MAX_JSON_DEPTH
    nested = b'{"evidence_id":"' + evidence_id.encode() + b'","status":"ok","x":'
    at_limit = nested + _deep(limit - 1) + b"}\n"
    _consistent(tmp_path / evidence_id, "response.json", at_limit)
    assert verify_record(tmp_path / evidence_id).outcome is Outcome.OK
    _consistent(tmp_path / evidence_id, "response.json", nested + _deep(limit) + b"}\n")
    parsed: list[int] = []
    real_loads = json.loads
    monkeypatch.setattr(
        verify_file.json, "loads", lambda s, **kw: parsed.append(len(s)) or real_loads(s, **kw)
    )
    result = verify_record(tmp_path / evidence_id)
    assert [f.code.value for f in result.findings] == ["payload.too_deep"]
    assert len(parsed) == 2, "only request.json and the manifest were parsed"


def test_a_payload_stated_over_the_limit_is_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evidence_id, _ = sealed(tmp_path)
    record = tmp_path / evidence_id
    manifest = json.loads((record / "manifest.json").read_bytes())
    manifest["files"]["provider.json"]["bytes"] = verify_file.MAX_PAYLOAD_BYTES + 1
    (record / "manifest.json").write_bytes(verify_file.canonical_bytes(manifest))
    asked: list[int] = []
    real_read_all = verify_file._read_all
    monkeypatch.setattr(
        verify_file, "_read_all", lambda fd, want: asked.append(want) or real_read_all(fd, want)
    )
    result = verify_record(record, full=True)
    assert [(f.code.value, f.file) for f in result.findings] == [
        ("payload.too_large", "provider.json")
    ]
    sizes = {n: (record / n).stat().st_size for n in ("manifest.json", *verify_file.PAYLOADS)}
    assert sorted(asked) == sorted(
        sizes[n] for n in ("manifest.json", "request.json", "response.json")
    )


def test_reads_stop_at_the_stated_size_plus_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evidence_id, _ = sealed(tmp_path)
    record = tmp_path / evidence_id
    stated = (record / "response.json").stat().st_size
    with (record / "response.json").open("ab") as grown:
        grown.write(b" " * 10_000_000)
    asked: list[int] = []
    real_read_all = verify_file._read_all
    monkeypatch.setattr(
        verify_file, "_read_all", lambda fd, want: asked.append(want) or real_read_all(fd, want)
    )
    result = verify_record(record)
    assert [f.code.value for f in result.findings] == ["payload.size_mismatch"]
    assert asked[-1] == stated + 1, "response.json is read last"


def _never_blocks(call: Callable[[], object]) -> object:
    outcome: list[object] = []
    thread = threading.Thread(target=lambda: outcome.append(call()), daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the verifier blocked on a FIFO"
    [result] = outcome
    return result


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", ["manifest.json", *verify_file.PAYLOADS])
@pytest.mark.parametrize("swapped", [False, True], ids=["listed", "swapped-after-listing"])
def test_a_fifo_as_any_record_file_is_a_special_file_and_never_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, swapped: bool
) -> None:
    evidence_id, _ = sealed(tmp_path)
    record = tmp_path / evidence_id
    (record / name).unlink()
    os.mkfifo(record / name)
    if swapped:  # the listing saw a regular file; a FIFO took its place before the open
        monkeypatch.setattr(verify_file, "_kind", lambda entry: "file")
    result = _never_blocks(lambda: verify_record(record, full=True))
    assert isinstance(result, verify_file.RecordResult)
    assert result.outcome is Outcome.INTEGRITY_FAILURE
    assert (verify_file.Code.FS_SPECIAL_FILE, name) in {(f.code, f.file) for f in result.findings}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("dir_fd", [True, False], ids=["posix", "windows-path"])
def test_a_fifo_as_the_record_folder_is_a_special_file_and_never_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dir_fd: bool
) -> None:
    monkeypatch.setattr(verify_file, "USE_DIR_FD", dir_fd)
    good, _ = sealed(tmp_path)
    os.mkfifo(tmp_path / ("f" * 32))
    root = _never_blocks(lambda: verify_root(tmp_path))
    assert isinstance(root, verify_file.RootResult)
    results = {r.evidence_id: r for r in root.records}
    assert [f.code.value for f in results["f" * 32].findings] == ["fs.special_file"]
    assert results[good].outcome is Outcome.OK


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_the_receipts_file_is_a_usage_error_and_never_blocks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "root").mkdir()
    sealed(tmp_path / "root")
    os.mkfifo(tmp_path / "receipts")
    code = _never_blocks(
        lambda: verify_file.main([str(tmp_path / "root"), "--receipts", str(tmp_path / "receipts")])
    )
    assert code == 2
    assert "not a regular file" in capsys.readouterr().err


def test_a_receipts_file_over_its_limit_is_a_usage_error_read_no_further(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "root").mkdir()
    evidence_id, receipt = sealed(tmp_path / "root")
    line = f"{evidence_id} {receipt}\n"
    (tmp_path / "receipts").write_text(line * 3)
    monkeypatch.setattr(verify_file, "MAX_RECEIPTS_BYTES", len(line) * 2)
    argv = [str(tmp_path / "root"), "--receipts", str(tmp_path / "receipts")]
    assert verify_file.main(argv) == 2
    err = capsys.readouterr().err
    assert f"larger than {len(line) * 2} bytes" in err
    assert "remedy: split the receipts into several files" in err
    (tmp_path / "receipts").write_text(line * 2)
    assert verify_file.main(argv) == 0


# ------------------------------------------------------- terminal safety

HOSTILE = "evil\x1b[2J\x07\u202eok\\"


def test_hostile_names_are_escaped_in_the_text_report_and_kept_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, _ = sealed(tmp_path)
    (tmp_path / evidence_id / HOSTILE).write_text("planted")
    (tmp_path / (HOSTILE + ".json")).write_text("stray")
    assert verify_file.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "\\x1b[2J\\x07\\u202eok\\\\" in out
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in out
    assert out.count("evil") == 2
    assert verify_file.main([str(tmp_path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["records"][0]["findings"][0]["file"] == HOSTILE
    assert report["warnings"][0]["file"] == HOSTILE + ".json"


def test_a_name_that_is_not_utf8_is_escaped_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, _ = sealed(tmp_path)
    (tmp_path / evidence_id / "\udcff\udc9b").write_text("planted")  # bytes FF 9B: C1 CSI
    assert verify_file.main([str(tmp_path)]) == 1
    assert "[\\udcff\\udc9b]" in capsys.readouterr().out
    assert verify_file.main([str(tmp_path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["summary"]["exit_code"] == 1


def test_hostile_paths_are_escaped_in_error_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / HOSTILE
    folder.mkdir()
    assert verify_file.main([str(folder)]) == 2
    assert verify_file.main([str(folder / "missing")]) == 2
    err = capsys.readouterr().err
    assert "\\x1b[2J" in err
    assert "\x1b" not in err
    assert "\u202e" not in err


# --------------------------------------------- usage errors and exit codes


def test_receipt_on_a_truncated_id_says_it_is_not_a_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, receipt = sealed(tmp_path)
    code, _, err = run(["verify", str(tmp_path / evidence_id[:-1]), "--receipt", receipt], capsys)
    assert code == 2
    assert "exactly one" not in err
    assert "not a record folder" in err
    assert "31 hex digits" in err
    assert err.splitlines()[-1].startswith("remedy: ")
    assert "check the ID" in err
    code, _, err = run(["verify", str(tmp_path), "x", "--receipt", receipt], capsys)
    assert code == 2
    assert "2 were given" in err


def test_every_usage_error_carries_a_remedy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "receipts.txt").write_text("not a receipt line\n")
    (tmp_path / "root").mkdir()
    sealed(tmp_path / "root")
    for argv in (
        [str(tmp_path / "empty")],
        [str(tmp_path / "missing")],
        [str(tmp_path / ("d" * 32))],
        [str(tmp_path / "root"), "--receipts", str(tmp_path / "receipts.txt")],
        [str(tmp_path / "root"), "--receipts", str(tmp_path / "no-such-file")],
    ):
        assert verify_file.main(argv) == 2, argv
        lines = capsys.readouterr().err.splitlines()
        assert len(lines) == 2, (argv, lines)
        assert lines[0].startswith("error: ")
        assert lines[1].startswith("remedy: ")


def test_an_argument_error_of_the_single_file_carries_a_remedy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        verify_file.main([])
    assert exited.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-2].startswith("error: the following arguments are required: PATH")
    assert err[-1].startswith("remedy: give one or more PATHs")


def test_an_internal_error_is_exit_2_with_one_line_never_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sealed(tmp_path)

    def broken(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(verify_file, "verify_record", broken)
    assert verify_file.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: internal error in the verifier (RecursionError)")
    assert "Traceback" not in err


def test_the_single_file_parses_as_python_3_8() -> None:
    import ast

    source = Path(verify_file.__file__).read_text(encoding="utf-8")
    ast.parse(source, feature_version=(3, 8))


def test_on_python_3_8_the_single_file_exits_2_with_one_line(tmp_path: Path) -> None:
    """The version check runs before anything newer is needed (here with 3.8 simulated)."""
    copy = tmp_path / "verify_file.py"
    copy.write_bytes(Path(verify_file.__file__).read_bytes())
    pretend = (
        "import sys; sys.version_info = (3, 8, 18, 'final', 0); "
        "sys.argv = [sys.argv[1], '.']; "
        "exec(compile(open(sys.argv[0]).read(), sys.argv[0], 'exec'), {'__name__': '__main__'})"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", pretend, str(copy)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == "verify_file.py needs Python 3.9 or later; this is Python 3.8\n"


# ---------------------------------------------- 0.1.0b3 crash traces


@pytest.mark.parametrize("stem", ["request", "provider", "response", "manifest"])
def test_b3_pending_files_are_information_when_incomplete_and_errors_when_sealed(
    tmp_path: Path, stem: str
) -> None:
    evidence_id, _ = sealed(tmp_path)
    record = tmp_path / evidence_id
    (record / f"{stem}.pending").write_bytes(b"")
    result = verify_record(record)
    assert [(f.code.value, f.severity.value) for f in result.findings] == [
        ("record.pending_file", "error")
    ]
    (record / "manifest.json").unlink()
    result = verify_record(record)
    assert result.outcome is Outcome.INCOMPLETE
    assert ("record.pending_file", "info") in {
        (f.code.value, f.severity.value) for f in result.findings
    }
    assert verify_file.exit_code([result]) == 3
    (record / "notes.pending").write_bytes(b"")
    assert "record.unexpected_entry" in {f.code.value for f in verify_record(record).findings}


def test_an_open_record_read_again_skips_only_the_checks_its_exact_bytes_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evidence_id, receipt = sealed(tmp_path)
    full_checks: list[bytes] = []
    checked = verify_file._parse_canonical

    def counting(data: bytes) -> tuple[object, str | None]:
        full_checks.append(data)
        return checked(data)

    monkeypatch.setattr(verify_file, "_parse_canonical", counting)
    first = open_record(tmp_path, evidence_id, receipt)
    assert first.outcome is Outcome.OK
    assert len(full_checks) == 3  # manifest, request, response
    assert first.response is not None
    first.response["results"].append("changed by a caller")
    again = open_record(tmp_path, evidence_id, receipt)
    assert len(full_checks) == 3
    assert again.outcome is Outcome.OK
    assert again.response == {"evidence_id": evidence_id, "status": "ok", "results": []}


def test_the_verdict_cache_never_serves_stale_content_after_a_byte_changes(
    tmp_path: Path,
) -> None:
    evidence_id, receipt = sealed(tmp_path)
    record = tmp_path / evidence_id
    assert open_record(tmp_path, evidence_id, receipt).outcome is Outcome.OK
    changed = {"evidence_id": evidence_id, "status": "ok", "results": [1]}
    _consistent(record, "response.json", verify_file.canonical_bytes(changed))
    again = open_record(tmp_path, evidence_id)
    assert again.outcome is Outcome.OK
    assert again.response == changed
    # Same value, one byte more: the bytes that passed are not these bytes.
    spaced = verify_file.canonical_bytes(changed).replace(b'"ok"', b' "ok"')
    _consistent(record, "response.json", spaced)
    codes = [f.code for f in open_record(tmp_path, evidence_id).findings]
    assert codes == [verify_file.Code.PAYLOAD_NOT_CANONICAL]
    manifest = (record / "manifest.json").read_bytes()
    (record / "manifest.json").write_bytes(manifest.replace(b":", b": ", 1))
    codes = [f.code for f in open_record(tmp_path, evidence_id).findings]
    assert codes == [verify_file.Code.MANIFEST_NOT_CANONICAL]


def test_the_verdict_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verify_file, "_CANONICAL_DIGESTS", {})
    monkeypatch.setattr(verify_file, "_CANONICAL_CACHE_SIZE", 4)
    for number in range(10):
        data = verify_file.canonical_bytes([number])
        digest = hashlib.sha256(data).hexdigest()
        assert verify_file.parse_canonical(data, digest=digest) == ([number], None)
    assert len(verify_file._CANONICAL_DIGESTS) == 4
    assert hashlib.sha256(verify_file.canonical_bytes([9])).hexdigest() in (
        verify_file._CANONICAL_DIGESTS
    )
    # A verdict is only remembered for bytes that passed.
    bad = b"[1, 2]\n"
    verify_file.parse_canonical(bad, digest=hashlib.sha256(bad).hexdigest())
    assert hashlib.sha256(bad).hexdigest() not in verify_file._CANONICAL_DIGESTS
