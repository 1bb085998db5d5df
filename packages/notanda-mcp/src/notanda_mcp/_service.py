"""The operations without MCP: a search or a check that always leaves a record; a retrieval.

Everything here is synchronous and runs in a worker thread. A search and a
check take the same path (:meth:`EvidenceService._record_call`):

1. validate the arguments (``notanda_openalex.prepare_search``, or
   ``parse_references`` for a check);
2. create the record and publish ``request.json`` before anything else, so
   that a call that reaches the server leaves evidence even when it fails;
3. wait for one of the search slots, inside the tool's deadline (a check
   holds its slot for its whole run);
4. ask OpenAlex (a search: one GET; a check: its DOI batches and title
   lookups) and publish ``provider.json`` and ``response.json``;
5. seal, append to the log, and only then answer: success is never reported
   for a record that is not sealed and logged.

Nothing heavy is imported at start-up: cold start matters to the MCP clients
that spawn this server. :meth:`EvidenceService.warm_up` loads it in the
background once the client has the tool list, so the first search does not pay.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

# The sibling packages are imported as modules and their names read at call time: each
# package's lazy ``__getattr__`` loads the module behind a name on first use, so the
# client, pydantic and httpx stay out of the server's start-up (see the module docstring).
import notanda_evidence as evidence
import notanda_openalex as openalex
from notanda_evidence.verify_file import (
    MAX_JSON_DEPTH,
    NOTICE,
    format_timestamp,
    json_depth_exceeds,
    receipt_problem,
)

from . import _software
from ._codes import AnswerStatus, BusyReason, RecordState, ToolError, error_answer
from ._guard import LogUnavailable, log_call, prestart, record_conditions, start_log_call
from ._logging import LOGGER
from ._schemas import CHECK_REFERENCES, REMEDIES, SEARCH_LITERATURE

if TYPE_CHECKING:
    import httpx
    from notanda_evidence import EvidenceLog, EvidenceStore, Head, RecordWriter, StageCallback
    from notanda_openalex import (
        OpenAlexClient,
        ParsedReferences,
        ProviderFailure,
        ProviderResult,
        ReferenceCheck,
        SearchRequest,
    )

__all__ = [
    "CHECK_DEADLINE_S",
    "Caller",
    "SEARCH_DEADLINE_S",
    "EvidenceService",
    "Reply",
    "command_line_remedy",
    "remedy_for",
]

#: The whole search, from arrival to answer, including any wait for a slot:
#: the client's own default deadline for a search.
SEARCH_DEADLINE_S = openalex.DEFAULT_SEARCH_DEADLINE_S
#: The server's budget for a whole reference check, from arrival to answer,
#: including any wait for a slot; what is left is the check's own deadline.
#: The client's default for a check, so a record's ``limits`` mean one thing.
CHECK_DEADLINE_S = openalex.DEFAULT_CHECK_DEADLINE_S
#: Requests the server lets one check keep in flight: the client's default.
CHECK_CONCURRENCY = openalex.DEFAULT_CHECK_CONCURRENCY
#: Searches that may run at once in one process; later ones wait for a slot.
DEFAULT_SEARCH_SLOTS = 2


def _never() -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asked for a recorded call, and how the MCP layer follows it.

    ``client`` and ``protocol_version`` go into ``request.json``; ``cancelled``
    says whether the client gave up (the record is then marked, and a check
    stops starting requests); ``on_record`` is told the evidence ID as soon as
    the record exists, and ``on_sealed`` the receipt as soon as it is sealed,
    so that a caller who stops waiting can still name the record it left.
    """

    client: dict[str, str] | None = None
    protocol_version: str | None = None
    cancelled: Callable[[], bool] = _never
    on_record: Callable[[str], None] | None = None
    on_sealed: Callable[[str], None] | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """What a tool answers: the structured content and whether the operation failed.

    An answer that carries an ``error`` (or ``status: "incomplete"``) gets its
    one-line ``remedy`` here, when answering: it is never stored.
    """

    content: dict[str, Any]
    is_error: bool
    #: An upper bound on how deep :attr:`content` nests when it is ``json.loads``
    #: output (string keys only) from bytes checked against that depth, plus
    #: string fields: its text is then encoded without walking it again.
    parsed_depth: int | None = None

    def __post_init__(self) -> None:
        remedy = remedy_for(self.content)
        if remedy is not None and "remedy" not in self.content:
            object.__setattr__(self, "content", {**self.content, "remedy": remedy})


#: The ``reason`` of a ``receipt_mismatch`` whose receipt is not 64 lowercase hex
#: digits; its ``detail`` says what was given against what a receipt is.
RECEIPT_MALFORMED = "receipt_malformed"


def remedy_for(content: Mapping[str, Any]) -> str | None:
    """The one-line remedy for an answer's ``error`` (or ``incomplete`` status), or None."""
    code = content.get("error")
    if code is None and content.get("status") == AnswerStatus.INCOMPLETE:
        code = AnswerStatus.INCOMPLETE
    if not isinstance(code, str):
        return None
    if code == ToolError.RECEIPT_MISMATCH and content.get("reason") == RECEIPT_MALFORMED:
        # Not a receipt at all: nothing is said of the record, least of all a replacement.
        return evidence.Code.RECEIPT_MALFORMED.remedy
    try:  # a stored detail or reason this release does not know keeps the code's remedy
        if code == ToolError.CONFIGURATION_ERROR:
            return openalex.ConfigurationDetail(str(content.get("detail"))).remedy
        if code == ToolError.PROVIDER_ERROR:
            return openalex.ProviderReason(str(content.get("reason"))).remedy
    except ValueError:
        pass
    return REMEDIES.get(code)


#: How a remedy written for an MCP client reads on the command line: each phrase
#: that speaks of the server, its tools or a client, and what a person at a
#: prompt does instead. Applied by :func:`command_line_remedy` to whatever
#: remedy an answer carries, so the server's table stays the one home of the text.
COMMAND_LINE_PHRASES: tuple[tuple[str, str], ...] = (
    ("in the server's environment", "in the environment"),
    (", and restart the server", ", and run the command again"),
    (
        "correct the argument that field names (see the tool's input schema) and call again",
        "correct the input that field names (the FILE, or an option: see the command's --help) "
        "and run the command again",
    ),
    (
        "report it with the server's stderr; get_evidence with the evidence_id tells what "
        "state the record is in",
        "report it with the command's output; notanda-evidence verify on the evidence ID's "
        "folder tells what state the record is in",
    ),
)


def command_line_remedy(remedy: str) -> str:
    """*remedy* as said to a person running a command rather than to an MCP client."""
    for server, command_line in COMMAND_LINE_PHRASES:
        remedy = remedy.replace(server, command_line)
    return remedy


_T = TypeVar("_T")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _release_large_buffers() -> None:
    """Keep multi-megabyte buffers out of the heap (glibc), so memory stays flat.

    glibc serves large allocations with ``mmap`` and gives them back on free,
    but raises that threshold after each such free, so the next provider page
    (several MiB of body, text and canonical bytes) lands in the heap and is
    never returned. A fixed threshold stops that drift. Elsewhere (musl,
    macOS, Windows) this does nothing.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # noqa: PLC0415 - Linux only, once: start-up does not load it

    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_MMAP_THRESHOLD, 1 << 20)
    except (OSError, AttributeError):
        pass


#: ``mallopt`` parameter number of ``M_MMAP_THRESHOLD`` in glibc's malloc.h.
_M_MMAP_THRESHOLD = -3
#: A provider body at least this large is followed by :func:`_return_freed_pages`.
_LARGE_BODY_BYTES = 1 << 20


def _return_freed_pages() -> None:
    """Give the pages freed inside the heaps back to the system (glibc ``malloc_trim``).

    A large page leaves the heaps (one per thread that searched) holding the
    space its parse used: free, but resident, so that each later search began
    higher and the peak crept up (to 41 MiB above idle over six 3.8 MB pages,
    27 MiB with this; issue 23). Called after a search whose body reached
    :data:`_LARGE_BODY_BYTES`; it takes about a millisecond. Elsewhere (musl,
    macOS, Windows) this does nothing.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # noqa: PLC0415 - Linux only, after a large page: start-up does not load it

    try:
        libc = ctypes.CDLL(None)
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass


#: The one work of :meth:`EvidenceService._rehearse`'s page, shaped as OpenAlex sends one.
_REHEARSAL_WORK = {
    "id": "https://openalex.org/W0",
    "doi": "https://doi.org/10.5555/warm-up",
    "title": "Warm-up",
    "display_name": "Warm-up",
    "publication_year": 2020,
    "publication_date": "2020-01-01",
    "type": "article",
    "language": "en",
    "is_retracted": False,
    "cited_by_count": 0,
    "authorships": [{"author": {"display_name": "A. Author", "orcid": None}}],
    "primary_location": {"source": {"display_name": "Journal"}},
    "open_access": {"is_oa": True, "oa_status": "gold", "oa_url": None},
}


def _timestamp() -> str:
    return format_timestamp(dt.datetime.now(dt.UTC))


class EvidenceService:
    """Searches into evidence records and retrieves them.

    Args:
        root: The evidence root; it must exist.
        transport: An httpx transport used instead of the network (tests and
            the doctor's self-test). Records made through it say ``injected``.
        env: The environment the notanda core configuration is read from
            (``HARVESTER_*``, ``HARVESTER_CONFIG``); ``os.environ`` by default.
        on_stage: Called with ``(stage, evidence_id)`` at every write stage and
            at ``provider_wait`` and ``before_reply``.
        search_slots: How many searches (or checks) may run at once.
        check_concurrency: Requests one reference check keeps in flight.
        check_deadline_s: The total deadline of one reference check.

    Raises:
        notanda_openalex.ConfigurationError: The notanda core configuration is
            unreadable or invalid (checked once, here).
    """

    def __init__(
        self,
        root: Path,
        *,
        transport: httpx.BaseTransport | None = None,
        env: Mapping[str, str] | None = None,
        on_stage: StageCallback | None = None,
        search_slots: int = DEFAULT_SEARCH_SLOTS,
        check_concurrency: int = CHECK_CONCURRENCY,
        check_deadline_s: float = CHECK_DEADLINE_S,
    ) -> None:
        self.root = root
        self.provider_mode = "injected" if transport is not None else "network"
        self._transport = transport
        self._config = openalex.load_core_config(env)
        self._on_stage = on_stage
        self._slots = threading.BoundedSemaphore(search_slots)
        self._check_concurrency = check_concurrency
        self._check_deadline_s = check_deadline_s
        self._lock = threading.Lock()
        self._client: OpenAlexClient | None = None
        self._store: EvidenceStore | None = None
        self._log: EvidenceLog | None = None

    # ------------------------------------------------------------ lazy parts

    def _parts(self) -> tuple[OpenAlexClient, EvidenceStore, EvidenceLog]:
        with self._lock:
            if self._client is None or self._store is None or self._log is None:
                _release_large_buffers()
                self._client = openalex.OpenAlexClient.from_core_config(
                    config=self._config, transport=self._transport
                )
                self._store = evidence.EvidenceStore(self.root, on_stage=self._on_stage)
                self._log = evidence.EvidenceLog(self.root, on_stage=self._on_stage)
            return self._client, self._store, self._log

    def warm_up(self) -> None:
        """Load what a search needs ahead of the first one: its imports, parts, code digest and log.

        Run in a background thread once the client has the tool list (see
        ``NotandaServer``); a failure here is left for the search to meet and answer.
        """
        try:
            self._parts()
            _software.software_record()
            request = openalex.prepare_search("warm up", 1, None)
            self._rehearse(request)
            prestart("notanda-log")
            # The first append of a process reads the whole log to know its
            # tree (every later one reads only what others appended): a
            # collection's history would otherwise fall inside the first search.
            self._evidence_log().refresh()
        except Exception:  # noqa: S110 - the first search meets the same failure and answers it
            pass

    def _rehearse(self, request: SearchRequest) -> None:
        """Run the body-to-answer path once on a page held in memory: no network, no record.

        A throwaway client with an ``httpx.MockTransport`` answers with one
        made-up work, so that what the first search would do for the first
        time (the exchange, the strict parse, the work models, the answer's
        shape) has been done; the service's own client and store are not used.
        """
        import httpx  # noqa: PLC0415 - the warm-up thread loads it, never start-up

        page = json.dumps({"meta": {"count": 1}, "results": [_REHEARSAL_WORK]}).encode()
        client = openalex.OpenAlexClient(
            api_key=None,
            allow_keyless=True,
            transport=httpx.MockTransport(
                lambda _: httpx.Response(
                    200, headers={"content-type": "application/json"}, content=page
                )
            ),
        )
        result = client.search(request, too_deep=_body_too_deep)
        _from_result("0" * 32, result, request)

    def _evidence_log(self) -> EvidenceLog:
        with self._lock:
            if self._log is None:
                self._log = evidence.EvidenceLog(self.root, on_stage=self._on_stage)
            return self._log

    def evidence_log(self) -> EvidenceLog:
        """The log reader that retrievals use; it never touches the provider."""
        return self._evidence_log()

    def redact(self, value: Any) -> Any:
        """*value* with this configuration's secrets scrubbed, as records are stored."""
        openalex, _, _ = self._parts()
        return openalex.redact(value)

    def log_head(self) -> Head:
        """The log's current head, read under the log guard (what the stamper stamps).

        Raises:
            LogUnavailable: The log could not be read; ``reason`` says why.
        """
        log = self._evidence_log()
        return log_call(log, log.head)

    def _stage(self, stage: str, evidence_id: str) -> None:
        if self._on_stage is not None:
            self._on_stage(evidence.Stage(stage), evidence_id)

    # ---------------------------------------------------------------- search

    def search(self, arguments: Mapping[str, Any], caller: Caller) -> Reply:
        """Run one search into a new record; see the module docstring for the order."""
        started = time.monotonic()
        query, limit, filters = (
            arguments.get("query"),
            arguments.get("limit", openalex.DEFAULT_LIMIT),
            arguments.get("filters"),
        )
        request: SearchRequest | None = None
        invalid: openalex.InputError | None = None
        try:
            request = openalex.prepare_search(query, limit, filters)
            described = request.to_record()
        except openalex.InputError as exc:
            invalid = exc
            described = {
                "supplied": openalex.supplied_record(query, limit, filters),
                "effective": None,
            }
        fields = {
            "effective": described["effective"],
            "limit": None if request is None else request.effective.limit,
            "supplied": described["supplied"],
        }

        large = False

        def answer(
            openalex: OpenAlexClient, evidence_id: str
        ) -> tuple[dict[str, Any], dict[str, Any]]:
            nonlocal large
            if request is None or invalid is not None:
                return _not_attempted(), _invalid_response(evidence_id, invalid)
            searched = request
            result = self._in_slot(
                evidence_id,
                started,
                SEARCH_DEADLINE_S,
                lambda left: openalex.search(searched, deadline_s=left, too_deep=_body_too_deep),
            )
            attempt = None if result is None else result.observation.attempt
            large = attempt is not None and (attempt.body_bytes or 0) >= _LARGE_BODY_BYTES
            return _from_result(evidence_id, result, searched)

        reply = self._record_call(
            SEARCH_LITERATURE,
            fields,
            answer,
            caller,
            kind="search",
        )
        if large:
            _return_freed_pages()
        return reply

    def check(
        self,
        arguments: Mapping[str, Any],
        caller: Caller,
        *,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> Reply:
        """Check a bibliography into a new record: the same stages as :meth:`search`.

        The text is read (``parse_references``) before the record exists; a
        refusal (too large, empty, an unknown format) is still recorded, with
        nothing sent. ``caller.cancelled`` stops the check early (no new request; the
        references not reached are ``unchecked``), and the record is sealed
        regardless. *on_progress* gets ``(decided, total)`` as references are
        decided.
        """
        started = time.monotonic()
        # The input schema makes both strings; parse_references checks again.
        text: Any = arguments.get("references")
        format_name: Any = arguments.get("format", openalex.ReferenceFormat.AUTO.value)
        parsed: ParsedReferences | None = None
        invalid: openalex.ReferenceInputError | None = None
        try:
            parsed = openalex.parse_references(text, format_name)
        except openalex.ReferenceInputError as exc:
            invalid = exc
        limits: dict[str, Any] = {
            "max_references": openalex.MAX_REFERENCES,
            "max_text_bytes": openalex.MAX_REFERENCES_BYTES,
        }
        return self._check_record(
            caller,
            started=started,
            parsed=parsed,
            invalid=invalid,
            format_name=format_name,
            encoded=_text_bytes(text),
            limits=limits,
            described=None if parsed is None else parsed.to_record(),
            extra={},
            on_progress=on_progress,
        )

    def check_part(
        self,
        part: ParsedReferences,
        caller: Caller,
        *,
        text: str,
        format_name: str,
        run: Mapping[str, Any],
        file_indexes: Sequence[int],
        on_progress: Callable[[int, int], None] | None = None,
        stop_reason: Callable[[ReferenceCheck | None, bool], str | None] | None = None,
    ) -> Reply:
        """Check one part of a bibliography file into its own record (``check-references``).

        *part* is already read (the whole file was, once) and numbered from 0;
        *text* is its entries' raw text joined in file order, over which
        ``text_sha256`` and ``text_bytes`` are computed; *run* (``run_id``,
        ``file_sha256``, ``file_bytes``, ``part``, ``parts``) goes into
        ``request.json`` as ``run``, and each parsed reference gets its
        ``file_index`` from *file_indexes*. *stop_reason*, given the check's
        outcome and whether it was cancelled, names why the run stops after this
        part (``response.json``'s ``stopped``), or None. Limits, deadline and
        attempt plan are those of :meth:`check`.
        """
        if len(part) > openalex.MAX_REFERENCES or len(file_indexes) != len(part):
            raise ValueError("a part holds at most MAX_REFERENCES references, each with its index")
        described = part.to_record()
        for entry, file_index in zip(described["references"], file_indexes, strict=True):
            entry["file_index"] = file_index
        return self._check_record(
            caller,
            started=time.monotonic(),
            parsed=part,
            invalid=None,
            format_name=format_name,
            encoded=_text_bytes(text),
            limits={"max_references": openalex.MAX_REFERENCES, "max_text_bytes": None},
            described=described,
            extra={"run": dict(run)},
            on_progress=on_progress,
            stop_reason=stop_reason,
        )

    def _check_record(
        self,
        caller: Caller,
        *,
        started: float,
        parsed: ParsedReferences | None,
        invalid: Any,
        format_name: Any,
        encoded: bytes,
        limits: dict[str, Any],
        described: dict[str, Any] | None,
        extra: Mapping[str, Any],
        on_progress: Callable[[int, int], None] | None = None,
        stop_reason: Callable[[ReferenceCheck | None, bool], str | None] | None = None,
    ) -> Reply:
        """The record of one check: its request fields, the check in a slot, the stop reason."""
        if parsed is not None:
            limits.update(concurrency=self._check_concurrency, deadline_s=self._check_deadline_s)
        fields = {
            "format": format_name if isinstance(format_name, str) else type(format_name).__name__,
            "limits": limits,
            "parsed": described,
            "text_bytes": len(encoded),
            "text_sha256": hashlib.sha256(encoded).hexdigest(),
            **extra,
        }

        outcome: list[ReferenceCheck | None] = []

        def answer(
            openalex: OpenAlexClient, evidence_id: str
        ) -> tuple[dict[str, Any], dict[str, Any]]:
            if parsed is None:
                return _not_run_check(None), _check_refusal(evidence_id, invalid)
            checked = parsed
            result = self._in_slot(
                evidence_id,
                started,
                self._check_deadline_s,
                lambda left: openalex.check_references(
                    checked,
                    concurrency=self._check_concurrency,
                    deadline_s=left,
                    too_deep=_check_body_too_deep,
                    on_progress=on_progress,
                    cancelled=caller.cancelled,
                ),
            )
            outcome.append(result)
            return _from_check(evidence_id, result, checked)

        def finish(response: dict[str, Any], cancelled: bool) -> None:
            # Decided with the same view of cancellation as the record's ``cancelled``.
            if stop_reason is not None and outcome:
                stopped = stop_reason(outcome[0], cancelled)
                if stopped is not None:
                    response["stopped"] = stopped

        return self._record_call(
            CHECK_REFERENCES,
            fields,
            answer,
            caller,
            kind="check",
            by_name=False,
            finish=finish,
        )

    def _record_call(
        self,
        tool: str,
        fields: Mapping[str, Any],
        answer: Callable[[OpenAlexClient, str], tuple[dict[str, Any], dict[str, Any]]],
        caller: Caller,
        *,
        kind: str,
        by_name: bool = True,
        finish: Callable[[dict[str, Any], bool], None] | None = None,
    ) -> Reply:
        """The stages every recorded tool shares: create, request, answer, seal, log, reply.

        *finish*, if given, completes the response once cancellation is
        known: ``(response, cancelled)``, before it is written.

        Secrets are scrubbed from the request and the response before they are
        written. With *by_name* False only secret values are (a check's fields
        have fixed names, and its ``key`` is a citation key, not a credential).
        """
        openalex, store, log = self._parts()
        redact = openalex.redact if by_name else partial(_redact_values, openalex)
        try:
            writer = store.create()
        except evidence.EvidenceStorageError as exc:
            LOGGER.error(f"{kind} rejected before a record: %s", exc.reason.value)
            return _storage_failure(exc, None)
        evidence_id = writer.evidence_id
        if caller.on_record is not None:
            caller.on_record(evidence_id)
        record = {
            "client": caller.client,
            **fields,
            "evidence_id": evidence_id,
            "protocol_version": caller.protocol_version,
            "provider": "openalex",
            "provider_mode": self.provider_mode,
            "requested_at": _timestamp(),
            "schema_version": 1,
            "software": _software.software_record(),
            "tool": tool,
        }
        try:
            writer.write_request(redact(record))
            provider, response = answer(openalex, evidence_id)
            cancelled = caller.cancelled()
            if cancelled:
                response["cancelled"] = True
            if finish is not None:
                finish(response, cancelled)
            writer.write_provider(provider)
            # The same rule as request.json: the effective query is the
            # caller's text, which may hold the key or the contact e-mail.
            stored = writer.write_response(redact(response))
            seal = writer.seal()
            if caller.on_sealed is not None:
                caller.on_sealed(seal.receipt)
        except evidence.EvidenceStorageError as exc:
            LOGGER.error(f"{kind} %s failed before sealing: %s", evidence_id, exc.reason.value)
            writer.close()
            return _storage_failure(exc, evidence_id)
        return self._log_and_reply(log, writer, seal.receipt, stored, cancelled, kind=kind)

    def _in_slot(
        self,
        evidence_id: str,
        started: float,
        deadline_s: float,
        run: Callable[[float], _T],
    ) -> _T | None:
        """Wait for a slot inside the deadline, then *run* with the time left; None if none came."""
        remaining = deadline_s - (time.monotonic() - started)
        if remaining <= 0 or not self._slots.acquire(timeout=remaining):
            return None
        try:
            self._stage("provider_wait", evidence_id)
            remaining = deadline_s - (time.monotonic() - started)
            return run(max(remaining, 0.001))
        finally:
            self._slots.release()

    def _log_and_reply(
        self,
        log: EvidenceLog,
        writer: RecordWriter,
        receipt: str,
        stored: dict[str, Any],
        cancelled: bool,
        *,
        kind: str,
    ) -> Reply:
        evidence_id = writer.evidence_id
        try:
            appended = log_call(log, partial(log.append, evidence_id, receipt))
        except LogUnavailable as exc:
            LOGGER.error(f"{kind} %s sealed but not logged: %s", evidence_id, exc.reason)
            return Reply(
                error_answer(
                    ToolError.EVIDENCE_LOG_UNAVAILABLE,
                    evidence_id=evidence_id,
                    log_reason=exc.reason,
                    persisted=True,
                    receipt=receipt,
                ),
                is_error=True,
            )
        content = {
            **stored,
            "head": str(appended.head),
            "log_head": appended.head.to_json(),
            "log_index": appended.entry.index,
            "receipt": receipt,
        }
        if cancelled:
            LOGGER.info(
                f"{kind} %s cancelled by the client; sealed: %s", evidence_id, stored["status"]
            )
        else:
            LOGGER.info(f"{kind} %s sealed: %s", evidence_id, stored["status"])
        self._stage("before_reply", evidence_id)
        return Reply(content, is_error=stored["status"] != AnswerStatus.OK)

    # -------------------------------------------------------------- retrieval

    def get_evidence(self, arguments: Mapping[str, Any]) -> Reply:
        """Verify a stored record and return its response, without any provider call."""
        evidence_id = arguments.get("evidence_id")
        receipt = arguments.get("receipt")
        log = self._evidence_log()
        # The lookup runs in the log worker while this thread verifies the
        # record; its answer, or its failure, only counts once the record
        # has checked out, as when it ran after (issue 11).
        pending = (
            start_log_call(log, partial(log.lookup, evidence_id))
            if evidence.is_evidence_id(evidence_id)
            else None
        )
        try:
            result = evidence.open_record(self.root, evidence_id, receipt)
        except record_conditions() as exc:
            # A record file nested past the parser's depth or too large for
            # memory: whatever its bytes, the record does not check out.
            if not evidence.is_evidence_id(evidence_id):  # pragma: no cover - checked earlier
                return Reply(error_answer(ToolError.INVALID_EVIDENCE_ID), is_error=True)
            condition = f"{ToolError.INTEGRITY_FAILURE} ({type(exc).__name__})"
            LOGGER.warning("retrieval %s: %s", evidence_id, condition)
            return Reply(
                error_answer(ToolError.INTEGRITY_FAILURE, evidence_id=evidence_id), is_error=True
            )
        if result.outcome is evidence.Outcome.INVALID_EVIDENCE_ID:
            LOGGER.info("retrieval %s: %s", "-", result.outcome.value)
            return Reply(error_answer(ToolError.INVALID_EVIDENCE_ID), is_error=True)
        valid_id = result.evidence_id
        if result.outcome is evidence.Outcome.INCOMPLETE:
            LOGGER.info("retrieval %s: %s", valid_id, AnswerStatus.INCOMPLETE.value)
            return Reply(
                {"evidence_id": valid_id, "status": AnswerStatus.INCOMPLETE.value}, is_error=True
            )
        if result.outcome is not evidence.Outcome.OK or result.response is None:
            LOGGER.info("retrieval %s: %s", valid_id, result.outcome.value)
            content = error_answer(result.outcome.value, evidence_id=valid_id)
            problem = receipt_problem(receipt) if receipt is not None else None
            if result.outcome is evidence.Outcome.RECEIPT_MISMATCH and problem is not None:
                # What was given, against what a receipt is (never the value itself).
                content["reason"] = RECEIPT_MALFORMED
                content["detail"] = problem
            return Reply(content, is_error=True)
        if pending is None:  # pragma: no cover - an ok record has a valid ID
            pending = start_log_call(log, partial(log.lookup, valid_id))
        try:
            entries = pending.result()
        except LogUnavailable as exc:
            log_reason = exc.reason
            LOGGER.error("retrieval %s: %s", valid_id, f"log unavailable ({log_reason})")
            return Reply(
                error_answer(
                    ToolError.EVIDENCE_LOG_UNAVAILABLE, evidence_id=valid_id, log_reason=log_reason
                ),
                is_error=True,
            )
        latest = None
        for _, kind, logged_receipt in entries:
            latest = None if kind is evidence.EntryType.TOMBSTONE else logged_receipt
        if latest is not None and latest != result.receipt:
            LOGGER.warning("retrieval %s: %s", valid_id, ToolError.LOG_MISMATCH.value)
            return Reply(error_answer(ToolError.LOG_MISMATCH, evidence_id=valid_id), is_error=True)
        content = dict(result.response)
        content.setdefault("content_notice", NOTICE)
        content["logged"] = latest is not None
        if receipt is not None:
            content["receipt"] = result.receipt
        LOGGER.info("retrieval %s: %s", valid_id, AnswerStatus.OK.value)
        # The stored response passed the strict parse (no deeper than the
        # format's limit); the fields added here are strings and a bool.
        return Reply(content, is_error=False, parsed_depth=MAX_JSON_DEPTH)


# ------------------------------------------------------------------ shapes


def _not_attempted() -> dict[str, Any]:
    """A search's ``provider.json`` when nothing was sent: the client's own record of no attempt."""
    return _for_writer(
        openalex.ProviderObservation(
            capture=openalex.Capture.NOT_ATTEMPTED, attempt=None
        ).record_fields()
    )


def _invalid_response(evidence_id: str, invalid: Any) -> dict[str, Any]:
    return error_answer(
        ToolError.INVALID_ARGUMENTS,
        evidence_id=evidence_id,
        field=invalid.field,
        reason=invalid.reason.value,
    )


def _from_result(
    evidence_id: str, result: ProviderResult | None, request: SearchRequest
) -> tuple[dict[str, Any], dict[str, Any]]:
    response: dict[str, Any]
    if result is None:
        return _not_attempted(), _busy(evidence_id)
    observation = result.observation
    fields = observation.record_fields()
    if observation.has_body:
        fields["observed_json"] = observation.body_json
    provider = _for_writer(fields)
    if result.ok:
        response = {
            "content_notice": NOTICE,
            "evidence_id": evidence_id,
            "limit": request.effective.limit,
            "pagination": False,
            "query": request.effective.query,
            "results": [work.to_record() for work in result.works],
            "skipped_count": result.skipped_count,
            "status": AnswerStatus.OK.value,
            "total_count": result.total_count,
        }
    else:
        response = _failure_response(evidence_id, result.error)
    return provider, response


def _for_writer(fields: dict[str, Any]) -> dict[str, Any]:
    """A provider record's values from notanda-openalex, in the form the evidence writer takes.

    The one place a search's record (``ProviderObservation.record_fields``
    plus its body) and a check's (``ReferenceCheck.record_fields``) are made
    ready: each attempt's times formatted, each body (``observed_json``, at the
    top of a search's record and in each attempt of a check's) wrapped.
    """
    record = _with_body_wrapped(fields, _SEARCH_BODY_LEVELS)
    record["attempts"] = [
        _with_body_wrapped(_formatted_times(attempt), _CHECK_BODY_LEVELS)
        for attempt in fields["attempts"]
    ]
    return record


def _with_body_wrapped(fields: dict[str, Any], levels: int) -> dict[str, Any]:
    """*fields* with its ``observed_json``, if any, as parsed JSON the writer need not walk.

    The body sits *levels* down in provider.json and passed :func:`_body_too_deep`
    for those levels: it nests no deeper than :func:`_body_depth` says.
    """
    if "observed_json" not in fields:
        return dict(fields)
    body = evidence.ParsedJSON(fields["observed_json"], _body_depth(levels))
    return {**fields, "observed_json": body}


def _formatted_times(attempt: dict[str, Any]) -> dict[str, Any]:
    """An attempt's values with its aware times in the record's form (``format_timestamp``).

    An entry of a check attempt that made no request has no times.
    """
    if "started_at" not in attempt:
        return attempt
    return {
        **attempt,
        "finished_at": format_timestamp(attempt["finished_at"]),
        "started_at": format_timestamp(attempt["started_at"]),
    }


def _failure_response(evidence_id: str, error: ProviderFailure | None) -> dict[str, Any]:
    """The stored answer of a call that failed at the provider or its configuration."""
    failure = error.to_record() if error is not None else {"code": ToolError.PROVIDER_ERROR.value}
    return error_answer(
        failure["code"],
        evidence_id=evidence_id,
        **{
            key: failure[key]
            for key in ("reason", "detail", "http_status", "retry_after_s")
            if failure.get(key) is not None
        },
    )


def _busy(evidence_id: str) -> dict[str, Any]:
    return error_answer(
        ToolError.SERVER_BUSY, evidence_id=evidence_id, reason=BusyReason.NO_SEARCH_SLOT.value
    )


def _redact_values(openalex: OpenAlexClient, value: Any) -> Any:
    """*value* with every secret value scrubbed from its strings, keys left as they are."""
    if isinstance(value, str):
        return openalex.redact(value)
    if isinstance(value, dict):
        return {key: _redact_values(openalex, item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_values(openalex, item) for item in value]
    return value


def _text_bytes(text: object) -> bytes:
    """The supplied bibliography as UTF-8, lone surrogates replaced (empty when not a string)."""
    if not isinstance(text, str):
        return b""
    return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def _check_refusal(evidence_id: str, invalid: Any) -> dict[str, Any]:
    """A check refused before anything was sent; ``field`` is the tool's argument name."""
    response = _invalid_response(evidence_id, invalid)
    if response["field"] == "text":
        response["field"] = "references"
    return response


def _not_run_check(parsed: ParsedReferences | None) -> dict[str, Any]:
    """A check's ``provider.json`` when it never ran (refused input, or no slot in time)."""
    return _for_writer(openalex.ReferenceCheck.not_run_record_fields(parsed))


def _from_check(
    evidence_id: str, check: ReferenceCheck | None, parsed: ParsedReferences
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``provider.json`` (one entry per request, each with its own body) and ``response.json``."""
    if check is None:
        return _not_run_check(parsed), _busy(evidence_id)
    provider = _for_writer(check.record_fields())
    if check.failure is not None:
        return provider, _failure_response(evidence_id, check.failure)
    response = {
        "content_notice": NOTICE,
        "evidence_id": evidence_id,
        "references": [reference.to_record() for reference in check.references],
        "status": AnswerStatus.OK.value,
        "summary": check.summary(),
    }
    return provider, response


#: How many levels of ``provider.json`` hold a body above it: a search's
#: ``observed_json`` is a key of the top object; a check's, a key of an entry
#: of its ``attempts`` list (the object, the list, the entry).
_SEARCH_BODY_LEVELS = 1
_CHECK_BODY_LEVELS = 3


def _body_too_deep(body: bytes | bytearray, levels: int = _SEARCH_BODY_LEVELS) -> bool:
    """The record's depth limit, for a body that provider.json holds *levels* down.

    Checked before the body is parsed, so that a body a sealed record could
    not hold is refused as ``provider_error`` ``too_deep`` and recorded as such.
    """
    return json_depth_exceeds(body, _body_depth(levels))  # read in place: no copy of the page


def _check_body_too_deep(body: bytes | bytearray) -> bool:
    """:func:`_body_too_deep` for a body of a check's request, in its entry of ``attempts``."""
    return _body_too_deep(body, _CHECK_BODY_LEVELS)


def _body_depth(levels: int) -> int:
    """How deep a body may nest when provider.json holds it *levels* down."""
    return MAX_JSON_DEPTH - levels


def _storage_failure(exc: Any, evidence_id: str | None) -> Reply:
    record: dict[str, Any] = (
        {}
        if evidence_id is None
        else {"evidence_id": evidence_id, "record_state": RecordState.INCOMPLETE.value}
    )
    content = error_answer(
        ToolError.EVIDENCE_STORAGE_UNAVAILABLE,
        persisted=False,
        storage_reason=exc.reason.value,
        **record,
    )
    return Reply(content, is_error=True)
