r"""Keeping configured secrets, and values under secret-named keys, out of records.

One :class:`SecretScrubber` per client holds every form in which a configured
secret can appear: raw, percent-encoded (upper- and lower-case hex) and
JSON-escaped. A provider body is looked at once, as the bytes that came off
the wire, before it is parsed (:meth:`SecretScrubber.look_at_body`); the parsed
value is walked at most once, and not at all when the look finds nothing
(:meth:`SecretScrubber.scrub_parsed`). Nothing here encodes JSON: the
evidence writer alone does.

Bytes straight from the wire can spell a character as a JSON escape
(``\u0041``, ``\/``) that the decoder turns into it. So the look first reads
every escape in the body: one that decodes to a character of a configured
secret (or any surrogate) means "walk everything"; one that decodes to a
character of a secret name or of a URL's structure means "walk for names".
With no such escape, what the decoder makes of each string is spelled
literally in the bytes, and substring tests decide. What the decoder of a URL
could still turn into a secret (percent-encoding in any hex case, ``+`` for a
space) is undone once more before looking.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable, Iterator
from itertools import chain, islice
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

from ._text import has_lone_surrogate, replace_lone_surrogates

__all__ = [
    "ABSTRACT_INDEX_KEY",
    "REDACTED",
    "SECRET_NAMES",
    "BodyLook",
    "SecretScrubber",
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

#: A secret-named key (``"api_key":``) may be present, in lower-case body bytes,
#: when one of these suffixes, shared by every matching spelling, is followed by
#: the key's closing quote and its colon (with the whitespace a provider may put
#: between them). Each suffix is found with ``bytes.find``: a regular expression
#: of the alternatives costs a millisecond on a 100 KB page.
_KEY_ENDINGS = (b'key"', b'token"', b'email"', b'mailto"', b'authorization"')
_JSON_SPACE = b" \t\r\n"
#: The same for secret-named URL query parameters (``api_key=``): what may
#: precede an ``=``. Bodies hold few ``=`` signs, so each one is checked.
_PARAM_ENDINGS = (b"key", b"token", b"email", b"mailto", b"authorization")
_LONGEST_PARAM_ENDING = max(len(ending) for ending in _PARAM_ENDINGS)
#: Every JSON escape, left to right: ``\uXXXX`` (group 1) or one character (group 2).
_ESCAPE = re.compile(rb"\\(?:u([0-9a-fA-F]{4})|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {
    b'"': '"',
    b"\\": "\\",
    b"/": "/",
    b"b": "\b",
    b"f": "\f",
    b"n": "\n",
    b"r": "\r",
    b"t": "\t",
}
#: Characters an escape must not hide from the name rules: those of secret names
#: in either case (and the Kelvin sign, which lowers to ``k``), and those of a
#: URL's query and userinfo.
_NAME_CHARS = frozenset(
    "".join(SECRET_NAMES) + "".join(SECRET_NAMES).upper() + "\u212a" + "=%+@:/?&#"
)
#: Characters of JSON's structure: a secret holding one could span structure in
#: the stored encoding, where no walk of the decoded strings can remove it.
_STRUCTURE = frozenset('"\\,:[]{}')
#: A secret made only of these could be a number or literal, which no walk of
#: strings removes either.
_TOKEN = re.compile(r"[-+.0-9eE]+|t?r?u?e?|f?a?l?s?e?|n?u?l?l?")

_PERCENT_HEX = re.compile("%[0-9A-F]{2}")

#: UTF-8 of the characters outside ASCII whose ``str.lower()`` is an ASCII
#: character of a secret name (the Kelvin sign lowers to ``k``); ``bytes.lower``
#: does not fold them, so their presence alone means "may hold a name".
_FOLDS_TO_NAME = ("\u212a".encode("utf-8"),)
#: Characters a JSON encoder escapes: a secret holding one can be split between a
#: JSON escape and a percent escape, which undoing the percent escapes alone misses.
_JSON_ESCAPED = re.compile(r'["\\\x00-\x1f]')
#: A URL with userinfo (``https://user:password@host``), in body bytes: an
#: escaped character (``\\"``) does not end the host part, a real quote does.
#: That is ``://(?:[^/?#@"\\]|\\.)*@``; it is written here for the bytes
#: reversed, which :meth:`SecretScrubber.may_hold_name` searches, so that the
#: engine starts only at each ``@`` (a page holds a few) rather than at each
#: ``://`` (tens of thousands on a large page: 28 ms of 3.8 MB, against 4 ms).
_USERINFO_REVERSED = re.compile(rb'@(?:[^/?#@"\\]|[^\n]\\)*//:')


#: Percent escapes are undone in windows of this many bytes (plus an overlap), so
#: that a 4 MiB page is never decoded whole: ``unquote_to_bytes`` holds three
#: times its input in pieces.
_DECODE_STEP = 64 * 1024
#: How many body bytes a percent-encoded secret name and its ``=`` span at most.
_NAME_REACH = 12 * max(len(name) for name in SECRET_NAMES) + 8


def _windows(data: bytes | bytearray, reach: int) -> Iterator[bytes]:
    """*data* in overlapping windows: whatever spans at most *reach* bytes lies inside one."""
    start = 0
    while True:
        yield bytes(data[start : start + _DECODE_STEP + reach])
        start += _DECODE_STEP
        if start + reach >= len(data):
            return


class BodyLook(enum.Enum):
    """What a look at a body's bytes found: how much of the parsed value to walk."""

    #: Nothing scrubbing could change: the parsed value is kept as it is.
    CLEAN = "clean"
    #: No secret, but perhaps a secret-named key, URL parameter or userinfo.
    NAMES = "names"
    #: Perhaps a secret, a lone surrogate or an escape hiding either.
    SECRETS = "secrets"


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
        #: How many body bytes a percent-encoded secret spans at most (four
        #: UTF-8 bytes of three characters each per character).
        self._encoded_reach = 12 * max((len(value) for value in values), default=0) + 8
        #: Every character of every form: an escape decoding to one may hide a secret.
        self._secret_chars = frozenset("".join(text_forms) + "".join(values))
        self._withholds_json = any(
            not _STRUCTURE.isdisjoint(form) or _TOKEN.fullmatch(form) is not None
            for form in text_forms
        )

    @property
    def has_secrets(self) -> bool:
        """Whether any secret value is configured."""
        return bool(self._text_forms)

    @property
    def withholds_json(self) -> bool:
        r"""Whether a JSON body must be withheld whatever it holds.

        True when a configured secret could span JSON structure or be a
        number or literal in the stored encoding (it holds one of
        ``"\\,:[]{}``, or consists of characters of numbers, ``true``,
        ``false`` or ``null``): a walk of the decoded strings cannot remove it
        there, and only the encoder sees that encoding.
        """
        return self._withholds_json

    def contains_secret(self, data: bytes | bytearray) -> bool:
        """Return whether *data* (UTF-8) holds any secret form."""
        return any(form in data for form in self._byte_forms)

    def may_hold_secret(self, data: bytes | bytearray) -> bool:
        """Return whether *data* holds a secret form, or one after URL decoding.

        *data* is UTF-8 JSON whose escapes were already looked at (see
        :meth:`look_at_body`). What ``parse_qsl`` makes of a query in here
        (``%XX`` in either hex case, ``+`` for a space) is undone for the whole
        of *data* at once: names and values are decoded the same way wherever
        they stand, and the decoding of a query's part is a part of the
        whole's decoding.
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
        return any(
            self.contains_secret(unquote_to_bytes(window.replace(b"+", b" ")))
            for window in _windows(data, self._encoded_reach)
        )

    def may_hold_name(self, data: bytes | bytearray) -> bool:
        """Return whether *data* may hold a secret-named key or URL parameter, or URL userinfo.

        *data* is UTF-8 JSON whose escapes were already looked at. A
        parameter's name is looked for as written and percent-decoded; a name
        spelled with a character whose lower case is ASCII (the Kelvin sign)
        counts too.
        """
        if b"@" in data and _USERINFO_REVERSED.search(data[::-1]) is not None:
            return True
        if any(mark in data for mark in _FOLDS_TO_NAME) or _names_may_occur(data.lower()):
            return True
        if b"%" not in data:
            return False
        for window in _windows(data, _NAME_REACH):
            decoded = unquote_to_bytes(window)
            if any(mark in decoded for mark in _FOLDS_TO_NAME) or _names_may_occur(decoded.lower()):
                return True
        return False

    def look_at_body(self, body: bytes | bytearray) -> BodyLook:
        """Say how much of the value parsed from *body* scrubbing could change.

        *body* is the provider's UTF-8 JSON as received. :attr:`BodyLook.CLEAN`
        is a promise: :meth:`scrub_value` would return the parsed value
        unchanged. The other answers only mean a walk is needed (a word such
        as ``"monkey":`` is a false alarm). Linear in the size of *body*;
        nothing is copied unless the body holds percent escapes.
        """
        data = body
        names = False
        if b"\\" in data:
            for code, simple in set(_ESCAPE.findall(data)):
                char = chr(int(code, 16)) if code else _SIMPLE_ESCAPES.get(simple, "")
                if "\ud800" <= char <= "\udfff" or char in self._secret_chars:
                    return BodyLook.SECRETS
                names = names or char in _NAME_CHARS
        if self.may_hold_secret(data):
            return BodyLook.SECRETS
        if names or self.may_hold_name(data):
            return BodyLook.NAMES
        return BodyLook.CLEAN

    def scrub_parsed(self, value: Any, look: BodyLook) -> Any:
        """Scrub the value parsed from a body, walking it at most once.

        *look* is :meth:`look_at_body` of the bytes it was parsed from. Parts
        that need no change are shared with *value*, and *value* itself comes
        back when nothing changed.
        """
        if look is BodyLook.SECRETS:
            return self._scrub(value, words=False)
        if look is BodyLook.NAMES:
            return self._redact_names(value, words=False)
        return value

    def scrubbed(self, value: Any) -> Any:
        """Return :meth:`scrub_value` of *value*, or *value* itself when that changes nothing.

        For a value built in Python (a request record): it is written out once
        with ``json.dumps`` (at C speed, in no particular form) and looked at as
        a body would be; only a look that finds something walks it.
        """
        try:
            data = json.dumps(value, ensure_ascii=False).encode("utf-8")
        except (ValueError, TypeError, RecursionError):  # includes a lone surrogate
            return self.scrub_value(value)
        if self.look_at_body(data) is BodyLook.CLEAN:
            return value
        return self.scrub_value(value)

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
        """Return a parsed JSON value scrubbed, sharing every part that needs no change.

        *value* itself comes back when nothing changes.

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
        return self._scrub(value, words=words, names_only=True)

    def _scrub(self, value: Any, *, words: bool, names_only: bool = False) -> Any:
        """Apply every rule (or only the name rules); copy on write, sharing unchanged parts."""
        if isinstance(value, str):
            if names_only:
                if not ("=" in value or "@" in value):
                    return value
                text = value
            else:
                text = self.scrub_text(value)
            if text[:8].lower().startswith(("http://", "https://")):
                text = self.scrub_url(text)
            return value if text == value else text
        # Below, an item that no rule can change is kept without a call (most of
        # a page: numbers, and for the name rules strings without "=" or "@").
        if isinstance(value, dict):
            if words and names_only and _only_numbers(value.values()):
                return value  # an abstract's index: its words are keys, kept as they are
            copy: dict[Any, Any] | None = None
            for index, (key, item) in enumerate(value.items()):
                new_key = key
                if not isinstance(key, str):
                    new = self._scrub(item, words=False, names_only=names_only)
                else:
                    if not names_only:
                        new_key = self.scrub_text(key)
                    if not words and key.lower() in SECRET_NAMES and item is not None:
                        new = REDACTED
                    elif item.__class__ in _UNCHANGED or (names_only and _plain_for_names(item)):
                        new = item
                    else:
                        nested_words = key == ABSTRACT_INDEX_KEY and isinstance(item, dict)
                        new = self._scrub(item, words=nested_words, names_only=names_only)
                if copy is None and (new is not item or new_key != key):
                    copy = dict(islice(value.items(), index))
                if copy is not None:
                    copy[new_key] = new
            return value if copy is None else copy
        if isinstance(value, (list, tuple)):
            if _UNCHANGED.issuperset(map(type, value)):
                return value
            items: list[Any] | None = None
            for index, item in enumerate(value):
                if item.__class__ in _UNCHANGED or (names_only and _plain_for_names(item)):
                    new = item
                else:
                    new = self._scrub(item, words=False, names_only=names_only)
                if items is None and new is not item:
                    items = list(value[:index])
                if items is not None:
                    items.append(new)
            return value if items is None else items
        return value


#: Exact types of values no rule changes: :meth:`SecretScrubber._scrub` returns
#: them as they are (subclasses of ``str``, ``dict`` or ``list`` are not here).
_UNCHANGED = frozenset({int, float, bool, type(None)})


def _plain_for_names(item: Any) -> bool:
    """Whether the name rules leave *item* as it is: a ``str`` without ``=`` or ``@``."""
    return item.__class__ is str and "=" not in item and "@" not in item


def _only_numbers(values: Iterable[Any]) -> bool:
    """Whether every value is a ``list`` of numbers, literals or nulls (an abstract's index)."""
    lists = list(values)
    return {list}.issuperset(map(type, lists)) and _UNCHANGED.issuperset(
        map(type, chain.from_iterable(lists))
    )


def _names_may_occur(lowered: bytes | bytearray) -> bool:
    """Whether lower-case body bytes may hold a secret-named key or URL parameter."""
    for ending in _KEY_ENDINGS:
        index = lowered.find(ending)
        while index >= 0:
            after = index + len(ending)
            while after < len(lowered) and lowered[after] in _JSON_SPACE:
                after += 1
            if lowered[after : after + 1] == b":":
                return True
            index = lowered.find(ending, index + 1)
    index = lowered.find(b"=")
    while index >= 0:
        if lowered[max(0, index - _LONGEST_PARAM_ENDING) : index].endswith(_PARAM_ENDINGS):
            return True
        index = lowered.find(b"=", index + 1)
    return False
