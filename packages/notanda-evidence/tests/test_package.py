"""The package's shape: its public names, its version, and that it needs only the stdlib."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import notanda_evidence
import public_names
import pytest


def _fresh_python_json(code: str) -> Any:
    """Run *code* in a new interpreter that sees this one's path; parse what it prints."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    return json.loads(done.stdout)


def test_public_names_are_exactly_all() -> None:
    public = {name for name in dir(notanda_evidence) if not name.startswith("_")}
    modules = {"verify_file"}
    assert public - modules == set(notanda_evidence.__all__) - {"__version__"}
    assert len(notanda_evidence.__all__) == len(set(notanda_evidence.__all__))


def test_type_checkers_see_the_one_list_of_names() -> None:
    """The TYPE_CHECKING re-exports name exactly ``_EXPORTS``, from the same homes."""
    assert public_names.problems(notanda_evidence) == []


def test_names_are_imported_on_first_use() -> None:
    """Importing the package loads no submodule; each name comes from its defining module."""
    code = (
        "import json, sys\n"
        "import notanda_evidence as ne\n"
        "before = sorted(m for m in sys.modules if m.startswith('notanda_evidence'))\n"
        "from notanda_evidence import EvidenceStore, EvidenceLog, open_record\n"
        "writer = sorted(m for m in sys.modules if m.startswith('notanda_evidence'))\n"
        "home = lambda n: 'notanda_evidence' + ne._EXPORTS.get(n, '._version')\n"
        "wrong = [n for n in ne.__all__\n"
        "         if getattr(ne, n) is not getattr(sys.modules[home(n)], n)]\n"
        "print(json.dumps([before, writer, wrong]))\n"
    )
    before, writer, wrong = _fresh_python_json(code)
    assert before == ["notanda_evidence", "notanda_evidence._version"]
    # The server's path: the writer, the log and the reader, not the auditor or the CLI.
    assert writer == [
        "notanda_evidence",
        "notanda_evidence._log",
        "notanda_evidence._merkle",
        "notanda_evidence._store",
        "notanda_evidence._version",
        "notanda_evidence.verify_file",
    ]
    assert wrong == []
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        notanda_evidence.nothing_here


def test_version_is_the_single_literal() -> None:
    from notanda_evidence import _version, verify_file

    assert notanda_evidence.__version__ == _version.__version__ == verify_file.VERIFIER_VERSION


def test_importing_loads_nothing_outside_the_standard_library() -> None:
    """Every module loaded by importing the package and its CLI is stdlib or the package."""
    code = (
        "import json, sys\n"
        "import notanda_evidence, notanda_evidence._cli\n"
        "[getattr(notanda_evidence, name) for name in notanda_evidence.__all__]\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = _fresh_python_json(code)
    foreign = [
        name
        for name in loaded
        if name.split(".")[0] not in sys.stdlib_module_names
        and name.split(".")[0] != "notanda_evidence"
        and name not in {"__main__", "__mp_main__"}
        # Interpreter start-up hooks that venv tools install, not imports of ours.
        and not name.startswith(("_distutils_hack", "_virtualenv"))
    ]
    assert foreign == []


def test_project_declares_no_dependencies() -> None:
    from importlib.metadata import requires

    assert not requires("notanda-evidence")


def test_every_public_exception_has_the_one_base() -> None:
    exceptions = [
        obj
        for name in notanda_evidence.__all__
        if isinstance(obj := getattr(notanda_evidence, name), type)
        and issubclass(obj, BaseException)
    ]
    assert len(exceptions) >= 6
    assert all(issubclass(e, notanda_evidence.EvidenceError) for e in exceptions)
    assert issubclass(notanda_evidence.verify_file.UsageError, notanda_evidence.EvidenceError)
    assert issubclass(notanda_evidence.EvidenceValueError, ValueError)
