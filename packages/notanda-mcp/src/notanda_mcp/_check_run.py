"""A whole bibliography file checked in parts: the plan, the selection, the run and its stops.

``notanda-mcp check-references`` reads the file once, whole, keeps the entries
to check (all, or those a manuscript cites), cuts them into parts of at most
:data:`PART_SIZE` references and checks the parts one after another, each
into its own sealed, logged, receipted record (:meth:`EvidenceService.check_part`)
under the check's deadline and attempt plan; nothing is retried inside a part.
The run stops early on Ctrl-C, on ``budget_exhausted``, on a 429 whose
``Retry-After`` is over :data:`LONG_WAIT_S` and on a part that failed as a
whole; a shorter ``Retry-After`` is waited out before the next part. The rules
and the record keys are in ``docs/reference-checking.md`` and
``docs/evidence-format.md`` (2.7).
"""

from __future__ import annotations

import datetime as dt
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import notanda_openalex as openalex
from notanda_evidence.verify_file import format_timestamp

from ._codes import AnswerStatus
from ._service import Caller, EvidenceService

if TYPE_CHECKING:
    from notanda_openalex import Citations, ParsedReferences, Reference, ReferenceCheck

#: References per part: the check tool's own limit of one call.
PART_SIZE = openalex.MAX_REFERENCES
#: Credits of one DOI batch (a list request) and of one title lookup (priced
#: as a search), as ``docs/reference-checking.md`` counts them.
DOI_BATCH_CREDITS = 1
TITLE_LOOKUP_CREDITS = 10
#: The free daily allowance of an OpenAlex key: the default ``--max-credits``.
FREE_DAILY_CREDITS = 10_000
#: A 429 asking to wait longer than this stops the run; a shorter wait is waited out.
LONG_WAIT_S = 60.0
#: How a part's entries are joined into its ``text``: a blank line, in file order.
PART_TEXT_SEPARATOR = "\n\n"


class StopReason(StrEnum):
    """Why a run stopped before its last part (``stopped`` of the part it stopped after)."""

    #: Ctrl-C (SIGINT): the running part was sealed as cancelled.
    INTERRUPTED = "interrupted"
    #: The OpenAlex budget is spent (``budget_exhausted``).
    BUDGET = "budget"
    #: A 429 whose ``Retry-After`` is over :data:`LONG_WAIT_S` (or a 429 that is not a budget).
    RATE_LIMIT = "rate_limit"
    #: The part failed as a whole (configuration, provider, storage).
    FAILED = "failed"


# ------------------------------------------------------------------ selection


@dataclass(frozen=True, slots=True)
class Selection:
    """Which entries of the file are checked, and what the manuscript cites that is not there."""

    #: File positions of the entries to check, in file order.
    indexes: tuple[int, ...]
    #: Entries of the file not cited (``crossref`` parents used only for fields excluded).
    skipped: int = 0
    #: Uncited entries that a cited entry names as its ``crossref`` parent.
    crossref_parents: int = 0
    #: Cited keys that no entry defines, in order of citation.
    missing: tuple[str, ...] = ()
    #: ``(cited, defined)`` pairs taken although their case differs.
    case_only: tuple[tuple[str, str], ...] = ()
    #: Whether the selection came from ``--cited-in``.
    cited: bool = False


def select(parsed: ParsedReferences, citations: Sequence[Citations] | None) -> Selection:
    """The entries to check: every one, or (``--cited-in``) those the manuscripts cite.

    Keys match exactly; a cited key that matches an entry's only when case is
    ignored is taken, and reported. Every entry bearing a cited key is taken
    (a repeated key is still a citation). A cited key no entry has is missing.
    """
    if citations is None:
        return Selection(indexes=tuple(range(len(parsed))))
    by_key: dict[str, list[int]] = {}
    by_folded: dict[str, list[str]] = {}
    for position, reference in enumerate(parsed):
        if reference.key is not None:
            if reference.key not in by_key:
                by_folded.setdefault(reference.key.casefold(), []).append(reference.key)
            by_key.setdefault(reference.key, []).append(position)
    chosen: set[int] = set()
    missing: list[str] = []
    case_only: list[tuple[str, str]] = []
    seen: set[str] = set()
    for found in citations:
        for key in found.keys:
            if key in seen:
                continue
            seen.add(key)
            if key in by_key:
                chosen.update(by_key[key])
                continue
            folded = by_folded.get(key.casefold())
            if folded:
                case_only.append((key, folded[0]))
                chosen.update(by_key[folded[0]])
            else:
                missing.append(key)
    if any(found.every for found in citations):
        # ``*`` cites every entry; a key it names that no entry has is still missing.
        return Selection(
            indexes=tuple(range(len(parsed))),
            missing=tuple(missing),
            case_only=tuple(case_only),
            cited=True,
        )
    # BibTeX's crossref keys are case-insensitive, as the reader resolves them.
    parents = {crossref.lower() for position in chosen if (crossref := parsed[position].crossref)}
    uncited = [p for p in range(len(parsed)) if p not in chosen]
    parent_count = sum(1 for p in uncited if (parsed[p].key or "").lower() in parents)
    return Selection(
        indexes=tuple(sorted(chosen)),
        skipped=len(uncited) - parent_count,
        crossref_parents=parent_count,
        missing=tuple(missing),
        case_only=tuple(case_only),
        cited=True,
    )


# ------------------------------------------------------------------ the plan


@dataclass(frozen=True, slots=True)
class Plan:
    """What a run will do at most, before any request."""

    #: File positions of each part's references, in file order.
    parts: tuple[tuple[int, ...], ...]
    references: int
    #: The most requests the parts could make (one per 50 DOIs plus one per readable reference).
    max_requests: int
    #: The planned cost: every DOI batch, and a title lookup for every readable
    #: reference without a DOI (``docs/reference-checking.md``).
    credits: int
    #: The cost if no DOI were known and every reference fell back to its title.
    credits_at_most: int


def _part_cost(references: Sequence[Reference]) -> tuple[int, int, int]:
    """``(max requests, planned credits, credits at most)`` of one part."""
    readable = [reference for reference in references if reference.parsed]
    dois = {reference.lookup_doi for reference in readable if reference.lookup_doi is not None}
    batches = -(-len(dois) // openalex.MAX_DOIS_PER_REQUEST)
    titles = sum(1 for reference in readable if reference.lookup_doi is None)
    return (
        batches + len(readable),
        batches * DOI_BATCH_CREDITS + titles * TITLE_LOOKUP_CREDITS,
        batches * DOI_BATCH_CREDITS + len(readable) * TITLE_LOOKUP_CREDITS,
    )


def plan(parsed: ParsedReferences, selection: Selection) -> Plan:
    """Cut the selected entries into parts of :data:`PART_SIZE` and count their cost."""
    indexes = selection.indexes
    parts = tuple(indexes[at : at + PART_SIZE] for at in range(0, len(indexes), PART_SIZE))
    requests = credits = at_most = 0
    for part in parts:
        more, planned, worst = _part_cost([parsed[position] for position in part])
        requests, credits, at_most = requests + more, credits + planned, at_most + worst
    return Plan(
        parts=parts,
        references=len(indexes),
        max_requests=requests,
        credits=credits,
        credits_at_most=at_most,
    )


def part_references(parsed: ParsedReferences, positions: Sequence[int]) -> ParsedReferences:
    """The references of one part, numbered from 0 (``index`` is the position in the part)."""
    return openalex.ParsedReferences(
        format=parsed.format,
        detected=parsed.detected,
        references=tuple(
            replace(parsed[position], index=number) for number, position in enumerate(positions)
        ),
    )


def part_text(part: Iterable[Reference]) -> str:
    """A part's ``text``: its entries' raw text joined in file order."""
    return PART_TEXT_SEPARATOR.join(reference.raw for reference in part)


# ------------------------------------------------------------------ stops


@dataclass(frozen=True, slots=True)
class Limit:
    """The provider limit a part met: a stop reason, or a wait before the next part."""

    stop: StopReason | None
    wait_s: float = 0.0
    retry_after_s: float | None = None


def provider_limit(check: ReferenceCheck | None) -> Limit:
    """What a part's requests say of the provider's limits (``docs/reference-checking.md``)."""
    if check is None:
        return Limit(None)
    waits: list[float] = []
    for attempt in check.attempts:
        failure = attempt.failure
        if failure is None:
            continue
        if failure.reason is openalex.ProviderReason.BUDGET_EXHAUSTED:
            return Limit(StopReason.BUDGET, retry_after_s=failure.retry_after_s)
        if failure.reason is openalex.ProviderReason.RATE_LIMITED:
            # No Retry-After: the remedy's minute.
            waits.append(LONG_WAIT_S if failure.retry_after_s is None else failure.retry_after_s)
    if not waits:
        return Limit(None)
    longest = max(waits)
    if longest > LONG_WAIT_S:
        return Limit(StopReason.RATE_LIMIT, retry_after_s=longest)
    return Limit(None, wait_s=longest, retry_after_s=longest)


# ------------------------------------------------------------------ the run


@dataclass(slots=True)
class PartOutcome:
    """One sealed (or failed) part: its number, its references' file positions, its answer."""

    number: int
    positions: tuple[int, ...]
    content: dict[str, Any]
    limit: Limit = field(default_factory=lambda: Limit(None))


@dataclass(slots=True)
class RunOutcome:
    """Everything a run did, in order."""

    run_id: str
    parts: list[PartOutcome] = field(default_factory=list)
    stopped: StopReason | None = None
    #: When to run again (a budget or a long 429), as an RFC 3339 UTC time.
    run_again_at: str | None = None


def new_run_id() -> str:
    """A random run ID, shared by every part of one run: 32 lowercase hex characters."""
    return secrets.token_hex(16)


def run_parts(
    service: EvidenceService,
    parsed: ParsedReferences,
    *,
    the_plan: Plan,
    run: Mapping[str, Any],
    format_name: str,
    interrupted: threading.Event,
    caller: Caller,
    on_progress: Callable[[int, int, int], None] | None = None,
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
) -> RunOutcome:
    """Check every part in turn; stop early as the module docstring says.

    *interrupted* is set by the Ctrl-C handler: the running part is cut short
    and sealed as cancelled, and so is the next part when it comes during a
    wait (its references are all unchecked), so that the run's last record
    always says why it stopped. *on_progress* gets ``(references done,
    parts done, not verified so far)``.
    """
    outcome = RunOutcome(run_id=str(run["run_id"]))
    count = len(the_plan.parts)
    done = not_verified = 0
    for number, positions in enumerate(the_plan.parts, 1):
        part = part_references(parsed, positions)
        limits: list[Limit] = []

        def reason(
            check: ReferenceCheck | None, cancelled: bool, found: list[Limit] = limits
        ) -> str | None:
            limit = provider_limit(check)
            found.append(limit)
            if cancelled:
                return StopReason.INTERRUPTED.value
            if check is not None and check.failure is not None:
                return StopReason.FAILED.value
            return None if limit.stop is None else limit.stop.value

        def progress(
            decided: int,
            _total: int,
            base: int = done,
            finished: int = number - 1,
            so_far: int = not_verified,
        ) -> None:
            if on_progress is not None:
                on_progress(base + decided, finished, so_far)

        reply = service.check_part(
            part,
            Caller(
                client=caller.client,
                protocol_version=caller.protocol_version,
                cancelled=interrupted.is_set,
            ),
            text=part_text(part),
            format_name=format_name,
            run={**run, "part": number, "parts": count},
            file_indexes=positions,
            on_progress=progress,
            stop_reason=reason,
        )
        content = reply.content
        limit = limits[0] if limits else Limit(None)
        outcome.parts.append(PartOutcome(number, positions, content, limit))
        done += len(positions)
        not_verified += sum(
            1
            for entry in content.get("references") or []
            if isinstance(entry, dict) and entry.get("verdict") != openalex.Verdict.VERIFIED
        )
        if content.get("status") != AnswerStatus.OK:
            not_verified += len(positions) - len(content.get("references") or [])
        if on_progress is not None:
            on_progress(done, number, not_verified)
        stopped = content.get("stopped")
        if content.get("status") != AnswerStatus.OK and stopped is None:
            stopped = StopReason.FAILED.value  # storage or log: no record said it
        if stopped is not None:
            outcome.stopped = StopReason(stopped)
            if limit.retry_after_s is not None and outcome.stopped in (
                StopReason.BUDGET,
                StopReason.RATE_LIMIT,
            ):
                outcome.run_again_at = _later(now(), limit.retry_after_s)
            elif outcome.stopped is StopReason.BUDGET:
                outcome.run_again_at = _next_midnight(now())
            break
        if number < count and limit.wait_s > 0:
            interrupted.wait(limit.wait_s)
    return outcome


def _later(start: dt.datetime, seconds: float) -> str:
    return str(format_timestamp(start + dt.timedelta(seconds=seconds)))


def _next_midnight(start: dt.datetime) -> str:
    tomorrow = (start + dt.timedelta(days=1)).date()
    return str(format_timestamp(dt.datetime.combine(tomorrow, dt.time(), tzinfo=dt.UTC)))
