"""``notanda-mcp doctor``: the first command a newcomer runs.

It checks, in order: the Python version; the evidence folder, if given
(create, fsync and remove a file under ``DIR/.notanda/``, warn about tmpfs,
network file systems and loose permissions); the configuration, with the
very check the server runs at start-up (``_usage.check_configuration``) and the
OpenAlex client's own verdict on whether every search would be refused
(``configuration_problem``), never printing the key, and whether the
configuration file is owner-only; then an offline end-to-end self-test in a temporary folder,
never in DIR: a server process with the built-in fixture provider answers a
search, a second process retrieves the record with its receipt, and the
stand-alone verifier checks it under ``python -I -S``. ``--live`` adds one
real search into DIR, whose failure is reported but does not change the exit
code. ``--timestamp-url URL`` checks the URL as the server would; with
``--live`` the TSA is asked once for a stamp (of the empty log's checkpoint,
nothing in DIR) and its answer checked as the server checks it, a failure
being a warning; with ``--evidence-dir`` the doctor says when DIR was last
stamped: the genTime its newest token states, read with rfc3161-client (the
token's signature is the auditor's ``audit --tsa-ca`` to check).

Exit codes: 0 ready (warnings allowed, an absent key among them); 1 the
Python check, the folder probe, the configuration (one the server refuses, or
a key that is set but blank or unusable, or a foreign endpoint) or the
self-test failed; 2 usage.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The siblings' names are read at call time (each package's lazy ``__getattr__``
# loads only what a check uses). anyio (with the MCP SDK behind the stdio
# session) and cryptography are imported by the checks that need them: ``doctor``
# reports its first lines before a server is started or a TSA is asked.
import notanda_evidence as evidence
import notanda_openalex as openalex
from notanda_evidence.verify_file import printable, read_regular_file

from ._codes import AnswerStatus
from ._schemas import DEFAULT_TOOLSETS, GET_EVIDENCE, SEARCH_LITERATURE, tool_names
from ._stamper import (
    TIMESTAMP_DEADLINE_S,
    StampFailure,
    ask_tsa,
    check_timestamp_url,
    describe,
    last_stamp,
    load_tsa_ca,
)
from ._stdio_client import stdio_session
from ._usage import (
    CheckVerdict,
    _Usage,
    check_configuration,
    resolve_evidence_dir,
    verdict_line,
)

__all__ = ["call_tools", "run_doctor", "selftest_server"]

#: The oldest Python the packages declare (requires-python); checked at run time
#: because an installer may have been forced past it.
MINIMUM_PYTHON = (3, 11)

#: File systems where fsync may not mean durable, or locks may not work.
RISKY_FILESYSTEMS = {
    "tmpfs": "is in memory: records vanish at reboot",
    "ramfs": "is in memory: records vanish at reboot",
    "nfs": "is a network file system: fsync and file locks may not be honoured",
    "nfs4": "is a network file system: fsync and file locks may not be honoured",
    "cifs": "is a network file system: fsync and file locks may not be honoured",
    "smb3": "is a network file system: fsync and file locks may not be honoured",
    "9p": "is a shared folder: fsync may not be honoured",
    "fuse.sshfs": "is a network file system: fsync and file locks may not be honoured",
    "virtiofs": "is a shared folder: fsync may not be honoured",
}


class _Report:
    """Each verdict on one line; paths and provider text in it as visible escapes."""

    def __init__(self) -> None:
        self.failed = False

    def ok(self, text: str) -> None:
        print(verdict_line(CheckVerdict.OK, printable(text)))

    def warn(self, text: str) -> None:
        print(verdict_line(CheckVerdict.WARN, printable(text)))

    def fail(self, text: str) -> None:
        self.failed = True
        print(verdict_line(CheckVerdict.FAIL, printable(text)))


def _filesystem(path: Path) -> str | None:
    """The type of the file system holding *path*, from /proc/self/mountinfo (Linux only)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    best, kind = "", None
    target = str(path.resolve())
    for line in lines:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if len(fields) < 5 or not right:
            continue
        mount = fields[4].replace("\\040", " ")
        inside = target == mount or target.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) > len(best):
            best, kind = mount, right.split()[0]
    return kind


def _check_python(report: _Report) -> None:
    version = ".".join(map(str, sys.version_info[:3]))
    supported = sys.version_info[:2] >= tuple(MINIMUM_PYTHON)
    if supported:
        report.ok(f"Python {version}")
    else:
        report.fail(f"Python {version}: 3.11 or newer is required")


def _probe_folder(report: _Report, text: str) -> Path | None:
    try:
        path = resolve_evidence_dir(text, create=True)
    except _Usage as exc:
        report.fail(str(exc))
        return None
    reserved = path / ".notanda"
    probe = reserved / f"doctor-probe-{os.getpid()}"
    try:
        reserved.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"notanda doctor probe\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        probe.unlink()
    except OSError as exc:
        report.fail(f"cannot write and fsync in the evidence folder ({type(exc).__name__})")
        return None
    report.ok(f"evidence folder {path} is writable and fsync works")
    kind = _filesystem(path)
    if kind in RISKY_FILESYSTEMS:
        report.warn(f"the evidence folder {RISKY_FILESYSTEMS[kind]} ({kind})")
    mode = stat.S_IMODE(path.stat().st_mode)
    if os.name == "posix" and mode & 0o077:
        report.warn(
            f"the evidence folder is readable by others (mode {mode:o}); "
            f"queries can be sensitive: chmod 700 {path}"
        )
    return path


def _check_configuration(report: _Report) -> None:
    """The server's own start-up check, then the client's own verdict on every search.

    A configuration the server refuses to start with, and one with which every
    search answers ``configuration_error`` for a reason the user must fix (a
    key that is set but blank or unusable, a foreign endpoint), are problems.
    Only an absent key is a warning: a newcomer may run everything offline.
    """
    try:
        config = check_configuration()
    except _Usage as exc:
        report.fail(f"the server would refuse to start: {exc}")
        return
    key = config.openalex.api_key
    problem = openalex.OpenAlexClient.from_core_config(config=config).configuration_problem
    if problem is None and isinstance(key, str) and key.strip():
        report.ok("an OpenAlex API key is configured (not shown)")
    elif problem is None:
        report.warn("no OpenAlex key; keyless mode is on (a small daily allowance, may be refused)")
    elif problem is openalex.ConfigurationDetail.MISSING_API_KEY and not isinstance(key, str):
        report.warn(
            f"no OpenAlex key: searches will answer configuration_error ({problem}). "
            f"To search OpenAlex: {problem.remedy}"
        )
    else:
        state = (
            "set but blank" if problem is openalex.ConfigurationDetail.MISSING_API_KEY else problem
        )
        report.fail(f"every search would answer configuration_error ({state}): {problem.remedy}")
    config_path = os.environ.get("HARVESTER_CONFIG")
    if config_path:
        try:
            info = Path(config_path).expanduser().stat()
        except OSError:
            report.warn("HARVESTER_CONFIG names a file that cannot be read")
            return
        owner_only = not stat.S_IMODE(info.st_mode) & 0o077
        if os.name == "posix" and not owner_only:
            report.warn("the configuration file is readable by others: chmod 600 it")
        elif os.name == "posix" and info.st_uid != os.getuid():
            report.warn("the configuration file belongs to another user")
        else:
            report.ok("the configuration file is owner-only")


async def call_tools(
    command: list[str], calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[tuple[dict[str, Any], bool]], list[str]]:
    """Start *command* as a stdio server, make *calls* in one session, and stop it.

    Returns each call's (structured content, isError), and the tool names offered.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    answers = []
    async with stdio_session(command, client_name="notanda-mcp-doctor", env=env) as session:
        for tool, arguments in calls:
            content, failed = await session.call(tool, arguments)
            answers.append((content if isinstance(content, dict) else {}, failed))
    names = list(session.tools)
    return answers, names


async def _call(
    command: list[str], tool: str, arguments: dict[str, Any]
) -> tuple[dict[str, Any], bool, list[str]]:
    [(content, failed)], names = await call_tools(command, [(tool, arguments)])
    return content, failed, names


def selftest_server(root: Path, *, toolsets: Sequence[str] = ()) -> list[str]:
    """The command line of a stdio server with the built-in offline provider (``_selftest``).

    *toolsets* are offered beside ``search`` (``notanda-mcp-client --offline --toolsets``).
    """
    command = [sys.executable, "-m", "notanda_mcp._selftest", "--evidence-dir", str(root)]
    return [*command, "--toolsets", ",".join(toolsets)] if toolsets else command


def _self_test(report: _Report) -> None:
    import anyio  # noqa: PLC0415 - lazy, see the imports

    with tempfile.TemporaryDirectory(prefix="notanda-doctor-") as tmp:
        root = Path(tmp) / "evidence"
        root.mkdir(mode=0o700)
        server = selftest_server(root)
        try:
            found, failed, names = anyio.run(
                _call, server, SEARCH_LITERATURE, {"query": "doctor self-test", "limit": 2}
            )
        except Exception as exc:  # the SDK wraps errors in groups
            report.fail(f"self-test: the server could not be reached ({type(exc).__name__})")
            return
        if tuple(names) != tool_names(DEFAULT_TOOLSETS):
            report.fail(f"self-test: unexpected tools {names}")
            return
        if failed or found.get("status") != AnswerStatus.OK or len(found.get("results", [])) != 2:
            report.fail(f"self-test: the search failed ({found.get('error', 'no results')})")
            return
        evidence_id, receipt = found["evidence_id"], found["receipt"]
        report.ok("self-test: a search was sealed, logged and answered")
        try:
            again, failed, _ = anyio.run(
                _call, server, GET_EVIDENCE, {"evidence_id": evidence_id, "receipt": receipt}
            )
        except Exception as exc:
            report.fail(
                f"self-test: a restarted server could not be reached ({type(exc).__name__})"
            )
            return
        if failed or again.get("results") != found["results"] or again.get("receipt") != receipt:
            report.fail("self-test: a restarted server did not return the same verified record")
            return
        report.ok("self-test: a restarted server returned the record with its receipt")
        verifier = Path(evidence.__file__).with_name("verify_file.py")
        done = subprocess.run(
            [
                sys.executable,
                "-I",
                "-S",
                str(verifier),
                "--json",
                "--receipt",
                receipt,
                str(root / evidence_id),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        verdict = json.loads(done.stdout)["records"][0]["outcome"] if done.stdout else "none"
        if done.returncode != 0 or verdict != "ok":
            report.fail(f"self-test: the stand-alone verifier said {verdict}")
            return
        audit = subprocess.run(
            [sys.executable, "-I", "-m", "notanda_evidence", "audit", str(root)],
            capture_output=True,
            text=True,
            check=False,
        )
        if audit.returncode != 0:
            report.fail("self-test: the audit of the self-test folder failed")
            return
        report.ok(
            "self-test: the record verifies independently (python -I -S verify_file.py) "
            "and the log audits clean"
        )


def _live(report: _Report, root: Path) -> None:
    import anyio  # noqa: PLC0415 - lazy, see the imports

    server = [sys.executable, "-m", "notanda_mcp", "--evidence-dir", str(root)]
    try:
        found, failed, _ = anyio.run(
            _call, server, SEARCH_LITERATURE, {"query": "research reproducibility", "limit": 1}
        )
    except Exception as exc:
        report.warn(f"live search: the server could not be reached ({type(exc).__name__})")
        return
    if failed:
        detail = found.get("reason") or found.get("detail") or found.get("error")
        report.warn(
            f"live search failed: {found.get('error')} ({detail}); "
            f"the record {found.get('evidence_id', '-')} says why"
        )
    else:
        report.ok(f"live search: OpenAlex answered; evidence {found['evidence_id']}")


def _check_timestamp_url(report: _Report, url: str) -> bool:
    try:
        check_timestamp_url(url)
    except ValueError as exc:
        report.fail(f"the server would refuse to start: {exc}")
        return False
    return True


def _ask_tsa(report: _Report, url: str, tsa_ca: str | None) -> None:
    """Ask the TSA once for a stamp of the empty log's checkpoint; say what it sent and what held.

    The answer is checked exactly as the server checks it (with ``--tsa-ca``,
    its chain too); then the doctor names the TSA and the certificates it
    sent, in its order, with their expiry.
    """
    from cryptography import x509  # noqa: PLC0415 - lazy, see the imports

    trusted = None
    if tsa_ca is not None:
        try:
            trusted = load_tsa_ca(tsa_ca)
        except ValueError as exc:
            report.fail(f"the server would refuse to start: {exc}")
            return
    # The empty log's head (size 0, the SHA-256 of nothing): nothing in DIR is stamped.
    empty_root = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    try:
        der = ask_tsa(url, evidence.checkpoint_bytes(0, empty_root), TIMESTAMP_DEADLINE_S, trusted)
    except StampFailure as failure:
        report.warn(
            f"the TSA did not give a usable stamp: {describe(failure)}; {failure.code.remedy}"
        )
        return
    read = evidence.read_time_stamp_response(der)  # checked: granted, with its TSTInfo
    info = getattr(read, "info", None)
    name = getattr(info, "tsa_name", None)
    report.ok(f"the TSA names itself {name}" if name else "the TSA's token names no TSA")
    parts = evidence.read_token_signature(der)
    for number, certificate in enumerate(getattr(parts, "certificates", ()), start=1):
        loaded = x509.load_der_x509_certificate(certificate)
        root = " (self-signed)" if loaded.issuer == loaded.subject else ""
        report.ok(
            f"certificate {number} it sent: {loaded.subject.rfc4514_string()}{root}, "
            f"expires {loaded.not_valid_after_utc.date().isoformat()}"
        )
    checked = (
        "status granted, imprint, nonce, the signature by the signer's certificate it sent, "
        "the ESS signingCertificate binding"
    )
    chain = (
        f"; its chain leads to a CA in {tsa_ca}"
        if tsa_ca is not None
        else "; its chain was not checked: give --tsa-ca FILE, and an auditor trusts it only "
        "with notanda-evidence audit --tsa-ca"
    )
    report.ok(
        f"the TSA answered with a token that checks out ({checked}){chain}, "
        f"genTime {getattr(info, 'gen_time', None)}"
    )


def _last_stamp(report: _Report, root: Path, url: str | None) -> None:
    """Say when DIR was last stamped: the genTime of its newest token, as the token states it."""
    size = last_stamp(root)
    if not size:
        if url is not None:
            report.warn(
                "the evidence folder holds no time-stamp token yet: the server stamps its log "
                "with --timestamp-url"
            )
        return
    name = f"{evidence.TIMESTAMPS_DIR}/{evidence.token_name(size)}"
    # The total reader: a stored token is the TSA's bytes, certificates in its order.
    try:
        read = evidence.read_time_stamp_response(
            read_regular_file(root.joinpath(*name.split("/")), evidence.MAX_TOKEN_BYTES)
        )
    except OSError:
        read = None
    if not isinstance(read, evidence.TimeStampResponse) or read.info is None:
        report.warn(
            f"the newest time-stamp token, {name}, cannot be read: run notanda-evidence audit"
        )
        return
    report.ok(
        f"the evidence folder was last stamped at {read.info.gen_time} (the genTime in {name}, "
        f"for the first {size} log entries; its signature is checked by notanda-evidence "
        "audit --tsa-ca)"
    )


def run_doctor(
    evidence_dir: str | None,
    *,
    live: bool,
    timestamp_url: str | None = None,
    tsa_ca: str | None = None,
) -> int:
    """Run every check and return the exit code."""
    report = _Report()
    _check_python(report)
    root = _probe_folder(report, evidence_dir) if evidence_dir else None
    if evidence_dir is None:
        report.warn("no --evidence-dir given: the evidence folder was not checked")
    _check_configuration(report)
    url_usable = timestamp_url is not None and _check_timestamp_url(report, timestamp_url)
    if root is not None:
        _last_stamp(report, root, timestamp_url)
    _self_test(report)
    if live:
        if root is None:
            report.warn("live search skipped: it needs a usable --evidence-dir")
        else:
            _live(report, root)
    if timestamp_url is not None and url_usable:
        if live:
            _ask_tsa(report, timestamp_url, tsa_ca)
        else:
            report.warn("the TSA was not asked: add --live to ask it once and check its answer")
    if tsa_ca is not None and timestamp_url is None:
        report.warn("--tsa-ca was not used: it checks the answers of a --timestamp-url TSA")
    print("ready" if not report.failed else "not ready: see FAIL above")
    return 1 if report.failed else 0
