"""The auditor's side of RFC 3161 time-stamps: each stored token against the log.

For every ``<size>.tsr`` in the tokens' folder, :func:`audit_timestamps`
reads the ``TimeStampResp`` with the total reader of :mod:`._der`, recomputes
the checkpoint of the log's first ``<size>`` entries and requires the token's
message imprint to be its SHA-256: a rewritten history or a token moved to
another size fails. Given a CA bundle it also has ``openssl ts -verify``
check each token's signature and certificate chain; without the ``openssl``
program it says so, with the exact command to run, rather than guessing.
See ``docs/evidence-format.md`` section 9.9.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from . import _merkle
from ._der import (
    MAX_TOKEN_BYTES,
    PKI_STATUS_NAMES,
    SHA256_OID,
    DerProblem,
    TimeStampInfo,
    read_time_stamp_response,
)
from ._timestamps import checkpoint_digest, token_size
from .verify_file import (
    EvidenceError,
    Finding,
    FindingCode,
    NotRegularFileError,
    Severity,
    read_regular_file,
)

__all__ = [
    "MAX_CA_BUNDLE_BYTES",
    "OPENSSL_DEADLINE_S",
    "CaBundleError",
    "SignatureCheck",
    "TimestampAudit",
    "TimestampCode",
    "TimestampFinding",
    "TokenReport",
    "audit_timestamps",
    "read_ca_bundle",
    "read_token",
    "token_names",
    "token_sizes",
]

#: How long one ``openssl ts -verify`` may take before the token counts as unchecked.
OPENSSL_DEADLINE_S = 30.0
#: A CA bundle larger than this is not one anybody hand-picked.
MAX_CA_BUNDLE_BYTES = 1 << 20


class CaBundleError(EvidenceError, ValueError):
    """A ``--tsa-ca`` file that is not a bundle of TSA CAs; ``problem`` says why, in words."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def read_ca_bundle(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the ``--tsa-ca`` PEM bundle at *path*, for the auditor and the server alike.

    The person who names the file chose it: a link (to a system bundle, say)
    is followed. It must be a regular file of at most
    :data:`MAX_CA_BUNDLE_BYTES` holding a PEM certificate.

    Raises:
        CaBundleError: ``not a regular file``, ``cannot be read (...)`` or
            ``holds no PEM certificate``.
    """
    try:
        data = read_regular_file(os.path.realpath(path), MAX_CA_BUNDLE_BYTES)
    except NotRegularFileError as exc:
        raise CaBundleError("not a regular file") from exc
    except OSError as exc:
        raise CaBundleError(f"cannot be read ({type(exc).__name__})") from exc
    if len(data) > MAX_CA_BUNDLE_BYTES or b"-----BEGIN CERTIFICATE-----" not in data:
        raise CaBundleError("holds no PEM certificate")
    return data


class TimestampCode(FindingCode):
    """Stable codes for findings about the stored time-stamp tokens."""

    STAMPED = "tsa.stamped"
    VERIFIED = "tsa.verified"
    STRAY_ENTRY = "tsa.stray_entry"
    UNREADABLE = "tsa.unreadable"
    TOO_LARGE = "tsa.too_large"
    MALFORMED = "tsa.malformed"
    NOT_GRANTED = "tsa.not_granted"
    BEYOND_LOG = "tsa.beyond_log"
    IMPRINT_MISMATCH = "tsa.imprint_mismatch"
    SIGNATURE_INVALID = "tsa.signature_invalid"
    UNCHECKED = "tsa.unchecked"

    @property
    def remedy(self) -> str | None:
        """What to do about it, in one line (``docs/errors.md``); None when nothing is to do."""
        return TIMESTAMP_REMEDIES.get(self)

    def has_remedies(self) -> bool:
        """The tokens' findings state their remedies (null for the two that need none)."""
        return True


_RESTORE_TOKENS = "restore .notanda/timestamps/ from a backup"
#: What to do about each time-stamp finding, printed under it by ``audit`` and
#: given as ``remedy`` in ``--json``; ``docs/errors.md`` states the same text (a
#: test compares them). ``tsa.stamped`` and ``tsa.verified`` need nothing done.
TIMESTAMP_REMEDIES: dict[TimestampCode, str] = {
    TimestampCode.IMPRINT_MISMATCH: "the history differs from the one stamped: ask the author,"
    " and trust no entry the token was meant to cover",
    TimestampCode.BEYOND_LOG: "entries were removed from the log after stamping, or the token"
    " belongs to another collection: restore .notanda/ from a backup",
    TimestampCode.SIGNATURE_INVALID: "check that --tsa-ca holds the CA chain of the TSA the"
    " collection uses (docs/auditors-guide.md); if it does, the token was forged or altered",
    TimestampCode.MALFORMED: f"the token file was damaged or replaced: {_RESTORE_TOKENS}",
    TimestampCode.TOO_LARGE: f"no TSA answers that much: {_RESTORE_TOKENS}",
    TimestampCode.NOT_GRANTED: f"no writer stores a refusal: {_RESTORE_TOKENS}",
    TimestampCode.UNREADABLE: f"replace it with the plain token file, or {_RESTORE_TOKENS}",
    TimestampCode.UNCHECKED: "install OpenSSL (the openssl program) and audit again, or run the"
    " command the finding gives",
    TimestampCode.STRAY_ENTRY: "move files that are not tokens out of .notanda/timestamps/",
}


class SignatureCheck(StrEnum):
    """What became of one token's signature check."""

    NOT_REQUESTED = "not_requested"  # no --tsa-ca
    NOT_APPLICABLE = "not_applicable"  # the token already failed against the log
    VERIFIED = "verified"
    FAILED = "failed"
    UNCHECKED = "unchecked"  # openssl missing or too slow


#: A finding about the tokens' folder or one token in it: a :class:`Finding`
#: with a :class:`TimestampCode`, located by ``file``.
TimestampFinding = Finding


@dataclass(frozen=True, slots=True)
class TokenReport:
    """One readable, granted token: what it states and what the audit made of it."""

    file: str
    size: int
    info: TimeStampInfo
    imprint_matches: bool
    signature: SignatureCheck

    def statement(self) -> str:
        """The token's claim in words (a claim until its signature is verified)."""
        tsa = self.info.tsa_name or "an unnamed TSA (the token names none)"
        return (
            f"the first {self.size} log entries existed no later than {self.info.gen_time}, "
            f"according to TSA {tsa}"
        )

    def to_json(self) -> dict[str, Any]:
        """The token as it appears in the ``--json`` report (big integers as decimal text)."""
        return {
            "file": self.file,
            "gen_time": self.info.gen_time,
            "imprint_matches": self.imprint_matches,
            "nonce": None if self.info.nonce is None else str(self.info.nonce),
            "policy": self.info.policy,
            "serial": str(self.info.serial),
            "signature": self.signature.value,
            "size": self.size,
            "tsa": self.info.tsa_name,
        }


@dataclass(frozen=True, slots=True)
class TimestampAudit:
    """Everything the tokens' folder gave: the tokens read and every finding."""

    tokens: tuple[TokenReport, ...]
    findings: tuple[Finding, ...]
    #: How many names in the folder are token names (read or not).
    token_files: int
    ca_file: str | None

    @property
    def failed(self) -> bool:
        """Whether any token failed a check (exit 1)."""
        return any(
            f.severity is Severity.ERROR and f.code is not TimestampCode.UNCHECKED
            for f in self.findings
        )

    @property
    def unchecked(self) -> bool:
        """Whether a signature could not be checked (exit 3 when nothing failed)."""
        return any(f.code is TimestampCode.UNCHECKED for f in self.findings)


def _finding(
    code: TimestampCode, severity: Severity, file: str | None, detail: str | None
) -> Finding:
    return Finding(code, severity, file, detail)


def token_names(folder: Path) -> tuple[list[str], list[Finding]]:
    """The names in the tokens' folder, sorted, and findings if it cannot be listed.

    A folder that does not exist holds no tokens and is no finding.
    """
    if not os.path.lexists(folder):
        return [], []
    if folder.is_symlink() or not folder.is_dir():
        kind = "a link" if folder.is_symlink() else "not a folder"
        return [], [_finding(TimestampCode.UNREADABLE, Severity.ERROR, None, f"{folder}: {kind}")]
    try:
        with os.scandir(folder) as scan:
            names = sorted(entry.name for entry in scan)
    except OSError as exc:
        detail = f"{folder}: cannot be listed ({type(exc).__name__})"
        return [], [_finding(TimestampCode.UNREADABLE, Severity.ERROR, None, detail)]
    return names, []


def token_sizes(folder: Path) -> list[int]:
    """The log sizes the tokens in *folder* stamp, by their names (``<size>.tsr``)."""
    names, _ = token_names(folder)
    return [size for size in map(token_size, names) if size is not None]


def read_token(path: Path) -> bytes | str:
    """The token file's bytes (at most one past the limit), or why it was refused."""
    try:
        return read_regular_file(path, MAX_TOKEN_BYTES)
    except NotRegularFileError:
        return "not a regular file (a FIFO, a device or a folder); not read"
    except OSError as exc:
        if path.is_symlink():
            return "a link; links are never followed"
        return f"cannot be read ({type(exc).__name__})"


def verify_command(openssl: str, token: Path, digest: bytes, ca_file: str) -> list[str]:
    """The ``openssl ts -verify`` command that checks *token* for *digest* under *ca_file*."""
    return [
        openssl,
        "ts",
        "-verify",
        "-digest",
        digest.hex(),
        "-in",
        str(token),
        "-CAfile",
        ca_file,
    ]


def _openssl_verdict(command: list[str]) -> tuple[SignatureCheck, str | None]:
    """Run one ``openssl ts -verify`` (no shell, bounded time) and judge its answer."""
    try:
        completed = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=OPENSSL_DEADLINE_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return SignatureCheck.UNCHECKED, f"openssl did not answer within {OPENSSL_DEADLINE_S:g} s"
    except OSError as exc:
        return SignatureCheck.UNCHECKED, f"openssl could not be run ({type(exc).__name__})"
    if completed.returncode == 0 and b"Verification: OK" in completed.stdout:
        return SignatureCheck.VERIFIED, None
    lines = completed.stderr.decode("utf-8", errors="replace").splitlines()
    reason = next((line for line in lines if "Verify error:" in line), None)
    reason = reason.split("Verify error:", 1)[1] if reason else (lines[-1] if lines else "")
    return SignatureCheck.FAILED, f"openssl ts -verify refused it: {reason.strip()[:200]}"


def audit_timestamps(
    folder: Path,
    leaves: Sequence[bytes],
    *,
    ca_file: str | os.PathLike[str] | None = None,
    openssl: str | None = None,
    roots: Mapping[int, bytes] | None = None,
    log_size: int | None = None,
) -> TimestampAudit:
    """Check every token in *folder* against the log whose leaf hashes are *leaves*.

    Args:
        folder: the tokens' folder (``.notanda/timestamps`` of a root).
        leaves: the log's leaf hashes, one per terminated line.
        ca_file: a PEM bundle of the TSA CAs to trust; given, each token that
            matches the log also has its signature chain checked by openssl.
        openssl: the openssl program; by default the one on ``PATH``.
        roots: instead of *leaves* (then empty), the log's root at each size
            :func:`token_sizes` names, for a caller that streamed the log.
        log_size: with *roots*, how many leaves the log has.
    """
    names, findings = token_names(folder)
    ca = None if ca_file is None else os.path.abspath(ca_file)
    program = shutil.which("openssl") if openssl is None and ca is not None else openssl
    sized: list[tuple[int, str]] = []
    for name in names:
        size = token_size(name)
        if size is None:
            detail = "not a token's name (<size>.tsr); not read"
            findings.append(_finding(TimestampCode.STRAY_ENTRY, Severity.WARNING, name, detail))
        else:
            sized.append((size, name))
    sized.sort()
    if roots is None or log_size is None:
        roots = _merkle.prefix_roots(leaves, (size for size, _ in sized))
        log_size = len(leaves)
    tokens: list[TokenReport] = []
    for size, name in sized:
        path = folder / name
        data = read_token(path)
        if isinstance(data, str):
            findings.append(_finding(TimestampCode.UNREADABLE, Severity.ERROR, name, data))
            continue
        parsed = read_time_stamp_response(data)
        if isinstance(parsed, DerProblem):
            code = TimestampCode.TOO_LARGE if parsed.too_large else TimestampCode.MALFORMED
            findings.append(_finding(code, Severity.ERROR, name, parsed.reason))
            continue
        if parsed.info is None:
            status = PKI_STATUS_NAMES.get(parsed.status, str(parsed.status))
            detail = f"the TSA answered {status}" + (
                f": {parsed.status_text}" if parsed.status_text else ""
            )
            findings.append(_finding(TimestampCode.NOT_GRANTED, Severity.ERROR, name, detail))
            continue
        info = parsed.info
        root = roots.get(size)
        if root is None:
            detail = (
                f"stamps a head of {size} entries, the log has only {log_size}: "
                "entries were removed, or the token belongs to another collection"
            )
            findings.append(_finding(TimestampCode.BEYOND_LOG, Severity.ERROR, name, detail))
            tokens.append(TokenReport(name, size, info, False, SignatureCheck.NOT_APPLICABLE))
            continue
        digest = checkpoint_digest(size, root.hex())
        matches = info.hash_oid == SHA256_OID and info.digest == digest
        if not matches:
            detail = (
                f"the token's imprint is not the SHA-256 of the checkpoint of the first {size} "
                "entries: they were rewritten after stamping, or the token was made for "
                "another head"
                + ("" if info.hash_oid == SHA256_OID else f" (hashed with {info.hash_oid})")
            )
            findings.append(_finding(TimestampCode.IMPRINT_MISMATCH, Severity.ERROR, name, detail))
            tokens.append(TokenReport(name, size, info, False, SignatureCheck.NOT_APPLICABLE))
            continue
        signature = SignatureCheck.NOT_REQUESTED
        if ca is not None:
            command = verify_command(program or "openssl", path, digest, ca)
            why: str | None = "openssl is not on PATH"
            if program is None:
                signature = SignatureCheck.UNCHECKED
            else:
                signature, why = _openssl_verdict(command)
            if signature is SignatureCheck.UNCHECKED:
                detail = f"{why}; to check the signature, run: {shlex.join(command)}"
                findings.append(_finding(TimestampCode.UNCHECKED, Severity.WARNING, name, detail))
            elif signature is SignatureCheck.FAILED:
                findings.append(
                    _finding(TimestampCode.SIGNATURE_INVALID, Severity.ERROR, name, why)
                )
        report = TokenReport(name, size, info, True, signature)
        tokens.append(report)
        nonce = "none" if info.nonce is None else str(info.nonce)
        claim = f"{report.statement()} (genTime {info.gen_time}, nonce {nonce})"
        findings.append(_finding(TimestampCode.STAMPED, Severity.INFO, name, claim))
        if signature is SignatureCheck.VERIFIED:
            detail = f"signature and certificate chain verified by openssl under {ca}"
            findings.append(_finding(TimestampCode.VERIFIED, Severity.INFO, name, detail))
    return TimestampAudit(tuple(tokens), tuple(findings), len(sized), ca)
