"""What software made a record: versions and the code digest of the installed wheels.

The code digest is the SHA-256 over the sorted ``path sha256`` lines of every
file the three Notanda wheels ship, as installed, leaving out what installers
add or generate: in ``.dist-info`` only ``METADATA``, ``WHEEL``,
``entry_points.txt`` and ``licenses/`` count (so ``RECORD``, ``INSTALLER``,
``REQUESTED``, ``direct_url.json`` and uv's ``uv_cache.json`` do not), and
console scripts and ``__pycache__`` are left out. ``nox -s provenance`` computes the same
digest from the built wheel files and records it in ``SOURCE_PROVENANCE.json``,
so a record names the exact release it was made with. It is computed once per
process, at the first search, never at start-up.
"""

from __future__ import annotations

import functools
import hashlib
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["DISTRIBUTIONS", "code_digest", "shipped", "software_record"]

#: The three distributions whose files make up the code digest.
DISTRIBUTIONS = ("notanda-evidence", "notanda-openalex", "notanda-mcp")
#: The metadata a wheel itself ships; everything else in ``.dist-info`` is written
#: by the installer (RECORD, INSTALLER, REQUESTED, direct_url.json, uv_cache.json).
_WHEEL_METADATA = frozenset({"METADATA", "WHEEL", "entry_points.txt"})


def shipped(path: str) -> bool:
    """Whether an installed or wheel path counts towards the code digest."""
    parts = path.split("/")
    if parts[0] == ".." or "__pycache__" in parts:
        return False  # console scripts live outside site-packages; caches are generated
    if parts[0].endswith(".dist-info"):
        return (len(parts) == 2 and parts[1] in _WHEEL_METADATA) or parts[1:2] == ["licenses"]
    return True


def digest_lines(distributions: tuple[str, ...] = DISTRIBUTIONS) -> list[str]:
    """The sorted ``path sha256`` lines of the installed files of *distributions*."""
    lines = []
    for name in distributions:
        dist = metadata.distribution(name)
        for entry in dist.files or ():
            path = str(entry).replace("\\", "/")
            if shipped(path):
                data = Path(entry.locate()).read_bytes()
                lines.append(f"{path} {hashlib.sha256(data).hexdigest()}")
    return sorted(lines)


@functools.cache
def code_digest() -> str:
    """The code digest of this installation (cached for the process)."""
    return hashlib.sha256(("\n".join(digest_lines()) + "\n").encode("utf-8")).hexdigest()


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def software_record() -> dict[str, Any]:
    """Versions of everything that shaped a record, plus the code digest."""
    try:
        digest: str | None = code_digest()
    except (metadata.PackageNotFoundError, OSError):
        digest = None
    return {
        "code_digest": digest,
        "mcp": _version("mcp"),
        "notanda_core": _version("notanda"),
        "notanda_evidence": _version("notanda-evidence"),
        "notanda_mcp": _version("notanda-mcp"),
        "notanda_openalex": _version("notanda-openalex"),
        "python": platform.python_version(),
    }
