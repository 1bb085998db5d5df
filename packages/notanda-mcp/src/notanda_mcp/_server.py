"""The MCP layer: two tools on the low-level SDK server, served over stdio.

The low-level ``mcp.server.lowlevel.Server`` is used rather than ``MCPServer``
because MCPServer configures logging itself and validates arguments in
pydantic's lax mode (``"5"`` and ``true`` become integers), which the
published schema forbids. Here every call is first checked against the
published input schema (a violation is refused without a record), then the
blocking work runs in a worker thread inside a shielded scope, so that:

* the server keeps answering ``ping``, ``tools/list`` and ``get_evidence``
  while a search waits on OpenAlex;
* a search the client cancels still finishes and seals its record;
* on stdin EOF or SIGTERM the server stops taking calls, waits at most
  :data:`SHUTDOWN_GRACE_S` for searches in flight, answers each of them
  before the transport closes, and leaves anything unsealed as an
  incomplete record.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types as types
import notanda_openalex as openalex
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from notanda_evidence.verify_file import NOTICE, ParsedJSON, canonical_text

from ._codes import RecordState, SchemaReason, ToolError, error_answer
from ._errors import NotandaMcpError
from ._logging import LOGGER
from ._resources import EvidenceResources, evidence_link
from ._schemas import (
    CHECK_REFERENCES,
    DEFAULT_TOOLSETS,
    GET_EVIDENCE,
    TOOLS,
    resolve_toolsets,
    tool_names,
)
from ._service import (
    CHECK_CONCURRENCY,
    CHECK_DEADLINE_S,
    DEFAULT_SEARCH_SLOTS,
    Caller,
    EvidenceService,
    Reply,
)
from ._stamper import (
    DEFAULT_TIMESTAMP_EVERY_S,
    MINIMUM_TIMESTAMP_EVERY_S,
    TIMESTAMP_DEADLINE_S,
    Stamper,
    check_timestamp_url,
    load_tsa_ca,
)
from ._stdin import MAX_LINE_BYTES, LineTooLong, StoppableStdin
from ._usage import EXIT_FORCED, EXIT_OK
from ._version import __version__

if TYPE_CHECKING:
    import httpx
    from cryptography import x509
    from mcp.server.context import ServerRequestContext
    from mcp_types import RequestId
    from notanda_evidence import StageCallback

__all__ = ["SHUTDOWN_GRACE_S", "NotandaServer", "build_server"]

SERVER_NAME = "notanda-mcp"
SHUTDOWN_GRACE_S = 2.0
#: How long after answering ``tools/list`` the search path starts loading.
_WARM_UP_AFTER_S = 0.05
#: After the grace, how long the last answers may take to reach the transport.
_ANSWER_MARGIN_S = 1.0
INSTRUCTIONS = (
    "Use search_literature to find open-access scholarly works; each call returns an "
    "evidence_id and a receipt. Cite only works these tools returned, and keep the "
    "evidence_id and receipt with every citation so that a reader can verify it with "
    "get_evidence or notanda-evidence. " + NOTICE
)
#: Added to the instructions when ``check_references`` is offered.
CHECK_INSTRUCTIONS = (
    " Use check_references to check a whole bibliography against OpenAlex: one sealed record "
    "for the check, one verdict per reference; not_found means not found in OpenAlex as "
    "searched, never that a work does not exist."
)


class _Calls:
    """Tool calls in flight, and the switch that stops new ones during shutdown."""

    def __init__(self) -> None:
        self.closing = False
        #: ``time.monotonic()`` when the shutdown began: the grace counts from there.
        self.closed_at: float | None = None
        self.count = 0
        self.abandoned = 0
        self._scopes: set[anyio.CancelScope] = set()
        self._idle = threading.Event()
        self._idle.set()
        #: Over stdio: the ids of calls whose answer the transport has not yet taken.
        self.unanswered: Counter[RequestId] | None = None

    def expect_answer(self, request_id: RequestId | None) -> None:
        if self.unanswered is not None and request_id is not None:
            self.unanswered[request_id] += 1

    def answered(self, request_id: RequestId | None) -> None:
        """The answer to *request_id* was handed to the transport (or will never be sent)."""
        if self.unanswered is None or request_id is None:
            return
        if self.unanswered[request_id] > 0:
            self.unanswered[request_id] -= 1
            if not self.unanswered[request_id]:
                del self.unanswered[request_id]

    @contextmanager
    def track(self, scope: anyio.CancelScope) -> Iterator[None]:
        """Count a call in flight; its shielded *scope* gets a deadline at shutdown."""
        self._scopes.add(scope)
        self.count += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._scopes.discard(scope)
            self.count -= 1
            if scope.cancel_called:
                self.abandoned += 1
            if not self.count:
                self._idle.set()

    def close(self, grace_s: float) -> None:
        """Refuse new calls and give the ones in flight *grace_s* seconds."""
        if self.closing:
            return
        self.closing = True
        self.closed_at = time.monotonic()
        if self.count:
            LOGGER.info("waiting up to %.1f s for %d search(es) in flight", grace_s, self.count)
        deadline = anyio.current_time() + grace_s
        for scope in list(self._scopes):
            scope.deadline = min(scope.deadline, deadline)

    async def drain_at_end(self) -> None:
        """At the end of input: serve every call already read, then :meth:`drain`."""
        # The SDK starts a handler for each request read before the end; let
        # them start (and count themselves) before new calls are refused.
        with anyio.move_on_after(_ANSWER_MARGIN_S):
            await anyio.wait_all_tasks_blocked()
        await self.drain()

    async def drain(self) -> None:
        """Stop taking calls; return once those in flight are answered or abandoned."""
        self.close(SHUTDOWN_GRACE_S)
        # Every call ends inside the grace (its scope's deadline); the margin
        # only bounds the wait for answers that the transport never takes.
        with anyio.move_on_after(SHUTDOWN_GRACE_S + _ANSWER_MARGIN_S):
            while self.count or self.unanswered:
                await anyio.sleep(0.01)


class _Refusal(NotandaMcpError):
    def __init__(self, field: str, reason: SchemaReason) -> None:
        super().__init__(field, reason)
        self.field = field
        self.reason = reason


class _Validators:
    """The published input schemas, enforced (jsonschema is loaded at the first call)."""

    def __init__(self) -> None:
        self._validators: dict[str, Any] | None = None

    def load(self) -> dict[str, Any]:
        if self._validators is None:
            from jsonschema import Draft202012Validator  # noqa: PLC0415 - lazy: see the class docstring

            self._validators = {
                name: Draft202012Validator(spec["inputSchema"]) for name, spec in TOOLS.items()
            }
        return self._validators

    def check(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        error = next(iter(self.load()[tool].iter_errors(dict(arguments))), None)
        if error is not None:
            # jsonschema's own message repeats the offending value; only the
            # location and the keyword that failed are reported.
            parts = [str(p) for p in error.absolute_path if isinstance(p, str)]
            if error.validator == "required" and isinstance(error.instance, dict):
                # The missing name comes from the published schema, not the input.
                parts += [n for n in error.validator_value if n not in error.instance][:1]
            raise _Refusal(
                ".".join(parts) or "arguments", SchemaReason(f"schema_{error.validator}")
            )
        checked: dict[str, Any] = _integral(dict(arguments))
        return checked


def _integral(value: Any) -> Any:
    """JSON Schema counts 5.0 as an integer; pass it on as the int it is."""
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _result(reply: Reply) -> types.CallToolResult:
    # Compact: the model reads this text on every answer (issue 11).
    if reply.parsed_depth is None:
        text = canonical_text(reply.content)
    else:
        text = canonical_text(ParsedJSON(reply.content, reply.parsed_depth))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=reply.content,
        is_error=reply.is_error,
    )


def _client_identity(ctx: ServerRequestContext[Any, Any]) -> dict[str, str] | None:
    """The client's name and version for this request, as the session reports them."""
    params = ctx.session.client_params
    if params is None or params.client_info is None:
        return None
    info = params.client_info
    return {"name": info.name, "version": info.version}


class NotandaServer:
    """The server object ``build_server`` returns.

    ``run()`` serves on stdio until stdin closes or SIGTERM/SIGINT arrives.
    ``lowlevel`` is the SDK server, for in-memory client sessions in tests.
    """

    def __init__(
        self,
        evidence_dir: Path,
        *,
        transport: httpx.BaseTransport | None,
        env: Mapping[str, str] | None,
        on_stage: StageCallback | None,
        search_slots: int,
        toolsets: tuple[str, ...] = DEFAULT_TOOLSETS,
        check_concurrency: int = CHECK_CONCURRENCY,
        check_deadline_s: float = CHECK_DEADLINE_S,
        timestamp_url: str | None = None,
        timestamp_every: float = DEFAULT_TIMESTAMP_EVERY_S,
        timestamp_deadline_s: float = TIMESTAMP_DEADLINE_S,
        tsa_ca: list[x509.Certificate] | None = None,
    ) -> None:
        self.evidence_dir = evidence_dir
        #: The names of the tools this server offers and answers.
        self.offered = tool_names(toolsets)
        self.service = EvidenceService(
            evidence_dir,
            transport=transport,
            env=env,
            on_stage=on_stage,
            search_slots=search_slots,
            check_concurrency=check_concurrency,
            check_deadline_s=check_deadline_s,
        )
        #: Stamps log heads with the TSA at ``timestamp_url``; None when stamping is off.
        self.stamper = (
            None
            if timestamp_url is None
            else Stamper(
                evidence_dir,
                timestamp_url,
                every_s=timestamp_every,
                deadline_s=timestamp_deadline_s,
                head=self.service.log_head,
                trusted=tsa_ca,
            )
        )
        self.calls = _Calls()
        self._validators = _Validators()
        self._tools = [types.Tool.model_validate(TOOLS[name]) for name in self.offered]
        self._warming: threading.Thread | None = None
        #: Set when this server owns the process (``serve_stdio``): the warm-up
        #: then also settles the heap (:func:`_settle_heap`).
        self._owns_process = False
        self.lowlevel: Server[Any] = Server(
            SERVER_NAME,
            version=__version__,
            title="Notanda: literature search with evidence",
            instructions=INSTRUCTIONS
            + (CHECK_INSTRUCTIONS if CHECK_REFERENCES in self.offered else ""),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        EvidenceResources(self.service).install(self.lowlevel)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if self._warming is None:
            # Every client lists the tools right after the handshake: the
            # search path loads from then on, in the background (issue 11).
            # A daemon: a warm-up still loading (or stuck on a slow disk) never
            # holds up the process's exit.
            self._warming = threading.Thread(
                target=self._warm_up, name="notanda-warm-up", daemon=True
            )
            self._warming.start()
        return types.ListToolsResult(tools=self._tools)

    def _warm_up(self) -> None:
        """Load what a search needs, after the tool list has gone out; skipped when stopping.

        Runs once per server (the first ``tools/list`` starts it). A failure
        here changes nothing: the first call meets the same failure and
        answers it.
        """
        # The answer is sent after this handler returns; imports competing
        # with it for the GIL would delay it.
        time.sleep(_WARM_UP_AFTER_S)
        if self.calls.closing:
            return
        try:
            self._validators.load()
            self.service.warm_up()
        except Exception:  # noqa: S110 - see the docstring
            pass
        if self._owns_process and not self.calls.closing:
            _settle_heap()

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self.calls.expect_answer(ctx.request_id)
        requested = _cancel_requested(ctx)
        result = await self._answer(ctx, params, requested)
        # No await from here to the SDK's own check: it never answers a call
        # its client cancelled, so nothing is left to wait for at shutdown.
        if requested():
            self.calls.answered(ctx.request_id)
        return result

    async def _answer(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams,
        requested: Callable[[], bool],
    ) -> types.CallToolResult:
        if params.name not in self.offered:
            raise MCPError(types.INVALID_PARAMS, "Unknown tool")
        if self.calls.closing:
            return _result(
                Reply(error_answer(ToolError.SHUTTING_DOWN, persisted=False), is_error=True)
            )
        try:
            arguments = self._validators.check(params.name, params.arguments or {})
        except _Refusal as refusal:
            # The tool's name is one this server offers (checked above), never the client's text.
            LOGGER.info(
                "%s arguments rejected before a record: %s", params.name, refusal.reason.value
            )
            return _result(
                Reply(
                    error_answer(
                        ToolError.INVALID_ARGUMENTS,
                        field=refusal.field,
                        persisted=False,
                        reason=refusal.reason.value,
                    ),
                    is_error=True,
                )
            )
        if params.name == GET_EVIDENCE:
            work: Callable[[], Reply] = partial(self.service.get_evidence, arguments)
            return _result(await self._run(work))
        cancelled = threading.Event()
        created: list[str] = []
        sealed: list[str] = []
        caller = Caller(
            client=_client_identity(ctx),
            protocol_version=ctx.protocol_version,
            cancelled=lambda: cancelled.is_set() or requested(),
            on_record=created.append,
            on_sealed=sealed.append,
        )
        if params.name == CHECK_REFERENCES:
            # A check also stops early when the server shuts down, so that it
            # seals within the grace instead of being abandoned.
            stopping = caller.cancelled
            caller = replace(caller, cancelled=lambda: stopping() or self.calls.closing)
            work = partial(
                self.service.check, arguments, caller, on_progress=_progress_reporter(ctx)
            )
        else:
            work = partial(self.service.search, arguments, caller)
        async with anyio.create_task_group() as watchers:
            watchers.start_soon(_watch_cancellation, cancelled, self.calls)
            reply = await self._run(work, created, sealed)
            watchers.cancel_scope.cancel()
        result = _result(reply)
        if not reply.is_error:  # beside the text, so response.json's content is unchanged
            result.content.append(evidence_link(reply.content["evidence_id"]))
        return result

    async def _run(
        self,
        work: Callable[[], Reply],
        created: list[str] | None = None,
        sealed: list[str] | None = None,
    ) -> Reply:
        reply: Reply | None = None
        # Shielded: a client's cancellation does not stop a search from sealing.
        with anyio.CancelScope(shield=True) as scope, self.calls.track(scope):
            try:
                reply = await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
            except Exception as exc:  # never let exception text reach the client
                LOGGER.error(
                    "unexpected %s in %s; answered as %s",
                    type(exc).__name__,
                    getattr(work, "func", work).__name__,
                    ToolError.INTERNAL_ERROR.value,
                )
                # If the record exists, get_evidence says what state it is in.
                record = {"evidence_id": created[0]} if created else {}
                reply = Reply(error_answer(ToolError.INTERNAL_ERROR, **record), is_error=True)
        if reply is not None:
            return reply
        # The grace period ran out and the search goes on. A record not yet
        # sealed stays incomplete; a sealed one is evidence whose log append
        # may or may not land: its receipt is returned (``adopt`` logs it).
        state: dict[str, Any] = {"persisted": False}
        if created and sealed:
            state.update(
                evidence_id=created[0],
                persisted=True,
                receipt=sealed[0],
                record_state=RecordState.SEALED.value,
            )
        elif created:
            state.update(evidence_id=created[0], record_state=RecordState.INCOMPLETE.value)
        return Reply(error_answer(ToolError.SHUTTING_DOWN, **state), is_error=True)

    # -------------------------------------------------------------- stdio

    async def serve_stdio(self) -> None:
        """Serve one client over stdin and stdout."""
        LOGGER.info(
            "notanda-mcp %s serving %s on stdio (pid %d)",
            __version__,
            "an evidence root",
            os.getpid(),
        )
        self.calls.unanswered = Counter()
        self._owns_process = True
        transport: list[Any] = []  # the write side, once stdio_server has made it

        async def on_too_long(refused: LineTooLong) -> None:
            LOGGER.warning("request line refused: over %d bytes", MAX_LINE_BYTES)
            if transport:
                await _refuse_line(transport[0], refused)

        stdin = StoppableStdin(on_end=self.calls.drain_at_end, on_too_long=on_too_long)
        if self.stamper is not None:
            self.stamper.start()
            LOGGER.info("stamping log heads every %.1f s", self.stamper.every_s)
        try:
            async with (
                stdio_server(stdin=cast(Any, stdin)) as (read, write),
                anyio.create_task_group() as tasks,
            ):
                transport.append(write)
                if sys.platform != "win32":
                    tasks.start_soon(self._watch_signals, stdin)
                await self.lowlevel.run(
                    read,
                    _AnswerWatch(write, self.calls),
                    self.lowlevel.create_initialization_options(),
                )
                # Still under the signal watch: a second signal stops this too.
                await anyio.to_thread.run_sync(self.stop_stamping, abandon_on_cancel=True)
                tasks.cancel_scope.cancel()
        except* (BrokenPipeError, ConnectionResetError):
            # The client closed its end before the last answers: nobody is
            # left to deliver them to, and the records are sealed regardless.
            LOGGER.info("the client closed stdout before %s", "the last answers")

    async def _watch_signals(self, stdin: StoppableStdin) -> None:
        async def drain() -> None:
            await self.calls.drain()
            stdin.stop()

        signalled = False
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
            # The drain runs beside the receiver so that a second signal is seen at once.
            async with anyio.create_task_group() as draining:
                async for signum in received:
                    if signalled:
                        os._exit(EXIT_FORCED)  # a second signal: stop now
                    # A first signal after stdin closed (the SDK's client sends
                    # SIGTERM two seconds after EOF) only joins the drain under way.
                    signalled = True
                    LOGGER.info("shutting down (%s)", signal.Signals(signum).name)
                    draining.start_soon(drain)

    def stop_stamping(self) -> None:
        """Stop the stamper, stamping once more if that fits in the shutdown's grace."""
        if self.stamper is not None:
            began = self.calls.closed_at
            self.stamper.stop((time.monotonic() if began is None else began) + SHUTDOWN_GRACE_S)

    def run(self) -> None:
        """Serve on stdio until the client goes away or a signal arrives."""
        anyio.run(self.serve_stdio)
        self.stop_stamping()  # when the transport broke before the last answers
        if self.calls.abandoned:
            LOGGER.warning(
                "stopped with %d unsealed search(es) left incomplete", self.calls.abandoned
            )
            sys.stdout.flush()
            sys.stderr.flush()
            # Worker threads that overran the grace period are not daemons; exit
            # without joining them. Their records stay incomplete, never corrupt.
            os._exit(EXIT_OK)


def _settle_heap() -> None:
    """Keep what is alive now out of every later pass of the cyclic garbage collector.

    After the warm-up the heap holds a few hundred thousand objects that live
    as long as the process (modules, classes, schemas). Left in the collector's
    oldest generation, each full collection walks all of them again: about
    50 ms, which the first search paid (issue 23). Frozen (``gc.freeze``),
    they are still freed by reference counting; only cycles among them are
    never collected, and nothing alive at this point is meant to go away. No
    collection runs first: on a busy machine it took up to 120 ms of the
    client's pause, and the little garbage the warm-up left (about 80 objects)
    stays with them, once.
    Only a server that owns its process does this (``serve_stdio``); one in a
    test or a host program leaves the host's collector alone.
    """
    gc.freeze()


async def _refuse_line(write: Any, refused: LineTooLong) -> None:
    """Answer a request line over the limit with JSON-RPC ``-32600``, unread."""
    error = types.JSONRPCError(
        jsonrpc="2.0",
        id=refused.request_id,
        error=types.ErrorData(
            code=types.INVALID_REQUEST,
            message=f"Request line too long: the limit is {MAX_LINE_BYTES} bytes",
        ),
    )
    with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        await write.send(SessionMessage(error))


class _AnswerWatch:
    """The transport's write side, noting each answer it takes (see :meth:`_Calls.drain`)."""

    def __init__(self, inner: Any, calls: _Calls) -> None:
        self._inner = inner
        self._calls = calls

    async def send(self, item: SessionMessage) -> None:
        await self._inner.send(item)
        message = item.message
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self._calls.answered(message.id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _AnswerWatch:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._inner.__aexit__(*exc)


def _progress_reporter(ctx: ServerRequestContext[Any, Any]) -> Callable[[int, int], None]:
    """Report ``(decided, total)`` as ``notifications/progress`` for this request.

    Called from the worker thread; each report is handed to the event loop
    and awaited, so reports arrive in order. The SDK sends nothing when the
    client gave no progress token. A report that cannot be sent (the client
    went away) is dropped: progress never stops a check.
    """

    def report(done: int, total: int) -> None:
        with suppress(Exception):
            anyio.from_thread.run(ctx.session.report_progress, float(done), float(total))

    return report


def _cancel_requested(ctx: ServerRequestContext[Any, Any]) -> Callable[[], bool]:
    """Whether the client sent ``notifications/cancelled`` for this request.

    The SDK's JSON-RPC dispatcher sets ``cancel_requested`` exactly when the
    peer cancels a request, at the moment the notification is read, so a
    cancellation followed at once by stdin EOF is still the client's. (When
    stdin closes, every call is cancelled without it.) The low-level context
    does not expose the event, so it is read from the session's request
    channel; if an SDK release moves it, the watcher below still notices.
    """
    channel = getattr(ctx.session, "_request_outbound", None)
    event = getattr(channel, "cancel_requested", None)
    return event.is_set if isinstance(event, anyio.Event) else (lambda: False)


async def _watch_cancellation(cancelled: threading.Event, calls: _Calls) -> None:
    """Note a cancellation of this call; the shielded work carries on regardless.

    This also sees a caller's own cancellation when the SDK runs the handler in
    the caller's task (in-memory direct dispatch), where no notification is
    sent. A cancellation that reaches this task after stdin closed is the
    shutdown's, not the client's, and is not counted.
    """
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        if not calls.closing:
            cancelled.set()
        raise


def build_server(
    evidence_dir: str | os.PathLike[str],
    *,
    transport: httpx.BaseTransport | None = None,
    config: Mapping[str, str] | None = None,
    on_stage: StageCallback | None = None,
    search_slots: int = DEFAULT_SEARCH_SLOTS,
    toolsets: Iterable[str] = DEFAULT_TOOLSETS,
    check_concurrency: int = CHECK_CONCURRENCY,
    check_deadline_s: float = CHECK_DEADLINE_S,
    timestamp_url: str | None = None,
    timestamp_every: float | None = None,
    timestamp_deadline_s: float = TIMESTAMP_DEADLINE_S,
    tsa_ca: str | os.PathLike[str] | None = None,
) -> NotandaServer:
    """Build the server for one evidence root; the documented test seam.

    Args:
        evidence_dir: The evidence root. It must exist (the command line
            creates it); records and ``.notanda/`` go there.
        transport: An httpx transport for the provider instead of the network.
            Records made through it say ``"provider_mode": "injected"``.
        config: The environment the notanda core configuration is read from
            (``HARVESTER_OPENALEX_API_KEY``, ``HARVESTER_CONFIG``, ...);
            ``os.environ`` when None.
        on_stage: Called with ``(stage, evidence_id)`` at every write stage and
            at the server's own ``provider_wait`` and ``before_reply``.
        search_slots: Searches that may run at once; later ones wait, inside
            their deadline, for a slot.
        toolsets: The toolsets to offer (``search``, ``references``); ``search``
            is always offered, order and repeats do not matter.
        check_concurrency: Requests one reference check keeps in flight (1 to 16).
        check_deadline_s: The total deadline of one reference check, slot
            wait included (tests shorten it).
        timestamp_url: An RFC 3161 time-stamp authority; when given, the
            server stamps its log heads there (``_stamper.py``), over real
            HTTP whatever *transport* is.
        timestamp_every: Seconds between two stamps, at least 1; only with
            *timestamp_url* (``DEFAULT_TIMESTAMP_EVERY_S``, 300, when None).
        timestamp_deadline_s: The most one exchange with the TSA may take.
        tsa_ca: A PEM bundle of the TSA CAs to trust (``--tsa-ca``, as for
            ``notanda-evidence audit``); only with *timestamp_url*. Each
            answer's chain must lead to one of them before it is stored.

    Returns:
        The server; call ``.run()`` to serve on stdio.

    Raises:
        ValueError: A toolset name is unknown, ``search_slots`` is below 1,
            ``check_concurrency`` is not from 1 to 16 or ``check_deadline_s``
            is not positive, ``timestamp_every`` is below 1 or given
            without ``timestamp_url``, or ``tsa_ca`` is given without
            ``timestamp_url`` or holds no readable PEM certificate.
    """
    root = Path(evidence_dir)
    if not root.is_dir():
        raise NotADirectoryError("the evidence directory must exist")
    if search_slots < 1:
        raise ValueError("search_slots must be at least 1")
    chosen = resolve_toolsets(toolsets)
    # The client's own bound is read (which loads the checking code) only when a
    # test seam changes the default.
    if isinstance(check_concurrency, bool) or (
        check_concurrency != CHECK_CONCURRENCY
        and not 1 <= check_concurrency <= openalex.MAX_CHECK_CONCURRENCY
    ):
        raise ValueError(
            f"check_concurrency must be an integer from 1 to {openalex.MAX_CHECK_CONCURRENCY}"
        )
    if not check_deadline_s > 0:
        raise ValueError("check_deadline_s must be positive")
    if timestamp_url is not None:
        check_timestamp_url(timestamp_url)
    if timestamp_every is None:
        timestamp_every = DEFAULT_TIMESTAMP_EVERY_S
    elif timestamp_url is None:
        # As on the command line: an interval without a TSA would be ignored in silence.
        raise ValueError("timestamp_every is given without timestamp_url: stamping is off")
    if not timestamp_every >= MINIMUM_TIMESTAMP_EVERY_S:
        raise ValueError(f"timestamp_every must be at least {MINIMUM_TIMESTAMP_EVERY_S:g} second")
    if not timestamp_deadline_s > 0:
        raise ValueError("timestamp_deadline_s must be positive")
    if tsa_ca is not None and timestamp_url is None:
        raise ValueError("tsa_ca is given without timestamp_url: stamping is off")
    trusted = None if tsa_ca is None else load_tsa_ca(tsa_ca)
    return NotandaServer(
        root,
        transport=transport,
        env=config,
        on_stage=on_stage,
        search_slots=search_slots,
        toolsets=chosen,
        check_concurrency=check_concurrency,
        check_deadline_s=check_deadline_s,
        timestamp_url=timestamp_url,
        timestamp_every=timestamp_every,
        timestamp_deadline_s=timestamp_deadline_s,
        tsa_ca=trusted,
    )
