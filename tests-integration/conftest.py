"""Suite-wide guards and fixtures for the end-to-end tests.

The guard runs before any test: the three Notanda packages must be imported
from this environment's site-packages (the installed wheels), never from
``packages/*/src`` of the checkout, or every result here would be about the
wrong code.
"""

from __future__ import annotations

import importlib
import os
import sys
import sysconfig
from pathlib import Path

import pytest

PACKAGES = ("notanda_evidence", "notanda_openalex", "notanda_mcp")


def _installed_where() -> dict[str, Path]:
    return {name: Path(importlib.import_module(name).__file__ or "").resolve() for name in PACKAGES}


def pytest_configure(config: pytest.Config) -> None:
    """Fail the whole run loudly unless the packages come from the installed wheels."""
    purelib = Path(sysconfig.get_paths()["purelib"]).resolve()
    wrong = {
        name: where for name, where in _installed_where().items() if purelib not in where.parents
    }
    if wrong:
        raise pytest.UsageError(
            "tests-integration must run against the installed wheels (nox -s integration-3.11), "
            f"but these were imported from elsewhere than {purelib}: "
            + ", ".join(f"{name} from {where}" for name, where in sorted(wrong.items()))
        )
    sources = [p for p in sys.path if "/packages/" in p.replace(os.sep, "/") and p.endswith("src")]
    if sources:
        raise pytest.UsageError(f"a package source folder is on sys.path: {sources}")


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The repository's real OpenAlex pages; one missing is an error naming it, never a skip."""
    from harness import SMALL_FIXTURE
    from openalex_fixtures import fixture_path

    return fixture_path(SMALL_FIXTURE).parent


@pytest.fixture
def root(tmp_path: Path, fixtures_dir: Path) -> Path:
    """A fresh, empty evidence root (the fixture folder must exist for the launcher)."""
    path = tmp_path / "evidence"
    path.mkdir(mode=0o700)
    return path


# The test TSA (OpenSSL's own, tests-support/) and its loopback HTTP server:
# the fixtures ``tsa`` and ``loopback_tsa``, shared with the unit tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests-support"))
from tsa_fixtures import loopback_tsa, tsa  # noqa: E402, F401
