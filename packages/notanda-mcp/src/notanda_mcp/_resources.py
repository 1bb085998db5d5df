"""Evidence as MCP resources: the log head, every sealed record, and the link to one.

* ``notanda://log/head``: the current log head, as ``get_evidence`` users
  know it (``size``, ``root``, and ``head``, the ``SIZE:ROOT`` text);
* ``notanda://evidence/{evidence_id}``: a record, read through
  :meth:`EvidenceService.get_evidence` without a receipt, so the checks
  (hashes, identity, log entry) are those of the tool, never a copy. A
  record that fails them is never content: the read fails with an MCP
  error whose ``data`` carries the tool's ``error`` code and ``remedy``;
* ``resources/list``: the head, then the logged records newest first by
  log position, :data:`PAGE_SIZE` per page, named for a person. A page's
  cursor is an opaque token only this server start can have made (the log
  position and its HMAC under a key drawn when the resources are installed);
  any other cursor is refused with -32602, so a client lists again.

Nothing here contacts OpenAlex. The blocking work runs in worker threads
under this module's own limiter, never the one searches wait on, so a read
is answered while every search thread is busy.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import mcp_types as types
import notanda_evidence as evidence
from mcp.shared.exceptions import MCPError
from notanda_evidence.verify_file import NOTICE, is_check_record, printable

from ._codes import AnswerStatus, ToolError, error_answer
from ._errors import NotandaMcpError
from ._guard import LogUnavailable, log_call, record_conditions
from ._service import EvidenceService, Reply, remedy_for

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

__all__ = [
    "EVIDENCE_TEMPLATE",
    "HEAD_URI",
    "PAGE_SIZE",
    "RECORD_TTL_MS",
    "EvidenceResources",
    "evidence_link",
    "evidence_uri",
    "record_name",
]

EVIDENCE_PREFIX = "notanda://evidence/"
EVIDENCE_TEMPLATE = EVIDENCE_PREFIX + "{evidence_id}"
HEAD_URI = "notanda://log/head"
MIME_TYPE = "application/json"
#: Records per ``resources/list`` page (the head comes first, on the first page).
PAGE_SIZE = 50
#: A sealed record never changes: its read may be cached for a day. The head,
#: the lists and every failed read are never cached (``ttlMs`` 0).
RECORD_TTL_MS = 24 * 60 * 60 * 1000
#: Reads in flight at once, in threads of their own.
READ_SLOTS = 4

#: A longer query is cut, with an ellipsis, in a record's name (the record keeps it whole).
_QUERY_CHARS = 120
_HEAD_NAME = "Evidence log head"
_TEMPLATE_NAME = "Evidence record"
_TEMPLATE_DESCRIPTION = (
    "A sealed search record, returned only after the checks get_evidence makes "
    "(hashes, identity, log entry). " + NOTICE
)

T = TypeVar("T")


def evidence_uri(evidence_id: str) -> str:
    """The resource URI of a record."""
    return EVIDENCE_PREFIX + evidence_id


def evidence_link(evidence_id: str) -> types.ResourceLink:
    """The ``resource_link`` content item an answer carries to its record."""
    return types.ResourceLink(
        type="resource_link",
        uri=evidence_uri(evidence_id),
        name=f"evidence {evidence_id}",
        description=_TEMPLATE_DESCRIPTION,
        mime_type=MIME_TYPE,
    )


def record_name(request: Mapping[str, Any] | None, evidence_id: str) -> str:
    """A name a person can read for a record, from its ``request.json`` (unscrubbed).

    A check names its number of references (the entries of ``parsed.references``,
    as ``docs/evidence-format.md`` section 2.6 stores what was read), anything
    else its query; both add the time of the request. A request without them
    names the ID.
    """
    if not isinstance(request, Mapping):
        return f"evidence {evidence_id}"
    when = request.get("requested_at")
    suffix = f" ({when})" if isinstance(when, str) and when else ""
    if is_check_record(request):
        parsed = request.get("parsed")
        references = parsed.get("references") if isinstance(parsed, Mapping) else None
        if not isinstance(references, list):
            # Refused before reading (``parsed`` is null): nothing was counted.
            return f"check, nothing read{suffix}"
        count = len(references)
        noun = "reference" if count == 1 else "references"
        return f"check of {count} {noun}{suffix}"
    supplied = request.get("supplied")
    query = supplied.get("query") if isinstance(supplied, Mapping) else None
    if isinstance(query, str) and query.strip():
        words = " ".join(query.split())
        if len(words) > _QUERY_CHARS:
            words = words[: _QUERY_CHARS - 1] + "\u2026"
        return f"search: {words}{suffix}"
    return f"evidence {evidence_id}{suffix}"


class _ReadFailure(NotandaMcpError):
    """A read that gives no content: the tool's answer (code, remedy, ...) as MCP error data."""

    def __init__(self, jsonrpc_code: int, data: dict[str, Any]) -> None:
        super().__init__(jsonrpc_code, data)
        self.jsonrpc_code = jsonrpc_code
        self.data = data

    def to_mcp(self) -> MCPError:
        code = str(self.data.get("error"))
        return MCPError(self.jsonrpc_code, f"Evidence not readable: {code}", self.data)


#: Codes that say the URI names nothing readable; the rest name a record that fails.
_NOT_THERE = frozenset({ToolError.INVALID_EVIDENCE_ID, ToolError.NOT_FOUND})


def _failure(content: Mapping[str, Any]) -> _ReadFailure:
    data = dict(content)
    if "error" not in data and data.get("status") == AnswerStatus.INCOMPLETE:
        data["error"] = AnswerStatus.INCOMPLETE.value
    data.pop("status", None)
    if "remedy" not in data:
        data["remedy"] = remedy_for(data)
    code = types.INVALID_PARAMS if data["error"] in _NOT_THERE else types.INTERNAL_ERROR
    return _ReadFailure(code, data)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class EvidenceResources:
    """The resource handlers for one server, installed on its SDK server by :meth:`install`."""

    def __init__(self, service: EvidenceService) -> None:
        self._service = service
        self._cursors = _CursorSigner()
        self._limiter: anyio.CapacityLimiter | None = None
        self._template = types.ResourceTemplate(
            uri_template=EVIDENCE_TEMPLATE,
            name=_TEMPLATE_NAME,
            description=_TEMPLATE_DESCRIPTION,
            mime_type=MIME_TYPE,
        )

    def install(self, server: Server[Any]) -> None:
        """Serve ``resources/list``, ``resources/templates/list`` and ``resources/read``."""
        server.add_request_handler("resources/list", types.PaginatedRequestParams, self._list)
        server.add_request_handler(
            "resources/templates/list", types.PaginatedRequestParams, self._templates
        )
        server.add_request_handler("resources/read", types.ReadResourceRequestParams, self._read)

    async def _in_thread(self, work: Callable[[], T]) -> T:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(READ_SLOTS)
        return await anyio.to_thread.run_sync(work, limiter=self._limiter)

    # ------------------------------------------------------------ handlers

    async def _templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[self._template], ttl_ms=0, cache_scope="private"
        )

    async def _list(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> types.ListResourcesResult:
        before = None if params.cursor is None else self._cursors.position(params.cursor)
        try:
            resources, next_cursor = await self._in_thread(partial(self._page, before))
        except _ReadFailure as failure:
            raise failure.to_mcp() from None
        return types.ListResourcesResult(
            resources=resources, next_cursor=next_cursor, ttl_ms=0, cache_scope="private"
        )

    async def _read(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            if uri == HEAD_URI:
                text = await self._in_thread(self._head_text)
                ttl_ms = 0
            elif uri.startswith(EVIDENCE_PREFIX):
                evidence_id = uri.removeprefix(EVIDENCE_PREFIX)
                text = await self._in_thread(partial(self._record_text, evidence_id))
                ttl_ms = RECORD_TTL_MS
            else:
                raise _failure(error_answer(ToolError.NOT_FOUND))
        except _ReadFailure as failure:
            raise failure.to_mcp() from None
        contents = types.TextResourceContents(uri=uri, mime_type=MIME_TYPE, text=text)
        # "private": the record is this user's evidence folder, not a shared catalogue.
        return types.ReadResourceResult(contents=[contents], ttl_ms=ttl_ms, cache_scope="private")

    # ---------------------------------------------------------- thread side

    def _record_text(self, evidence_id: str) -> str:
        reply: Reply = self._service.get_evidence({"evidence_id": evidence_id})
        if reply.is_error:
            raise _failure(reply.content)
        return _dumps(reply.content)

    def _head_text(self) -> str:
        log = self._service.evidence_log()
        try:
            head = log_call(log, log.head)
        except LogUnavailable as exc:
            raise _log_failure(exc) from None
        return _dumps({**head.to_json(), "head": str(head)})

    def _page(self, before: int | None) -> tuple[list[types.Resource], str | None]:
        log = self._service.evidence_log()
        try:
            entries = log_call(log, log.latest_entries)
        except LogUnavailable as exc:
            raise _log_failure(exc) from None
        sealed = [
            (position, evidence_id)
            for position, kind, evidence_id, _ in reversed(entries)
            if kind is not evidence.EntryType.TOMBSTONE and (before is None or position < before)
        ]
        page, rest = sealed[:PAGE_SIZE], sealed[PAGE_SIZE:]
        resources = [self._head_resource()] if before is None else []
        resources += [self._record_resource(evidence_id) for _, evidence_id in page]
        next_cursor = self._cursors.token(page[-1][0]) if rest else None
        return resources, next_cursor

    def _head_resource(self) -> types.Resource:
        return types.Resource(
            uri=HEAD_URI,
            name=_HEAD_NAME,
            description="The evidence log's current head: size, root, and SIZE:ROOT.",
            mime_type=MIME_TYPE,
        )

    def _record_resource(self, evidence_id: str) -> types.Resource:
        request = None
        try:
            opened = evidence.open_record(self._service.root, evidence_id)
        except record_conditions():
            opened = None
        if opened is not None and opened.outcome is evidence.Outcome.OK:
            request = opened.request
        # The name is the caller's text: scrubbed like a stored record, then escaped.
        name = printable(str(self._service.redact(record_name(request, evidence_id))))
        return types.Resource(
            uri=evidence_uri(evidence_id),
            name=name,
            title=name,
            description=None if request is not None else "does not verify: read it for the code",
            mime_type=MIME_TYPE,
        )


def _log_failure(exc: LogUnavailable) -> _ReadFailure:
    return _failure(error_answer(ToolError.EVIDENCE_LOG_UNAVAILABLE, log_reason=exc.reason))


#: Bytes of the key a server start draws for its cursors, and of each cursor's tag.
_CURSOR_KEY_BYTES = 32
_CURSOR_TAG_BYTES = 16
#: A cursor's position: an unsigned 64-bit log position, big-endian.
_POSITION_BYTES = 8
_CURSOR_BYTES = _POSITION_BYTES + _CURSOR_TAG_BYTES
#: The length of every cursor this server makes (base64url of the 24 bytes, no padding).
_CURSOR_CHARS = 32


class _CursorSigner:
    """Cursors only this server start can make: a log position and its HMAC-SHA256 tag.

    The key is drawn once per server (``secrets.token_bytes``) and never
    leaves the process, so a cursor from another server, an earlier start of
    this one, or one a client made up is refused like any unknown cursor.
    """

    def __init__(self) -> None:
        self._key = secrets.token_bytes(_CURSOR_KEY_BYTES)

    def _tag(self, position: bytes) -> bytes:
        return hmac.new(
            self._key, b"notanda-resources-cursor\x00" + position, hashlib.sha256
        ).digest()[:_CURSOR_TAG_BYTES]

    def token(self, position: int) -> str:
        """The cursor for the page that continues below log position *position*."""
        packed = position.to_bytes(_POSITION_BYTES, "big")
        return base64.urlsafe_b64encode(packed + self._tag(packed)).decode("ascii").rstrip("=")

    def position(self, cursor: str) -> int:
        """The log position *cursor* stands for; a cursor this signer did not make is refused."""
        raw = b""
        if cursor.isascii() and len(cursor) == _CURSOR_CHARS:
            with contextlib.suppress(ValueError):
                raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        if len(raw) == _CURSOR_BYTES:
            position = int.from_bytes(raw[:_POSITION_BYTES], "big")
            # The whole text against the one this signer makes: no other spelling passes.
            if hmac.compare_digest(cursor, self.token(position)):
                return position
        raise MCPError(types.INVALID_PARAMS, "Invalid cursor")
