"""Stable error codes, and the exceptions a caller of this package can meet under one base.

Every string here is part of the public contract and is documented in
``docs/openalex-client.md``: renaming a member is a breaking change. No message
built here ever contains a value supplied by the caller, read from the
configuration or sent by the provider, so an exception can be logged or shown
without leaking a secret.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "CONFIG_SHAPE",
    "ConfigProblem",
    "ConfigurationDetail",
    "ConfigurationError",
    "ErrorCode",
    "InputError",
    "InputReason",
    "OpenAlexError",
    "ProviderReason",
    "ReferenceInputError",
    "SearchInputError",
]


class ErrorCode(StrEnum):
    """The top-level class of a failed search."""

    #: The client cannot search: no key, an endpoint other than OpenAlex, an invalid key.
    CONFIGURATION_ERROR = "configuration_error"
    #: The query, limit or filters (or a bibliography) were rejected before any request.
    INVALID_ARGUMENTS = "invalid_arguments"
    #: The request was sent but OpenAlex (or the network) did not give usable results.
    PROVIDER_ERROR = "provider_error"


#: The shape of the configuration file ``HARVESTER_CONFIG`` names, as remedies state it.
CONFIG_SHAPE = '{"openalex": {"api_key": "..."}}, mode 600'


class ProviderReason(StrEnum):
    """Why a search that reached the network failed (``provider_error`` only)."""

    @property
    def remedy(self) -> str:
        """What to do about it, in one line (``docs/errors.md``)."""
        return _PROVIDER_REMEDIES[self]

    #: Any non-2xx status not covered below; ``http_status`` carries the code.
    HTTP_ERROR = "http_error"
    #: HTTP 429 that is throttling (per-second or load shedding); retrying later helps.
    RATE_LIMITED = "rate_limited"
    #: HTTP 429 because the daily budget (and any prepaid balance) is spent.
    BUDGET_EXHAUSTED = "budget_exhausted"
    #: The total deadline passed (name resolution, connect, TLS, headers or body).
    TIMEOUT = "timeout"
    #: The connection failed or broke (DNS failure, refused, reset, protocol error).
    TRANSPORT_ERROR = "transport_error"
    #: The decoded body exceeded the 4 MiB ceiling.
    TOO_LARGE = "too_large"
    #: The body nests deeper than the caller's limit (``search(too_deep=...)``).
    TOO_DEEP = "too_deep"
    #: The body is not JSON (or holds NaN/Infinity, or nests beyond the parser's limit).
    MALFORMED_JSON = "malformed_json"
    #: Unsupported Content-Encoding, corrupt compressed data or invalid UTF-8.
    UNDECODABLE = "undecodable"
    #: JSON, but not the shape of a works page (not an object, ``results`` not a list).
    UNEXPECTED_SHAPE = "unexpected_shape"
    #: Any 3xx status. Redirects are never followed.
    REDIRECT = "redirect"


class ConfigurationDetail(StrEnum):
    """Why a client refuses to search (``configuration_error`` only)."""

    @property
    def remedy(self) -> str:
        """What to do about it, in one line (``docs/errors.md``); never quotes a value."""
        return _DETAIL_REMEDIES[self]

    #: No API key and keyless mode was not explicitly enabled.
    MISSING_API_KEY = "missing_api_key"
    #: The key contains characters that cannot travel in an HTTP header.
    INVALID_API_KEY = "invalid_api_key"
    #: The configured base URL is not exactly ``https://api.openalex.org``.
    ENDPOINT_NOT_ALLOWED = "endpoint_not_allowed"


class InputReason(StrEnum):
    """Why :func:`~notanda_openalex.prepare_search` or ``parse_references`` rejected an argument."""

    NOT_A_STRING = "not_a_string"
    EMPTY = "empty"
    TOO_LONG = "too_long"
    EMPTY_AFTER_HYGIENE = "empty_after_hygiene"
    NOT_AN_INTEGER = "not_an_integer"
    OUT_OF_RANGE = "out_of_range"
    NOT_AN_OBJECT = "not_an_object"
    UNKNOWN_FIELD = "unknown_field"
    NOT_A_LIST = "not_a_list"
    INVALID_VALUE = "invalid_value"
    DUPLICATE = "duplicate"
    UNKNOWN_LANGUAGE = "unknown_language"
    FROM_AFTER_TO = "from_after_to"
    #: A bibliography holds more references than one call reads.
    TOO_MANY = "too_many"


class ConfigProblem(StrEnum):
    """Why the notanda core configuration could not be loaded."""

    @property
    def remedy(self) -> str:
        """What to do about it, in one line (``docs/errors.md``); never quotes a value."""
        return _CONFIG_REMEDIES[self]

    FILE_NOT_FOUND = "file_not_found"
    FILE_NOT_READABLE = "file_not_readable"
    INVALID_JSON = "invalid_json"
    NOT_AN_OBJECT = "not_an_object"
    UNKNOWN_KEY = "unknown_key"
    SECTION_NOT_AN_OBJECT = "section_not_an_object"
    INVALID_VALUE = "invalid_value"
    INVALID = "invalid"


_CONFIG_MESSAGES: dict[ConfigProblem, str] = {
    ConfigProblem.FILE_NOT_FOUND: "configuration file not found",
    ConfigProblem.FILE_NOT_READABLE: "configuration file not readable",
    ConfigProblem.INVALID_JSON: "invalid JSON in configuration file",
    ConfigProblem.NOT_AN_OBJECT: "configuration file is not a JSON object",
    ConfigProblem.UNKNOWN_KEY: "unknown configuration key",
    ConfigProblem.SECTION_NOT_AN_OBJECT: "configuration section is not an object",
    ConfigProblem.INVALID_VALUE: "invalid configuration value",
    ConfigProblem.INVALID: "invalid configuration",
}


_PROVIDER_REMEDIES: dict[ProviderReason, str] = {
    ProviderReason.HTTP_ERROR: "see http_status: 401 or 403 means the OpenAlex key is wrong "
    "(replace it), 400 a query OpenAlex rejects (rephrase it), 5xx a fault at OpenAlex "
    "(search again later)",
    ProviderReason.RATE_LIMITED: "wait retry_after_s seconds (or a minute) and search again",
    ProviderReason.BUDGET_EXHAUSTED: "the daily OpenAlex budget is spent: search again after "
    "midnight UTC, or raise the budget at https://openalex.org/settings/api",
    ProviderReason.TIMEOUT: "check the network connection and search again",
    ProviderReason.TRANSPORT_ERROR: "check the network connection (DNS, proxy, firewall) "
    "and search again",
    ProviderReason.TOO_LARGE: "ask for fewer works (a lower limit) and search again",
    ProviderReason.TOO_DEEP: "a fault at OpenAlex or a proxy on the way: search again later",
    ProviderReason.MALFORMED_JSON: "a fault at OpenAlex or a proxy on the way: search again later",
    ProviderReason.UNDECODABLE: "a fault at OpenAlex or a proxy on the way: search again later",
    ProviderReason.UNEXPECTED_SHAPE: "a fault at OpenAlex or a proxy on the way: "
    "search again later",
    ProviderReason.REDIRECT: "a proxy or captive portal answered instead of OpenAlex: "
    "check the network, then search again",
}

_DETAIL_REMEDIES: dict[ConfigurationDetail, str] = {
    ConfigurationDetail.MISSING_API_KEY: "get a free key at https://openalex.org/settings/api, "
    "then set HARVESTER_OPENALEX_API_KEY in the server's environment, or put it in the "
    f"file HARVESTER_CONFIG names ({CONFIG_SHAPE}), and restart the server",
    ConfigurationDetail.INVALID_API_KEY: "the key holds characters an HTTP header cannot carry "
    "(spaces, quotes, line breaks): copy it again from https://openalex.org/settings/api "
    "into HARVESTER_OPENALEX_API_KEY or the HARVESTER_CONFIG file, and restart the server",
    ConfigurationDetail.ENDPOINT_NOT_ALLOWED: "remove openalex.base_url from the HARVESTER_CONFIG "
    "file and unset HARVESTER_OPENALEX_BASE_URL (only https://api.openalex.org is allowed), "
    "and restart the server",
}

_CONFIG_REMEDIES: dict[ConfigProblem, str] = {
    ConfigProblem.FILE_NOT_FOUND: "create the file HARVESTER_CONFIG names "
    f"({CONFIG_SHAPE}), or unset HARVESTER_CONFIG",
    ConfigProblem.FILE_NOT_READABLE: "make HARVESTER_CONFIG name a UTF-8 file (not a folder) "
    f"that you own and can read ({CONFIG_SHAPE})",
    ConfigProblem.INVALID_JSON: f"rewrite the file HARVESTER_CONFIG names as JSON: {CONFIG_SHAPE}",
    ConfigProblem.NOT_AN_OBJECT: "the file HARVESTER_CONFIG names must hold one JSON object: "
    f"{CONFIG_SHAPE}",
    ConfigProblem.UNKNOWN_KEY: "remove the keys notanda does not know from the file "
    f"HARVESTER_CONFIG names: {CONFIG_SHAPE}",
    ConfigProblem.SECTION_NOT_AN_OBJECT: "each section of the file HARVESTER_CONFIG names is an "
    f"object: {CONFIG_SHAPE}",
    ConfigProblem.INVALID_VALUE: "fix the value's type in the file HARVESTER_CONFIG names or in "
    "its HARVESTER_* variable (true or false, a whole number, a number, not null)",
    ConfigProblem.INVALID: "fix the file HARVESTER_CONFIG names and the HARVESTER_* variables; "
    f"the file's shape is {CONFIG_SHAPE}",
}


class OpenAlexError(Exception):
    """The base of every exception this package raises to a caller.

    Attributes:
        code: The stable :class:`ErrorCode` of the error.
    """

    code: ErrorCode


class InputError(OpenAlexError):
    """An argument was rejected before any request: code ``invalid_arguments``.

    Raised by :func:`~notanda_openalex.prepare_search` for a search's
    arguments, and as its subclass :class:`ReferenceInputError` by
    :func:`~notanda_openalex.parse_references` for a check's.

    The message names the field and the reason only; it never repeats the input.

    Attributes:
        code: Always :attr:`ErrorCode.INVALID_ARGUMENTS`.
        field: The argument, e.g. ``query``, ``limit`` or ``filters.to_year``.
        reason: A stable snake_case reason such as ``too_long``.
    """

    def __init__(self, field: str, reason: InputReason) -> None:
        super().__init__(f"invalid argument {field}: {reason.value}")
        self.code = ErrorCode.INVALID_ARGUMENTS
        self.field = field
        self.reason = reason

    def to_record(self) -> dict[str, str]:
        """Return the JSON-safe record ``{"code", "field", "reason"}``."""
        return {"code": self.code.value, "field": self.field, "reason": self.reason.value}


class ConfigurationError(OpenAlexError):
    """The notanda core configuration could not be loaded.

    The message is one fixed line naming the kind of problem. It never contains
    a configuration value, a path or a secret, and the core's own exception is
    deliberately not chained because its text may quote a value.

    Attributes:
        code: Always :attr:`ErrorCode.CONFIGURATION_ERROR`.
        problem: The kind of problem; ``problem.remedy`` says what to do.
    """

    def __init__(self, problem: ConfigProblem) -> None:
        super().__init__(_CONFIG_MESSAGES[problem])
        self.code = ErrorCode.CONFIGURATION_ERROR
        self.problem = problem


class ReferenceInputError(InputError):
    """An argument to :func:`~notanda_openalex.parse_references` was rejected.

    An :class:`InputError` (code ``invalid_arguments``), so that a caller
    handling one invalid argument handles both. The message names the field,
    the reason and, for a limit, the limit; it never repeats the input.

    Attributes:
        limit: The limit that was exceeded (bytes for ``too_long``, references
            for ``too_many``), else ``None``.
    """

    def __init__(self, field: str, reason: InputReason, limit: int | None = None) -> None:
        super().__init__(field, reason)
        self.limit = limit
        if limit is not None:
            unit = "UTF-8 bytes" if reason is InputReason.TOO_LONG else "references"
            self.args = (f"invalid argument {field}: {reason.value} (at most {limit} {unit})",)


#: Deprecated alias of :class:`InputError` (it serves a check's arguments too):
#: kept for one release, then removed.
SearchInputError = InputError
