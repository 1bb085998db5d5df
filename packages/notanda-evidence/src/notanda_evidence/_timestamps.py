r"""RFC 3161 time-stamp tokens on log heads: the checkpoint text and where tokens live.

A time-stamp authority (TSA) is asked to sign the SHA-256 of a *checkpoint*,
``notanda log head v1 <size> <root>\n``, naming one head of the log. Each
accepted ``TimeStampResp`` (DER) is stored as ``.notanda/timestamps/<size>.tsr``
in the evidence root. See ``docs/evidence-format.md`` section 9.9.
"""

from __future__ import annotations

import hashlib
import os
import re

from ._der import MAX_TOKEN_BYTES
from ._store import EvidenceStorageError, open_private_folder
from .verify_file import RESERVED_DIR

__all__ = [
    "CHECKPOINT_PREFIX",
    "MAX_TOKEN_BYTES",
    "TIMESTAMPS_DIR",
    "TOKEN_SUFFIX",
    "checkpoint_bytes",
    "checkpoint_digest",
    "store_token",
    "token_name",
    "token_size",
]

CHECKPOINT_PREFIX = "notanda log head v1"
#: The tokens' folder, relative to the evidence root.
TIMESTAMPS_DIR = f"{RESERVED_DIR}/timestamps"
TOKEN_SUFFIX = ".tsr"  # noqa: S105 (a file name suffix, not a secret)
_HEX64 = re.compile(r"[0-9a-f]{64}")
_TOKEN_NAME = re.compile(r"(0|[1-9][0-9]{0,19})\.tsr")


def checkpoint_bytes(size: int, root: str) -> bytes:
    """The exact UTF-8 text a TSA is asked to stamp for the head ``size:root``.

    Raises:
        ValueError: *size* is negative or *root* is not 64 lowercase hex digits.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError("a checkpoint's size is a non-negative integer")
    if not isinstance(root, str) or _HEX64.fullmatch(root) is None:
        raise ValueError("a checkpoint's root is 64 lowercase hex digits")
    return f"{CHECKPOINT_PREFIX} {size} {root}\n".encode()


def checkpoint_digest(size: int, root: str) -> bytes:
    """The SHA-256 of :func:`checkpoint_bytes`: the message imprint a token must carry."""
    return hashlib.sha256(checkpoint_bytes(size, root)).digest()


def token_name(size: int) -> str:
    """The file name of the token for the head of *size* entries (decimal, no leading zeros)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError("a token's size is a non-negative integer")
    return f"{size}{TOKEN_SUFFIX}"


def token_size(name: str) -> int | None:
    """The size a token file's name states, or None when the name is not a token's."""
    match = _TOKEN_NAME.fullmatch(name)
    return None if match is None else int(match.group(1))


def store_token(root: str | os.PathLike[str], size: int, der: bytes) -> bool:
    """Store the ``TimeStampResp`` *der* for the head of *size* entries, durably and exclusively.

    The token is written and fsynced under a pending name of its own, then
    linked into place as ``.notanda/timestamps/<size>.tsr`` (mode 0600, in a
    folder of mode 0700, created if missing), and the folder is fsynced: it
    is durable when this returns, like a record. An existing token is never
    replaced: when two servers stamp one size, the first file stays.

    Returns:
        True when this call stored the token; False when a token for *size*
        was already there (nothing was changed).

    Raises:
        ValueError: *size* is not a token's size, or *der* is not non-empty
            bytes of at most :data:`MAX_TOKEN_BYTES`.
        EvidenceStorageError: The folder or the file could not be written
            (``reason`` says why; a link in the folders' place is ``symlink``).
    """
    name = token_name(size)
    if not isinstance(der, bytes) or not der or len(der) > MAX_TOKEN_BYTES:
        raise ValueError(f"a token is 1 to {MAX_TOKEN_BYTES} bytes")
    folder_path = os.path.join(os.fspath(root), *TIMESTAMPS_DIR.split("/"))
    try:
        open_private_folder(os.path.dirname(folder_path)).close()
        folder = open_private_folder(folder_path)
        try:
            folder.publish(name, [der], exclusive=True)
        finally:
            folder.close()
    except FileExistsError:
        return False
    except OSError as exc:
        raise EvidenceStorageError.from_os_error(exc, file=f"{TIMESTAMPS_DIR}/{name}") from exc
    return True
