"""Citations built only from verified evidence, and finding the records that returned a DOI.

Nothing here fetches anything: every field comes from the provider-neutral
citation block a search stored in ``response.json``, and only after the
record verified (with its receipt, and against the log and a held head when
given). Records without a citation block, such as notanda-mcp 0.1.0b3's, give
entries marked incomplete with the fields they have.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from ._audit import check_head
from ._log import EntryType, Head, LogCode, parse_log, read_log
from .verify_file import (
    NOTICE,
    VERIFIED,
    EvidenceError,
    FindingCode,
    Outcome,
    RecordResult,
    Severity,
    is_check_record,
    is_evidence_id,
    record_ids,
    verify_record,
)

__all__ = [
    "Citation",
    "CitationCode",
    "CitationError",
    "CitationFormat",
    "collect_citations",
    "find_doi",
    "render",
]


class CitationFormat(StrEnum):
    """Output formats of ``cite``."""

    BIBTEX = "bibtex"
    CSL_JSON = "csl-json"
    RIS = "ris"


class CitationCode(StrEnum):
    """Why ``cite`` or ``find`` refused, beside the record outcomes and head findings."""

    #: The record verifies, but the log holds a different receipt for it.
    LOG_MISMATCH = "log_mismatch"
    #: A head was given and the record is not logged under it.
    NOT_UNDER_HELD_HEAD = "not_under_held_head"
    #: The record comes from an injected (test) provider.
    INJECTED_PROVIDER = "injected_provider"
    #: The stored search returned no works.
    NO_RESULTS = "no_results"
    #: The selected work is not among the record's works.
    WORK_NOT_IN_RECORD = "work_not_in_record"
    #: The log has an error finding: run ``audit``.
    LOG_INTEGRITY_FAILURE = "log_integrity_failure"


#: Every code a :class:`CitationError` carries: its own, a record's outcome
#: (``not_found``, ``integrity_failure``, ...) or a held head's finding
#: (``head.truncated``, ``head.mismatch``).
CitationErrorCode = CitationCode | Outcome | FindingCode


class CitationError(EvidenceError):
    """A record cannot be cited; ``code`` says why (``docs/errors.md``)."""

    def __init__(self, code: CitationErrorCode, evidence_id: str, detail: str = "") -> None:
        super().__init__(f"{evidence_id}: {code}" + (f" ({detail})" if detail else ""))
        self.code = code
        self.evidence_id = evidence_id


@dataclass(frozen=True, slots=True)
class Citation:
    """One work from one verified record."""

    evidence_id: str
    receipt: str
    position: int
    work: Mapping[str, Any]
    #: False for records without a citation block (only title, DOI, year).
    complete: bool
    requested_at: str | None


def _text(value: object) -> str | None:
    """*value* as one line of printable text, or None.

    Every character ``str.isprintable`` refuses (control, bidirectional,
    zero-width and other format characters, line and paragraph separators,
    surrogates, private-use and unassigned code points) becomes a space, and
    runs of white space become one space, so no provider value can break a
    line of a bibliography or reach it as a raw control character.
    """
    if not isinstance(value, str):
        return None
    if not value.isprintable():
        value = "".join(ch if ch.isprintable() else " " for ch in value)
    cleaned = " ".join(value.split())
    return cleaned or None


def _year(work: Mapping[str, Any]) -> int | None:
    year = work.get("publication_year")
    return year if isinstance(year, int) and not isinstance(year, bool) else None


def _legacy_block(result: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a notanda-mcp 0.1.0b3 result holds, under the block's names."""
    return {
        "doi": result.get("doi"),
        "openalex_id": result.get("source_id"),
        "publication_year": result.get("year"),
        "title": result.get("title"),
    }


def normalize_doi(value: str) -> str:
    """Lower-case a DOI and strip ``https://doi.org/``, ``doi:`` and similar prefixes."""
    text = value.strip()
    for prefix in (
        "https://doi.org/",
        "http://doi.org/",
        "https://dx.doi.org/",
        "http://dx.doi.org/",
        "doi.org/",
        "doi:",
    ):
        if text.lower().startswith(prefix):
            text = text[len(prefix) :]
            break
    return text.strip().lower()


def _logged_receipts(
    root: Path, held: Head | None
) -> tuple[dict[str, tuple[int, str | None]], bool]:
    """The latest logged ``(index, receipt)`` per record, after checking a held head."""
    data, exists = read_log(root)
    entries, leaves, findings = parse_log(data)
    if held is not None:
        finding = check_head(held, leaves)
        if finding.severity is Severity.ERROR:
            raise CitationError(finding.code, "log", finding.detail or "")
    if any(f.severity is Severity.ERROR and f.code is not LogCode.TAIL_TORN for f in findings):
        raise CitationError(CitationCode.LOG_INTEGRITY_FAILURE, "log", "run notanda-evidence audit")
    latest: dict[str, tuple[int, str | None]] = {}
    for entry in entries:
        if entry.type is EntryType.TOMBSTONE:
            latest.pop(entry.evidence_id, None)
        else:
            latest[entry.evidence_id] = (entry.index, entry.receipt)
    return latest, exists


def _verified(
    root: Path,
    *,
    evidence_id: str,
    receipt: str | None,
    logged: Mapping[str, tuple[int, str | None]],
    held: Head | None,
    allow_injected: bool,
    full: bool = False,
) -> RecordResult:
    """One record, verified (the full pass with *full*) and checked against the log."""
    if not is_evidence_id(evidence_id):
        raise CitationError(Outcome.INVALID_EVIDENCE_ID, evidence_id)
    result = verify_record(root / evidence_id, receipt, full=full)
    if result.outcome is not Outcome.OK or result.response is None or result.request is None:
        first = next((f for f in result.findings if f.severity is Severity.ERROR), None)
        why = (
            "" if first is None else f"{first.code}" + (f": {first.detail}" if first.detail else "")
        )
        raise CitationError(result.outcome, evidence_id, why)
    entry = logged.get(evidence_id)
    if entry is not None and entry[1] != result.receipt:
        raise CitationError(CitationCode.LOG_MISMATCH, evidence_id)
    if held is not None and (entry is None or entry[0] >= held.size):
        raise CitationError(CitationCode.NOT_UNDER_HELD_HEAD, evidence_id)
    if is_injected(result.request) and not allow_injected:
        raise CitationError(
            CitationCode.INJECTED_PROVIDER, evidence_id, "use --allow-injected for tests"
        )
    return result


def is_injected(request: Mapping[str, Any]) -> bool:
    """Whether a stored request was served by an injected (test) provider, not OpenAlex."""
    return request.get("provider_mode") == "injected"


def collect_citations(
    root: str | os.PathLike[str],
    selections: Sequence[str],
    *,
    receipts: Mapping[str, str] | None = None,
    held: Head | None = None,
    allow_injected: bool = False,
) -> list[Citation]:
    """Verify the selected records and return their works as citations.

    Args:
        root: The evidence root.
        selections: ``EVIDENCE_ID`` (every work of the record) or
            ``EVIDENCE_ID:OPENALEX_ID`` (one work).
        receipts: Receipts the caller holds, by evidence ID.
        held: A head the caller holds; every record must be logged under it.
        allow_injected: Accept records made through an injected (test) provider.

    Raises:
        CitationError: A record does not verify, disagrees with the log, is
            not under the held head, was made with an injected provider, or
            does not hold the selected work.
    """
    base = Path(root)
    logged, _ = _logged_receipts(base, held)
    receipts = receipts or {}
    citations: list[Citation] = []
    for selection in selections:
        evidence_id, _, wanted = selection.partition(":")
        result = _verified(
            base,
            evidence_id=evidence_id,
            receipt=receipts.get(evidence_id),
            logged=logged,
            held=held,
            allow_injected=allow_injected,
        )
        response, request = result.response or {}, result.request or {}
        if response.get("status") != "ok" or not isinstance(
            response.get("references" if is_check_record(request) else "results"), list
        ):
            raise CitationError(
                CitationCode.NO_RESULTS, evidence_id, "the stored search returned no works"
            )
        found = 0
        for position, item in _cited_works(request, response):
            complete = "openalex_id" in item
            work = dict(item) if complete else _legacy_block(item)
            if wanted and work.get("openalex_id") != wanted:
                continue
            found += 1
            citations.append(
                Citation(
                    evidence_id,
                    result.receipt or "",
                    position,
                    work,
                    complete,
                    request.get("requested_at")
                    if isinstance(request.get("requested_at"), str)
                    else None,
                )
            )
        if wanted and not found:
            raise CitationError(CitationCode.WORK_NOT_IN_RECORD, evidence_id, wanted)
        if not found:
            raise CitationError(
                CitationCode.NO_RESULTS,
                evidence_id,
                "the check verified none of its references, so nothing is cited"
                if is_check_record(request)
                else "the stored search returned no works",
            )
    return citations


# ------------------------------------------------------------------ rendering

# Every value is written inside one pair of braces, and every brace in it is
# one of a pair written here (the empty pairs below, and the braces around a
# name or a title), never one the provider sent. BibTeX, pybtex and bibtexparser
# count braces differently (bibtex and pybtex count ``\{`` as a brace,
# bibtexparser does not), so ``\{`` and ``\}`` are never written: with them a
# provider's ``\}`` or unbalanced brace could close the value or the entry
# early in one reader and not in another, and the rest of the value (an
# ``@misc(...)``, say) would become an entry of its own. With no raw brace and
# no line break, a provider's ``@`` never stands outside a value or at the
# start of a line.
_LATEX = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\^{}",
    "_": r"\_",
    "~": r"\~{}",
    "%": r"\%",
}
_LATEX_RE = re.compile(r"[\\{}$&#^_~%]")


def latex_escape(text: str) -> str:
    """Escape every LaTeX special character; the result holds only balanced ``{}`` pairs."""
    return _LATEX_RE.sub(lambda m: _LATEX[m.group()], text)


_BIBTEX_TYPES = {
    "article": "article",
    "review": "article",
    "book": "book",
    "book-chapter": "incollection",
    "dissertation": "phdthesis",
    "report": "techreport",
}
_RIS_TYPES = {
    "article": "JOUR",
    "review": "JOUR",
    "book": "BOOK",
    "book-chapter": "CHAP",
    "dissertation": "THES",
    "report": "RPRT",
    "dataset": "DATA",
    "preprint": "UNPB",
}
_CSL_TYPES = {
    "article": "article-journal",
    "review": "article-journal",
    "book": "book",
    "book-chapter": "chapter",
    "dissertation": "thesis",
    "report": "report",
    "dataset": "dataset",
    "preprint": "article",
}


def _authors(work: Mapping[str, Any]) -> tuple[list[str], bool]:
    authors = work.get("authors")
    names = [
        n
        for a in (authors if isinstance(authors, list) else [])
        if isinstance(a, dict)
        if (n := _text(a.get("name")))
    ]
    total = work.get("authors_total")
    more = work.get("authors_truncated_by_provider") is True or (
        isinstance(total, int) and not isinstance(total, bool) and total > len(names)
    )
    return names, more


def _pages(work: Mapping[str, Any]) -> tuple[str | None, str | None]:
    return _text(work.get("first_page")), _text(work.get("last_page"))


def _provenance(citation: Citation) -> str:
    parts = [f"Notanda evidence {citation.evidence_id}", f"receipt {citation.receipt}"]
    if searched := _text(citation.requested_at):
        parts.append(f"searched {searched}")
    if not citation.complete:
        parts.append("incomplete entry: the record holds only title, DOI, year and OpenAlex ID")
    return "; ".join(parts)


def _key(work: Mapping[str, Any], taken: set[str]) -> str:
    names, _ = _authors(work)
    surname = names[0].split()[-1] if names else "anon"
    title_words = (_text(work.get("title")) or "untitled").split()
    year = _year(work)
    raw = f"{surname}{'' if year is None else year}{title_words[0]}"
    ascii_key = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode().lower()
    key = re.sub(r"[^a-z0-9]", "", ascii_key) or "ref"
    candidate, suffix = key, 0
    while candidate in taken:
        suffix += 1
        candidate = f"{key}{chr(ord('a') + (suffix - 1) % 26)}{(suffix - 1) // 26 or ''}"
    taken.add(candidate)
    return candidate


def _header_lines(citations: Sequence[Citation]) -> list[str]:
    lines = ["Notanda citations, built only from verified evidence records.", NOTICE]
    for evidence_id, receipt in dict.fromkeys((c.evidence_id, c.receipt) for c in citations):
        lines.append(f"evidence {evidence_id} receipt {receipt}")
    return lines


def render_bibtex(citations: Sequence[Citation]) -> str:
    """BibTeX, every value LaTeX-escaped; names braced so they are never re-split."""
    out = [f"% {line}" for line in _header_lines(citations)]
    taken: set[str] = set()
    for citation in citations:
        work = citation.work
        kind = _BIBTEX_TYPES.get(str(work.get("type")), "misc")
        names, more = _authors(work)
        fields: list[tuple[str, str]] = []
        if names or more:
            fields.append(
                (
                    "author",
                    " and ".join(
                        [*(f"{{{latex_escape(n)}}}" for n in names), *(["others"] if more else [])]
                    ),
                )
            )
        if title := _text(work.get("title")):
            fields.append(("title", f"{{{latex_escape(title)}}}"))
        if venue := _text(work.get("venue")):
            fields.append(("journal" if kind == "article" else "booktitle", latex_escape(venue)))
        if (year := _year(work)) is not None:
            fields.append(("year", str(year)))
        for name, source in (("volume", "volume"), ("number", "issue")):
            if value := _text(work.get(source)):
                fields.append((name, latex_escape(value)))
        first, last = _pages(work)
        if first:
            fields.append(
                ("pages", latex_escape(first) + (f"--{latex_escape(last)}" if last else ""))
            )
        if doi := _text(work.get("doi")):
            fields.append(("doi", latex_escape(doi)))
        if url := _text(work.get("oa_url")):
            fields.append(("url", latex_escape(url)))
        if work.get("is_retracted") is True:
            fields.append(("annotation", "RETRACTED"))
        fields.append(("note", latex_escape(_provenance(citation))))
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        out.append(f"@{kind}{{{_key(work, taken)},\n{body}\n}}")
    return "\n".join(out) + "\n"


def render_ris(citations: Sequence[Citation]) -> str:
    """RIS; every value is one line (see ``_text``), so none can end a record or start a tag."""
    out = [f"# {line}" for line in _header_lines(citations)]
    for citation in citations:
        work = citation.work
        lines = [f"TY  - {_RIS_TYPES.get(str(work.get('type')), 'GEN')}"]
        if title := _text(work.get("title")):
            lines.append(f"TI  - {title}")
        names, more = _authors(work)
        lines += [f"AU  - {n}" for n in names]
        if more:
            lines.append("AU  - et al.")
        if (year := _year(work)) is not None:
            lines.append(f"PY  - {year}")
        for tag, source in (
            ("JO", "venue"),
            ("VL", "volume"),
            ("IS", "issue"),
            ("DO", "doi"),
            ("UR", "oa_url"),
        ):
            if value := _text(work.get(source)):
                lines.append(f"{tag}  - {value}")
        first, last = _pages(work)
        if first:
            lines.append(f"SP  - {first}")
        if last:
            lines.append(f"EP  - {last}")
        if work.get("is_retracted") is True:
            lines.append("N1  - RETRACTED")
        lines.append(f"N1  - {_provenance(citation)}")
        lines.append(f"N1  - {NOTICE}")
        lines.append("ER  - ")
        out.append("\n".join(lines))
    return "\n".join(out) + "\n"


def render_csl_json(citations: Sequence[Citation]) -> str:
    """CSL-JSON. JSON has no comments, so each item carries the notice and provenance."""
    items = []
    taken: set[str] = set()
    for citation in citations:
        work = citation.work
        item: dict[str, Any] = {
            "id": _key(work, taken),
            "type": _CSL_TYPES.get(str(work.get("type")), "document"),
            "note": f"{_provenance(citation)}. {NOTICE}",
            "custom": {
                "notanda": {
                    "evidence_id": citation.evidence_id,
                    "receipt": citation.receipt,
                    "complete": citation.complete,
                }
            },
        }
        if title := _text(work.get("title")):
            item["title"] = title
        names, more = _authors(work)
        if names:
            item["author"] = [{"literal": n} for n in names]
        if more:
            item["note"] += " The author list is incomplete."
        if (year := _year(work)) is not None:
            item["issued"] = {"date-parts": [[year]]}
        for name, source in (
            ("container-title", "venue"),
            ("volume", "volume"),
            ("issue", "issue"),
            ("DOI", "doi"),
            ("URL", "oa_url"),
        ):
            if value := _text(work.get(source)):
                item[name] = value
        first, last = _pages(work)
        if first:
            item["page"] = first + (f"-{last}" if last else "")
        if work.get("is_retracted") is True:
            item["status"] = "retracted"
        items.append(item)
    return json.dumps(items, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def render(citations: Sequence[Citation], fmt: CitationFormat) -> str:
    """Render citations in one of the supported formats."""
    if fmt is CitationFormat.BIBTEX:
        return render_bibtex(citations)
    if fmt is CitationFormat.RIS:
        return render_ris(citations)
    return render_csl_json(citations)


# ------------------------------------------------------------------- finding


@dataclass(frozen=True, slots=True)
class DoiMatch:
    """A verified record whose stored results include a DOI.

    Its texts are as the record holds them; whoever prints them escapes them.
    """

    evidence_id: str
    receipt: str
    position: int
    title: str | None
    requested_at: str | None
    query: str | None
    logged: bool
    #: The record was made through an injected (test) provider: ``cite`` refuses it by default.
    injected: bool = False

    def to_json(self) -> dict[str, Any]:
        """The match as it appears in ``find --json``."""
        return {
            "evidence_id": self.evidence_id,
            "injected": self.injected,
            "logged": self.logged,
            "position": self.position,
            "query": self.query,
            "receipt": self.receipt,
            "requested_at": self.requested_at,
            "title": self.title,
        }


def _query(request: Mapping[str, Any]) -> str | None:
    effective = request.get("effective")
    if isinstance(effective, dict):
        for key in ("query", "search"):
            if isinstance(effective.get(key), str):
                return str(effective[key])
    return None


def find_doi(root: str | os.PathLike[str], doi: str) -> tuple[list[DoiMatch], list[RecordResult]]:
    """Every verified record whose stored results include *doi*, and the records skipped.

    Records that do not verify are never searched; they are returned as the
    second list so that a reader knows the answer covers only verified ones.
    A match from a record made through an injected (test) provider says so
    (``injected``); the ``find`` command leaves those out unless asked.
    """
    wanted = normalize_doi(doi)
    logged, _ = _logged_receipts(Path(root), None)
    matches: list[DoiMatch] = []
    skipped: list[RecordResult] = []
    for evidence_id in record_ids(root):
        result = verify_record(Path(root) / evidence_id)
        if result.outcome is not Outcome.OK or result.response is None:
            skipped.append(result)
            continue
        entry = logged.get(result.evidence_id)
        if entry is not None and entry[1] != result.receipt:
            skipped.append(result)
            continue
        request = result.request or {}
        for position, item in _cited_works(request, result.response):
            value = item.get("doi")
            if isinstance(value, str) and normalize_doi(value) == wanted:
                matches.append(
                    DoiMatch(
                        result.evidence_id,
                        result.receipt or "",
                        position,
                        item.get("title") if isinstance(item.get("title"), str) else None,
                        request.get("requested_at")
                        if isinstance(request.get("requested_at"), str)
                        else None,
                        _query(request),
                        entry is not None,
                        is_injected(request),
                    )
                )
    return matches, skipped


def _cited_works(
    request: Mapping[str, Any], response: Mapping[str, Any]
) -> Iterable[tuple[int, Mapping[str, Any]]]:
    """The works a verified record vouches for, each with its position in the answer.

    A search vouches for every work it returned (position in ``results``); a
    reference check only for the works of its ``verified`` references
    (position: the reference's ``index``), never for a work it matched with
    differences or among several candidates.
    """
    if is_check_record(request):
        references = response.get("references")
        if not isinstance(references, list):
            return []
        return [
            (position, entry["work"])
            for position, entry in enumerate(references)
            if isinstance(entry, dict)
            and entry.get("verdict") == VERIFIED
            and isinstance(entry.get("work"), dict)
        ]
    results = response.get("results")
    if not isinstance(results, list):
        return []
    return [(position, item) for position, item in enumerate(results) if isinstance(item, dict)]
