"""Reports of reference checks for a person: one HTML file or GitHub-flavoured Markdown.

A report is built only from check records that verify (the full pass, the
receipt the caller holds, the log and a held head, as ``cite`` takes its
works: :func:`._cite._verified`). A record that does not is named in the
report with the reason, and none of its rows are shown. Nothing is fetched.

Every value from the bibliography or from OpenAlex is untrusted. In HTML it
is escaped with :func:`html.escape` after every non-printable character
(control, bidirectional, zero-width) is replaced by a visible ``U+XXXX``
mark; the page carries a Content-Security-Policy that allows no script, and
the only links are ones built here, to ``https://doi.org/`` and
``https://openalex.org/``. In Markdown every character that could start
inline markup (emphasis, code, links, autolinks, raw HTML, a table cell's
end, math) is backslash-escaped, and line breaks become visible marks.

The same records give the same bytes: the report holds no time of its own.
"""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ._cite import CitationError, _logged_receipts, _verified, normalize_doi
from ._log import Head
from .verify_file import (
    EXIT_FAILED,
    EXIT_INCOMPLETE,
    EXIT_OK,
    NOTICE,
    VERIFIED,
    Outcome,
    is_check_record,
)

__all__ = ["ReportCode", "ReportFormat", "build_report"]


class ReportFormat(StrEnum):
    """Output formats of ``report``."""

    HTML = "html"
    MARKDOWN = "md"


class ReportCode(StrEnum):
    """Why a record is left out of a report, beside the codes ``cite`` refuses with."""

    #: The record verifies, but it is not a reference check (``tool`` is not
    #: ``check_references``): a search record has no references to report.
    NOT_A_CHECK = "not_a_check"


#: How each verdict is shown: a badge colour (HTML), a mark (Markdown) and a
#: few words; the meanings are ``docs/reference-checking.md``'s. A verdict
#: not listed (from a later writer) is shown by its name in grey.
_VERDICTS: dict[str, tuple[str, str, str]] = {
    VERIFIED: ("#1a7f37", "\U0001f7e2", "matches one OpenAlex work; no field differs"),
    "metadata_mismatch": (
        "#9a6700",
        "\U0001f7e0",
        "a work matches, but the fields listed differ from it",
    ),
    "not_found": ("#cf222e", "\U0001f534", "no OpenAlex work matches, as searched"),
    "ambiguous": ("#8250df", "\U0001f7e3", "several candidates, none decisive"),
    "unchecked": ("#57606a", "\u26aa", "no verdict: the request failed or time ran out"),
    "unparsed": ("#953800", "\U0001f7e4", "not readable as a reference"),
}
_UNKNOWN_VERDICT = ("#57606a", "\u26ab", "a verdict this report does not know")

#: The fields a check compares (``differs``): how each is read from the
#: parsed reference and from the matched work.
_FIELDS = ("doi", "title", "authors", "year", "venue")
_WORK_KEYS = {"doi": "doi", "title": "title", "year": "publication_year", "venue": "venue"}
#: At most this many characters of one value are shown; the record holds the rest.
_MAX_SHOWN = 2000
#: At most this many authors of one list are shown.
_MAX_AUTHORS = 8
_OPENALEX_ID = re.compile(r"(?:https://openalex\.org/)?(W[0-9]{1,15})")
_DOI = re.compile(r"10\.[0-9]{4,9}/\S+")

#: Keys of the parts of one large run (``docs/evidence-format.md`` section 2.7):
#: ``request.json``'s ``run`` object, a parsed reference's ``file_index`` and
#: ``response.json``'s ``stopped``; each is shown when present and never required.
RUN = "run"
RUN_ID = "run_id"
FILE_SHA256 = "file_sha256"
FILE_BYTES = "file_bytes"
PART_NUMBER = "part"
PART_COUNT = "parts"
FILE_INDEX = "file_index"
STOPPED = "stopped"


@dataclass(frozen=True)
class Row:
    """One reference of one part, as the report shows it."""

    index: int | None
    file_index: int | None
    key: str | None
    verdict: str
    error: str | None
    retracted: bool
    written: Mapping[str, Any]
    work: Mapping[str, Any] | None
    differs: tuple[str, ...]


@dataclass(frozen=True)
class Part:
    """One verified check record."""

    evidence_id: str
    receipt: str
    #: The record's log entry index, or None when the log does not hold it.
    logged: int | None
    request: Mapping[str, Any]
    response: Mapping[str, Any]
    rows: tuple[Row, ...]

    @property
    def injected(self) -> bool:
        """Made through an injected (test) provider, not OpenAlex."""
        return self.request.get("provider_mode") == "injected"

    def get(self, key: str) -> Any:
        """A key of a large run's part (``request.json``'s ``run`` object), or None."""
        run = self.request.get(RUN)
        return run.get(key) if isinstance(run, dict) else None


@dataclass(frozen=True)
class LeftOut:
    """A record that does not verify, or is not a check: named, its rows left out."""

    evidence_id: str
    code: str
    detail: str = ""


@dataclass(frozen=True)
class CheckReport:
    """What a report shows: the verified parts and the records left out."""

    root: str
    parts: tuple[Part, ...]
    left_out: tuple[LeftOut, ...]
    file_name: str | None = None
    log_problem: str | None = field(default=None)

    @property
    def exit_code(self) -> int:
        """``docs/errors.md``: 1 a record left out, 3 one incomplete or unlogged, else 0."""
        if any(item.code != Outcome.INCOMPLETE for item in self.left_out):
            return EXIT_FAILED
        if self.left_out or any(part.logged is None for part in self.parts):
            return EXIT_INCOMPLETE
        return EXIT_OK


# ------------------------------------------------------------------ gathering


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _rows(request: Mapping[str, Any], response: Mapping[str, Any]) -> tuple[Row, ...]:
    parsed = request.get("parsed")
    written_list = parsed.get("references") if isinstance(parsed, dict) else None
    by_index: dict[int, Mapping[str, Any]] = {}
    for entry in written_list if isinstance(written_list, list) else []:
        if isinstance(entry, dict) and (position := _int(entry.get("index"))) is not None:
            by_index.setdefault(position, entry)
    rows = []
    references = response.get("references")
    for entry in references if isinstance(references, list) else []:
        if not isinstance(entry, dict):
            continue
        index = _int(entry.get("index"))
        written = by_index.get(index, {}) if index is not None else {}
        file_index = _int(entry.get(FILE_INDEX))
        if file_index is None:
            file_index = _int(written.get(FILE_INDEX))
        differs = entry.get("differs")
        work = entry.get("work")
        rows.append(
            Row(
                index=index,
                file_index=file_index,
                key=_str(entry.get("key")) or _str(written.get("key")),
                verdict=_str(entry.get("verdict")) or "?",
                error=_str(entry.get("error")),
                retracted=entry.get("retracted") is True,
                written=written,
                work=work if isinstance(work, dict) else None,
                differs=tuple(
                    name
                    for name in (differs if isinstance(differs, list) else [])
                    if name in _FIELDS
                ),
            )
        )
    return tuple(rows)


def collect_report(
    evidence_ids: Sequence[str],
    root: Path,
    *,
    receipts: Mapping[str, str] | None = None,
    held: Head | None = None,
    file_name: str | None = None,
) -> CheckReport:
    """Verify each record and gather what the report shows; nothing raises for a bad record."""
    if isinstance(evidence_ids, str):
        raise TypeError("evidence_ids is a sequence of evidence IDs, not one string")
    base = Path(root)
    wanted = list(dict.fromkeys(evidence_ids))
    try:
        logged, _ = _logged_receipts(base, held)
    except CitationError as exc:
        problem = exc.code.value
        return CheckReport(
            str(root),
            (),
            tuple(LeftOut(e, problem, "run notanda-evidence audit") for e in wanted),
            file_name,
            problem,
        )
    receipts = receipts or {}
    parts: list[Part] = []
    left_out: list[LeftOut] = []
    for evidence_id in wanted:
        try:
            result = _verified(
                base,
                evidence_id=evidence_id,
                receipt=receipts.get(evidence_id),
                logged=logged,
                held=held,
                allow_injected=True,
                full=True,
            )
        except CitationError as exc:
            left_out.append(LeftOut(evidence_id, exc.code.value))
            continue
        request, response = result.request or {}, result.response or {}
        if not is_check_record(request):
            tool = _str(request.get("tool"))
            left_out.append(
                LeftOut(evidence_id, ReportCode.NOT_A_CHECK, f"tool: {tool}" if tool else "")
            )
            continue
        entry = logged.get(evidence_id)
        parts.append(
            Part(
                evidence_id,
                result.receipt or "",
                None if entry is None else entry[0],
                request,
                response,
                _rows(request, response),
            )
        )
    return CheckReport(str(root), tuple(_in_run_order(parts)), tuple(left_out), file_name)


def _in_run_order(parts: Sequence[Part]) -> list[Part]:
    """The parts of one run together, by part number; runs and lone checks as given."""
    groups: dict[str, list[Part]] = {}
    for part in parts:
        groups.setdefault(_run_key(part), []).append(part)
    ordered: list[Part] = []
    for members in groups.values():
        ordered += sorted(members, key=lambda p: _int(p.get(PART_NUMBER)) or 0)
    return ordered


def _run_key(part: Part) -> str:
    run_id = _str(part.get(RUN_ID))
    return f"run:{run_id}" if run_id else f"check:{part.evidence_id}"


# ------------------------------------------------------------------ the model of the page


@dataclass(frozen=True)
class _File:
    """One file checked: the parts of one run, or one lone check."""

    run_id: str | None
    sha256: str | None
    sha256_of: str
    size: int | None
    parts: tuple[Part, ...]
    planned: int | None
    stopped: str | None

    @property
    def absent(self) -> tuple[list[int], list[int]]:
        """Planned parts not here: ``(missing, never run)``: after a stop, later ones never ran."""
        present = {n for p in self.parts if (n := _int(p.get(PART_NUMBER))) is not None}
        last = max(present, default=0)
        wanted = [n for n in range(1, (self.planned or 0) + 1) if n not in present]
        if not self.stopped:
            return wanted, []
        return [n for n in wanted if n < last], [n for n in wanted if n > last]

    def notes(self) -> list[str]:
        """What a reader must know about the file's parts as a whole."""
        missing, never_run = self.absent
        notes = []
        if missing:
            notes.append(
                "Parts not in this report (not asked for, or left out below): "
                + ", ".join(str(n) for n in missing)
                + ". The counts cover only the parts shown."
            )
        if self.stopped:
            notes.append(
                f"The run stopped early ({self.stopped})"
                + (
                    f": parts {never_run[0]} to {never_run[-1]} never ran, and their"
                    " references were not checked."
                    if never_run
                    else "."
                )
            )
        if any(p.injected for p in self.parts):
            notes.append("Some parts were made through an injected (test) provider, not OpenAlex.")
        return notes

    @property
    def times(self) -> tuple[str, str] | None:
        found = sorted(t for p in self.parts if (t := _str(p.request.get("requested_at"))))
        return (found[0], found[-1]) if found else None


def _files(parts: Sequence[Part]) -> list[_File]:
    groups: dict[str, list[Part]] = {}
    for part in parts:
        groups.setdefault(_run_key(part), []).append(part)
    files = []
    for members in groups.values():
        first, last = members[0], members[-1]
        run_id = _str(first.get(RUN_ID))
        whole = _str(first.get(FILE_SHA256))
        files.append(
            _File(
                run_id=run_id,
                sha256=whole or _str(first.get("text_sha256")),
                sha256_of="the file" if whole else "the text checked (UTF-8)",
                size=_int(first.get(FILE_BYTES)) if whole else _int(first.get("text_bytes")),
                parts=tuple(members),
                planned=_int(first.get(PART_COUNT)),
                stopped=_str(last.response.get(STOPPED)),
            )
        )
    return files


def _counts(parts: Iterable[Part]) -> dict[str, int]:
    counts = {verdict: 0 for verdict in _VERDICTS}
    for part in parts:
        for row in part.rows:
            counts[row.verdict] = counts.get(row.verdict, 0) + 1
    return counts


def _part_label(part: Part) -> str:
    number, count = _int(part.get(PART_NUMBER)), _int(part.get(PART_COUNT))
    if number is not None and count is not None:
        return f"Part {number} of {count}"
    if number is not None:
        return f"Part {number}"
    return "Check"


def _part_state(part: Part) -> list[str]:
    """What a reader must know about a part beyond its rows."""
    notes = []
    response = part.response
    if response.get("status") != "ok":
        reason = _str(response.get("reason")) or _str(response.get("storage_reason"))
        error = _str(response.get("error")) or "error"
        notes.append(
            f"The check failed as a whole or was refused: {error}"
            + (f" ({reason})" if reason else "")
            + "; it has no verdicts."
        )
    if response.get("cancelled") is True:
        notes.append("The check was cancelled: the references not reached are unchecked.")
    if stopped := _str(response.get(STOPPED)):
        notes.append(f"The run stopped early after this part: {stopped}.")
    if part.injected:
        notes.append(
            "Made through an injected (test) provider, not OpenAlex: these answers"
            " are not OpenAlex's."
        )
    if part.logged is None:
        notes.append("Not in the evidence log: run notanda-evidence adopt, then audit.")
    return notes


def _written_value(row: Row, name: str) -> str | None:
    written = row.written
    if name == "authors":
        authors = written.get("authors")
        names = [
            text
            for a in (authors if isinstance(authors, list) else [])
            if isinstance(a, dict)
            if (text := _str(a.get("text")) or _str(a.get("family")))
        ]
        more = written.get("authors_truncated") is True
        return _name_list(names, more)
    value = written.get(name)
    if isinstance(value, bool):
        return None
    if isinstance(value, (str, int)):
        return str(value)
    return None


def _work_value(work: Mapping[str, Any] | None, name: str) -> str | None:
    if work is None:
        return None
    if name == "authors":
        authors = work.get("authors")
        names = [
            text
            for a in (authors if isinstance(authors, list) else [])
            if isinstance(a, dict)
            if (text := _str(a.get("name")))
        ]
        total = _int(work.get("authors_total"))
        more = work.get("authors_truncated_by_provider") is True or (
            total is not None and total > len(names)
        )
        return _name_list(names, more)
    value = work.get(_WORK_KEYS[name])
    if isinstance(value, bool):
        return None
    if isinstance(value, (str, int)):
        return str(value)
    return None


def _name_list(names: list[str], more: bool) -> str | None:
    if not names and not more:
        return None
    shown = names[:_MAX_AUTHORS]
    extra = " et al." if more or len(names) > len(shown) else ""
    return "; ".join(shown) + extra


def _doi_url(doi: str | None) -> str | None:
    """``https://doi.org/`` and the DOI percent-encoded, for a value that is a DOI."""
    if doi is None:
        return None
    text = normalize_doi(doi)
    if not _DOI.fullmatch(text):
        return None
    return "https://doi.org/" + quote(text, safe="/")


def _openalex_url(work: Mapping[str, Any] | None) -> str | None:
    value = _str(work.get("openalex_id")) if work is not None else None
    match = _OPENALEX_ID.fullmatch(value) if value else None
    return f"https://openalex.org/{match.group(1)}" if match else None


def _links(row: Row) -> list[tuple[str, str]]:
    """``(label, https URL)`` pairs: the matched work's DOI and OpenAlex page, the DOI written."""
    links: list[tuple[str, str]] = []
    work_doi = _doi_url(_work_value(row.work, "doi"))
    if work_doi:
        links.append(("DOI", work_doi))
    if openalex := _openalex_url(row.work):
        links.append(("OpenAlex", openalex))
    written_doi = _doi_url(_written_value(row, "doi"))
    if written_doi and written_doi != work_doi:
        links.append(("DOI as written", written_doi))
    return links


def _reference_text(row: Row) -> list[tuple[str, str]]:
    """``(label, value)`` pairs of the reference as written."""
    shown: list[tuple[str, str]] = []
    title = _written_value(row, "title")
    if title:
        shown.append(("title", title))
    for name in ("authors", "year", "venue", "doi"):
        if value := _written_value(row, name):
            shown.append((name, value))
    if not title:
        raw = _str(row.written.get("raw"))
        if raw:
            shown.append(("as written", raw))
    return shown


def _clip(text: str) -> str:
    if len(text) <= _MAX_SHOWN:
        return text
    return f"{text[:_MAX_SHOWN]}… ({len(text) - _MAX_SHOWN} more characters in the record)"


def _visible(text: str, mark: str = "U+{:04X}") -> list[tuple[bool, str]]:
    """*text* clipped, split into printable runs ``(False, run)`` and marks ``(True, "U+202E")``."""
    pieces: list[tuple[bool, str]] = []
    run: list[str] = []
    for ch in _clip(text):
        if ch.isprintable():
            run.append(ch)
            continue
        if run:
            pieces.append((False, "".join(run)))
            run = []
        pieces.append((True, mark.format(ord(ch))))
    if run:
        pieces.append((False, "".join(run)))
    return pieces


def _verify_commands(report: CheckReport) -> list[str]:
    root = report.root
    commands = [
        "notanda-evidence verify --full "
        f"{shlex.quote(str(Path(root) / part.evidence_id))} --receipt {part.receipt}"
        for part in report.parts
    ]
    commands.append(f"notanda-evidence audit {shlex.quote(root)}")
    return commands


def _row_number(row: Row) -> str:
    if row.file_index is not None:
        return f"#{row.file_index}"
    return "#?" if row.index is None else f"#{row.index}"


def _verdict_words(verdict: str) -> str:
    return _VERDICTS.get(verdict, _UNKNOWN_VERDICT)[2]


# ------------------------------------------------------------------ HTML

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2em auto;
max-width:78em;padding:0 1em;color:#1f2328;background:#fff}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #d0d7de}
h3{font-size:1.05em;margin-top:1.5em}
table{border-collapse:collapse;width:100%;margin:.5em 0}
th,td{border:1px solid #d0d7de;padding:.35em .5em;text-align:left;vertical-align:top;
overflow-wrap:anywhere}
th{background:#f6f8fa}
.facts th{width:16em}
.refs td:nth-child(1),.refs td:nth-child(6),.diff th{white-space:nowrap}
.refs td:nth-child(2){min-width:7em;overflow-wrap:break-word}
.refs td:nth-child(3){min-width:11em}
.refs td:nth-child(4){width:30%}.refs td:nth-child(5){width:35%}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.badge{display:inline-block;padding:.1em .55em;border-radius:1em;color:#fff;font-weight:600;
font-size:.85em;white-space:nowrap}
.words{display:block;color:#59636e;font-size:.85em}
.notice{border:2px solid #9a6700;background:#fff8c5;padding:.6em .8em;border-radius:.4em}
.warn{border-left:4px solid #cf222e;background:#ffebe9;padding:.4em .8em;margin:.4em 0}
.note{border-left:4px solid #9a6700;background:#fff8c5;padding:.4em .8em;margin:.4em 0}
.mark{border:1px solid #cf222e;color:#cf222e;border-radius:.2em;padding:0 .2em;
font-family:ui-monospace,monospace;font-size:.8em;white-space:nowrap}
.diff td{border:none;border-top:1px solid #eaeef2;padding:.15em .4em}
.diff th{background:none;border:none;font-weight:600;padding:.15em .4em}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;white-space:pre-wrap}
.lbl{color:#59636e}
"""

#: No script, no external fetch, no form, no base: only the inline style.
_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)


def _h(text: str) -> str:
    """Escaped HTML for an untrusted value; each non-printable character a visible mark."""
    return "".join(
        f'<span class="mark">{html.escape(piece)}</span>' if marked else html.escape(piece)
        for marked, piece in _visible(text)
    )


def _h_link(label: str, url: str) -> str:
    # Every URL is built here from a checked DOI or W-number; https only.
    if not url.startswith("https://"):  # pragma: no cover - guarded by construction
        return _h(label)
    return f'<a href="{html.escape(url)}" rel="noreferrer noopener">{html.escape(label)}</a>'


def _h_badge(verdict: str) -> str:
    colour = _VERDICTS.get(verdict, _UNKNOWN_VERDICT)[0]
    return f'<span class="badge" style="background:{colour}">{_h(verdict)}</span>'


def _h_counts(counts: Mapping[str, int]) -> str:
    cells = "".join(
        f"<td>{_h_badge(verdict)} <strong>{count}</strong></td>"
        for verdict, count in counts.items()
    )
    return f'<table class="counts"><tr>{cells}</tr></table>'


def _h_row(row: Row) -> str:
    verdict = f'{_h_badge(row.verdict)}<span class="words">{_h(_verdict_words(row.verdict))}</span>'
    if row.retracted:
        verdict += f' <span class="badge" style="background:#cf222e">{_h("RETRACTED")}</span>'
    if row.error:
        verdict += f'<span class="words">error: <code>{_h(row.error)}</code></span>'
    written = "<br>".join(
        f'<span class="lbl">{html.escape(label)}:</span> {_h(value)}'
        for label, value in _reference_text(row)
    )
    if row.differs:
        lines = "".join(
            f"<tr><th>{html.escape(name)}</th><td>{_h(_written_value(row, name) or '—')}</td>"
            f"<td>{_h(_work_value(row.work, name) or '—')}</td></tr>"
            for name in row.differs
        )
        differs = (
            '<table class="diff"><tr><th></th><th>as written</th><th>OpenAlex</th></tr>'
            f"{lines}</table>"
        )
    elif row.work is not None:
        differs = f'<span class="lbl">OpenAlex:</span> {_h(_work_value(row.work, "title") or "—")}'
    else:
        differs = ""
    links = "<br>".join(_h_link(label, url) for label, url in _links(row))
    key = f"<code>{_h(row.key)}</code>" if row.key else "—"
    return (
        f"<tr><td>{html.escape(_row_number(row))}</td><td>{key}</td><td>{verdict}</td>"
        f"<td>{written}</td><td>{differs}</td><td>{links}</td></tr>"
    )


def render_html(report: CheckReport) -> str:
    """The report as one self-contained HTML page (no script, no external asset)."""
    files = _files(report.parts)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Notanda reference check report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Reference check report</h1>",
        f'<p class="notice" id="notice"><strong>{html.escape(NOTICE)}</strong> Everything'
        " below that comes from the bibliography or from OpenAlex is shown as text; characters"
        ' that do not print are shown as <span class="mark">U+XXXX</span>.</p>',
        "<p>Built by <code>notanda-evidence report</code> only from evidence records that"
        " verified (full pass, receipts, the log): positions (<code>#</code>) are 0-based,"
        " as in the records.</p>",
    ]
    out.append('<h2 id="checked">What was checked</h2>')
    if not files:
        out.append("<p>No verified check record: nothing to show.</p>")
    for checked in files:
        out.append(_h_file(report, checked))
    if report.left_out:
        out.append('<h2 id="left-out">Records left out</h2>')
        if report.log_problem:
            out.append(
                f'<p class="warn">The evidence log did not check out ({_h(report.log_problem)}):'
                " no record can be confirmed against it. Run notanda-evidence audit.</p>"
            )
        out.append(
            "<p>These records did not verify, or are not reference checks, so none of their"
            " rows are shown.</p><table><tr><th>evidence ID</th><th>reason</th></tr>"
        )
        for item in report.left_out:
            detail = f" ({_h(item.detail)})" if item.detail else ""
            out.append(
                f'<tr><td class="mono">{_h(item.evidence_id)}</td>'
                f"<td><code>{_h(item.code)}</code>{detail}</td></tr>"
            )
        out.append("</table>")
    if report.parts:
        out.append('<h2 id="references">References</h2>')
    for part in report.parts:
        out.append(
            f'<h3 id="part-{html.escape(part.evidence_id)}">{html.escape(_part_label(part))}:'
            f' evidence ID <span class="mono">{html.escape(part.evidence_id)}</span></h3>'
            f'<p>receipt <span class="mono">{html.escape(part.receipt)}</span>'
            + (f"; log entry {part.logged}" if part.logged is not None else "")
            + (f"; checked {_h(t)}" if (t := _str(part.request.get("requested_at"))) else "")
            + "</p>"
        )
        for note in _part_state(part):
            out.append(f'<p class="note">{_h(note)}</p>')
        if part.rows:
            out.append(
                '<table class="refs"><tr><th>#</th><th>key</th><th>verdict</th>'
                "<th>reference as written</th><th>what differs</th><th>links</th></tr>"
            )
            out += [_h_row(row) for row in part.rows]
            out.append("</table>")
    out.append('<h2 id="verify">How to verify this report</h2>')
    out.append(
        "<p>Each part is a sealed evidence record; the commands below check it with its"
        " receipt, including that every matched work is in the OpenAlex answer the record"
        " stored (the full pass), and then the whole evidence log. The single-file verifier"
        " <code>verify_file.py</code> takes the same <code>--full PATH --receipt R</code>."
        " Compare the SHA-256 above with <code>sha256sum</code> of the bibliography.</p>"
    )
    out.append(f"<pre>{chr(10).join(_h(command) for command in _verify_commands(report))}</pre>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _h_file(report: CheckReport, checked: _File) -> str:
    rows = []
    if report.file_name:
        rows.append(("file", _h(report.file_name)))
    if checked.run_id:
        rows.append(("run", f'<span class="mono">{_h(checked.run_id)}</span>'))
    if checked.sha256:
        rows.append(
            (f"SHA-256 of {checked.sha256_of}", f'<span class="mono">{_h(checked.sha256)}</span>')
        )
    if checked.size is not None:
        rows.append(("bytes", str(checked.size)))
    if times := checked.times:
        rows.append(
            ("checked", _h(times[0] if times[0] == times[1] else f"{times[0]} to {times[1]}"))
        )
    references = sum(len(p.rows) for p in checked.parts)
    rows.append(("references", str(references)))
    if checked.planned is not None or len(checked.parts) > 1:
        planned = f" of {checked.planned} planned" if checked.planned is not None else ""
        rows.append(("parts", f"{len(checked.parts)}{planned}"))
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return (
        f'<table class="facts">{body}</table>'
        + "".join(f'<p class="warn">{_h(n)}</p>' for n in checked.notes())
        + _h_counts(_counts(checked.parts))
    )


# ------------------------------------------------------------------ Markdown

#: Every character that can start inline markup in GFM (emphasis, code, links,
#: images, autolinks, raw HTML, entities, strikethrough, a cell's end, math),
#: and a colon after a letter (``https:``, ``mailto:``, ``xmpp:``, which GFM
#: turns into links): each is written with a backslash, which CommonMark
#: renders as the character itself.
_MD_SPECIAL = re.compile(r"[\\`*_{}\[\]()<>!&|~@$^#]|(?<=[A-Za-z]):")
_WWW = re.compile(r"(?i)(w)(ww)\.")


def _md(text: str) -> str:
    """An untrusted value as Markdown text that renders as exactly that text, on one line."""
    out = []
    for marked, piece in _visible(text, "⟨U+{:04X}⟩"):
        if marked:
            out.append(piece)
            continue
        escaped = _MD_SPECIAL.sub(lambda m: "\\" + m.group(), piece)
        out.append(_WWW.sub(r"\1\2\\.", escaped))
    return "".join(out)


def _md_code(text: str) -> str:
    """A hex ID or receipt (checked by the verifier) in a code span."""
    return f"`{text}`" if re.fullmatch(r"[0-9a-f]+", text) else _md(text)


def _md_badge(verdict: str) -> str:
    mark = _VERDICTS.get(verdict, _UNKNOWN_VERDICT)[1]
    return f"{mark} **{_md(verdict)}**"


def _md_row(row: Row) -> str:
    verdict = f"{_md_badge(row.verdict)}<br>{_md(_verdict_words(row.verdict))}"
    if row.retracted:
        verdict += "<br>\u26d4 **RETRACTED**"
    if row.error:
        verdict += f"<br>error: {_md(row.error)}"
    written = "<br>".join(f"*{label}:* {_md(value)}" for label, value in _reference_text(row))
    if row.differs:
        differs = "<br>".join(
            f"**{name}:** {_md(_written_value(row, name) or '—')} → "
            f"{_md(_work_value(row.work, name) or '—')}"
            for name in row.differs
        )
    elif row.work is not None:
        differs = f"*OpenAlex:* {_md(_work_value(row.work, 'title') or '—')}"
    else:
        differs = ""
    links = "<br>".join(f"[{label}]({url})" for label, url in _links(row))
    key = _md(row.key) if row.key else "—"
    cells = (_row_number(row), key, verdict, written, differs, links)
    return "| " + " | ".join(cell or " " for cell in cells) + " |"


def render_markdown(report: CheckReport) -> str:
    """The report as GitHub-flavoured Markdown."""
    files = _files(report.parts)
    out = [
        "# Reference check report",
        "",
        f"> **{NOTICE}** Everything below that comes from the bibliography or from OpenAlex is"
        " shown as text; characters that do not print are shown as ⟨U+XXXX⟩.",
        "",
        "Built by `notanda-evidence report` only from evidence records that verified (full"
        " pass, receipts, the log); positions (`#`) are 0-based, as in the records.",
        "",
        "## What was checked",
        "",
    ]
    if not files:
        out += ["No verified check record: nothing to show.", ""]
    for checked in files:
        out += _md_file(report, checked)
    if report.left_out:
        out += ["## Records left out", ""]
        if report.log_problem:
            out += [
                f"**The evidence log did not check out ({_md(report.log_problem)}):** no record"
                " can be confirmed against it. Run `notanda-evidence audit`.",
                "",
            ]
        out += [
            "These records did not verify, or are not reference checks, so none of their rows"
            " are shown.",
            "",
            "| evidence ID | reason |",
            "|---|---|",
        ]
        for item in report.left_out:
            detail = f" ({_md(item.detail)})" if item.detail else ""
            out.append(f"| {_md_code(item.evidence_id)} | {_md(item.code)}{detail} |")
        out.append("")
    if report.parts:
        out += ["## References", ""]
    for part in report.parts:
        out += [
            f"### {_part_label(part)}: evidence ID `{part.evidence_id}`",
            "",
            f"receipt `{part.receipt}`"
            + (f"; log entry {part.logged}" if part.logged is not None else "")
            + (f"; checked {_md(t)}" if (t := _str(part.request.get("requested_at"))) else ""),
            "",
        ]
        for note in _part_state(part):
            out += [f"> **Note:** {_md(note)}", ""]
        if part.rows:
            out += [
                "| # | key | verdict | reference as written | what differs (as written → OpenAlex)"
                " | links |",
                "|---|---|---|---|---|---|",
            ]
            out += [_md_row(row) for row in part.rows]
            out.append("")
    out += [
        "## How to verify this report",
        "",
        "Each part is a sealed evidence record; these commands check it with its receipt,"
        " including that every matched work is in the OpenAlex answer the record stored (the"
        " full pass), and then the whole evidence log. The single-file verifier"
        " `verify_file.py` takes the same `--full PATH --receipt R`. Compare the SHA-256 above"
        " with `sha256sum` of the bibliography.",
        "",
    ]
    commands = [_visible_line(c) for c in _verify_commands(report)]
    # A fenced block shows its lines as they are; a fence longer than any run
    # of backticks in them (a root's name may hold some) keeps it closed.
    longest = max((len(run) for c in commands for run in re.findall("`+", c)), default=0)
    fence = "`" * max(3, longest + 1)
    out += [f"{fence}sh", *commands, fence, ""]
    return "\n".join(out)


def _visible_line(text: str) -> str:
    return "".join(piece for _, piece in _visible(text, "⟨U+{:04X}⟩"))


def _md_file(report: CheckReport, checked: _File) -> list[str]:
    rows = []
    if report.file_name:
        rows.append(("file", _md(report.file_name)))
    if checked.run_id:
        rows.append(("run", _md(checked.run_id)))
    if checked.sha256:
        rows.append((f"SHA-256 of {checked.sha256_of}", _md_code(checked.sha256)))
    if checked.size is not None:
        rows.append(("bytes", str(checked.size)))
    if times := checked.times:
        rows.append(
            ("checked", _md(times[0] if times[0] == times[1] else f"{times[0]} to {times[1]}"))
        )
    rows.append(("references", str(sum(len(p.rows) for p in checked.parts))))
    if checked.planned is not None or len(checked.parts) > 1:
        planned = f" of {checked.planned} planned" if checked.planned is not None else ""
        rows.append(("parts", f"{len(checked.parts)}{planned}"))
    out = ["| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows), ""]
    for note in checked.notes():
        out += [f"> **Note:** {_md(note)}", ""]
    counts = _counts(checked.parts)
    out += [
        "| " + " | ".join(_md_badge(v) for v in counts) + " |",
        "|" + "---|" * len(counts),
        "| " + " | ".join(str(c) for c in counts.values()) + " |",
        "",
    ]
    return out


# ------------------------------------------------------------------ entry point


def render_report(report: CheckReport, fmt: str) -> str:
    """Render a gathered report as ``html`` or ``md``."""
    if ReportFormat(fmt) is ReportFormat.HTML:
        return render_html(report)
    return render_markdown(report)


def build_report(
    evidence_ids: Sequence[str],
    root: Path,
    fmt: str,
    *,
    receipts: Mapping[str, str] | None = None,
    held: Head | None = None,
    file_name: str | None = None,
) -> str:
    """Verify the check records and build their report for a person.

    Args:
        evidence_ids: The check records, in order (the parts of one run are
            put in part order); each ID once.
        root: The evidence root that holds them.
        fmt: ``html`` (one self-contained page) or ``md`` (GitHub-flavoured Markdown).
        receipts: Receipts the caller holds, by evidence ID; a record whose
            receipt differs is left out.
        held: A head the caller holds; a record not logged under it is left out.
        file_name: The bibliography's name to show (records do not hold it).

    Returns:
        The report. A record that does not verify, disagrees with the log or is
        not a reference check is named in it with the reason, and its rows are
        left out; nothing raises for such a record.

    Raises:
        ValueError: *fmt* is neither ``html`` nor ``md``.
        TypeError: *evidence_ids* is one string rather than a sequence of them.
    """
    ReportFormat(fmt)
    report = collect_report(evidence_ids, root, receipts=receipts, held=held, file_name=file_name)
    return render_report(report, fmt)
