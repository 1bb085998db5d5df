"""Hostile provider text and planted records against ``cite`` and ``find``.

Every bibliography must read, in the real ``bibtex`` program, in pybtex and in
bibtexparser 2 (RIS in rispy, CSL-JSON in ``json``), as exactly one entry per
work with the values the provider sent; nothing a provider or the folder
controls may reach a terminal or a bibliography as a raw control character.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import bibtexparser
import pybtex.database
import pytest
import rispy
from conftest import search_record
from hypothesis import given, settings
from hypothesis import strategies as st
from notanda_evidence import Citation, CitationFormat, _cli, collect_citations, render
from notanda_evidence._cite import _LATEX, _text

PROBE_STYLE = Path(__file__).resolve().parent / "bibtex" / "probe.bst"

#: Provider values that broke or could break a bibliography or a terminal.
HOSTILE = (
    "\\}",
    "x \\} @misc(injected1, title = {pwned}) y",
    "} @article{injected2, title = {x}} {",
    "}}}} @book(injected3, author = {x})",
    "{{{{ unbalanced",
    '@string{pwn = {x}} @preamble{"\\input{/etc/passwd}"} @comment{x',
    '" # "concat" # " %comment',
    "back\\slash \\\\ \\textbf{bold} \\{ \\",
    "line\nbreak\r\n@misc{injected4,\n  title = {x}}\n@misc(injected5, title = x)",
    "ER  - \nTY  - JOUR\nTI  - injected\nER  - ",
    "ctrl \x1b[31mred\x1b[0m \x07 \x00 \x7f \x85 \x9b \u2028 \u2029 \x0b\x0c",
    "bidi \u202etxet\u202c \u2066iso\u2069 zero\u200bwidth \ufeffbom soft\u00adhyphen",
    "Zoë Ñúñez Łukasz Müller 東京 \U0001d518\U0001d52b\U0001d526",
    "$x_1$ & ^2 ~50 100% #1 _",
    "lone \ud800 surrogate \udfff",
    ',="(){}@,=',
    "and others",
)


def hostile_work(text: str, number: int) -> dict[str, Any]:
    """A work that holds *text* in every field ``cite`` writes."""
    return {
        "authors": [{"name": text}, {"name": f"{text} {number}"}],
        "doi": f"10.1/{text}",
        "first_page": text,
        "issue": text,
        "last_page": text,
        "oa_url": f"https://example.org/{text}",
        "openalex_id": f"W{number}",
        "title": f"{text} {number}",
        "type": text,
        "venue": text,
        "volume": text,
    }


# ------------------------------------------------------------------ readers


def _unescape(value: str) -> str:
    """Undo cite's LaTeX escaping, failing on any brace or backslash it did not write."""
    inverse = {escaped: char for char, escaped in _LATEX.items()}
    pattern = "|".join(re.escape(e) for e in sorted(inverse, key=len, reverse=True))
    parts = re.split(f"({pattern})", value)
    for part in parts[::2]:
        assert not set(part) & set("\\{}"), f"raw brace or backslash in {value!r}"
    return "".join(inverse.get(part, part) for part in parts)


def _unbrace(value: str) -> str:
    assert value.startswith("{"), value
    assert value.endswith("}"), value
    return value[1:-1]


#: Stands for BibTeX's bare ``others`` (et al.) in a decoded name list, so that
#: it cannot be mistaken for an author whose name is "others" (written braced).
ET_AL = None


def _names(value: str) -> list[str | None]:
    """The names of a BibTeX name list in which every name is braced."""
    names: list[str | None] = []
    for name in value.split(" and "):
        names.append(ET_AL if name == "others" else _unescape(_unbrace(name)))
    return names


def decoded(fields: Mapping[str, str]) -> dict[str, Any]:
    """Field values as text: LaTeX escapes undone, names split, title unbraced."""
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if name == "author":
            out[name] = _names(value)
        elif name == "title":
            out[name] = _unescape(_unbrace(value))
        else:
            out[name] = _unescape(value)
    return out


def _author_names(work: Mapping[str, Any]) -> list[str]:
    authors = work.get("authors")
    if not isinstance(authors, list):
        return []
    return [n for a in authors if isinstance(a, dict) if (n := _text(a.get("name")))]


def expected_fields(citation: Citation, kind: str = "article") -> dict[str, Any]:
    """What each BibTeX field of an entry of *kind* must say: the provider's text,
    made one printable line."""
    work = citation.work
    authors = _author_names(work)
    venue = "journal" if kind == "article" else "booktitle"
    out: dict[str, Any] = {}
    if authors:
        out["author"] = authors
    for field, source in (("title", "title"), (venue, "venue"), ("volume", "volume")):
        if value := _text(work.get(source)):
            out[field] = value
    year = work.get("publication_year")
    if isinstance(year, int) and not isinstance(year, bool):
        out["year"] = str(year)
    if value := _text(work.get("issue")):
        out["number"] = value
    if first := _text(work.get("first_page")):
        last = _text(work.get("last_page"))
        out["pages"] = first + (f"--{last}" if last else "")
    for field, source in (("doi", "doi"), ("url", "oa_url")):
        if value := _text(work.get(source)):
            out[field] = value
    note = f"Notanda evidence {citation.evidence_id}; receipt {citation.receipt}"
    if searched := _text(citation.requested_at):
        note += f"; searched {searched}"
    out["note"] = note
    return out


def written_entries(text: str) -> list[tuple[str, str]]:
    """``(type, key)`` of every entry cite wrote: each starts a line with ``@``."""
    return re.findall(r"^@(\w+)\{([a-z0-9]+),$", text, flags=re.MULTILINE)


def run_bibtex(text: str, folder: Path) -> list[tuple[str, str, dict[str, str]]]:
    """Entries as the real bibtex program reads them, through the probe style."""
    bibtex = shutil.which("bibtex")
    assert bibtex, "bibtex is missing: apt-get install texlive-binaries"
    folder.mkdir()
    (folder / "refs.bib").write_text(text, encoding="utf-8")
    (folder / "probe.aux").write_text(
        "\\relax\n\\citation{*}\n\\bibdata{refs}\n\\bibstyle{probe}\n", encoding="ascii"
    )
    env = {**os.environ, "BIBINPUTS": str(folder), "BSTINPUTS": str(PROBE_STYLE.parent)}
    done = subprocess.run(
        [bibtex, "probe"], cwd=folder, env=env, capture_output=True, timeout=120, check=False
    )
    log = (folder / "probe.blg").read_text(encoding="utf-8", errors="replace")
    assert done.returncode == 0, log
    assert "Warning" not in log, log
    assert "error" not in log, log
    bbl = (folder / "probe.bbl").read_text(encoding="utf-8").replace("\n  ", " ")
    entries: list[tuple[str, str, dict[str, str]]] = []
    count = None
    for line in bbl.splitlines():
        marker, _, rest = line.partition(" ")
        if marker == "ENTRY":
            kind, key = rest.split(" ")
            entries.append((kind, key, {}))
        elif marker == "FIELD":
            name, _, value = rest.partition("=")
            entries[-1][2][name] = value
        else:
            assert marker == "COUNT", line
            count = int(rest)
    assert count == len(entries)
    return entries


def pybtex_entries(text: str) -> list[tuple[str, str, dict[str, str]]]:
    data = pybtex.database.parse_string(text, "bibtex")
    entries = []
    for key, entry in data.entries.items():
        fields = dict(entry.fields)
        if "author" in entry.persons:
            fields["author"] = " and ".join(str(p) for p in entry.persons["author"])
        entries.append((entry.type, key, fields))
    return entries


def bibtexparser_entries(text: str) -> list[tuple[str, str, dict[str, str]]]:
    library = bibtexparser.parse_string(text)
    assert library.failed_blocks == []
    assert library.strings == []
    assert library.preambles == []
    assert all(e.start_line >= 0 for e in library.entries)
    return [(e.entry_type, e.key, {f.key: f.value for f in e.fields}) for e in library.entries]


def assert_one_entry_per_work(
    text: str, citations: Sequence[Citation], folder: Path | None = None
) -> None:
    """Each reader finds exactly the entries cite wrote, with the intended values."""
    written = written_entries(text)
    assert len(written) == len(citations)
    assert len({key for _, key in written}) == len(written)
    readers = [pybtex_entries(text), bibtexparser_entries(text)]
    if folder is not None:
        readers.append(run_bibtex(text, folder))
    for entries in readers:
        assert [(kind.lower(), key) for kind, key, _ in entries] == written
        for (kind, _, fields), citation in zip(entries, citations, strict=True):
            wanted = expected_fields(citation, kind.lower())
            annotation = fields.pop("annotation", None)
            assert annotation == (
                "RETRACTED" if citation.work.get("is_retracted") is True else None
            )
            got = decoded(fields)
            if got.get("author", [])[-1:] == [ET_AL]:
                got["author"].pop()
                if not got["author"]:
                    del got["author"]
            assert got == wanted


# -------------------------------------------------------------- the corpus


def test_bibtex_injection_corpus_gives_one_entry_per_work(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    ids = [
        search_record(
            root,
            works=[hostile_work(text, n)],
            requested_at=f"2026-11-29T10:00:00Z {text}",
            authors_total=0,
        )[0]
        for n, text in enumerate(HOSTILE)
    ]
    citations = collect_citations(root, ids)
    text = render(citations, CitationFormat.BIBTEX)
    assert_one_entry_per_work(text, citations, tmp_path / "bibtex")


def test_five_works_with_escaped_braces_and_at_forms_are_five_entries(tmp_path: Path) -> None:
    # The case of issue 14: \} and @type(...) in title, authors, venue,
    # volume, issue and pages gave bibtex 9 entries for 5 works.
    works = []
    for n in range(5):
        value = f"v{n} \\}} @misc(injected{n}, title = {{x}}) \\}}"
        works.append(
            {
                "authors": [{"name": value}],
                "first_page": value,
                "issue": value,
                "last_page": value,
                "openalex_id": f"W{n}",
                "title": value,
                "venue": value,
                "volume": value,
            }
        )
    (tmp_path / "root").mkdir()
    evidence_id, _ = search_record(tmp_path / "root", works=works)
    citations = collect_citations(tmp_path / "root", [evidence_id])
    text = render(citations, CitationFormat.BIBTEX)
    assert len(run_bibtex(text, tmp_path / "bibtex")) == 5
    assert_one_entry_per_work(text, citations, tmp_path / "all")


def test_bibtex_reads_a_fixed_random_sample(tmp_path: Path) -> None:
    alphabet = "\\{}@%#\"'(),=~^$&_ \n\r\t\x1b\x07\u202eaZ0é東"
    rng = random.Random(14)
    citations = [
        citation(
            {
                field: "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40)))
                for field in ("title", "venue", "volume", "issue", "first_page", "doi")
            }
            | {"authors": [{"name": "".join(rng.choice(alphabet) for _ in range(12))}]},
            requested_at="".join(rng.choice(alphabet) for _ in range(10)),
        )
        for _ in range(40)
    ]
    text = render(citations, CitationFormat.BIBTEX)
    assert_one_entry_per_work(text, citations, tmp_path / "bibtex")


def test_ris_and_csl_json_read_one_record_per_work(tmp_path: Path) -> None:
    citations = [
        citation(hostile_work(text, n), requested_at=f"2026 {text}")
        for n, text in enumerate(HOSTILE)
    ]
    assert_ris(render(citations, CitationFormat.RIS), citations)
    assert_csl_json(render(citations, CitationFormat.CSL_JSON), citations)


def test_no_bibliography_holds_a_raw_control_character() -> None:
    citations = [
        citation(hostile_work(text, n), requested_at=text) for n, text in enumerate(HOSTILE)
    ]
    for fmt in CitationFormat:
        text = render(citations, fmt)
        assert text.replace("\n", "").isprintable(), fmt


def test_text_makes_one_printable_line() -> None:
    assert _text("a\x1b[31mb\x07c\u202ed\u200be\ud800f\nG\u2028h") == "a [31mb c d e f G h"
    assert _text("Zoë  Müller\t東京") == "Zoë Müller 東京"
    assert _text("\x00\u200b ") is None


# --------------------------------------------------------------- property


def citation(work: Mapping[str, Any], *, requested_at: str | None = None) -> Citation:
    return Citation("0" * 32, "f" * 64, 0, dict(work), True, requested_at)


def assert_ris(text: str, citations: Sequence[Citation]) -> None:
    records = rispy.loads(text, delimiter_tags_mapping={})
    assert len(records) == len(citations)
    for record, cited in zip(records, citations, strict=True):
        work = cited.work
        assert "unknown_tag" not in record
        assert record.get("title") == _text(work.get("title"))
        names = _author_names(work)
        authors = record.get("authors", [])
        assert authors[: len(names)] == names
        assert authors[len(names) :] in ([], ["et al."])
        for key, source in (
            ("journal_name", "venue"),
            ("volume", "volume"),
            ("number", "issue"),
            ("doi", "doi"),
            ("start_page", "first_page"),
            ("end_page", "last_page"),
        ):
            assert record.get(key) == _text(work.get(source)), key
        assert record["notes"][-2] == expected_fields(cited)["note"]


def assert_csl_json(text: str, citations: Sequence[Citation]) -> None:
    items = json.loads(text)
    assert len(items) == len(citations)
    assert len({item["id"] for item in items}) == len(items)
    for item, cited in zip(items, citations, strict=True):
        work = cited.work
        assert item.get("title") == _text(work.get("title"))
        assert item.get("container-title") == _text(work.get("venue"))
        assert item["note"].startswith(expected_fields(cited)["note"] + ". ")


_ANY_TEXT = st.text(
    st.one_of(
        st.characters(codec=None),
        st.sampled_from(list('\\{}@%#"(),=~^$&_\n\r\x1b\u202e\u2028\ud800')),
    ),
    max_size=30,
)
_WORK = st.fixed_dictionaries(
    {
        "authors": st.lists(st.fixed_dictionaries({"name": _ANY_TEXT}), max_size=3),
        "doi": _ANY_TEXT,
        "first_page": _ANY_TEXT,
        "issue": _ANY_TEXT,
        "last_page": _ANY_TEXT,
        "oa_url": _ANY_TEXT,
        "title": _ANY_TEXT,
        "type": _ANY_TEXT,
        "venue": _ANY_TEXT,
        "volume": _ANY_TEXT,
    }
)


@settings(derandomize=True, max_examples=150, deadline=None, database=None)
@given(works=st.lists(_WORK, min_size=1, max_size=4), requested_at=_ANY_TEXT)
def test_any_provider_text_gives_one_entry_per_work(
    works: list[dict[str, Any]], requested_at: str
) -> None:
    citations = [citation(w, requested_at=requested_at) for w in works]
    assert_one_entry_per_work(render(citations, CitationFormat.BIBTEX), citations)
    assert_ris(render(citations, CitationFormat.RIS), citations)
    assert_csl_json(render(citations, CitationFormat.CSL_JSON), citations)


# ---------------------------------------------------------------- terminal

#: Clears the screen, retitles the window, rings, reverses the text direction.
HIDDEN = "\x1b[2J\x1b]0;pwned\x07\u202eevil\u200b\x9b31m"
SHOWN = "\\x1b[2J\\x1b]0;pwned\\x07\\u202eevil\\u200b\\x9b31m"


def planted(root: Path) -> tuple[str, str]:
    """A correctly sealed but unlogged record whose time and title hide terminal controls."""
    return search_record(
        root,
        logged=False,
        requested_at=f"2026-11-29T10:00:00Z{HIDDEN}",
        title=f"Zoë {HIDDEN} back\\slash",
    )


def test_find_shows_planted_control_characters_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, receipt = planted(tmp_path)
    assert _cli.main(["find", "--root", str(tmp_path), "--doi", f"10.1234/EXAMPLE.5{HIDDEN}"]) == 1
    assert _cli.main(["find", "--root", str(tmp_path), "--doi", "10.1234/EXAMPLE.5"]) == 0
    out = capsys.readouterr().out
    assert out.replace("\n", "").isprintable()
    assert f"returned 10.1234/EXAMPLE.5{SHOWN}" in out
    assert (
        f"{evidence_id}  receipt {receipt}  result #1  2026-11-29T10:00:00Z{SHOWN}  unlogged\n"
        f"    Zoë {SHOWN} back\\\\slash\n"
    ) in out


def test_find_json_stays_valid_and_escapes_what_a_terminal_would_obey(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planted(tmp_path)
    assert _cli.main(["find", "--root", str(tmp_path), "--doi", "10.1234/example.5", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.replace("\n", "").isprintable()
    assert "Zoë" in out
    [match] = json.loads(out)["matches"]
    assert match["requested_at"] == f"2026-11-29T10:00:00Z{HIDDEN}"
    assert match["title"] == f"Zoë {HIDDEN} back\\slash"


def test_cite_writes_no_control_character_in_any_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, _ = planted(tmp_path)
    for fmt in CitationFormat:
        assert _cli.main(["cite", evidence_id, "--root", str(tmp_path), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert out.replace("\n", "").isprintable(), fmt
        assert "Zoë [2J ]0;pwned evil 31m back" in out.replace("\\textbackslash{}", "\\")


def test_cite_and_find_refusals_show_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence_id, _ = planted(tmp_path)
    assert _cli.main(["cite", HIDDEN, "--root", str(tmp_path)]) == 1
    assert _cli.main(["cite", f"{evidence_id}:W{HIDDEN}", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.replace("\n", "").isprintable()
    assert f"refused: {SHOWN}: invalid_evidence_id\n" in err
    assert f"refused: {evidence_id}: work_not_in_record (W{SHOWN})\n" in err


def test_find_on_a_damaged_log_exits_with_its_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    search_record(tmp_path)
    search_record(tmp_path)
    path = tmp_path / ".notanda" / "log.jsonl"
    first, second = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(first.replace(b'"index":0', b'"index":7') + second)
    assert _cli.main(["find", "--root", str(tmp_path), "--doi", "10.1234/example.5"]) == 1
    assert "refused: log: log_integrity_failure" in capsys.readouterr().err


def test_json_output_escapes_every_non_printable_character(
    capsys: pytest.CaptureFixture[str],
) -> None:
    value = {"t": f"é {HIDDEN} \ud800 \U000e0001 \x85 \u2028", "n": [1, None]}
    _cli._print_json(value)
    out = capsys.readouterr().out
    assert out.replace("\n", "").isprintable()
    assert "\\ud800 \\udb40\\udc01 \\u0085 \\u2028" in out
    assert json.loads(out) == value


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_ANY_TEXT, inner, max_size=3),
    max_leaves=6,
)
_FIELDS = (
    "authors",
    "authors_total",
    "authors_truncated_by_provider",
    "doi",
    "first_page",
    "is_retracted",
    "issue",
    "last_page",
    "oa_url",
    "publication_year",
    "title",
    "type",
    "venue",
    "volume",
)


@settings(derandomize=True, max_examples=150, deadline=None, database=None)
@given(
    works=st.lists(
        st.dictionaries(
            st.sampled_from(_FIELDS),
            _JSON | st.lists(st.fixed_dictionaries({"name": _JSON}), max_size=2),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_any_json_in_a_work_still_gives_one_entry_per_work(works: list[dict[str, Any]]) -> None:
    citations = [citation(w) for w in works]
    assert_one_entry_per_work(render(citations, CitationFormat.BIBTEX), citations)
    assert_ris(render(citations, CitationFormat.RIS), citations)
    assert_csl_json(render(citations, CitationFormat.CSL_JSON), citations)


def test_fields_of_the_wrong_type_are_left_out() -> None:
    odd: list[dict[str, Any]] = [
        {"authors": 5, "publication_year": True, "title": ["x"]},
        {"authors": "Ada", "authors_total": True, "venue": {"a": 1}},
        {"authors": {"name": "Ada"}, "authors_truncated_by_provider": [1], "is_retracted": 1},
        {"authors": [None, 3, {"name": 7}, {"name": "Ada"}], "publication_year": 2.5},
    ]
    citations = [citation(w) for w in odd]
    text = render(citations, CitationFormat.BIBTEX)
    assert_one_entry_per_work(text, citations)
    assert "author = {{Ada}}" in text
    for field in ("year = ", "title = ", "journal = ", "annotation = ", " and others}"):
        assert field not in text, field
    assert_ris(render(citations, CitationFormat.RIS), citations)
    assert "et al." not in render(citations, CitationFormat.RIS)
    assert_csl_json(render(citations, CitationFormat.CSL_JSON), citations)
