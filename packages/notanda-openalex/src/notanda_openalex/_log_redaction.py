"""Redacting secrets from the HTTP libraries' own debug log records.

httpcore logs every response header at DEBUG (``receive_response_headers
.complete return_value=...``). A provider echoing a secret in a header would
then put it in any DEBUG log. While a search is in flight its scrubber is
registered here, and a filter on httpcore's and httpx's loggers rewrites any
record that contains a secret. Nothing else about those loggers is changed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ._secrets import SecretScrubber

__all__ = ["redacting_http_logs"]

_LOGGER_NAMES = (
    "httpx",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
)

_lock = threading.Lock()
_active: dict[int, tuple[SecretScrubber, int]] = {}
_installed = False


class _RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        with _lock:
            scrubbers = [scrubber for scrubber, _ in _active.values()]
        if not scrubbers:
            return True
        message = record.getMessage()
        cleaned = message
        for scrubber in scrubbers:
            cleaned = scrubber.scrub_text(cleaned)
        if cleaned != message:
            record.msg = cleaned
            record.args = None
        return True


def _install() -> None:
    global _installed  # noqa: PLW0603 - one filter per process, installed once
    if _installed:
        return
    redacting = _RedactingFilter()
    for name in _LOGGER_NAMES:
        logging.getLogger(name).addFilter(redacting)
    _installed = True


@contextmanager
def redacting_http_logs(scrubber: SecretScrubber) -> Iterator[None]:
    """Redact *scrubber*'s secrets from httpx/httpcore log records while inside."""
    if not scrubber.has_secrets:
        yield
        return
    key = id(scrubber)
    with _lock:
        _install()
        previous = _active.get(key)
        _active[key] = (scrubber, 1 if previous is None else previous[1] + 1)
    try:
        yield
    finally:
        with _lock:
            current = _active[key]
            if current[1] <= 1:
                del _active[key]
            else:
                _active[key] = (scrubber, current[1] - 1)
