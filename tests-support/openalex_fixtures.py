"""Where the tests and the bench find the real OpenAlex response bodies the repository holds.

The bodies are in ``fixtures/openalex/`` beside this file (OpenAlex API responses, CC0;
``fixtures/openalex/README.md`` says where each came from), and the MCP Registry schema
in ``fixtures/reference/``. Every suite reads them from here: the unit tests, the
integration tests (whose processes find this folder through ``NOTANDA_REPO_ROOT``) and
the bench. A fixture that is missing is an error naming the path, never a skip: the
files are part of the repository, so their absence means a broken checkout.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The recorded OpenAlex response bodies.
FIXTURES_DIR = HERE / "fixtures" / "openalex"
#: Reference files that are not OpenAlex's (the MCP Registry ``server.json`` schema).
REFERENCE_DIR = HERE / "fixtures" / "reference"


class MissingFixtureError(FileNotFoundError):
    """A fixture the repository should hold is not there."""


def _missing(what: str) -> MissingFixtureError:
    return MissingFixtureError(
        f"{what}: the repository holds it under tests-support/fixtures/ (a partial"
        " checkout or an sdist?): restore it with `git checkout -- tests-support/fixtures`"
    )


def fixture_path(name: str, folder: Path = FIXTURES_DIR) -> Path:
    """The path of fixture *name*, which must exist."""
    path = folder / name
    if not path.is_file():
        raise _missing(f"fixture {name} is not in {folder}")
    return path


def fixture_bytes(name: str) -> bytes:
    """The bytes of one recorded OpenAlex body, exactly as stored."""
    return fixture_path(name).read_bytes()


def fixture_names(pattern: str = "*.json") -> list[str]:
    """The names of the OpenAlex fixtures matching *pattern*, sorted; at least one."""
    names = sorted(path.name for path in FIXTURES_DIR.glob(pattern))
    if not names:
        raise _missing(f"no OpenAlex fixture matches {pattern!r} in {FIXTURES_DIR}")
    return names


def fixture_paths(pattern: str = "*.json") -> list[Path]:
    """The paths of the OpenAlex fixtures matching *pattern*, sorted; at least one."""
    return [FIXTURES_DIR / name for name in fixture_names(pattern)]
