"""``notanda-mcp check-references``: check a bibliography file of any size without an MCP client.

The file is read once, whole (``read_references``: macros and ``crossref``
file-wide), the entries to check are chosen (all, or with ``--cited-in`` those
the manuscript cites), and they are checked in parts of at most 100
references, one after another, each into one sealed, logged record
(:mod:`._check_run`). Before the first request it prints the plan (references,
parts, requests at most, credits) and refuses a plan over ``--max-credits``;
at the end it prints the summary over the whole file, one line per reference
that is not ``verified``, the ``missing_entry`` keys, and every part's
evidence ID, receipt and log head; ``--json`` prints the same as one document
(``docs/reference-checking.md``). Every provider or bibliography string goes
through ``printable``. A progress line goes to stderr, only when stderr is a
terminal.

Exit codes (``docs/errors.md``): 4 any part failed as a whole (or the
``--report`` file could not be written); else 1 any ``metadata_mismatch``,
``not_found``, ``ambiguous`` or ``unparsed``, or a cited key missing; else 3
any ``unchecked`` (references of parts never run count); else 0; 2 usage, an
unreadable file or input the check refuses; 130 after Ctrl-C.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import notanda_evidence as evidence
import notanda_openalex as openalex
from notanda_evidence.verify_file import NOTICE, printable, printable_json

from . import _usage
from ._check_run import (
    FREE_DAILY_CREDITS,
    Plan,
    RunOutcome,
    Selection,
    StopReason,
    new_run_id,
    plan,
    run_parts,
    select,
)
from ._codes import AnswerStatus, ToolError
from ._schemas import VERDICTS
from ._service import Caller, EvidenceService, command_line_remedy
from ._usage import UsageParser, _Usage, check_configuration, resolve_evidence_dir

if TYPE_CHECKING:
    import httpx
    from notanda_openalex import Citations, ParsedReferences


#: Every reference ``verified`` (success, as for every command).
EXIT_VERIFIED = _usage.EXIT_OK
#: Any reference is ``metadata_mismatch``, ``not_found``, ``ambiguous`` or
#: ``unparsed``, or a cited key is missing from the bibliography.
EXIT_FINDINGS = 1
EXIT_USAGE = _usage.EXIT_USAGE
#: Nothing of exit 1, but some ``unchecked`` (parts never run count).
EXIT_UNCHECKED = 3
#: A part failed as a whole, or the report could not be written.
EXIT_FAILED = 4
#: Ctrl-C: the running part was sealed as cancelled, the summary printed.
EXIT_INTERRUPTED = 130

#: The ``error`` of a reference in a part the run never reached (it is ``unchecked``).
NOT_RUN = "not_run"
#: The largest bibliography file read (UTF-8 bytes): ten times the 10 MB tested.
MAX_FILE_BYTES = 100 << 20
#: The ``format_version`` of the ``--json`` document.
JSON_FORMAT_VERSION = 1
#: The suffixes ``--report`` takes, and the format each names.
REPORT_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md"}
EXIT_BROKEN_PIPE = _usage.EXIT_BROKEN_PIPE

#: The verdicts that make the exit code 1.
_FINDINGS = (
    openalex.Verdict.METADATA_MISMATCH,
    openalex.Verdict.NOT_FOUND,
    openalex.Verdict.AMBIGUOUS,
    openalex.Verdict.UNPARSED,
)
_VERDICT_WIDTH = max(len(verdict) for verdict in VERDICTS)


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``notanda-mcp check-references``."""
    built = UsageParser(
        prog="notanda-mcp check-references",
        description="Check every reference of a bibliography file against OpenAlex, as the "
        "check_references tool does, in parts of at most "
        f"{openalex.MAX_REFERENCES} references, each into one sealed evidence record.",
        epilog="Exit codes: 0 every reference verified, 1 a metadata_mismatch, not_found, "
        "ambiguous or unparsed reference or a cited key missing, 2 usage or empty input, "
        "3 some unchecked and nothing else wrong, 4 a part failed as a whole, 130 Ctrl-C. "
        "\n\nExample:\n  notanda-mcp check-references refs.bib --evidence-dir evidence "
        "--cited-in paper.aux",
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
        default=openalex.ReferenceFormat.AUTO.value,
        choices=[member.value for member in openalex.ReferenceFormat],
        help=f"how the bibliography is written (default: {openalex.ReferenceFormat.AUTO.value})",
    )
    built.add_argument(
        "--cited-in",
        action="append",
        default=None,
        metavar="FILE",
        help="check only the entries this file cites: a LaTeX .aux, a biber .bcf, LaTeX "
        "source (.tex) or Pandoc Markdown (.md); repeatable",
    )
    built.add_argument(
        "--max-credits",
        type=_credits,
        default=FREE_DAILY_CREDITS,
        metavar="N",
        help="refuse a run planned to cost more OpenAlex credits than N "
        f"(default: {FREE_DAILY_CREDITS}, a free key's daily allowance)",
    )
    built.add_argument(
        "--report",
        metavar="FILE",
        type=_report_path,
        help="after the run, write a report of its parts to FILE (.html or .md)",
    )
    built.add_argument("--json", action="store_true", help="print the run as one JSON document")
    return built


def _credits(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of credits") from None
    if number < 0:
        raise argparse.ArgumentTypeError("give a number of credits of 0 or more")
    return number


def _report_path(value: str) -> Path:
    if Path(value).suffix.lower() not in REPORT_FORMATS:
        raise argparse.ArgumentTypeError(
            f"{value!r}: give a report file ending in .html or .md (the format is its suffix)"
        )
    return Path(value)


def _read_bytes(name: str, limit: int) -> bytes:
    """At most *limit* bytes of *name* (``-``: stdin).

    Raises:
        _Usage: It cannot be read or is larger than *limit*.
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
        raise _Usage(f"{name} is larger than {limit} bytes: give a file of at most {limit} bytes")
    return data


def _decoded(name: str, data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _Usage(f"{name} is not UTF-8 text: give the {what} as UTF-8") from None


def _citations(names: Sequence[str]) -> list[Citations]:
    """Every ``--cited-in`` file's citations.

    Raises:
        _Usage: A file cannot be read, is not UTF-8, or is of no kind known.
    """
    found = []
    for name in names:
        try:
            kind = openalex.citation_source(name)
        except openalex.CitationError as exc:
            raise _Usage(f"--cited-in {name}: {exc}") from None
        text = _decoded(name, _read_bytes(name, openalex.MAX_CITATION_BYTES), "manuscript")
        try:
            found.append(openalex.read_citations(text, kind))
        except openalex.CitationError as exc:
            raise _Usage(f"--cited-in {name}: {exc}") from None
    return found


class _Progress:
    """``checking [###...] DONE/TOTAL  part P/N  not verified: M`` on one terminal line."""

    def __init__(self, stream: TextIO, total: int, parts: int) -> None:
        self._stream = stream
        self._total = total
        self._parts = parts
        self.shown = False

    def __call__(self, done: int, parts_done: int, not_verified: int) -> None:
        width = 30
        filled = width * done // max(self._total, 1)
        self._stream.write(
            f"\rchecking [{'#' * filled}{'.' * (width - filled)}] {done}/{self._total}"
            f"  parts {parts_done}/{self._parts}  not verified: {not_verified}"
        )
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
    """The documented exit code for one check's answer (a single record)."""
    if content.get("status") != AnswerStatus.OK:
        return EXIT_USAGE if content.get("error") == ToolError.INVALID_ARGUMENTS else EXIT_FAILED
    summary = content.get("summary") or {}
    if any(summary.get(verdict) for verdict in _FINDINGS):
        return EXIT_FINDINGS
    if summary.get(openalex.Verdict.UNCHECKED):
        return EXIT_UNCHECKED
    return EXIT_VERIFIED


# ------------------------------------------------------------------ the run's result


def _entries(
    parsed: ParsedReferences, the_plan: Plan, outcome: RunOutcome
) -> tuple[list[dict[str, Any]], dict[str, int], bool]:
    """Every checked reference in file order (``index`` = file position), counts, any failure."""
    entries: list[dict[str, Any]] = []
    failed = False
    ran = {part.number: part for part in outcome.parts}
    for number, positions in enumerate(the_plan.parts, 1):
        part = ran.get(number)
        content = {} if part is None else part.content
        answered = content.get("references") if content.get("status") == AnswerStatus.OK else None
        if part is not None and content.get("status") != AnswerStatus.OK:
            failed = True
        for offset, position in enumerate(positions):
            entry: dict[str, Any]
            if isinstance(answered, list) and offset < len(answered):
                entry = {**answered[offset]}
            else:
                # A part that failed as a whole gives its code; one never run, not_run.
                error = str(content.get("error")) if part is not None else NOT_RUN
                entry = {
                    "differs": [],
                    "error": error,
                    "key": parsed[position].key,
                    "observation": None,
                    "retracted": None,
                    "verdict": openalex.Verdict.UNCHECKED.value,
                    "work": None,
                }
            entry["index"] = position
            entry["part"] = number
            entries.append(entry)
    counts = {verdict: 0 for verdict in VERDICTS}
    for entry in entries:
        verdict = entry.get("verdict")
        if verdict in counts:
            counts[verdict] += 1
    return entries, counts, failed


def _run_exit(counts: Mapping[str, int], failed: bool, missing: bool, outcome: RunOutcome) -> int:
    if outcome.stopped is StopReason.INTERRUPTED:
        return EXIT_INTERRUPTED
    if failed:
        return EXIT_FAILED
    if missing or any(counts.get(verdict) for verdict in _FINDINGS):
        return EXIT_FINDINGS
    if counts.get(openalex.Verdict.UNCHECKED):
        return EXIT_UNCHECKED
    return EXIT_VERIFIED


def _part_json(part: Any) -> dict[str, Any]:
    content = part.content
    shown = {
        name: content.get(name)
        for name in (
            "evidence_id",
            "receipt",
            "head",
            "log_head",
            "log_index",
            "status",
            "error",
            "reason",
            "detail",
            "storage_reason",
            "remedy",
        )
        if content.get(name) is not None
    }
    if "remedy" in shown:
        shown["remedy"] = _at_a_prompt(shown["remedy"])
    return {
        **shown,
        "cancelled": content.get("cancelled") is True,
        "file_indexes": [part.positions[0], part.positions[-1]],
        "part": part.number,
        "references": len(part.positions),
        "stopped": content.get("stopped"),
        "summary": content.get("summary"),
    }


def _stop_text(outcome: RunOutcome, count: int) -> str | None:
    if outcome.stopped is None:
        return None
    last = outcome.parts[-1].number if outcome.parts else 0
    done = (
        f"parts 1 to {last} of {count} are sealed" if last > 1 else f"part 1 of {count} is sealed"
    )
    why = {
        StopReason.INTERRUPTED: "interrupted (Ctrl-C); the running part was sealed as cancelled",
        StopReason.BUDGET: "the OpenAlex budget is spent (budget_exhausted)",
        StopReason.RATE_LIMIT: "OpenAlex asks to wait longer than a minute (rate_limited)",
        StopReason.FAILED: "a part failed as a whole",
    }[outcome.stopped]
    again = f"; run again after {outcome.run_again_at}" if outcome.run_again_at else ""
    return f"stopped after part {last} of {count}: {why}; {done}{again}"


def _document(
    name: str,
    *,
    file_info: Mapping[str, Any],
    selection: Selection,
    the_plan: Plan,
    max_credits: int,
    outcome: RunOutcome,
    entries: list[dict[str, Any]],
    counts: dict[str, int],
    code: int,
) -> dict[str, Any]:
    return {
        "cited": None
        if not selection.cited
        else {
            "case_only": [{"cited": c, "entry": e} for c, e in selection.case_only],
            "checked": len(selection.indexes),
            "crossref_parents": selection.crossref_parents,
            "skipped_uncited": selection.skipped,
        },
        "content_notice": NOTICE,
        "exit_code": code,
        "file": name,
        "file_bytes": file_info["file_bytes"],
        "file_sha256": file_info["file_sha256"],
        "format": "notanda-check-run",
        "format_version": JSON_FORMAT_VERSION,
        "missing_entry": list(selection.missing),
        "parts": [_part_json(part) for part in outcome.parts],
        "plan": {
            "credits": the_plan.credits,
            "credits_at_most": the_plan.credits_at_most,
            "max_credits": max_credits,
            "max_requests": the_plan.max_requests,
            "parts": len(the_plan.parts),
            "references": the_plan.references,
        },
        "references": entries,
        "run_id": outcome.run_id,
        "stopped": None
        if outcome.stopped is None
        else {
            "after_part": outcome.parts[-1].number if outcome.parts else 0,
            "reason": outcome.stopped.value,
            "run_again_at": outcome.run_again_at,
        },
        "summary": counts,
    }


def _plan_line(the_plan: Plan, selection: Selection, total: int) -> str:
    cited = ""
    if selection.cited:
        cited = (
            f" (cited: {len(selection.indexes)} of {total} entries; "
            f"{selection.skipped} not cited, skipped"
            + (
                f"; {selection.crossref_parents} crossref parent(s) used for fields only"
                if selection.crossref_parents
                else ""
            )
            + ")"
        )
    return (
        f"plan: {the_plan.references} reference(s){cited}, {len(the_plan.parts)} part(s), "
        f"at most {the_plan.max_requests} request(s), {the_plan.credits} credit(s) "
        f"({the_plan.credits_at_most} at most if no DOI is known)"
    )


def _print_run(document: Mapping[str, Any], out: TextIO) -> None:
    counts = document["summary"]
    shown = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts.get(v))
    parts = document["plan"]["parts"]
    print(
        printable(f"{len(document['references'])} reference(s) in {parts} part(s): {shown}"),
        file=out,
    )
    for entry in document["references"]:
        if entry.get("verdict") != openalex.Verdict.VERIFIED:
            print(reference_line(entry), file=out)
    for key in document["missing_entry"]:
        print(
            printable(f"missing_entry  [{key}]  cited, but the bibliography has no entry"), file=out
        )
    for part in document["parts"]:
        print(
            printable(
                f"part {part['part']} of {parts}: references #{part['file_indexes'][0]} to "
                f"#{part['file_indexes'][1]}, {part.get('status', '?')}"
                + (", cancelled" if part["cancelled"] else "")
            ),
            file=out,
        )
        if part.get("status") != AnswerStatus.OK:
            detail = part.get("reason") or part.get("detail") or part.get("storage_reason")
            suffix = f" ({detail})" if detail else ""
            print(printable(f"error: {part.get('error')}{suffix}"), file=out)
            if part.get("remedy"):
                print(printable(f"remedy: {part['remedy']}"), file=out)
        for label, name in (
            ("evidence ID", "evidence_id"),
            ("receipt", "receipt"),
            ("head", "head"),
        ):
            if isinstance(part.get(name), str):
                print(printable(f"{label}: {part[name]}"), file=out)
    print(printable(NOTICE), file=out)


def _interrupt_handler(interrupted: threading.Event) -> Any:
    def handler(signum: int, frame: Any) -> None:
        if not interrupted.is_set():
            interrupted.set()
            sys.stderr.write("\ninterrupted: sealing the running part as cancelled\n")
            sys.stderr.flush()

    return handler


def _write_report(
    path: Path, receipts: Mapping[str, str], root: Path, file_name: str
) -> str | None:
    """Write the report of the parts in *receipts*; None, or the reason it could not be written.

    The parts are verified again against the receipts just handed out, as
    ``notanda-evidence report`` verifies them (``build_report``).
    """
    fmt = REPORT_FORMATS[path.suffix.lower()]
    try:
        text = evidence.build_report(
            list(receipts), root, fmt, receipts=receipts, file_name=file_name
        )
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:
        return f"cannot write {path} ({type(exc).__name__})"
    return None


def main(
    argv: Sequence[str],
    *,
    transport: httpx.BaseTransport | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Run ``notanda-mcp check-references`` and return its exit code.

    *transport* and *env* are the test seam, as for ``build_server``.
    """
    args = parser().parse_args(list(argv))
    try:
        root = resolve_evidence_dir(args.evidence_dir, create=True, relative=True)
        check_configuration(env)
        citations = None if args.cited_in is None else _citations(args.cited_in)
        data = _read_bytes(args.file, MAX_FILE_BYTES)
        text = _decoded(args.file, data, "bibliography")
    except _Usage as exc:
        print(f"notanda-mcp check-references: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    service = EvidenceService(root, transport=transport, env=env)
    try:
        parsed = openalex.read_references(text, args.format)
    except KeyboardInterrupt:
        print("\ninterrupted while reading FILE: no record made, nothing sent", file=sys.stderr)
        return EXIT_INTERRUPTED
    except openalex.ReferenceInputError:
        # Refused as the tool refuses it, into its own record.
        reply = service.check({"references": text, "format": args.format}, Caller())
        _print_refusal(reply.content, sys.stdout, args.json)
        return exit_code(reply.content)
    selection = select(parsed, citations)
    the_plan = plan(parsed, selection)
    notes = sys.stderr if args.json else sys.stdout
    print(printable(_plan_line(the_plan, selection, len(parsed))), file=notes)
    for cited, defined in selection.case_only:
        print(
            printable(f"warning: cited key {cited!r} taken as entry {defined!r} (case differs)"),
            file=notes,
        )
    if the_plan.credits > args.max_credits:
        print(
            "notanda-mcp check-references: the plan costs "
            f"{the_plan.credits} credits, over --max-credits {args.max_credits}: raise "
            "--max-credits, or check fewer references (--cited-in)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    file_info = {
        "file_bytes": len(data),
        "file_sha256": hashlib.sha256(data).hexdigest(),
    }
    run = {"run_id": new_run_id(), **file_info, "references": the_plan.references}
    interrupted = threading.Event()
    progress = (
        _Progress(sys.stderr, the_plan.references, len(the_plan.parts))
        if sys.stderr.isatty()
        else None
    )
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, _interrupt_handler(interrupted)) if in_main else None
    try:
        outcome = run_parts(
            service,
            parsed,
            the_plan=the_plan,
            run=run,
            format_name=args.format,
            interrupted=interrupted,
            caller=Caller(),
            on_progress=progress,
        )
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous)
        if progress is not None:
            progress.end()
    entries, counts, failed = _entries(parsed, the_plan, outcome)
    code = _run_exit(counts, failed, bool(selection.missing), outcome)
    report_problem = None
    if args.report is not None:
        sealed = {
            str(part.content["evidence_id"]): part.content["receipt"]
            for part in outcome.parts
            if isinstance(part.content.get("receipt"), str)
        }
        report_problem = _write_report(args.report, sealed, root, Path(args.file).name)
        if report_problem is not None and code != EXIT_INTERRUPTED:
            code = EXIT_FAILED
    document = _document(
        args.file,
        file_info=file_info,
        selection=selection,
        the_plan=the_plan,
        max_credits=args.max_credits,
        outcome=outcome,
        entries=entries,
        counts=counts,
        code=code,
    )
    if args.json:
        sys.stdout.write(printable_json(document, indent=2, sort_keys=True) + "\n")
    else:
        _print_run(document, sys.stdout)
    stop = _stop_text(outcome, len(the_plan.parts))
    if stop is not None:
        print(printable(stop), file=notes)
    if report_problem is not None:
        print(
            f"notanda-mcp check-references: --report: {printable(report_problem)}", file=sys.stderr
        )
    elif args.report is not None:
        print(printable(f"report: {args.report}"), file=notes)
    return code


def _at_a_prompt(remedy: object) -> object:
    """A remedy as said to a person at a prompt, in command-line words, not a client's."""
    return command_line_remedy(remedy) if isinstance(remedy, str) else remedy


def _print_refusal(refusal: Mapping[str, Any], out: TextIO, as_json: bool) -> None:
    content = {**refusal, "remedy": _at_a_prompt(refusal.get("remedy"))}
    if as_json:
        out.write(printable_json(content, indent=2, sort_keys=True) + "\n")
        return
    detail = content.get("reason") or content.get("detail") or content.get("storage_reason")
    suffix = f" ({detail})" if detail else ""
    print(printable(f"error: {content.get('error')}{suffix}"), file=out)
    if content.get("remedy"):
        print(printable(f"remedy: {content['remedy']}"), file=out)
    for label, name in (("evidence ID", "evidence_id"), ("receipt", "receipt"), ("head", "head")):
        if isinstance(content.get(name), str):
            print(printable(f"{label}: {content[name]}"), file=out)
