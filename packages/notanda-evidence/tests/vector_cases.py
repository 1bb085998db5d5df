"""Run a vector generator; copy a golden vector case out of the checkout.

Standard library only.

Git keeps no empty folders, so the generators list each case's empty folders
in its expected file (``empty_dirs``) and this puts them back. A case made of
nothing but empty folders (``incomplete_empty``) is absent from a clone
altogether. ``stdlib_check.py`` runs in a venv without pytest, hence a module
of its own rather than ``conftest.py``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Sequence
from pathlib import Path


def materialize_case(source: Path, empty_dirs: Sequence[str], target: Path) -> Path:
    """Copy *source* to *target* (links kept), make its empty folders, return *target*.

    Raises:
        FileNotFoundError: *source* is missing though the case has files to copy.
    """
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True)
    elif empty_dirs:
        target.mkdir(parents=True)
    else:
        raise FileNotFoundError(f"vector case {source} is missing")
    for folder in empty_dirs:
        (target / folder).mkdir(parents=True, exist_ok=True)
    return target


def generate_into(generator: Path, out: Path) -> None:
    """Load the generator script *generator* and write its vectors under *out*."""
    spec = importlib.util.spec_from_file_location(generator.stem, generator)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {generator}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate(out)


def tree(root: Path, *, folders: bool = False) -> dict[str, bytes | str]:
    """Every file's bytes and every link's target (and, with *folders*, every folder)."""
    found: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            key = str(path.relative_to(root))
            if path.is_symlink():
                found[key] = "-> " + os.readlink(path)
            elif path.is_file():
                found[key] = path.read_bytes()
            elif folders and path.is_dir():
                found[key] = "folder"
    return found
