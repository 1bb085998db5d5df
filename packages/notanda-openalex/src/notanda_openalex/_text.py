"""Text hygiene for strings that leave this package.

Two different jobs live here because they share the same character classes:
cleaning provider text for the citation block (control and format characters
removed) and turning a supplied query into the effective ``search`` value.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["clean_display_text", "has_lone_surrogate", "replace_lone_surrogates", "sanitize_query"]

_SURROGATE = re.compile("[\ud800-\udfff]")

#: Characters that become a space in the effective query besides control (Cc)
#: and format (Cf) characters: OpenAlex answers HTTP 400 to a wildcard in a
#: stemmed ``search``.
_QUERY_SPACES = frozenset("?*")


def has_lone_surrogate(text: str) -> bool:
    """Return whether *text* holds a surrogate code point (not encodable as UTF-8)."""
    return _SURROGATE.search(text) is not None


def replace_lone_surrogates(text: str) -> str:
    """Return *text* with every surrogate code point replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def sanitize_query(text: str) -> str:
    """Return the effective ``search`` value for a stripped, length-checked query.

    Lone surrogates become U+FFFD; ``?``, ``*``, control characters (Cc) and
    format characters (Cf: zero-width characters, bidirectional controls,
    U+FEFF) become spaces, so that neither a wildcard nor an invisible
    character reaches OpenAlex and words never run together; runs of
    whitespace collapse to one space. The result may be empty.
    """
    cleaned = "".join(
        " " if char in _QUERY_SPACES or unicodedata.category(char) in ("Cc", "Cf") else char
        for char in replace_lone_surrogates(text)
    )
    return " ".join(cleaned.split())


def clean_display_text(value: object) -> str | None:
    """Return provider text fit for a citation block, or ``None``.

    Non-strings give ``None``. Control characters (Cc) and format characters
    (Cf: bidirectional controls, zero-width characters, U+FEFF, soft hyphen)
    are removed, whitespace controls and separators become a space, lone
    surrogates become U+FFFD and whitespace runs collapse. An empty result is
    ``None``.
    """
    if not isinstance(value, str):
        return None
    if value.isprintable() and "  " not in value and value == value.strip():
        return value or None
    kept: list[str] = []
    for char in value:
        if char.isprintable():
            kept.append(char)
            continue
        category = unicodedata.category(char)
        if category == "Cs":
            kept.append("\ufffd")
        elif char.isspace():
            kept.append(" ")
        elif category not in ("Cc", "Cf"):
            # Private-use and unassigned code points are left as sent.
            kept.append(char)
    text = " ".join("".join(kept).split())
    return text or None
