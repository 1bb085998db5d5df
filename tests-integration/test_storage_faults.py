"""Storage faults from outside the server: each gives its documented code, never a success.

Read-only evidence roots (by dropping privileges, since root ignores
permission bits, and by a read-only bind mount), the root replaced by a file
while the server runs, a full disk (a small tmpfs: out of inodes before the
record, out of space after it, out of inodes at the log append), a file-size
limit (``RLIMIT_FSIZE``: EFBIG, a different error from ENOSPC) and symbolic
links where the format forbids them. After each fault the same server keeps
serving, and the records left behind are incomplete or intact, never corrupt.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import (
    REALISTIC_FIXTURE,
    RawSession,
    audit_json,
    launcher_argv,
    record_ids,
    run,
    script,
    session,
    verify_json,
)

NOBODY = 65534
QUERY = "Does X improve Y?"


def _refused_before_record(content: dict[str, Any], is_error: bool, reason: str) -> None:
    assert is_error
    assert content == {
        "error": "evidence_storage_unavailable",
        "persisted": False,
        "status": "error",
        "storage_reason": reason,
    }


def _incomplete_after_record(content: dict[str, Any], is_error: bool, reason: str) -> str:
    assert is_error
    evidence_id = content.pop("evidence_id")
    # ``persisted`` is not part of the documented answer once a record exists
    # (docs/errors.md); everything else is, and nothing more may be there.
    content.pop("persisted", None)
    assert content == {
        "error": "evidence_storage_unavailable",
        "record_state": "incomplete",
        "status": "error",
        "storage_reason": reason,
    }
    return str(evidence_id)


def _calls(provider_log: Path) -> int:
    return len(provider_log.read_text().splitlines()) if provider_log.exists() else 0


# ------------------------------------------------------------ mount helpers


def _mount(*argv: str) -> None:
    done = run(["mount", *argv])
    if done.returncode != 0:
        pytest.skip(f"mount {' '.join(argv[:3])} is not permitted here: {done.stderr.strip()}")


def _umount(path: Path) -> None:
    if run(["umount", str(path)]).returncode != 0:
        run(["umount", "-l", str(path)])


@contextlib.contextmanager
def _tmpfs(path: Path, *, size: str = "1m", inodes: int | None = None) -> Iterator[Path]:
    """A small tmpfs at *path*, unmounted at the end whatever happens."""
    if shutil.which("mount") is None:
        pytest.skip("no mount command: a full disk cannot be simulated")
    path.mkdir()
    options = f"size={size},mode=0700" + (f",nr_inodes={inodes}" if inodes else "")
    _mount("-t", "tmpfs", "-o", options, "tmpfs", str(path))
    try:
        yield path
    finally:
        _umount(path)


def _exhaust_inodes(folder: Path) -> list[Path]:
    """Create empty folders until the file system has no inode left; return them."""
    made: list[Path] = []
    while True:
        candidate = folder / f"filler-{len(made)}"
        try:
            candidate.mkdir()
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
            return made
        made.append(candidate)


def _fill_space(folder: Path, leave: int) -> Path:
    """Fill the file system under *folder* until only *leave* bytes stay free."""
    free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
    filler = folder / "filler.bin"
    with open(filler, "wb") as stream:
        stream.write(b"\0" * (free - leave))
    return filler


# ------------------------------------------------------------- privileges


def _unprivileged_prefix(read_only: Path) -> list[str]:
    """A command prefix under which this interpreter cannot write into *read_only* (mode 0555).

    Root ignores permission bits, so as root the process either becomes an
    unprivileged user (setpriv, runuser) or stays root without the capability
    that overrides them (``setpriv --bounding-set=-dac_override``: it can
    still read everything, which matters when the interpreter lives under a
    folder only root may enter).
    """
    if os.geteuid() != 0:
        return []
    probe = [sys.executable, "-c", f"open({str(read_only / 'probe')!r}, 'w')"]
    candidates = []
    if shutil.which("setpriv"):
        candidates.append(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"])
    if shutil.which("runuser"):
        candidates.append(["runuser", "-u", "nobody", "--"])
    if shutil.which("setpriv"):
        candidates.append(["setpriv", "--bounding-set=-dac_override"])
    tried = []
    for prefix in candidates:
        done = run([*prefix, *probe])
        if "PermissionError" in done.stderr:
            return prefix
        tried.append(f"{' '.join(prefix)}: exit {done.returncode}, {done.stderr.strip()[-120:]!r}")
    pytest.skip(
        "running as root, and no way was found to run this interpreter without root's "
        "permission override (root ignores permission bits, so a read-only folder cannot be "
        "simulated this way): " + "; ".join(tried or ["neither setpriv nor runuser is installed"])
    )


@contextlib.contextmanager
def _world_traversable_dir() -> Iterator[Path]:
    # pytest's tmp_path lives under a 0700 folder an unprivileged user cannot enter.
    folder = Path(tempfile.mkdtemp(prefix="notanda-it-ro-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_read_only_root_by_permissions(fixtures_dir: Path) -> None:
    with _world_traversable_dir() as folder:
        root = folder / "evidence"
        root.mkdir()
        root.chmod(0o555)
        prefix = _unprivileged_prefix(root)
        provider_log = folder / "provider.log"
        provider_log.touch()
        provider_log.chmod(0o666)
        argv = [*prefix, *launcher_argv(root, "--provider-log", str(provider_log))]
        with RawSession(argv) as raw:
            raw.start()
            for _ in range(2):
                content, is_error = raw.search(QUERY)
                _refused_before_record(content, is_error, "permission_denied")
            listed = raw.request("tools/list")["result"]["tools"]
            assert len(listed) == 2
            assert raw.close() == 0
            assert raw.garbage == []
        assert list(root.iterdir()) == []
        assert _calls(provider_log) == 0


@pytest.mark.mounts
def test_read_only_root_by_bind_mount(tmp_path: Path, fixtures_dir: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    root = tmp_path / "read-only"
    root.mkdir()
    _mount("--bind", "-o", "ro", str(source), str(root))
    try:
        try:
            (root / "probe").touch()
        except OSError as exc:
            if exc.errno != errno.EROFS:
                raise
        else:
            pytest.skip("the bind mount was not made read-only here")
        provider_log = tmp_path / "provider.log"
        with session(root, "--provider-log", str(provider_log)) as raw:
            content, is_error = raw.search(QUERY)
            _refused_before_record(content, is_error, "read_only")
        assert list(source.iterdir()) == []
        assert _calls(provider_log) == 0
    finally:
        _umount(root)


def test_root_replaced_by_a_file_while_serving(root: Path) -> None:
    provider_log = root.parent / "provider.log"
    with session(root, "--provider-log", str(provider_log)) as raw:
        first, is_error = raw.search(QUERY)
        assert not is_error
        moved = root.with_name("moved-away")
        root.rename(moved)
        root.write_text("an evidence root replaced by a file\n")
        calls = _calls(provider_log)
        content, is_error = raw.search(QUERY)
        _refused_before_record(content, is_error, "not_a_directory")
        assert _calls(provider_log) == calls
        # Retrieval through a root that is now a file: record.not_directory is an
        # integrity failure (docs/errors.md), never the stored answer.
        content, is_error = raw.get(first["evidence_id"], first["receipt"])
        assert (content, is_error) == (
            {
                "error": "integrity_failure",
                "evidence_id": first["evidence_id"],
                "status": "error",
            },
            True,
        )
        root.unlink()
        moved.rename(root)
        content, is_error = raw.search(QUERY)
        assert not is_error, content
        content, is_error = raw.get(first["evidence_id"], first["receipt"])
        assert not is_error
    code, _ = audit_json(root)
    assert code == 0


@pytest.mark.mounts
def test_full_disk_before_the_record(tmp_path: Path, fixtures_dir: Path) -> None:
    with _tmpfs(tmp_path / "tiny", inodes=64) as root:
        fillers = _exhaust_inodes(root)
        provider_log = tmp_path / "provider.log"
        with session(root, "--provider-log", str(provider_log)) as raw:
            content, is_error = raw.search(QUERY)
            _refused_before_record(content, is_error, "no_space")
            assert _calls(provider_log) == 0
            assert record_ids(root) == []
            for filler in fillers[:10]:
                filler.rmdir()
            content, is_error = raw.search(QUERY)
            assert not is_error, content
        code, report = verify_json(root)
        assert code == 0
        assert [r["outcome"] for r in report["records"]] == ["ok"]


@pytest.mark.mounts
def test_full_disk_after_the_record(tmp_path: Path, fixtures_dir: Path) -> None:
    with _tmpfs(tmp_path / "tiny", size="512k") as root:
        filler = _fill_space(root, leave=8192)
        with session(root, "--fixture", REALISTIC_FIXTURE) as raw:
            content, is_error = raw.search(QUERY)
            evidence_id = _incomplete_after_record(content, is_error, "no_space")
            assert sorted(p.name for p in (root / evidence_id).iterdir()) == ["request.json"]
            content, is_error = raw.get(evidence_id)
            assert (content, is_error) == (
                {"evidence_id": evidence_id, "status": "incomplete"},
                True,
            )
            filler.unlink()
            content, is_error = raw.search(QUERY)
            assert not is_error, content
        code, report = verify_json(root)
        assert code == 3
        assert {r["evidence_id"]: r["outcome"] for r in report["records"]} == {
            evidence_id: "incomplete",
            content["evidence_id"]: "ok",
        }
        code, _ = audit_json(root)
        assert code == 3


@pytest.mark.mounts
def test_full_disk_at_the_log_append(tmp_path: Path, fixtures_dir: Path) -> None:
    with _tmpfs(tmp_path / "tiny", inodes=64) as root:
        fillers = _exhaust_inodes(root)
        for filler in fillers[:5]:  # exactly a record: its folder and four files
            filler.rmdir()
        with session(root) as raw:
            content, is_error = raw.search(QUERY)
            assert is_error
            evidence_id, receipt = content["evidence_id"], content["receipt"]
            assert content == {
                "error": "evidence_log_unavailable",
                "evidence_id": evidence_id,
                "log_reason": "no_space",
                "persisted": True,
                "receipt": receipt,
                "status": "error",
            }
            stored, is_error = raw.get(evidence_id, receipt)
            assert not is_error
            assert (stored["status"], stored["logged"], stored["receipt"]) == ("ok", False, receipt)
            code, audit = audit_json(root)
            assert code == 3
            assert audit["log_status"][evidence_id] == "unlogged"

            for filler in fillers[5:10]:
                filler.rmdir()
            done = run([script("notanda-evidence"), "adopt", "--root", str(root)])
            assert done.returncode == 0, done.stderr
            stored, is_error = raw.get(evidence_id, receipt)
            assert not is_error
            assert stored["logged"] is True
        code, audit = audit_json(root)
        assert code == 0, audit
        assert audit["log_status"][evidence_id] == "adopted"


def test_file_size_limit_is_efbig_not_no_space(root: Path) -> None:
    with session(root, "--fsize", "4096") as raw:
        content, is_error = raw.search(QUERY)
        evidence_id = _incomplete_after_record(content, is_error, "file_too_large")
        assert sorted(p.name for p in (root / evidence_id).iterdir()) == ["request.json"]
        assert (root / evidence_id / "request.json").stat().st_size <= 4096
        # Reading is not limited: the record is reported as what it is.
        content, is_error = raw.get(evidence_id)
        assert (content, is_error) == ({"evidence_id": evidence_id, "status": "incomplete"}, True)
    code, report = verify_json(root)
    assert code == 3
    assert [r["outcome"] for r in report["records"]] == ["incomplete"]


# --------------------------------------------------------------- symlinks


def test_reserved_folder_as_symlink_refuses_the_append(root: Path) -> None:
    elsewhere = root.parent / "elsewhere"
    elsewhere.mkdir()
    (root / ".notanda").symlink_to(elsewhere, target_is_directory=True)
    with session(root) as raw:
        content, is_error = raw.search(QUERY)
    assert is_error
    evidence_id, receipt = content["evidence_id"], content["receipt"]
    assert content == {
        "error": "evidence_log_unavailable",
        "evidence_id": evidence_id,
        "log_reason": "symlink",
        "persisted": True,
        "receipt": receipt,
        "status": "error",
    }
    assert list(elsewhere.iterdir()) == []
    code, _ = verify_json(root / evidence_id)
    assert code == 0


def _link_the_reserved_folder(root: Path) -> None:
    moved = root.parent / "moved-notanda"
    (root / ".notanda").rename(moved)
    (root / ".notanda").symlink_to(moved, target_is_directory=True)


def _link_the_log_file(root: Path) -> None:
    log = root / ".notanda" / "log.jsonl"
    copy = Path(shutil.copy(log, root.parent / "log-copy.jsonl"))
    log.unlink()
    log.symlink_to(copy)


@pytest.mark.parametrize("make_link", [_link_the_reserved_folder, _link_the_log_file])
def test_a_linked_log_is_refused_on_retrieval(
    root: Path, make_link: Callable[[Path], None]
) -> None:
    """get_evidence must not read a log through a link that the append and the audit refuse."""
    with session(root) as raw:
        sealed, is_error = raw.search(QUERY)
        assert not is_error, sealed
        make_link(root)
        done = run([script("notanda-evidence"), "audit", str(root)])
        assert done.returncode == 1
        assert "symlink" in done.stderr
        content, is_error = raw.search(QUERY)
        assert is_error
        assert (content["error"], content["log_reason"]) == ("evidence_log_unavailable", "symlink")
        content, is_error = raw.get(sealed["evidence_id"], sealed["receipt"])
    assert (content, is_error) == (
        {
            "error": "evidence_log_unavailable",
            "evidence_id": sealed["evidence_id"],
            "log_reason": "symlink",
            "status": "error",
        },
        True,
    )


@pytest.mark.parametrize("target", ["response.json", "manifest.json", "record folder"])
def test_symlink_in_a_record_is_an_integrity_failure(root: Path, target: str) -> None:
    copies = root.parent / "copies"
    copies.mkdir()
    with session(root) as raw:
        sealed, is_error = raw.search(QUERY)
        assert not is_error, sealed
        evidence_id = sealed["evidence_id"]
        record = root / evidence_id
        if target == "record folder":
            real = copies / evidence_id
            record.rename(real)
            record.symlink_to(real, target_is_directory=True)
        else:
            shutil.copy(record / target, copies / target)
            (record / target).unlink()
            (record / target).symlink_to(copies / target)
        # The bytes behind the link are the sealed ones; only the link is wrong.
        content, is_error = raw.get(evidence_id, sealed["receipt"])
    assert (content, is_error) == (
        {"error": "integrity_failure", "evidence_id": evidence_id, "status": "error"},
        True,
    )
    code, report = verify_json(root)
    assert code == 1
    (result,) = report["records"]
    assert result["outcome"] == "integrity_failure"
    assert "fs.symlink" in {f["code"] for f in result["findings"]}
