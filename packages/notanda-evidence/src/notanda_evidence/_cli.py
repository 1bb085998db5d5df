"""The ``notanda-evidence`` command line.

Exit codes, the same for every subcommand (``docs/errors.md``):

* 0: success; everything checked is intact.
* 1: a record, the log, a receipt or a held head failed a check, or a
  record was refused (``cite``, ``adopt``, ``prove --verify``).
* 2: usage error: bad arguments, a path that holds nothing to check; also
  an unexpected failure (a bug), which reaches no verdict.
* 3: nothing failed, but something is incomplete, not yet logged, or could
  not be checked (a time-stamp token's signature without openssl).
* 141: the output was closed before the command finished; it stops quietly
  (``verify_file.quiet_broken_pipe``), and what it had done stays done.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import verify_file
from ._adopt import INCOMPLETE_MIN_AGE_S, adopt, prune
from ._audit import AuditRun, LogStatus, timestamps_folder
from ._bagit import export_bagit
from ._cite import CitationError, CitationFormat, collect_citations, find_doi, render
from ._log import LOG_FILE, EvidenceLogError, Head, LogCode
from ._pool import checked_jobs, records_verifier
from ._proofs import ProofError, make_proof, read_proof, verify_proof
from ._report import ReportFormat, collect_report, render_report
from ._store import EvidenceStorageError
from ._timestamp_audit import (
    CaBundleError,
    SignatureCheck,
    TimestampAudit,
    read_ca_bundle,
    token_names,
)
from ._timestamps import TIMESTAMPS_DIR, token_size
from ._version import __version__
from .verify_file import (
    RESERVED_DIR,
    NotRegularFileError,
    is_evidence_id,
    printable,
    printable_json,
)

EXIT_OK = verify_file.EXIT_OK
EXIT_FAILED = verify_file.EXIT_FAILED
EXIT_USAGE = verify_file.EXIT_USAGE
EXIT_INCOMPLETE = verify_file.EXIT_INCOMPLETE
#: The output was closed before the command finished (``verify_file.quiet_broken_pipe``).
EXIT_BROKEN_PIPE = verify_file.EXIT_BROKEN_PIPE
ROOT_VARIABLE = "NOTANDA_EVIDENCE_DIR"
#: The ``audit --json`` report's format version: 2 added ``timestamps`` and ``checks``,
#: 3 ``remedy`` in the record, log and run findings, 4 in the time-stamp findings.
AUDIT_FORMAT_VERSION = 4
#: The ``find --json`` report's format version: 2 added ``injected`` and ``left_out``.
FIND_FORMAT_VERSION = 2


_Usage = verify_file.UsageError
_ROOT_REMEDY = (
    "point the command at the evidence root, the folder holding the 32-hex record folders"
    " and .notanda/"
)


def _say(text: str, *, err: bool = False) -> None:
    """Print one human-readable line with folder-controlled text made visible."""
    print(printable(text), file=sys.stderr if err else sys.stdout)


def _is_bag(path: Path) -> bool:
    return (path / "bagit.txt").is_file() and (path / "data").is_dir()


def _evidence_root(path: Path, command: str) -> Path:
    """*path* if it holds evidence to check: a record folder, or ``.notanda/log.jsonl``.

    A root whose log exists but whose records are all pruned is still a root;
    a folder with neither holds nothing to check, which is a usage error.
    """
    if not path.is_dir():
        raise _Usage(f"{path}: not a folder", _ROOT_REMEDY)
    if is_evidence_id(path.name) and not (path / RESERVED_DIR).is_dir():
        raise _Usage(
            f"{path}: is a record folder, not an evidence root",
            f"point {command} at the folder that holds it ({path.parent})",
        )
    try:
        with os.scandir(path) as scan:
            holds = any(is_evidence_id(entry.name) for entry in scan)
    except OSError as exc:
        raise _Usage(
            f"{path}: cannot be listed ({type(exc).__name__})",
            "give a folder you can read",
        ) from exc
    if not holds and not os.path.lexists(path / RESERVED_DIR / LOG_FILE):
        raise _Usage(
            f"{path}: holds no evidence record",
            f"point {command} at the evidence root, the folder holding the 32-hex record"
            f" folders and {RESERVED_DIR}/",
        )
    return path


def _root(args: argparse.Namespace) -> Path:
    value = args.root or os.environ.get(ROOT_VARIABLE)
    if not value:
        raise _Usage("no evidence root given", f"give --root DIR or set {ROOT_VARIABLE}")
    return _evidence_root(Path(value).expanduser(), args.command)


def _head(text: str | None) -> Head | None:
    if text is None:
        return None
    try:
        return Head.parse(text)
    except ValueError as exc:
        raise _Usage(
            f"--head: {exc}",
            "give the head as SIZE:ROOT, as a search answer's head field or audit prints it",
        ) from exc


def _emit(text: str, output: str | None) -> None:
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def _print_json(value: Any) -> None:
    sys.stdout.write(printable_json(value, indent=2, sort_keys=True) + "\n")


# --------------------------------------------------------------- commands


def _tsa_ca(path: str, root: Path) -> str:
    """Check ``--tsa-ca``: a readable PEM bundle, for a root that holds tokens to check."""
    remedy = "give --tsa-ca the PEM file of the TSA's CA certificates (docs/auditors-guide.md)"
    try:
        read_ca_bundle(path)
    except CaBundleError as exc:
        raise _Usage(f"--tsa-ca {path}: {exc.problem}", remedy) from exc
    names, _ = token_names(timestamps_folder(root))
    if not any(token_size(name) is not None for name in names):
        raise _Usage(
            f"{root}: holds no time-stamp token ({TIMESTAMPS_DIR}/<size>.tsr), so --tsa-ca"
            " has nothing to check",
            "audit without --tsa-ca, or ask for the collection with its"
            f" {TIMESTAMPS_DIR}/ folder (a server run with --timestamp-url makes it)",
        )
    return path


def _checks_made(stamps: TimestampAudit | None, held: bool) -> list[str]:
    """The checks this audit made, by name, for both reports."""
    checks = ["records", "log"]
    if held:
        checks.append("held_head")
    if stamps is not None and stamps.token_files:
        checks.append("timestamp_imprints")
        if any(t.signature is SignatureCheck.VERIFIED for t in stamps.tokens) or any(
            t.signature is SignatureCheck.FAILED for t in stamps.tokens
        ):
            checks.append("timestamp_signatures")
    return checks


def _checks_sentence(records: int, stamps: TimestampAudit | None, held: bool) -> str:
    parts = [f"{records} record(s) verified", "the log parsed, chained and hashed"]
    if held:
        parts.append("the held head proved against it")
    if stamps is None:
        parts.append("time-stamp tokens not checked (the log was not read)")
    elif stamps.token_files:
        parts.append(f"{stamps.token_files} time-stamp token(s) checked against the log's heads")
        by = {check: 0 for check in SignatureCheck}
        for token in stamps.tokens:
            by[token.signature] += 1
        if stamps.ca_file is None:
            parts.append("their signatures NOT checked (give --tsa-ca FILE)")
        else:
            parts.append(
                f"signatures: {by[SignatureCheck.VERIFIED]} verified by openssl under"
                f" {stamps.ca_file}, {by[SignatureCheck.FAILED]} refused,"
                f" {by[SignatureCheck.UNCHECKED]} NOT checked"
            )
    return "checks made: " + "; ".join(parts)


def _verify(args: argparse.Namespace) -> int:
    verify_many = records_verifier(checked_jobs(args.jobs))
    return verify_file.run_verify(args, verify_many=verify_many)


def _audit(args: argparse.Namespace) -> int:
    given = [] if args.root_path is None else [args.root_path]
    root = Path(verify_file.folder_argument(given, args.root, "evidence root")[0])
    if not _is_bag(root):
        _evidence_root(root, "audit")
    held = _head(args.head)
    tsa_ca = None if args.tsa_ca is None else _tsa_ca(args.tsa_ca, root)
    with AuditRun(root, held=held, tsa_ca=tsa_ca, jobs=checked_jobs(args.jobs)) as run:
        for unread in run.unread:
            if unread.code is LogCode.UNREADABLE or (
                unread.code is LogCode.TOO_LARGE and unread.index is None
            ):
                _say(f"error: the log was not read ({unread.detail}); see the report", err=True)
        if args.json:
            return _audit_json(run, held is not None)
        return _audit_text(run, held is not None)


def _audit_json(run: AuditRun, held: bool) -> int:
    """The ``--json`` report: it keeps one short entry per record until it is printed."""
    records: list[dict[str, Any]] = []
    statuses: list[tuple[str, LogStatus | None]] = []
    for record, status in run.records():
        records.append(record.to_json())
        statuses.append((record.evidence_id, status))
    log_findings = list(run.log_findings())
    stamps = run.timestamps()
    code = run.exit_code(stamps)
    _print_json(
        {
            "format": "notanda-evidence-audit",
            "format_version": AUDIT_FORMAT_VERSION,
            "checks": _checks_made(stamps, held),
            "head": run.head.to_json(),
            "log": [f.to_json() for f in log_findings],
            "log_status": dict(sorted(run.log_status(statuses).items())),
            "records": records,
            "summary": {
                **run.tally.summary(),
                "exit_code": code,
                "log_entries": run.entry_count,
                "timestamp_tokens": 0 if stamps is None else stamps.token_files,
            },
            "timestamps": {
                "ca_file": None if stamps is None else stamps.ca_file,
                "findings": [] if stamps is None else [f.to_json() for f in stamps.findings],
                "tokens": [] if stamps is None else [t.to_json() for t in stamps.tokens],
            },
            "warnings": [f.to_json() for f in run.root_findings],
        }
    )
    return code


def _audit_text(run: AuditRun, held: bool) -> int:
    """The text report, printed as it is made: memory does not grow with the records."""
    adopted = unlogged = 0
    for record, status in run.records():
        adopted += status is LogStatus.ADOPTED
        unlogged += status is LogStatus.UNLOGGED
        _say(f"{record.evidence_id}  {record.outcome.value}  {status or '-'}")
        for finding in record.findings:
            _say(
                f"    {finding.severity.value} {finding.code.value}"
                + (f" [{finding.file}]" if finding.file else "")
                + (f": {finding.detail}" if finding.detail else "")
            )
            for line in verify_file.remedy_lines(finding, "      "):
                print(line)
    for log_finding in run.log_findings():
        where = f" {log_finding.evidence_id}" if log_finding.evidence_id else ""
        at = f" (entry {log_finding.index})" if log_finding.index is not None else ""
        detail = f": {log_finding.detail}" if log_finding.detail else ""
        _say(f"{log_finding.severity.value} {log_finding.code.value}{where}{at}{detail}")
        for line in verify_file.remedy_lines(log_finding, "    "):
            print(line)
    stamps = run.timestamps()
    for stamp in () if stamps is None else stamps.findings:
        where = f" {stamp.file}" if stamp.file else ""
        detail = f": {stamp.detail}" if stamp.detail else ""
        _say(f"{stamp.severity.value} {stamp.code.value}{where}{detail}")
        for line in verify_file.remedy_lines(stamp, "    "):
            print(line)
    for stray in run.root_findings:
        _say(f"warning {stray.code.value}: {stray.file}")
        for line in verify_file.remedy_lines(stray, "    "):
            print(line)
    incomplete = run.tally.counts[verify_file.Outcome.INCOMPLETE.value]
    print(
        f"{run.tally.records} record(s), {run.entry_count} log entries, head {run.head}; "
        f"{adopted} adopted, {unlogged} unlogged, {incomplete} incomplete"
    )
    _say(_checks_sentence(run.tally.records, stamps, held))
    return run.exit_code(stamps)


def _cite(args: argparse.Namespace) -> int:
    receipts = verify_file.read_receipts_file(args.receipts) if args.receipts else {}
    try:
        citations = collect_citations(
            _root(args),
            args.ids,
            receipts=receipts,
            held=_head(args.head),
            allow_injected=args.allow_injected,
        )
    except CitationError as exc:
        print(f"refused: {verify_file.printable(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
    _emit(render(citations, CitationFormat(args.format)), args.output)
    return EXIT_OK


def _report(args: argparse.Namespace) -> int:
    receipts = verify_file.read_receipts_file(args.receipts) if args.receipts else {}
    report = collect_report(
        args.ids, _root(args), receipts=receipts, held=_head(args.head), file_name=args.file_name
    )
    try:
        _emit(render_report(report, args.format), args.output)
    except OSError as exc:
        raise _Usage(
            f"--output {args.output}: cannot be written ({type(exc).__name__})",
            "give --output a file in a folder you can write to",
        ) from exc
    for item in report.left_out:
        _say(f"left out {item.evidence_id}: {item.code}", err=True)
    references = sum(len(part.rows) for part in report.parts)
    _say(
        f"report: {len(report.parts)} check record(s), {references} reference(s),"
        f" {len(report.left_out)} record(s) left out",
        err=True,
    )
    return report.exit_code


def _find(args: argparse.Namespace) -> int:
    try:
        every, skipped = find_doi(_root(args), args.doi)
    except CitationError as exc:
        _say(f"refused: {exc}", err=True)
        return EXIT_FAILED
    matches = [m for m in every if args.allow_injected or not m.injected]
    injected = sorted({m.evidence_id for m in every if not args.allow_injected and m.injected})
    if args.json:
        _print_json(
            {
                "doi": args.doi,
                "format": "notanda-evidence-find",
                "format_version": FIND_FORMAT_VERSION,
                "left_out": [{"evidence_id": i, "reason": "injected_provider"} for i in injected],
                "matches": [m.to_json() for m in matches],
                "skipped": [
                    {"evidence_id": r.evidence_id, "outcome": r.outcome.value} for r in skipped
                ],
            }
        )
        return EXIT_OK if matches else EXIT_FAILED
    printable = verify_file.printable
    for match in matches:
        logged = "logged" if match.logged else "unlogged"
        mark = "  injected" if match.injected else ""
        print(
            f"{match.evidence_id}  receipt {match.receipt}  result #{match.position + 1}  "
            f"{printable(match.requested_at or '-')}  {logged}{mark}"
        )
        if match.title:
            print(f"    {printable(match.title)}")
    for record in skipped:
        print(
            f"not searched: {record.evidence_id}  {record.outcome.value}"
            f" (notanda-evidence verify {printable(record.path or record.evidence_id)} says why)"
        )
    print(f"{len(matches)} verified record(s) returned {printable(args.doi)}")
    if skipped:
        print(f"{len(skipped)} record(s) not searched because they do not verify (listed above)")
    if injected:
        print(
            f"{len(injected)} record(s) made through an injected (test) provider left out:"
            " give --allow-injected to include them"
        )
    return EXIT_OK if matches else EXIT_FAILED


def _prove(args: argparse.Namespace) -> int:
    try:
        if args.verify:
            try:
                document = read_proof(args.verify)
            except NotRegularFileError as exc:
                raise _Usage(
                    f"{args.verify}: not a regular file, so not a proof",
                    "give the proof file prove wrote",
                ) from exc
            except OSError as exc:
                raise _Usage(
                    f"{args.verify}: not a readable proof ({type(exc).__name__})",
                    "give the proof file prove wrote, readable by you",
                ) from exc
            proof = verify_proof(document, record=args.record, held=_head(args.head))
            _say(
                f"verified: {proof.evidence_id} (receipt {proof.receipt}) is entry {proof.index} "
                f"of the log with head {proof.head}"
            )
            return EXIT_OK
        if not args.evidence_id:
            raise _Usage("nothing to prove", "give an evidence ID, or --verify PROOF")
        proof = make_proof(_root(args), args.evidence_id, size=args.size)
    except ProofError as exc:
        _say(f"proof failed: {exc}", err=True)
        return EXIT_FAILED
    _emit(json.dumps(proof.to_json(), indent=2, sort_keys=True) + "\n", args.output)
    return EXIT_OK


def _adopt(args: argparse.Namespace) -> int:
    if args.min_age is not None and not args.min_age >= 0:
        raise _Usage("--min-age is negative", "give --min-age a number of seconds, 0 or more")
    min_age = INCOMPLETE_MIN_AGE_S if args.min_age is None else args.min_age
    report = adopt(_root(args), dry_run=args.dry_run, min_age_s=min_age)
    verb = "would adopt" if args.dry_run else "adopted"
    for evidence_id, index in report.adopted:
        _say(f"{verb} {evidence_id}" + (f" as entry {index}" if index >= 0 else ""))
    for evidence_id, outcome in report.refused:
        _say(f"refused {evidence_id}: {outcome}", err=True)
    if report.left:
        _say(
            f"left {len(report.left)} incomplete record(s) touched in the last {min_age:g} s "
            "alone: they may still be being written (--min-age SECONDS changes this)"
        )
    if report.head is not None:
        _say(f"head {report.head}")
    return EXIT_FAILED if report.refused else EXIT_OK


def _prune(args: argparse.Namespace) -> int:
    if not args.ids and args.incomplete_older_than is None:
        raise _Usage("nothing to prune", "give evidence IDs or --incomplete-older-than HOURS")
    try:
        done = prune(
            _root(args),
            args.ids,
            reason=args.reason,
            dry_run=args.dry_run,
            incomplete_older_than_s=(
                None if args.incomplete_older_than is None else args.incomplete_older_than * 3600
            ),
        )
    except ValueError as exc:
        raise _Usage(str(exc), "see notanda-evidence prune --help") from exc
    for evidence_id, index in done:
        if args.dry_run:
            _say(f"would prune {evidence_id}")
        else:
            _say(f"pruned {evidence_id} (tombstone entry {index})")
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    try:
        count, skipped = export_bagit(_root(args), args.bagit, ids=args.ids)
    except FileExistsError as exc:
        raise _Usage(
            f"{args.bagit}: already exists", "give --bagit a path that does not exist yet"
        ) from exc
    for evidence_id, outcome in skipped:
        _say(f"left out {evidence_id}: {outcome}", err=True)
    _say(f"exported {count} record(s) to {args.bagit}")
    return EXIT_FAILED if skipped else EXIT_OK


# ------------------------------------------------------------------ parser


def _add_root(parser: argparse.ArgumentParser, *, default_from_env: bool = True) -> None:
    default = f" (default: ${ROOT_VARIABLE})" if default_from_env else ""
    parser.add_argument("--root", metavar="DIR", help=f"evidence root{default}")


def _add_jobs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="processes that verify the records (default: every CPU this process may use; "
        "1: this process alone); the report is the same for any N",
    )


def _parser() -> verify_file.UsageParser:
    parser = verify_file.UsageParser(
        prog="notanda-evidence",
        description="Verify, audit and cite Notanda evidence records offline.",
        epilog="Exit codes: 0 intact, 1 a check failed, 2 usage error, 3 incomplete, unlogged"
        " or not checkable.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(
        name: str, help_text: str, run: Callable[[argparse.Namespace], int]
    ) -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name, help=help_text, description=help_text[0].upper() + help_text[1:] + "."
        )
        sub.set_defaults(run=run)
        return sub

    verify = command("verify", "verify record directories or whole evidence roots", _verify)
    verify_file.add_verify_arguments(verify)
    _add_jobs(verify)

    audit = command("audit", "verify every record and the log of an evidence root", _audit)
    audit.add_argument("root_path", nargs="?", metavar="ROOT", help="evidence root (or --root)")
    _add_root(audit, default_from_env=False)
    audit.add_argument(
        "--head", metavar="SIZE:ROOT", help="a head you kept: prove the log extends it"
    )
    audit.add_argument(
        "--tsa-ca",
        metavar="FILE",
        help="PEM bundle of trusted TSA CAs: also check each time-stamp token's signature"
        " (runs openssl ts -verify)",
    )
    audit.add_argument("--json", action="store_true", help="print the versioned JSON report")
    _add_jobs(audit)

    cite = command("cite", "print citations built only from verified records", _cite)
    cite.add_argument(
        "ids",
        nargs="+",
        metavar="ID[:WORK]",
        help="evidence ID, optionally with one OpenAlex work ID",
    )
    _add_root(cite)
    cite.add_argument(
        "--format",
        choices=[fmt.value for fmt in CitationFormat],
        default=CitationFormat.BIBTEX.value,
    )
    cite.add_argument("--receipts", metavar="FILE", help="file of 'EVIDENCE_ID RECEIPT' lines")
    cite.add_argument(
        "--head", metavar="SIZE:ROOT", help="require every record under this held head"
    )
    cite.add_argument(
        "--allow-injected",
        action="store_true",
        help="accept records made through an injected (test) provider",
    )
    cite.add_argument("--output", metavar="FILE", help="write to FILE instead of standard output")

    report = command(
        "report", "write an HTML or Markdown report of verified reference checks", _report
    )
    report.add_argument("ids", nargs="+", metavar="ID", help="evidence ID of a check (or part)")
    _add_root(report)
    report.add_argument("--format", choices=[f.value for f in ReportFormat], default="html")
    report.add_argument("--output", metavar="FILE", help="write to FILE instead of standard output")
    report.add_argument("--receipts", metavar="FILE", help="file of 'EVIDENCE_ID RECEIPT' lines")
    report.add_argument(
        "--head", metavar="SIZE:ROOT", help="require every record under this held head"
    )
    report.add_argument(
        "--file-name", metavar="NAME", help="the bibliography's name to show (not in the records)"
    )

    find = command("find", "list every verified record that returned a DOI", _find)
    find.add_argument("--doi", required=True, help="the DOI, with or without https://doi.org/")
    _add_root(find)
    find.add_argument(
        "--allow-injected",
        action="store_true",
        help="include records made through an injected (test) provider, each marked injected",
    )
    find.add_argument("--json", action="store_true", help="print JSON")

    prove = command(
        "prove", "prove one record's inclusion in the log, or check such a proof", _prove
    )
    prove.add_argument("evidence_id", nargs="?", metavar="ID")
    _add_root(prove)
    prove.add_argument("--size", type=int, metavar="N", help="prove against the head of N entries")
    prove.add_argument("--output", metavar="FILE", help="write the proof to FILE")
    prove.add_argument("--verify", metavar="PROOF", help="check a proof file instead")
    prove.add_argument("--record", metavar="DIR", help="with --verify: also verify this record")
    prove.add_argument("--head", metavar="SIZE:ROOT", help="with --verify: the head you hold")

    adopt = command("adopt", "log sealed records that have no log entry, as adopted", _adopt)
    _add_root(adopt)
    adopt.add_argument("--dry-run", action="store_true", help="only say what would be adopted")
    adopt.add_argument(
        "--min-age",
        type=float,
        metavar="SECONDS",
        help="leave alone incomplete records touched this recently "
        f"(default {INCOMPLETE_MIN_AGE_S:g}: the longest tool deadline plus the shutdown grace)",
    )

    prune = command("prune", "delete records, each after logging a tombstone", _prune)
    prune.add_argument("ids", nargs="*", metavar="ID")
    _add_root(prune)
    prune.add_argument("--reason", required=True, help="why (stored in each tombstone)")
    prune.add_argument(
        "--incomplete-older-than",
        type=float,
        metavar="HOURS",
        help="also prune incomplete records untouched for this long",
    )
    prune.add_argument("--dry-run", action="store_true", help="only say what would be pruned")

    export = command("export", "export intact records and the log as a BagIt bag", _export)
    export.add_argument("ids", nargs="*", metavar="ID", help="only these records (default: all)")
    _add_root(export)
    export.add_argument("--bagit", required=True, metavar="OUT", help="the bag folder to create")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code (141, quietly, if its output was closed)."""
    return verify_file.quiet_broken_pipe(lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "verify":
        verify_file.require_folder(parser.innermost(args), args)
    try:
        code: int = args.run(args)
    except _Usage as exc:
        for line in exc.lines():
            print(line, file=sys.stderr)
        code = EXIT_USAGE
    except (EvidenceStorageError, EvidenceLogError) as exc:
        _say(f"error: {exc}", err=True)
        code = EXIT_FAILED
    except BrokenPipeError:
        raise  # the reader left: quiet_broken_pipe answers it, never as a bug
    except Exception as exc:  # A bug must never pass for exit 1, a finding.
        _say(
            f"error: notanda-evidence {args.command} failed unexpectedly "
            f"({type(exc).__name__}) and reached no verdict; please report it",
            err=True,
        )
        code = EXIT_USAGE
    sys.stdout.flush()
    return code
