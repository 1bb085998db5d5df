r"""Keeping configured secrets, and values under secret-named keys, out of records.

One :class:`SecretScrubber` per client holds every form in which a configured
secret can appear: raw, percent-encoded (upper- and lower-case hex) and
JSON-escaped. The fast path only *looks* (substring tests on bytes that are
produced anyway); the walk that rebuilds a value runs only when a look finds
something.

The look is made on canonical JSON bytes, not on the provider's wire bytes:
canonical JSON is the decoded value written with the fewest escapes (only
``"``, ``\`` and control characters), so every ``\uXXXX`` or ``\/`` spelling
of a character on the wire is already that character there, and "these bytes
hold no form of a secret" means "no decoded string holds one". What the
decoder of a URL could still turn into a secret (percent-encoding in any hex
case, ``+`` for a space) is undone once more before looking.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable
from itertools import islice
from typing import Any
from urllib.parse import (
    parse_qsl,
    quote,
    quote_plus,
    unquote_to_bytes,
    urlencode,
    urlsplit,
    urlunsplit,
)

from harvester.http import redact_url as _core_redact_url

from ._canonical import ENCODER as _ENCODER
from ._canonical import SPLIT_DEPTH, canonical_json_bytes, iter_canonical_pieces
from ._text import has_lone_surrogate, replace_lone_surrogates

__all__ = [
    "ABSTRACT_INDEX_KEY",
    "REDACTED",
    "SECRET_NAMES",
    "SecretScrubber",
    "scrubbed_canonical",
]

REDACTED = "REDACTED"

#: The one object whose keys are data (the words of the abstract), not field names.
ABSTRACT_INDEX_KEY = "abstract_inverted_index"

#: Object keys and URL query parameters whose values are always replaced,
#: compared case-insensitively. A superset of the core's ``SECRET_QUERY_PARAMS``.
SECRET_NAMES = frozenset(
    {
        "api_key",
        "apikey",
        "api-key",
        "authorization",
        "token",
        "access_token",
        "contact_email",
        "email",
        "mailto",
        "key",
    }
)

#: Lower-case byte strings whose presence in canonical JSON means a secret-named
#: key (``"api_key":``) may be present. Each is a suffix every matching spelling
#: shares, so false positives only cost a walk of the piece.
_KEY_TRIGGERS = (b'key":', b'token":', b'email":', b'mailto":', b'authorization":')
#: The same for secret-named URL query parameters (``api_key=``): what may
#: precede an ``=``. Pieces hold few ``=`` signs, so each one is checked.
_PARAM_ENDINGS = (b"key", b"token", b"email", b"mailto", b"authorization")
_LONGEST_PARAM_ENDING = max(len(ending) for ending in _PARAM_ENDINGS)

_PERCENT_HEX = re.compile("%[0-9A-F]{2}")

#: UTF-8 of the characters outside ASCII whose ``str.lower()`` is an ASCII
#: character of a secret name (the Kelvin sign lowers to ``k``); ``bytes.lower``
#: does not fold them, so their presence alone means "may hold a name".
_FOLDS_TO_NAME = ("\u212a".encode("utf-8"),)
#: Characters a JSON encoder escapes: a secret holding one can be split between a
#: JSON escape and a percent escape, which undoing the percent escapes alone misses.
_JSON_ESCAPED = re.compile(r'["\\\x00-\x1f]')
#: A URL with userinfo (``https://user:password@host``), in canonical bytes: an
#: escaped character (``\\"``) does not end the host part, a real quote does.
_USERINFO = re.compile(rb'://(?:[^/?#@"\\]|\\.)*@')
#: Canonical bytes are looked at in groups of about this size, so that a large
#: page is never copied whole for the look (a string never spans two groups),
#: and a flagged group early in a page wastes little before the per-piece path.
_LOOK_STEP = 64 * 1024


def _secret_forms(secret: str) -> set[str]:
    forms = {secret, quote(secret, safe=""), quote(secret), quote_plus(secret, safe="")}
    forms |= {_PERCENT_HEX.sub(lambda match: match.group(0).lower(), form) for form in forms}
    return {form for form in forms if form}


class SecretScrubber:
    """Replace configured secrets and secret-named values with ``REDACTED``.

    Args:
        secrets: The values to hide. Empty strings and non-strings are ignored.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = {replace_lone_surrogates(value) for value in secrets if isinstance(value, str)}
        text_forms: set[str] = set()
        for value in values:
            if value:
                text_forms |= _secret_forms(value)
        # Longest first, so a form that contains another is replaced whole.
        self._text_forms = tuple(sorted(text_forms, key=lambda form: (-len(form), form)))
        byte_forms = {form.encode("utf-8") for form in text_forms}
        byte_forms |= {
            json.dumps(value, ensure_ascii=False)[1:-1].encode("utf-8") for value in values if value
        }
        self._byte_forms = tuple(sorted(byte_forms, key=lambda form: (-len(form), form)))
        self._plus_matters = any(" " in value for value in values)
        # A URL decoder may join a JSON escape and a percent escape, or replace
        # an invalid percent sequence with U+FFFD: such secrets are never ruled
        # out by a look at bytes holding percent escapes.
        self._percent_unsure = any(
            _JSON_ESCAPED.search(value) or "\ufffd" in value for value in values if value
        )

    @property
    def has_secrets(self) -> bool:
        """Whether any secret value is configured."""
        return bool(self._text_forms)

    def contains_secret(self, data: bytes) -> bool:
        """Return whether *data* (UTF-8 or canonical JSON) holds any secret form."""
        return any(form in data for form in self._byte_forms)

    def may_hold_secret(self, data: bytes) -> bool:
        """Return whether *data* holds a secret form, or one after URL decoding.

        *data* is canonical JSON, or a part of it holding whole strings. What
        ``parse_qsl`` makes of a query in here (``%XX`` in either hex case,
        ``+`` for a space) is undone for the whole of *data* at once: names and
        values are decoded the same way wherever they stand, and the decoding
        of a query's part is a part of the whole's decoding.
        """
        if not self._byte_forms:
            return False
        if self.contains_secret(data):
            return True
        if b"%" in data:
            if self._percent_unsure:
                return True
        elif not (self._plus_matters and b"+" in data):
            return False
        return self.contains_secret(unquote_to_bytes(data.replace(b"+", b" ")))

    def may_hold_name(self, data: bytes) -> bool:
        """Return whether *data* may hold a secret-named key or URL parameter, or URL userinfo.

        *data* is canonical JSON, or a part of it holding whole strings and
        whole ``"key":`` pairs. A parameter's name is looked for as written
        and percent-decoded; a name spelled with a character whose lower
        case is ASCII (the Kelvin sign) counts too.
        """
        if b"@" in data and _USERINFO.search(data) is not None:
            return True
        if any(mark in data for mark in _FOLDS_TO_NAME) or _names_may_occur(data.lower()):
            return True
        if b"%" not in data:
            return False
        decoded = unquote_to_bytes(data)
        return any(mark in decoded for mark in _FOLDS_TO_NAME) or _names_may_occur(decoded.lower())

    def may_change(self, data: bytes) -> bool:
        """Return whether scrubbing could change the value *data* encodes.

        *data* is canonical JSON, or a part of it holding whole strings and
        whole ``"key":`` pairs. ``False`` is a promise: :meth:`scrub_value`
        would return the value unchanged, so it need not run. ``True`` only
        means a closer look is needed (a word such as ``"monkey":`` is a false
        alarm). Linear in the size of *data*.
        """
        return self.may_hold_secret(data) or self.may_hold_name(data)

    def scrubbed(self, value: Any) -> Any:
        """Return :meth:`scrub_value` of *value*, or *value* itself when that changes nothing.

        The value is encoded once to look at it; only a look that finds
        something (see :meth:`may_change`) walks it.
        """
        try:
            data = canonical_json_bytes(value)
        except (ValueError, TypeError, RecursionError):  # includes UnicodeEncodeError
            return self.scrub_value(value)
        if self.may_change(data):
            return self.scrub_value(value)
        return value

    def text_contains_secret(self, text: str) -> bool:
        """Return whether *text* holds any secret form."""
        return any(form in text for form in self._text_forms)

    def scrub_text(self, text: str) -> str:
        """Return *text* with secret forms replaced and lone surrogates replaced."""
        if has_lone_surrogate(text):
            text = replace_lone_surrogates(text)
        for form in self._text_forms:
            if form in text:
                text = text.replace(form, REDACTED)
        return text

    def scrub_url(self, url: str) -> str:
        """Return *url* with secrets and secret-named query parameters redacted.

        A URL without either comes back byte for byte. When something is found,
        the core's :func:`harvester.http.redact_url` (which also drops userinfo)
        is applied, then the parameters it does not know (``mailto``,
        ``api-key``, ``contact_email``, ``authorization``) and any decoded value
        holding a secret are redacted too.
        """
        text = self.scrub_text(url)
        if "?" not in text and "@" not in text:
            return text
        try:
            parts = urlsplit(text)
        except ValueError:
            return text
        if not parts.query and "@" not in parts.netloc:
            return text
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        if "@" not in parts.netloc and not any(
            (name.lower() in SECRET_NAMES and value) or self.text_contains_secret(value)
            for name, value in pairs
        ):
            return text
        redacted: str = _core_redact_url(text)
        try:
            parts = urlsplit(redacted)
        except ValueError:  # pragma: no cover - redact_url only emits parseable URLs
            return redacted
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        cleaned = [
            (
                self.scrub_text(name),
                REDACTED if name.lower() in SECRET_NAMES and value else self.scrub_text(value),
            )
            for name, value in pairs
        ]
        if cleaned == pairs:
            return redacted
        return urlunsplit(parts._replace(query=urlencode(cleaned)))

    def scrub_value(self, value: Any) -> Any:
        """Return a scrubbed copy of a parsed JSON value (the slow path).

        Strings lose secret forms and lone surrogates; strings that start with
        ``http://`` or ``https://`` also go through :meth:`scrub_url`; the value
        of every key in :data:`SECRET_NAMES` (unless null) becomes ``REDACTED``;
        keys are scrubbed like strings. The keys of an
        ``abstract_inverted_index`` object are words of the abstract, not field
        names, so the key rule does not apply to them (secret values still do).
        """
        return self._scrub(value, words=False)

    def _redact_names(self, value: Any, *, words: bool) -> Any:
        """Apply only the name rules (keys, URL parameters, userinfo); copy on write.

        For a value known to hold no secret and no lone surrogate: returns
        *value* itself when nothing is redacted.
        """
        if isinstance(value, str):
            if ("=" in value or "@" in value) and value[:8].lower().startswith(
                ("http://", "https://")
            ):
                cleaned = self.scrub_url(value)
                return value if cleaned == value else cleaned
            return value
        if isinstance(value, dict):
            copy: dict[Any, Any] | None = None
            for index, (key, item) in enumerate(value.items()):
                if isinstance(key, str) and not words and key.lower() in SECRET_NAMES:
                    new = item if item is None else REDACTED
                else:
                    new = self._redact_names(
                        item, words=key == ABSTRACT_INDEX_KEY and isinstance(item, dict)
                    )
                if copy is None and new is not item:
                    copy = dict(islice(value.items(), index))
                if copy is not None:
                    copy[key] = new
            return value if copy is None else copy
        if isinstance(value, (list, tuple)):
            items: list[Any] | None = None
            for index, item in enumerate(value):
                new = self._redact_names(item, words=False)
                if items is None and new is not item:
                    items = list(value[:index])
                if items is not None:
                    items.append(new)
            return value if items is None else items
        return value

    def _scrub(self, value: Any, *, words: bool) -> Any:
        if isinstance(value, str):
            text = self.scrub_text(value)
            if text[:8].lower().startswith(("http://", "https://")):
                text = self.scrub_url(text)
            return text
        if isinstance(value, dict):
            result: dict[Any, Any] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    result[key] = self._scrub(item, words=False)
                elif not words and key.lower() in SECRET_NAMES and item is not None:
                    result[self.scrub_text(key)] = REDACTED
                else:
                    result[self.scrub_text(key)] = self._scrub(
                        item, words=key == ABSTRACT_INDEX_KEY and isinstance(item, dict)
                    )
            return result
        if isinstance(value, (list, tuple)):
            return [self._scrub(item, words=False) for item in value]
        return value


def _names_may_occur(lowered: bytes) -> bool:
    """Whether lower-case canonical bytes may hold a secret-named key or URL parameter."""
    if any(trigger in lowered for trigger in _KEY_TRIGGERS):
        return True
    index = lowered.find(b"=")
    while index >= 0:
        if lowered[max(0, index - _LONGEST_PARAM_ENDING) : index].endswith(_PARAM_ENDINGS):
            return True
        index = lowered.find(b"=", index + 1)
    return False


class _KeyChanged(Exception):
    """Scrubbing changed an object key near the top; the sort order may change."""


def _encoded(value: Any) -> bytes | None:
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except UnicodeEncodeError:
        return None


class _Emitter:
    """Write canonical bytes, scrubbing only the pieces that need it.

    Near the top (where :func:`iter_canonical_pieces` splits) objects and
    arrays are walked here; below that, each value is encoded whole and only
    walked by :meth:`SecretScrubber.scrub_value` if its bytes fail to encode
    (lone surrogate) or :meth:`SecretScrubber.may_change` finds something. For a works page
    a piece is one work, so a secret in one record costs one record's walk.
    """

    def __init__(self, scrubber: SecretScrubber, out: io.BytesIO) -> None:
        self._scrubber = scrubber
        self._out = out

    def emit(self, value: Any, depth: int, *, words: bool) -> Any:
        if depth < SPLIT_DEPTH:
            if isinstance(value, dict) and value and all(isinstance(key, str) for key in value):
                return self._emit_object(value, depth, words=words)
            if isinstance(value, (list, tuple)) and value:
                return self._emit_array(value, depth)
        data = _encoded(value)
        stored = value
        if data is None or self._scrubber.may_hold_secret(data):
            stored = self._scrubber._scrub(value, words=words)
        elif self._scrubber.may_hold_name(data):
            # No secret and no surrogate here: only the name rules can apply,
            # and a false alarm (a word such as "key" in an abstract) keeps the bytes.
            stored = self._scrubber._redact_names(value, words=words)
        if data is None or stored is not value:
            data = _encoded(stored)
            if data is None:  # pragma: no cover - scrubbing replaces every surrogate
                raise UnicodeEncodeError("utf-8", "", 0, 1, "lone surrogate survived scrubbing")
        self._out.write(data)
        return stored

    def _emit_object(self, value: dict[str, Any], depth: int, *, words: bool) -> Any:
        changed = False
        stored: dict[str, Any] = {}
        separator = b"{"
        for key in sorted(value):
            clean_key = self._scrubber.scrub_text(key)
            if clean_key != key:
                raise _KeyChanged
            item = value[key]
            self._out.write(separator + _ENCODER.encode(key).encode("utf-8") + b":")
            separator = b","
            if not words and key.lower() in SECRET_NAMES and item is not None:
                self._out.write(b'"' + REDACTED.encode("ascii") + b'"')
                stored[key] = REDACTED
                changed = True
                continue
            child = self.emit(
                item, depth + 1, words=key == ABSTRACT_INDEX_KEY and isinstance(item, dict)
            )
            stored[key] = child
            changed = changed or child is not item
        self._out.write(b"}")
        return stored if changed else value

    def _emit_array(self, value: list[Any] | tuple[Any, ...], depth: int) -> Any:
        changed = False
        stored: list[Any] = []
        separator = b"["
        for item in value:
            self._out.write(separator)
            separator = b","
            child = self.emit(item, depth + 1, words=False)
            stored.append(child)
            changed = changed or child is not item
        self._out.write(b"]")
        return stored if changed else value


def _clean_canonical(value: Any, scrubber: SecretScrubber) -> bytes | None:
    """The canonical bytes of *value* when scrubbing would change nothing, else ``None``.

    The common case: one plain encode and one look, in groups of whole
    pieces, and no walk of the value at all.
    """
    pieces: list[bytes] = []
    group: list[bytes] = []
    size = 0
    for piece in iter_canonical_pieces(value):
        group.append(piece)
        size += len(piece)
        if size >= _LOOK_STEP:
            if scrubber.may_change(b"".join(group)):
                return None
            pieces += group
            group, size = [], 0
    if group and scrubber.may_change(b"".join(group)):
        return None
    pieces += group
    del group
    data = b"".join(pieces)
    del pieces
    # A secret spanning JSON structure, or two groups, is in no single group.
    return None if scrubber.contains_secret(data) else data


def scrubbed_canonical(value: Any, scrubber: SecretScrubber) -> tuple[bytes | None, Any]:
    """Encode a parsed body once, scrubbing only the parts that need it.

    Returns the canonical bytes of the scrubbed value and the value those
    bytes encode: *value* itself when nothing needed scrubbing, otherwise a
    copy in which only the affected parts were rebuilt. The bytes are ``None``
    (the body is withheld) when a secret survives even a full walk, for
    instance one that spans JSON structure.

    Raises:
        ValueError: NaN, Infinity or a circular reference.
        TypeError: A value that is not JSON.
        RecursionError: Nesting deeper than the encoder allows.
    """
    try:
        data = _clean_canonical(value, scrubber)
    except UnicodeEncodeError:  # a lone surrogate: the walk replaces it
        data = None
    if data is not None:
        return data, value
    out = io.BytesIO()
    try:
        stored = _Emitter(scrubber, out).emit(value, 0, words=False)
    except _KeyChanged:
        stored = scrubber.scrub_value(value)
        data = canonical_json_bytes(stored)
    else:
        data = out.getvalue()
    del out
    if not scrubber.contains_secret(data):
        return data, stored
    # A secret across piece boundaries: scrub the whole value and try once more.
    stored = scrubber.scrub_value(stored)
    data = canonical_json_bytes(stored)
    if scrubber.contains_secret(data):
        return None, stored
    return data, stored
