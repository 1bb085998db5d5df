"""Checking a parsed bibliography against OpenAlex: the plan, the requests, the verdicts.

This module owns what a check asks OpenAlex (DOI batches, then one title
lookup per reference that needs one), in which order its attempts are
recorded, and how the answers become one :class:`CheckedReference` per
input reference. The HTTP exchange itself is the client's (the same path as a
search); what "matches" means is :mod:`._matching`'s. See
``docs/reference-checking.md``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeAlias

from ._errors import ErrorCode, ProviderReason
from ._matching import (
    Decision,
    ReferenceField,
    decide_by_doi,
    decide_by_title,
    title_query,
)
from ._observation import ProviderObservation
from ._references import ParsedReferences, Reference, UnparsedReason
from ._result import ProviderFailure, ProviderResult
from ._transport import Deadline
from ._vocabulary import (
    CHECKED_REFERENCE_KEYS,
    DEFAULT_CHECK_CONCURRENCY,
    DEFAULT_CHECK_DEADLINE_S,
    MAX_CHECK_CONCURRENCY,
    Verdict,
)
from ._works import WORK_SELECT_FIELDS, Work

if TYPE_CHECKING:
    from ._outcome import DepthCheck

#: The client's one-GET path (``OpenAlexClient._send``): parameters in, result out.
Send = Callable[..., ProviderResult]

__all__ = [
    "DEFAULT_CHECK_CONCURRENCY",
    "DEFAULT_CHECK_DEADLINE_S",
    "DOI_BATCH_PER_PAGE",
    "MAX_CHECK_CONCURRENCY",
    "MAX_DOIS_PER_REQUEST",
    "MAX_TITLE_CANDIDATES",
    "AttemptPurpose",
    "CheckAttempt",
    "CheckRun",
    "CheckedReference",
    "ReferenceCheck",
    "ReferenceErrorCode",
    "ReferenceField",
    "UncheckedReason",
    "Verdict",
    "WithheldReason",
    "doi_batch_params",
    "filter_safe",
    "refused_check",
    "title_params",
]

#: At most this many DOIs in one ``filter=doi:A|B|...`` request.
MAX_DOIS_PER_REQUEST = 50
#: ``per-page`` of a DOI batch: room for two works per DOI (OpenAlex may hold a
#: DOI twice), within OpenAlex's maximum of 200.
DOI_BATCH_PER_PAGE = 2 * MAX_DOIS_PER_REQUEST
#: At most this many candidates from one title lookup.
MAX_TITLE_CANDIDATES = 10
#: How often (seconds) the coordinator looks at ``cancelled`` while requests run.
_POLL_S = 0.05
#: Characters OpenAlex's filter grammar reads as syntax anywhere in a value:
#: ``,`` starts another filter (combined with AND), ``|`` another alternative.
FILTER_SYNTAX_CHARACTERS = frozenset(",|")
#: First characters it reads as an operator: negation, less than, greater than.
FILTER_OPERATOR_PREFIXES = ("!", "<", ">")


class AttemptPurpose(StrEnum):
    """Why a check made a request (:attr:`CheckAttempt.purpose`)."""

    #: ``filter=doi:A|B|...`` for up to :data:`MAX_DOIS_PER_REQUEST` references.
    DOI_BATCH = "doi_batch"
    #: ``filter=title.search:...`` for one reference.
    TITLE = "title"


class UncheckedReason(StrEnum):
    """The :attr:`CheckedReference.error` of an ``unchecked`` reference the provider did not fail.

    A reference whose request failed carries the provider's code instead
    (a :class:`ProviderReason` value, or ``configuration_error``).
    """

    #: The check's total deadline passed (or the check was cancelled) before
    #: the reference's request was made or answered.
    DEADLINE_EXCEEDED = "deadline_exceeded"


#: What :attr:`CheckedReference.error` holds. For ``unchecked``: the
#: provider's :class:`ProviderReason`, an :class:`ErrorCode` (``configuration_error``
#: when the configuration was refused, ``provider_error`` for a failure without
#: a reason) or :attr:`UncheckedReason.DEADLINE_EXCEEDED`; for ``unparsed``: the
#: reference's :class:`UnparsedReason`. Each is a ``StrEnum``: its value is the
#: record's ``error`` string.
ReferenceErrorCode: TypeAlias = ProviderReason | ErrorCode | UncheckedReason | UnparsedReason


class WithheldReason(StrEnum):
    """Why a reference's identifier was not sent (:attr:`CheckedReference.identifier_withheld`)."""

    #: Its DOI (or arXiv ID) holds ``,`` or ``|``, or starts with ``!``, ``<`` or
    #: ``>``: inside ``filter=doi:...`` it would be filter syntax, not data.
    #: The reference was looked up by its title, and its DOI compared with the
    #: candidates' DOIs.
    FILTER_SYNTAX = "filter_syntax"


def filter_safe(identifier: str) -> bool:
    """Whether *identifier* can stand in a ``doi:`` filter as data only.

    False when it holds a character of :data:`FILTER_SYNTAX_CHARACTERS` or
    starts with one of :data:`FILTER_OPERATOR_PREFIXES`. Everything else
    (SICI DOIs with ``<``, ``>``, ``;``, ``:`` or parentheses included) is
    sent, percent-encoded by httpx like every query value.
    """
    return not identifier.startswith(FILTER_OPERATOR_PREFIXES) and not any(
        char in FILTER_SYNTAX_CHARACTERS for char in identifier
    )


def _batch_doi(reference: Reference) -> str | None:
    """The DOI a readable reference is looked up by in a batch; ``None`` for a title lookup."""
    doi = reference.lookup_doi if reference.parsed else None
    return doi if doi is not None and filter_safe(doi) else None


def _withheld(reference: Reference) -> WithheldReason | None:
    doi = reference.lookup_doi if reference.parsed else None
    return WithheldReason.FILTER_SYNTAX if doi is not None and not filter_safe(doi) else None


@dataclass(frozen=True, slots=True)
class CheckAttempt:
    """One HTTP request of a check, recorded exactly like a search's."""

    #: Why the request was made: a DOI batch or a title lookup (a ``str`` of
    #: either value is accepted and converted).
    purpose: AttemptPurpose
    #: The request and what came back: capture, attempt, ``body_json``.
    observation: ProviderObservation
    #: Why the request failed (its code, reason and ``retry_after_s``); None when it succeeded.
    failure: ProviderFailure | None = None

    def __post_init__(self) -> None:
        # purpose used to be a plain string; one given still becomes the enum, for one release.
        object.__setattr__(self, "purpose", AttemptPurpose(self.purpose))

    def record_fields(self) -> dict[str, Any]:
        """Return the attempt's entry in the check's provider record, as values.

        Keys: those of :meth:`ProviderAttempt.to_record` (none when no request
        was made; ``started_at`` and ``finished_at`` are aware datetimes), plus
        ``purpose``, ``capture`` and, when :attr:`ProviderObservation.has_body`,
        ``observed_json``: the body as a JSON value (shared, not copied).
        """
        observation = self.observation
        entry: dict[str, Any] = {
            **({} if observation.attempt is None else observation.attempt.to_record()),
            "capture": observation.capture.value,
            "purpose": self.purpose.value,
        }
        if observation.has_body:
            entry["observed_json"] = observation.body_json
        return entry


@dataclass(frozen=True, slots=True)
class CheckedReference:
    """The verdict on one input reference."""

    #: 0-based position in the input (as :attr:`Reference.index`).
    index: int
    key: str | None
    verdict: Verdict
    #: The fields that disagree, in :class:`ReferenceField` order; empty
    #: unless the verdict is ``metadata_mismatch``.
    differs: tuple[ReferenceField, ...]
    #: The matched work's ``is_retracted``; ``None`` when no work matched.
    retracted: bool | None
    #: The matched work (for ``verified`` and ``metadata_mismatch``).
    work: Work | None
    #: 0-based index into :attr:`ReferenceCheck.attempts` of the attempt whose
    #: body holds :attr:`work`; ``None`` when there is no work. The record's
    #: key is ``observation``.
    attempt_index: int | None
    #: Why the reference is ``unchecked`` or ``unparsed`` (see
    #: :data:`ReferenceErrorCode`); else ``None``.
    error: ReferenceErrorCode | None
    #: Why the reference's DOI (or arXiv ID) was not sent in a DOI batch (a
    #: :class:`WithheldReason`); ``None`` when it was sent or there is none.
    identifier_withheld: WithheldReason | None = None

    def to_record(self) -> dict[str, Any]:
        """Return the JSON-safe entry; every key is always present.

        ``work`` is the work's record in the form a search result uses
        (:meth:`Work.to_record`), or ``None``.
        """
        values = (
            self.index,
            self.key,
            self.verdict.value,
            [name.value for name in self.differs],
            self.retracted,
            None if self.work is None else self.work.to_record(),
            self.attempt_index,
            None if self.error is None else self.error.value,
            None if self.identifier_withheld is None else self.identifier_withheld.value,
        )
        return dict(zip(CHECKED_REFERENCE_KEYS, values, strict=True))

    @property
    def observation(self) -> int | None:
        """Deprecated alias of :attr:`attempt_index`: kept for one release, then removed."""
        return self.attempt_index


@dataclass(frozen=True, slots=True)
class ReferenceCheck:
    """The outcome of :meth:`OpenAlexClient.check_references`."""

    #: One per input reference, in input order.
    references: tuple[CheckedReference, ...]
    #: Every request made, in planned order: the DOI batches in the order of
    #: their first reference, then the title lookups by reference index (not
    #: the order in which they completed).
    attempts: tuple[CheckAttempt, ...]
    #: Set when the check failed as a whole (configuration refused, endpoint
    #: not allowed); every parsed reference is then ``unchecked``.
    failure: ProviderFailure | None = None
    #: The most requests this check could make: one per DOI batch it planned,
    #: plus one title lookup per readable reference (``docs/evidence-format.md``,
    #: 2.6). Also set when the check failed as a whole and made none.
    max_attempts: int = field(kw_only=True)

    def record_fields(self) -> dict[str, Any]:
        """Return the check's provider record, as values.

        Keys: ``provider``, ``pagination``, ``max_attempts`` and ``attempts``,
        one :meth:`CheckAttempt.record_fields` per request in :attr:`attempts`
        order, each with its own ``capture`` and body. The times are aware
        datetimes and the bodies shared JSON values: the evidence writer's
        caller formats the one and wraps the other, as for a search's
        :meth:`ProviderObservation.record_fields`.
        """
        return _provider_fields(
            [attempt.record_fields() for attempt in self.attempts], self.max_attempts
        )

    @staticmethod
    def not_run_record_fields(parsed: ParsedReferences | None) -> dict[str, Any]:
        """Return the provider record of a check that never ran: no attempt.

        ``max_attempts`` is that of a check of *parsed* (the caller ran out of
        time before the check could start), or 0 when *parsed* is None (the
        input was refused before it was read).
        """
        return _provider_fields([], 0 if parsed is None else _max_attempts(parsed.references))

    def summary(self) -> dict[str, int]:
        """Return a count for every :class:`Verdict` value (0 when unused), in enum order."""
        counts = {verdict.value: 0 for verdict in Verdict}
        for reference in self.references:
            counts[reference.verdict.value] += 1
        return counts


# ------------------------------------------------------------------ the plan


def doi_batch_params(dois: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """The query parameters of one DOI batch (no open-access or has-DOI filter)."""
    return (
        ("filter", "doi:" + "|".join(dois)),
        ("per-page", str(DOI_BATCH_PER_PAGE)),
        ("select", ",".join(WORK_SELECT_FIELDS)),
    )


def title_params(query: str) -> tuple[tuple[str, str], ...]:
    """The query parameters of one title lookup (*query* from :func:`title_query`)."""
    return (
        ("filter", f"title.search:{query}"),
        ("per-page", str(MAX_TITLE_CANDIDATES)),
        ("select", ",".join(WORK_SELECT_FIELDS)),
    )


@dataclass(slots=True)
class _Task:
    """One planned request: its place in the attempt order and the references it serves."""

    order: tuple[int, int]
    purpose: AttemptPurpose
    params: tuple[tuple[str, str], ...]
    limit: int
    #: Input positions (into the parsed references) served by this request.
    serves: tuple[int, ...]
    result: ProviderResult | None = None


@dataclass(slots=True)
class _State:
    """The coordinator's view of a running check (touched by its thread only)."""

    #: Per decided reference: its entry, or for a matched one the task whose
    #: body holds its work (the entry's attempt index is known at assembly).
    decided: dict[int, CheckedReference | _Match] = field(default_factory=dict)
    done: list[_Task] = field(default_factory=list)


def _doi_batches(references: Sequence[Reference]) -> list[tuple[list[str], tuple[int, ...]]]:
    """The DOI batches of a check: each one's DOIs and the input positions it serves.

    The references that have a batch DOI, in input order, each distinct DOI
    once, 50 DOIs a request. A DOI that :func:`filter_safe` refuses is never
    one of them, so no DOI can add alternatives or filters to a batch: at most
    50 DOIs each, whatever the input.
    """
    by_doi: dict[str, list[int]] = {}
    for position, reference in enumerate(references):
        doi = _batch_doi(reference)
        if doi is not None:
            by_doi.setdefault(doi, []).append(position)
    dois = list(by_doi)
    batches: list[tuple[list[str], tuple[int, ...]]] = []
    for start in range(0, len(dois), MAX_DOIS_PER_REQUEST):
        chunk = dois[start : start + MAX_DOIS_PER_REQUEST]
        batches.append((chunk, tuple(sorted(p for doi in chunk for p in by_doi[doi]))))
    return batches


def _batches(references: Sequence[Reference]) -> list[_Task]:
    """The requests of :func:`_doi_batches`, in their planned order."""
    return [
        _Task(
            order=(0, number),
            purpose=AttemptPurpose.DOI_BATCH,
            params=doi_batch_params(dois),
            limit=DOI_BATCH_PER_PAGE,
            serves=serves,
        )
        for number, (dois, serves) in enumerate(_doi_batches(references))
    ]


def _max_attempts(references: Sequence[Reference]) -> int:
    """The most requests a check of *references* can make (:attr:`ReferenceCheck.max_attempts`).

    Every DOI batch :func:`_batches` plans, plus one title lookup for each
    readable reference: a reference gets at most one, when it has no batch DOI
    or its batch did not find it.
    """
    return len(_doi_batches(references)) + sum(1 for reference in references if reference.parsed)


def _provider_fields(attempts: list[dict[str, Any]], max_attempts: int) -> dict[str, Any]:
    """A check's provider record around its attempts' entries (spec 2.6)."""
    return {
        "attempts": attempts,
        "max_attempts": max_attempts,
        "pagination": False,
        "provider": "openalex",
    }


def _title_task(position: int, reference: Reference) -> _Task | None:
    query = title_query(reference.title) if reference.title is not None else None
    if query is None:
        return None
    return _Task(
        order=(1, position),
        purpose=AttemptPurpose.TITLE,
        params=title_params(query),
        limit=MAX_TITLE_CANDIDATES,
        serves=(position,),
    )


def _entry(
    reference: Reference,
    verdict: Verdict,
    *,
    error: ReferenceErrorCode | None = None,
) -> CheckedReference:
    """The entry of a reference decided without a work."""
    return CheckedReference(
        index=reference.index,
        key=reference.key,
        verdict=verdict,
        differs=(),
        retracted=None,
        work=None,
        attempt_index=None,
        error=error,
        identifier_withheld=_withheld(reference),
    )


def _unparsed_entry(reference: Reference) -> CheckedReference:
    return _entry(reference, Verdict.UNPARSED, error=reference.unparsed_reason)


def _error_code(failure: ProviderFailure | None) -> ReferenceErrorCode:
    if failure is None:
        return ErrorCode.PROVIDER_ERROR
    if failure.reason is not None:
        return failure.reason
    return failure.code


@dataclass(frozen=True, slots=True)
class _Match:
    """A reference decided on a work: its entry is made once the attempt order is known."""

    task: _Task
    decision: Decision
    work: Work

    def entry(self, reference: Reference, attempt_index: int) -> CheckedReference:
        return CheckedReference(
            index=reference.index,
            key=reference.key,
            verdict=self.decision.verdict,
            differs=self.decision.differs,
            retracted=self.work.is_retracted,
            work=self.work,
            attempt_index=attempt_index,
            error=None,
            identifier_withheld=_withheld(reference),
        )


# ------------------------------------------------------------------- the run


class CheckRun:
    """One check whose configuration the client accepted: plans, sends, decides, assembles.

    *send* is the client's one-GET path; :meth:`run` is called once.
    """

    def __init__(
        self,
        send: Send,
        references: Sequence[Reference],
        *,
        concurrency: int,
        deadline: Deadline,
        per_request_s: float,
        too_deep: DepthCheck | None,
        on_progress: Callable[[int, int], None] | None,
        cancelled: Callable[[], bool] | None,
        current_year: int,
    ) -> None:
        self._send_one = send
        self._references = references
        self._concurrency = concurrency
        self._deadline = deadline
        self._per_request_s = per_request_s
        self._too_deep = too_deep
        self._on_progress = on_progress
        self._cancelled = cancelled
        self._current_year = current_year
        self._state = _State()
        self._lock = threading.Lock()
        self._in_flight: list[Deadline] = []
        self._stopped = False

    # ---- worker side

    def _watch(self, deadline: Deadline) -> None:
        with self._lock:
            self._in_flight.append(deadline)
            stopped = self._stopped
        if stopped:
            deadline.fire()

    def _send(self, task: _Task) -> _Task:
        left = self._deadline.remaining()
        if self._stopped or left <= 0:
            return task
        task.result = self._send_one(
            task.params,
            limit=task.limit,
            total_s=min(left, self._per_request_s),
            too_deep=self._too_deep,
            watch=self._watch,
        )
        return task

    def _stop(self) -> None:
        with self._lock:
            self._stopped = True
            in_flight = list(self._in_flight)
        for deadline in in_flight:
            deadline.fire()

    def _should_stop(self) -> bool:
        if self._stopped:
            return True
        if self._deadline.expired() or (self._cancelled is not None and self._cancelled()):
            self._stop()
            return True
        return False

    # ---- coordinator side

    def _decide(self, position: int, entry: CheckedReference | _Match) -> None:
        self._state.decided[position] = entry
        if self._on_progress is not None:
            self._on_progress(len(self._state.decided), len(self._references))

    def _unreached(self, task: _Task) -> None:
        for position in task.serves:
            if position not in self._state.decided:
                self._decide(
                    position,
                    _entry(
                        self._references[position],
                        Verdict.UNCHECKED,
                        error=UncheckedReason.DEADLINE_EXCEEDED,
                    ),
                )

    def _failed(self, task: _Task, result: ProviderResult) -> None:
        failure = result.error
        timed_out = (
            failure is not None
            and failure.reason is ProviderReason.TIMEOUT
            and (self._stopped or self._deadline.expired())
        )
        code = UncheckedReason.DEADLINE_EXCEEDED if timed_out else _error_code(failure)
        for position in task.serves:
            self._decide(
                position, _entry(self._references[position], Verdict.UNCHECKED, error=code)
            )

    def _matched(self, position: int, task: _Task, decision: Decision, work: Work) -> None:
        self._decide(position, _Match(task, decision, work))

    def _apply_doi_batch(self, task: _Task, result: ProviderResult) -> list[_Task]:
        """Decide what the batch answered; return the title lookups it calls for."""
        by_doi: dict[str, list[Work]] = {}
        for work in result.works:
            if work.doi is not None:
                by_doi.setdefault(work.doi, []).append(work)
        follow: list[_Task] = []
        for position in task.serves:
            reference = self._references[position]
            works = by_doi.get(reference.lookup_doi or "", [])
            if works:
                decision = decide_by_doi(reference, works, current_year=self._current_year)
                if decision.chosen is not None:
                    self._matched(position, task, decision, works[decision.chosen])
                else:
                    self._decide(position, _entry(reference, decision.verdict))
                continue
            title_task = _title_task(position, reference)
            if title_task is None:
                self._decide(position, _entry(reference, Verdict.NOT_FOUND))
            else:
                follow.append(title_task)
        return follow

    def _apply_title(self, task: _Task, result: ProviderResult) -> None:
        (position,) = task.serves
        reference = self._references[position]
        works = result.works
        decision = decide_by_title(reference, works, current_year=self._current_year)
        withheld_doi = reference.lookup_doi if _withheld(reference) is not None else None
        if withheld_doi is not None:
            # The DOI that could not be sent is still compared: a candidate
            # carrying it is the reference's work, as a batch would have found.
            carrying = [index for index, work in enumerate(works) if work.doi == withheld_doi]
            if carrying:
                by_doi = decide_by_doi(
                    reference, [works[index] for index in carrying], current_year=self._current_year
                )
                chosen = None if by_doi.chosen is None else carrying[by_doi.chosen]
                decision = Decision(by_doi.verdict, chosen, by_doi.differs)
        if decision.chosen is None:
            self._decide(position, _entry(reference, decision.verdict))
        else:
            self._matched(position, task, decision, works[decision.chosen])

    def _apply(self, task: _Task) -> list[_Task]:
        result = task.result
        self._state.done.append(task)
        if result is None:
            self._unreached(task)
            return []
        if not result.ok:
            self._failed(task, result)
            return []
        if task.purpose is AttemptPurpose.DOI_BATCH:
            return self._apply_doi_batch(task, result)
        self._apply_title(task, result)
        return []

    def run(self) -> ReferenceCheck:
        references = self._references
        for position, reference in enumerate(references):
            if not reference.parsed:
                self._decide(position, _unparsed_entry(reference))
        queue: list[_Task] = _batches(references)
        for position, reference in enumerate(references):
            if reference.parsed and _batch_doi(reference) is None:
                task = _title_task(position, reference)
                if task is None:
                    self._decide(position, _entry(reference, Verdict.NOT_FOUND))
                else:
                    queue.append(task)
        pending: set[Future[_Task]] = set()
        with ThreadPoolExecutor(
            max_workers=self._concurrency, thread_name_prefix="notanda-openalex-check"
        ) as pool:
            while queue or pending:
                if self._should_stop():
                    for task in queue:
                        self._state.done.append(task)
                        self._unreached(task)
                    queue = []
                while queue and len(pending) < self._concurrency:
                    pending.add(pool.submit(self._send, queue.pop(0)))
                if not pending:
                    continue
                finished, pending = wait(pending, timeout=_POLL_S, return_when=FIRST_COMPLETED)
                for future in sorted(finished, key=lambda item: item.result().order):
                    queue.extend(self._apply(future.result()))
                queue.sort(key=lambda item: item.order)
        return self._assemble()

    def _assemble(self) -> ReferenceCheck:
        sent = sorted(
            (task for task in self._state.done if task.result is not None),
            key=lambda task: task.order,
        )
        index_of = {id(task): number for number, task in enumerate(sent)}
        attempts = tuple(
            CheckAttempt(
                purpose=task.purpose,
                observation=task.result.observation,
                failure=task.result.error,
            )
            for task in sent
            if task.result is not None
        )
        entries: list[CheckedReference] = []
        for position, reference in enumerate(self._references):
            decided = self._state.decided.get(position)
            if decided is None:  # pragma: no cover - every path decides every reference
                decided = _entry(
                    reference, Verdict.UNCHECKED, error=UncheckedReason.DEADLINE_EXCEEDED
                )
            if isinstance(decided, _Match):
                decided = decided.entry(reference, index_of[id(decided.task)])
            entries.append(decided)
        return ReferenceCheck(
            references=tuple(entries),
            attempts=attempts,
            max_attempts=_max_attempts(self._references),
        )


def refused_check(parsed: ParsedReferences, failure: ProviderFailure) -> ReferenceCheck:
    """The check that failed as a whole: no attempt, every parsed reference ``unchecked``."""
    entries = tuple(
        _entry(reference, Verdict.UNCHECKED, error=failure.code)
        if reference.parsed
        else _unparsed_entry(reference)
        for reference in parsed.references
    )
    return ReferenceCheck(
        references=entries,
        attempts=(),
        failure=failure,
        max_attempts=_max_attempts(parsed.references),
    )
