"""The vector cases survive a Git clone, which keeps no empty folders."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from vector_cases import generate_into, materialize_case, tree

VECTORS = Path(__file__).resolve().parent / "vectors"


def _as_git_clones_it(source: Path, clone: Path) -> None:
    """Copy *source*, then drop every folder that holds no file or link."""
    shutil.copytree(source, clone, symlinks=True)
    for folder, _dirs, _files in os.walk(clone, topdown=False):
        if not os.listdir(folder):
            os.rmdir(folder)


@pytest.mark.parametrize(
    ("generator", "cases", "expected"),
    [
        ("generate.py", "cases", "expected.json"),
        ("generate_log.py", "log-cases", "log-expected.json"),
    ],
)
def test_every_case_is_rebuilt_from_a_clone(
    tmp_path: Path, generator: str, cases: str, expected: str
) -> None:
    generate_into(VECTORS / generator, tmp_path / "fresh")
    fresh = tmp_path / "fresh" / cases
    entries = json.loads((tmp_path / "fresh" / expected).read_text(encoding="utf-8"))["cases"]
    _as_git_clones_it(fresh, tmp_path / "clone")

    lost = [name for name, entry in entries.items() if entry["empty_dirs"]]
    assert lost, "no case has an empty folder, so this test checks nothing"
    for name, entry in entries.items():
        made = materialize_case(tmp_path / "clone" / name, entry["empty_dirs"], tmp_path / name)
        assert tree(made, folders=True) == tree(fresh / name, folders=True), name


def test_a_case_made_only_of_empty_folders_is_rebuilt_from_nothing(tmp_path: Path) -> None:
    made = materialize_case(tmp_path / "absent", ["a/b", "c"], tmp_path / "case")
    assert tree(made, folders=True) == {"a": "folder", "a/b": "folder", "c": "folder"}


def test_a_missing_case_with_files_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="absent"):
        materialize_case(tmp_path / "absent", [], tmp_path / "case")
