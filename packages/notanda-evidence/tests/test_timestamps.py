"""The checkpoint text a TSA stamps, the names of stored tokens, and storing them."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from pathlib import Path

import pytest
from notanda_evidence import EvidenceStorageError, StorageReason, verify_file
from notanda_evidence._timestamps import (
    MAX_TOKEN_BYTES,
    checkpoint_bytes,
    checkpoint_digest,
    store_token,
    token_name,
    token_size,
)

ROOT = "ab" * 32


def test_the_checkpoint_is_the_documented_line() -> None:
    assert checkpoint_bytes(12, ROOT) == f"notanda log head v1 12 {ROOT}\n".encode()
    assert checkpoint_digest(12, ROOT) == hashlib.sha256(checkpoint_bytes(12, ROOT)).digest()


@pytest.mark.parametrize(
    ("size", "root"), [(-1, ROOT), (True, ROOT), (1, ROOT.upper()), (1, ROOT[:-1]), (1, None)]
)
def test_a_checkpoint_needs_a_real_head(size: object, root: object) -> None:
    with pytest.raises(ValueError, match="a checkpoint's"):
        checkpoint_bytes(size, root)  # type: ignore[arg-type]


def test_token_names_round_trip_and_nothing_else_is_a_token() -> None:
    assert [token_size(token_name(size)) for size in (0, 1, 10, 4096)] == [0, 1, 10, 4096]
    for name in ("007.tsr", "1.tsr.tmp", "-1.tsr", "1.TSR", "x.tsr", ".tsr", "1", "1 .tsr"):
        assert token_size(name) is None, name


# ------------------------------------------------------------- storing tokens


def _tokens(root: Path) -> Path:
    return root / ".notanda" / "timestamps"


@pytest.fixture(params=["dir-fd", "paths"])
def folder_calls(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ways the writer reaches folders: descriptor-relative (POSIX) and by path (Windows)."""
    if request.param == "paths":
        monkeypatch.setattr(verify_file, "USE_DIR_FD", False)


@pytest.mark.usefixtures("folder_calls")
def test_a_token_is_stored_owner_only_and_the_first_one_stays(tmp_path: Path) -> None:
    assert store_token(tmp_path, 3, b"first token") is True
    assert store_token(tmp_path, 3, b"second token") is False
    folder = _tokens(tmp_path)
    assert sorted(os.listdir(folder)) == ["3.tsr"]  # no pending file left behind
    assert (folder / "3.tsr").read_bytes() == b"first token"
    if os.name == "posix":
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE((folder / "3.tsr").stat().st_mode) == 0o600
        assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700


@pytest.mark.usefixtures("folder_calls")
def test_servers_racing_for_one_size_leave_exactly_the_first_token(tmp_path: Path) -> None:
    start = threading.Barrier(8)
    won: list[bytes] = []

    def stamp(number: int) -> None:
        der = f"token from server {number}".encode()
        start.wait()
        if store_token(tmp_path, 7, der):
            won.append(der)

    threads = [threading.Thread(target=stamp, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    assert sorted(os.listdir(_tokens(tmp_path))) == ["7.tsr"]
    assert (_tokens(tmp_path) / "7.tsr").read_bytes() == won[0]


@pytest.mark.skipif(os.name != "posix", reason="symbolic links need privileges on Windows")
@pytest.mark.usefixtures("folder_calls")
def test_a_link_in_the_tokens_folder_place_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "root"
    (root / ".notanda").mkdir(parents=True)
    (root / ".notanda" / "timestamps").symlink_to(elsewhere)
    with pytest.raises(EvidenceStorageError) as raised:
        store_token(root, 1, b"token")
    assert raised.value.reason is StorageReason.SYMLINK
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(
    ("size", "der"), [(-1, b"x"), (1, b""), (1, "text"), (1, bytes(MAX_TOKEN_BYTES + 1))]
)
def test_only_a_real_size_and_bytes_are_stored(tmp_path: Path, size: int, der: object) -> None:
    with pytest.raises(ValueError, match="token"):
        store_token(tmp_path, size, der)  # type: ignore[arg-type]
    assert not (tmp_path / ".notanda").exists()
