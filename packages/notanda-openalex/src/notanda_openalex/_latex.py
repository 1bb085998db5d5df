# ruff: noqa: RUF001  # the tables map LaTeX to the look-alike characters on purpose
r"""LaTeX in bibliography fields to plain text: accents, logos, symbols, math, braces.

This module owns how a BibTeX field's LaTeX becomes the text that is compared
with OpenAlex. It is one left-to-right pass with no recursion (cost linear in
the text, whatever its nesting), and it never silently deletes the argument
of a command: a command it does not know loses its name and keeps its
arguments, and a known command without arguments gives its text
(``\TeX`` is "TeX", ``\slash`` is "/"). Only the commands in
:data:`_DROP_ARGUMENT` lose an argument, because it is not text of the title
(a footnote, a label, a sort key, a link's target). The rules are documented
in ``docs/openalex-client.md`` ("Reading references").
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["decode_accents", "latex_to_text"]

#: Accent commands: the combining character each puts on the next letter.
_ACCENTS = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "c": "\u0327",
    "H": "\u030b",
    "k": "\u0328",
    "r": "\u030a",
    "u": "\u0306",
    "v": "\u030c",
    "d": "\u0323",
    "b": "\u0331",
    "t": "\u0361",
}

#: Commands without arguments and the text each stands for.
_WORDS = {
    # letters
    "ss": "ß", "SS": "SS", "o": "ø", "O": "Ø", "aa": "å", "AA": "Å", "ae": "æ", "AE": "Æ",
    "oe": "œ", "OE": "Œ", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "dh": "ð", "DH": "Ð",
    "th": "þ", "TH": "Þ", "ng": "ŋ", "NG": "Ŋ", "dj": "đ", "DJ": "Đ",
    # logos
    "TeX": "TeX", "LaTeX": "LaTeX", "LaTeXe": "LaTeX2e", "BibTeX": "BibTeX",
    "XeTeX": "XeTeX", "XeLaTeX": "XeLaTeX", "LuaTeX": "LuaTeX", "LuaLaTeX": "LuaLaTeX",
    "pdfTeX": "pdfTeX", "pdfLaTeX": "pdfLaTeX", "ConTeXt": "ConTeXt", "AmS": "AMS",
    "AmSTeX": "AMS-TeX", "AMSTeX": "AMS-TeX", "METAFONT": "METAFONT", "MF": "METAFONT",
    "MP": "MetaPost", "eTeX": "e-TeX", "SliTeX": "SliTeX", "BibLaTeX": "BibLaTeX",
    # punctuation and symbols
    "slash": "/", "hyphen": "-", "textendash": "–", "textemdash": "—", "ldots": "…",
    "dots": "…", "textellipsis": "…", "textquoteleft": "‘", "textquoteright": "’",
    "textquotedblleft": "“", "textquotedblright": "”", "guillemotleft": "«",
    "guillemotright": "»", "textless": "<", "textgreater": ">", "textbackslash": "\\",
    "textbar": "|", "textasciitilde": "~", "textasciicircum": "^", "textunderscore": "_",
    "S": "§", "P": "¶", "copyright": "©", "textcopyright": "©", "textregistered": "®",
    "texttrademark": "™", "pounds": "£", "textsterling": "£", "euro": "€", "texteuro": "€",
    "textdegree": "°", "degree": "°", "textmu": "µ", "textperiodcentered": "·",
    "textbullet": "•", "dag": "†", "ddag": "‡", "textdagger": "†", "textdaggerdbl": "‡",
    "i0": "", "quad": " ", "qquad": " ", "space": " ", "newline": " ", "linebreak": " ",
    "par": " ", "nobreakspace": " ", "enspace": " ", "thinspace": " ",
    # math
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "varpi": "ϖ", "rho": "ρ",
    "varrho": "ϱ", "sigma": "σ", "varsigma": "ς", "tau": "τ", "upsilon": "υ", "phi": "ϕ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ",
    "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ",
    "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "times": "×", "pm": "±", "mp": "∓", "cdot": "·",
    "infty": "∞", "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠", "ne": "≠",
    "approx": "≈", "sim": "∼", "simeq": "≃", "equiv": "≡", "propto": "∝", "to": "→",
    "rightarrow": "→", "leftarrow": "←", "leftrightarrow": "↔", "Rightarrow": "⇒",
    "ell": "ℓ", "hbar": "ℏ", "partial": "∂", "nabla": "∇", "sum": "∑", "prod": "∏",
    "int": "∫", "in": "∈", "subset": "⊂", "cup": "∪", "cap": "∩", "forall": "∀",
    "exists": "∃", "emptyset": "∅", "sqrt": "√", "prime": "′", "circ": "∘", "star": "⋆",
    "odot": "⊙", "oplus": "⊕", "otimes": "⊗", "langle": "⟨", "rangle": "⟩", "log": "log",
    "ln": "ln", "exp": "exp", "sin": "sin", "cos": "cos", "tan": "tan", "min": "min",
    "max": "max", "lim": "lim", "det": "det", "deg": "deg", "odot_": "⊙", "sun": "☉",
    "lesssim": "≲", "gtrsim": "≳", "ll": "≪", "gg": "≫", "mid": "|", "vert": "|",
    "backslash": "\\", "lbrace": "{", "rbrace": "}", "colon": ":", "ast": "∗",
    # formatting switches and spacing that stand for no text
    "em": "", "bf": "", "it": "", "sl": "", "sc": "", "rm": "", "tt": "", "sf": "",
    "normalfont": "", "upshape": "", "itshape": "", "slshape": "", "scshape": "",
    "bfseries": "", "mdseries": "", "rmfamily": "", "sffamily": "", "ttfamily": "",
    "tiny": "", "scriptsize": "", "footnotesize": "", "small": "", "normalsize": "",
    "large": "", "Large": "", "LARGE": "", "huge": "", "Huge": "", "relax": "",
    "protect": "", "xspace": "", "null": "", "nobreak": "", "allowbreak": "",
    "newblock": "", "unskip": "", "ignorespaces": "", "displaystyle": "", "textstyle": "",
    "scriptstyle": "", "left": "", "right": "", "big": "", "Big": "", "bigl": "",
    "bigr": "", "mathrm": "", "boldmath": "", "unboldmath": "", "noindent": "",
    "hfill": " ", "hfil": " ", "break": " ", "ensuremath": "", "leavevmode": "",
}  # fmt: skip

#: Control symbols (a backslash and one non-letter) and their text.
_SYMBOLS = {
    "&": "&", "%": "%", "$": "$", "#": "#", "_": "_", "{": "{", "}": "}", " ": " ",
    "\\": " ", ",": " ", ";": " ", ":": " ", "!": "", "-": "", "/": "", "@": "",
    "\n": " ", "\t": " ", "\r": " ", "|": "‖", "(": "", ")": "", "[": "", "]": "",
}  # fmt: skip

#: Commands whose first argument is not text of the field and is dropped.
_DROP_ARGUMENT = frozenset(
    {
        "footnote", "thanks", "label", "index", "noopsort", "nocite", "hspace", "vspace",
        "kern", "href", "hyperlink", "hypertarget", "pagecolor", "color", "textcolor",
        "fontsize", "selectfont", "setlength", "sortname", "IfFileExists", "phantom",
    }
)  # fmt: skip

_TOKEN = re.compile(r"\\([A-Za-z]+|.?)|(-{2,3})|(``|'')|([{}$~])", re.DOTALL)
_SPACES = re.compile(r"[ \t\r\n]*")
_GROUP_BRACE = re.compile(r"[{}]")


def latex_to_text(value: str) -> str:
    """Return *value* with its LaTeX turned into text (linear in its length; never raises)."""
    if not any(char in value for char in "\\{}$~-`'"):
        return value
    out: list[str] = []
    position = 0
    length = len(value)
    while position < length:
        match = _TOKEN.search(value, position)
        if match is None:
            out.append(value[position:])
            break
        out.append(value[position : match.start()])
        position = match.end()
        name, dashes, quotes, single = match.groups()
        if dashes is not None:
            out.append("–" if len(dashes) == 2 else "—")
        elif quotes is not None:
            out.append("“" if quotes == "``" else "”")
        elif single is not None:
            if single == "~":
                out.append(" ")
            # Braces and math shifts stand for no text.
        elif name in _ACCENTS:
            letter, position = _accent_target(value, position)
            out.append(_accented(letter, _ACCENTS[name]) if letter else _ACCENTS[name].strip())
        elif name is not None and name[:1].isalpha():
            # TeX skips the spaces after a control word.
            position = _SPACES.match(value, position).end()  # type: ignore[union-attr]
            if name in _WORDS:
                out.append(_WORDS[name])
            elif name in _DROP_ARGUMENT:
                position = _skip_group(value, position)
            elif value.startswith("{}", position):
                out.append(name)  # ``\Logo{}``: the empty group only ends the name
                position += 2
            elif position < length and value[position] == "{":
                pass  # an unknown command: its name goes, its arguments stay
            else:
                out.append(name)  # an unknown command standing alone: its name is its text
        elif name is not None:
            out.append(_SYMBOLS.get(name, name))
    return "".join(out)


def _accent_target(value: str, position: int) -> tuple[str, int]:
    r"""The letter an accent applies to (``\'e``, ``\c c``, ``\"{\i}``) and where it ends."""
    start = _SPACES.match(value, position).end()  # type: ignore[union-attr]
    cursor = start
    braced = cursor < len(value) and value[cursor] == "{"
    if braced:
        cursor = _SPACES.match(value, cursor + 1).end()  # type: ignore[union-attr]
    if value.startswith(("\\i", "\\j"), cursor) and not value[cursor + 2 : cursor + 3].isalpha():
        letter, cursor = value[cursor + 1], cursor + 2
    elif cursor < len(value) and value[cursor] not in "\\{}":
        letter, cursor = value[cursor], cursor + 1
    else:
        return "", start
    if braced:
        after = _SPACES.match(value, cursor).end()  # type: ignore[union-attr]
        if after < len(value) and value[after] == "}":
            cursor = after + 1
        # else the group goes on; its closing brace is dropped like any brace
    return letter, cursor


def _accented(letter: str, mark: str) -> str:
    return unicodedata.normalize("NFC", letter + mark)


def _skip_group(value: str, position: int) -> int:
    """The position after the braced group at *position* (or *position* when there is none)."""
    if position >= len(value) or value[position] != "{":
        return position
    depth = 0
    for match in _GROUP_BRACE.finditer(value, position):
        depth += 1 if match.group(0) == "{" else -1
        if depth == 0:
            return match.end()
    return len(value)


_NAME_ACCENT = re.compile(
    r"\\(?:([`'^\"~=.])|([cHkruvdbt])(?![A-Za-z]))[ \t]*"
    r"(?:\{[ \t]*(\\[ij](?![A-Za-z])|[A-Za-z])[ \t]*\}|(\\[ij](?![A-Za-z])|[A-Za-z]))"
)


def decode_accents(name: str) -> str:
    r"""Replace accent commands by the accented letter, leaving the rest as written.

    Names are split by BibTeX's rules before they are decoded, and those rules
    read ``~`` as a space: ``Magalh\~aes`` must become ``Magalhães`` first.
    """
    if "\\" not in name:
        return name

    def one(match: re.Match[str]) -> str:
        symbol, word, braced, bare = match.groups()
        target = braced or bare
        letter = target[1] if target.startswith("\\") else target
        return _accented(letter, _ACCENTS[symbol or word])

    return _NAME_ACCENT.sub(one, name)
