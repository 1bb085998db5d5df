"""``notanda-mcp check-references``: check a bibliography without an MCP client.

It runs the very check the ``check_references`` tool runs
(:meth:`EvidenceService.check`: one sealed, logged record) and prints one line
per reference for a person, then the evidence ID, the receipt and the head;
``--json`` prints the tool's structured answer instead. Every provider string
goes through ``printable``. A progress bar goes to stderr, only when stderr
is a terminal.

Exit codes (``docs/errors.md``): 0 every reference verified; 1 any
``metadata_mismatch``, ``not_found``, ``ambiguous`` or ``unparsed``; 3 none of
those, but some ``unchecked``; 4 the check failed as a whole (configuration,
provider, storage), with its record when one could be made; 2 usage, an
unreadable file, or input the check refuses (empty, too large, too many
references; recorded like the tool's refusals).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from notanda_evidence.verify_file import printable, printable_json
from notanda_openalex._vocabulary import Verdict

from . import _usage
from ._codes import AnswerStatus, ToolError
from ._schemas import VERDICTS
from ._usage import UsageParser, _Usage, check_configuration, resolve_evidence_dir

if TYPE_CHECKING:
    import httpx

EXIT_VERIFIED = 0
#: Any reference is ``metadata_mismatch``, ``not_found``, ``ambiguous`` or ``unparsed``.
EXIT_FINDINGS = 1
EXIT_USAGE = 2
#: Nothing but ``verified`` and ``unchecked``, some ``unchecked``.
EXIT_UNCHECKED = 3
#: The check failed as a whole.
EXIT_FAILED = 4
EXIT_BROKEN_PIPE = _usage.EXIT_BROKEN_PIPE

#: The verdicts that make the exit code 1.
_FINDINGS = (Verdict.METADATA_MISMATCH, Verdict.NOT_FOUND, Verdict.AMBIGUOUS, Verdict.UNPARSED)
_VERDICT_WIDTH = max(len(verdict) for verdict in VERDICTS)


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``notanda-mcp check-references``."""
    from notanda_openalex import MAX_REFERENCES, MAX_REFERENCES_BYTES, ReferenceFormat

    built = UsageParser(
        prog="notanda-mcp check-references",
        description="Check every reference of a bibliography against OpenAlex, as the "
        "check_references tool does, into one sealed evidence record. "
        f"At most {MAX_REFERENCES} references and {MAX_REFERENCES_BYTES} UTF-8 bytes.",
        epilog="Exit codes: 0 every reference verified, 1 a metadata_mismatch, not_found, "
        "ambiguous or unparsed reference, 2 usage or empty input, 3 some unchecked "
        "and nothing else wrong, 4 the check failed as a whole. "
        "\n\nExample:\n  notanda-mcp check-references refs.bib --evidence-dir evidence",
    )
    built.add_argument("file", metavar="FILE", help="the bibliography (UTF-8), or - for stdin")
    built.add_argument(
        "--evidence-dir",
        required=True,
        metavar="DIR",
        help="the evidence root (relative or absolute; created if missing)",
    )
    built.add_argument(
        "--format",
        default=ReferenceFormat.AUTO.value,
        choices=[member.value for member in ReferenceFormat],
        help="how the bibliography is written (default: auto)",
    )
    built.add_argument("--json", action="store_true", help="print the tool's structured answer")
    return built


def _read_text(name: str, limit: int) -> str:
    """The bibliography, read to at most *limit* bytes plus one.

    Raises:
        _Usage: It cannot be read, is not UTF-8 or is larger than *limit*.
    """
    try:
        if name == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(name, "rb") as stream:
                data = stream.read(limit + 1)
    except OSError as exc:
        raise _Usage(
            f"cannot read {name} ({type(exc).__name__}): give a readable file, or - for stdin"
        ) from None
    if len(data) > limit:
        raise _Usage(
            f"{name} is larger than {limit} bytes: give at most {limit} bytes of references "
            "(split the bibliography and check each part)"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _Usage(f"{name} is not UTF-8 text: give the bibliography as UTF-8") from None


class _Progress:
    """``checking N/TOTAL`` on one terminal line, redrawn in place."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        self._stream.write(f"\rchecking [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        self._stream.flush()
        self.shown = True

    def end(self) -> None:
        if self.shown:
            self._stream.write("\n")
            self._stream.flush()


def reference_line(entry: Mapping[str, Any]) -> str:
    """One reference at a glance: verdict, position and key, what differs, the matched DOI."""
    key = entry.get("key")
    parts = [
        f"{entry.get('verdict', '?')!s:<{_VERDICT_WIDTH}}",
        f"#{entry.get('index')}",
        f"[{key}]" if isinstance(key, str) else "[-]",
    ]
    differs = entry.get("differs") or []
    if differs:
        parts.append("differs: " + ", ".join(str(name) for name in differs))
    work = entry.get("work")
    if isinstance(work, dict):
        doi = work.get("doi")
        parts.append(
            f"doi: {doi}" if isinstance(doi, str) else f"openalex: {work.get('openalex_id')}"
        )
        if work.get("is_retracted") is True:
            parts.append("RETRACTED")
    if entry.get("error"):
        parts.append(f"({entry['error']})")
    return printable("  ".join(parts))


def exit_code(content: Mapping[str, Any]) -> int:
    """The documented exit code for a check's answer."""
    if content.get("status") != AnswerStatus.OK:
        return EXIT_USAGE if content.get("error") == ToolError.INVALID_ARGUMENTS else EXIT_FAILED
    summary = content.get("summary") or {}
    if any(summary.get(verdict) for verdict in _FINDINGS):
        return EXIT_FINDINGS
    if summary.get(Verdict.UNCHECKED):
        return EXIT_UNCHECKED
    return EXIT_VERIFIED


def _print_human(content: Mapping[str, Any], out: TextIO) -> None:
    for entry in content.get("references") or []:
        if isinstance(entry, dict):
            print(reference_line(entry), file=out)
    summary = content.get("summary")
    if isinstance(summary, dict):
        counts = ", ".join(f"{summary.get(v, 0)} {v}" for v in VERDICTS if summary.get(v))
        print(printable(f"{len(content.get('references') or [])} reference(s): {counts}"), file=out)
    if content.get("status") != AnswerStatus.OK:
        detail = content.get("reason") or content.get("detail") or content.get("storage_reason")
        suffix = f" ({detail})" if detail else ""
        print(printable(f"error: {content.get('error')}{suffix}"), file=out)
        if content.get("remedy"):
            print(printable(f"remedy: {content['remedy']}"), file=out)
    for label, name in (("evidence ID", "evidence_id"), ("receipt", "receipt"), ("head", "head")):
        if isinstance(content.get(name), str):
            print(printable(f"{label}: {content[name]}"), file=out)
    if isinstance(content.get("content_notice"), str):
        print(printable(content["content_notice"]), file=out)


def main(
    argv: Sequence[str],
    *,
    transport: httpx.BaseTransport | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Run ``notanda-mcp check-references`` and return its exit code.

    *transport* and *env* are the test seam, as for ``build_server``.
    """
    from notanda_openalex import MAX_REFERENCES_BYTES

    args = parser().parse_args(list(argv))
    try:
        root = resolve_evidence_dir(args.evidence_dir, create=True, relative=True)
        check_configuration(env)
        text = _read_text(args.file, MAX_REFERENCES_BYTES)
    except _Usage as exc:
        print(f"notanda-mcp check-references: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    from ._service import Caller, EvidenceService, command_line_remedy

    service = EvidenceService(root, transport=transport, env=env)
    progress = _Progress(sys.stderr) if sys.stderr.isatty() else None
    try:
        reply = service.check(
            {"references": text, "format": args.format}, Caller(), on_progress=progress
        )
    finally:
        if progress is not None:
            progress.end()
    content = dict(reply.content)
    if isinstance(content.get("remedy"), str):  # said to a person at a prompt, not a client
        content["remedy"] = command_line_remedy(content["remedy"])
    if args.json:
        sys.stdout.write(printable_json(content, indent=2, sort_keys=True) + "\n")
    else:
        _print_human(content, sys.stdout)
    return exit_code(content)
