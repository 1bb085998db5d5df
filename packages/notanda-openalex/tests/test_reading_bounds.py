"""Reading is total and bounded: any text reads in time and memory linear in its size.

Issue 24: a kilobyte of ``@string`` macros must not eat the machine, and no
reader may cost more than its input's size warrants. Issue 19: the reader
itself has no size or count limit (the check tool's limits are
``parse_references``'), so a whole file is read once.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notanda_openalex import (
    MACRO_EXPANSION_FACTOR,
    MAX_MACRO_BYTES,
    MAX_REFERENCES,
    MAX_REFERENCES_BYTES,
    InputReason,
    ReferenceInputError,
    UnparsedReason,
    parse_references,
    read_references,
)

FORMATS = ("auto", "bibtex", "ris", "csl-json", "text")
#: Issue 24's bound for one hostile input of at most 64 KB.
MAX_SECONDS = 1.0
MAX_PEAK_BYTES = 100 * 2**20
MAX_INPUT = 64 * 1024


def bomb(levels: int = 40) -> str:
    """The red team's macro bomb: each macro is the previous one twice."""
    lines = ['@string{a0 = "xy"}']
    for level in range(1, levels + 1):
        lines.append(f"@string{{a{level} = a{level - 1} # a{level - 1}}}")
    lines.append(f"@article{{boom, title = a{levels}}}")
    lines.append("@article{fine, title = {A Fine Title}}")
    return "\n".join(lines) + "\n"


def test_the_macro_bomb_is_refused_per_entry_and_the_rest_is_read() -> None:
    text = bomb()
    parsed = read_references(text)
    by_key = {reference.key: reference for reference in parsed}
    assert by_key["boom"].unparsed_reason is UnparsedReason.MACRO_TOO_LARGE
    assert by_key["boom"].line == 42
    assert by_key["fine"].title == "A Fine Title"
    refused = [r.key for r in parsed if r.unparsed_reason is UnparsedReason.MACRO_TOO_LARGE]
    assert refused[0] == "a13"  # 2 * 2**13 bytes passes 16 times this small file
    assert refused[-1] == "boom"
    budget = MACRO_EXPANSION_FACTOR * len(text.encode())
    assert sum(len(r.raw) + len(r.title or "") for r in parsed) <= budget + len(text)


def test_one_macro_value_is_at_most_the_byte_limit() -> None:
    # A file large enough that the total budget allows it: the per-value cap decides.
    filler = "@comment{" + "x" * (MAX_MACRO_BYTES // 4) + "}\n"
    exact = '@string{half = "' + "y" * (MAX_MACRO_BYTES // 2) + '"}\n'
    text = (
        filler
        + exact
        + "@string{whole = half # half}\n"
        + "@string{over = whole # {z}}\n"
        + "@article{ok, title = {Fits}, note = whole}\n"
        + "@article{no, title = {Too big}, note = over}\n"
    )
    parsed = read_references(text)
    assert [(r.key, r.unparsed_reason) for r in parsed] == [
        ("over", UnparsedReason.MACRO_TOO_LARGE),
        ("ok", None),
        ("no", UnparsedReason.MACRO_TOO_LARGE),
    ]


_BOMB_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    from notanda_openalex import read_references

    text = sys.stdin.read()
    with open("/proc/self/statm") as statm:
        size = int(statm.read().split()[0]) * resource.getpagesize()
    # 256 MiB of address space above what the interpreter holds now.
    resource.setrlimit(resource.RLIMIT_AS, (size + 256 * 2**20, resource.RLIM_INFINITY))
    parsed = read_references(text)
    print(json.dumps([[r.key, r.unparsed_reason, len(r.title or "")] for r in parsed]))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux only")
def test_the_macro_bomb_stays_small_under_an_address_space_limit() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", _BOMB_CHILD],
        input=bomb(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    rows = json.loads(completed.stdout)
    assert ["boom", "macro_too_large", 0] in rows
    assert ["fine", None, len("A Fine Title")] in rows


def test_the_macro_bomb_bound_on_the_expanded_length() -> None:
    # The check that runs everywhere (the address-space test is Linux only).
    for levels in (10, 17, 18, 40):
        parsed = read_references(bomb(levels))
        assert all(len((r.title or "").encode()) <= MAX_MACRO_BYTES for r in parsed)


# ------------------------------------------------------------------ hostile input

FRAGMENTS = [
    "@",
    "@article{",
    "@string{a = a # a}",
    '@string{b = "xx" # b}',
    "@comment{",
    "@preamble{",
    "{",
    "}",
    '"',
    "#",
    "=",
    ",",
    "%",
    "\\",
    "\\'",
    '\\"{',
    "\\textbf{",
    "$",
    "~",
    "--",
    "\n",
    " ",
    "\t",
    "\r\n",
    "\x00",
    "\x01",
    "\ufeff",
    "\u202e",
    "\ud800",
    "and ",
    " and others",
    "et al.",
    "TY  - JOUR\n",
    "ER  - \n",
    "AU  - ",
    "TI  - ",
    "1.\n",
    "[",
    "]",
    '{"title": ',
    "(2010). ",
    "“",
    "10.1000/",
    "<",
    ">",
    "arXiv:2101.00001",
    "Smith JA, ",
    "Doe, J. A., ",
    "0001 ",
    "crossref = {a}",
]


@st.composite
def hostile_texts(draw: st.DrawFn) -> str:
    pieces = draw(
        st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=12), min_size=1, max_size=40)
    )
    unit = "".join(pieces)
    repeat = draw(st.integers(min_value=1, max_value=max(1, MAX_INPUT // max(len(unit), 1))))
    text = (unit * repeat)[:MAX_INPUT]
    while len(text.encode("utf-8", "surrogatepass")) > MAX_INPUT:
        text = text[: len(text) // 2]
    return text


def assert_bounded(text: str, fmt: str) -> None:
    if not (" " + text[1:] if text.startswith("\ufeff") else text).strip():
        with pytest.raises(ReferenceInputError) as refused:
            read_references(text, fmt)
        assert refused.value.reason is InputReason.EMPTY
        return
    started = time.process_time()
    parsed = read_references(text, fmt)
    elapsed = time.process_time() - started
    assert elapsed <= MAX_SECONDS, (fmt, elapsed, len(text))
    assert len(parsed) >= 1
    assert [r.index for r in parsed] == list(range(len(parsed)))
    tracemalloc.start()
    try:
        read_references(text, fmt)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= MAX_PEAK_BYTES, (fmt, peak, len(text))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
@given(text=hostile_texts(), fmt=st.sampled_from(FORMATS))
def test_every_reader_reads_hostile_input_in_bounded_time_and_memory(text: str, fmt: str) -> None:
    assert_bounded(text, fmt)


WORST_CASES = {
    "nested braces": "@article{k, title = " + "{" * 30_000 + "}" * 30_000 + "}",
    "unclosed braces": "@article{k, title = {" + "{" * 60_000,
    "block starts": "@a{\n" * 16_000,
    "unclosed entries": "@article{k, title = {x\n" * 2_500,
    "unclosed quotes": '@article{k, title = "x\n' * 2_700,
    "concatenations": "@string{a = {x}}\n@article{k, title = " + "a # " * 15_000 + "a}",
    "accents": "@article{k, title = {" + "\\'{\\i}" * 9_000 + "}}",
    "commands": "@article{k, title = {" + "\\textbf{" * 7_000 + "}" * 7_000 + "}}",
    "authors": "@article{k, title = {T}, author = {" + "Doe, J. and " * 5_000 + "X}}",
    "name words": "@article{k, title = {T}, author = {" + "von " * 15_000 + "}}",
    "ris lines": "TY  - JOUR\n" + "AU  - Eloubeidi M.A.\n" * 3_000 + "ER  - \n",
    "ris records": "TY  - JOUR\n" * 5_000,
    "json array": "[" + "{}," * 20_000 + "{}]",
    "json nesting": "[" * 30_000 + "]" * 30_000,
    "text quotes": '"' * 60_000,
    "text year": "(2010). " * 8_000,
    "text names": "Smith JA, " * 6_000,
    "text one line": "word " * 13_000,
    "text lines": "x\n" * 20_000,
    "text blank lines": "\n" * 60_000 + "x 10.1000/a",
    "dois": "10.1000/" * 8_000,
}


def worst_case_runs() -> list[tuple[str, str]]:
    """Each worst case read as detected, by the reader it aims at, and as plain text."""
    aimed = {"ris": "ris", "json": "csl-json", "text": "text", "doi": "text"}
    runs = []
    for name in sorted(WORST_CASES):
        target = next((fmt for word, fmt in aimed.items() if name.startswith(word)), "bibtex")
        runs += [(name, fmt) for fmt in dict.fromkeys(("auto", target, "text"))]
    return runs


@pytest.mark.parametrize(("name", "fmt"), worst_case_runs())
def test_worst_cases_read_in_bounded_time_and_memory(name: str, fmt: str) -> None:
    text = WORST_CASES[name]
    assert len(text.encode()) <= MAX_INPUT + 64
    assert_bounded(text, fmt)


# ------------------------------------------------------------------ any size


def entry(number: int) -> str:
    return (
        f"@article{{key{number},\n"
        f'  author = {{M{{\\"u}}ller, J{{\\"o}}rg and van der Berg, Anneke}},\n'
        f"  title = {{A Study of \\TeX{{}} number {number}}},\n"
        f"  journal = jn, year = {2000 + number % 20}, doi = {{10.1000/x{number}}},\n"
        f"  abstract = {{{'Lorem ipsum dolor sit amet. ' * 66}}}\n}}\n\n"
    )


def test_read_references_has_no_size_or_count_limit() -> None:
    text = '@string{jn = "Journal of Things"}\n' + "".join(entry(n) for n in range(5_000))
    assert len(text.encode()) > 10_000_000
    parsed = read_references(text)
    assert len(parsed) == 5_000
    assert all(r.parsed for r in parsed)
    assert parsed[4_999].title == "A Study of TeX number 4999"
    assert parsed[4_999].venue == "Journal of Things"
    start, end = parsed[4_999].span or (0, 0)
    assert text[start:end] == parsed[4_999].raw
    assert parsed[4_999].line == text.count("\n", 0, start) + 1


def test_parse_references_keeps_the_check_limits() -> None:
    many = "".join(f"@misc{{k{n}, title = {{T{n}}}}}\n" for n in range(MAX_REFERENCES + 1))
    with pytest.raises(ReferenceInputError) as refused:
        parse_references(many)
    assert refused.value.reason is InputReason.TOO_MANY
    assert len(read_references(many)) == MAX_REFERENCES + 1
    large = "@misc{k, title = {T}, note = {" + "x" * MAX_REFERENCES_BYTES + "}}"
    with pytest.raises(ReferenceInputError) as too_long:
        parse_references(large)
    assert too_long.value.reason is InputReason.TOO_LONG
    assert len(read_references(large)) == 1


def test_reading_time_grows_linearly_with_the_file() -> None:
    def cost(count: int) -> float:
        text = '@string{jn = "J"}\n' + "".join(entry(n) for n in range(count))
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            read_references(text)
            best = min(best, time.process_time() - started)
        return best

    small, large = cost(200), cost(2_000)
    # Ten times the text; a quadratic step would cost a hundred times.
    assert large <= 20 * small + 0.05, (small, large)
