"""``notanda-evidence report``: what a person reads, built only from records that verify.

The records are written with the package's own writer in the shape
``docs/evidence-format.md`` (section 2.6) gives a check record, with
``provider.json`` attempts that hold every matched work, so the full pass
(and its observation rule) holds for them as for the server's. The browser
test, on records the real server writes, is notanda-mcp's
``test_report_browser.py``.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from notanda_evidence import EvidenceLog, EvidenceStore, _cli, build_report
from notanda_evidence.verify_file import NOTICE

#: Everything a title could use to break out of its cell, run a script or mislead.
HOSTILE_TITLE = (
    "<script>document.title='PWNED'</script></td></tr></table><b>bold</b>"
    " [click](javascript:alert(1)) <https://evil.example> www.evil.example"
    " mail@evil.example *em* _em_ **strong** `code` ~~strike~~ $x^2$ a|b \\| &amp;"
    " \u202eevil\u202c\u200b line\nbreak"
)
HOSTILE_WORK_TITLE = "javascript:alert(2) <img src=x onerror=alert(3)> | ]] ) \u2066x\u2069"
#: The visible text the report must show for the hostile title: itself, with each
#: non-printable character as its U+XXXX mark.
BIDI = ("\u202e", "\u202c", "\u200b", "\u2066", "\u2069")
CLEAN = "10.1000/alpha"


def _reference(index: int, **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "arxiv_id": None,
        "authors": [
            {"family": "Lovelace", "given": "Ada", "particle": None, "suffix": None,
             "text": "Lovelace, Ada"},
        ],
        "authors_truncated": False,
        "doi": None,
        "entry_type": "article",
        "index": index,
        "issue": None,
        "key": f"ref{index}",
        "pages": None,
        "raw": f"@article{{ref{index}, ...}}",
        "title": f"A title {index}",
        "unparsed_reason": None,
        "venue": "Journal of Tests",
        "volume": None,
        "year": 2020,
    }  # fmt: skip
    entry.update(fields)
    return entry


def _work(number: int, **fields: Any) -> dict[str, Any]:
    work: dict[str, Any] = {
        "authors": [{"name": "Ada Lovelace"}],
        "doi": f"10.1000/w{number}",
        "openalex_id": f"W{number}",
        "publication_year": 2020,
        "title": f"A title {number}",
        "venue": "Journal of Tests",
    }
    work.update(fields)
    return work


def check_record(
    root: Path,
    entries: Sequence[tuple[dict[str, Any], str, Sequence[str], dict[str, Any] | None]],
    *,
    logged: bool = True,
    mode: str = "network",
    extra: Mapping[str, Any] | None = None,
    response: dict[str, Any] | None = None,
    stopped: str | None = None,
) -> tuple[str, str]:
    """A sealed check record: one ``(parsed reference, verdict, differs, work)`` per entry."""
    root.mkdir(parents=True, exist_ok=True)
    writer = EvidenceStore(root).create()
    text = "\n".join(str(parsed["raw"]) for parsed, *_ in entries).encode()
    writer.write_request(
        {
            "evidence_id": writer.evidence_id,
            "format": "bibtex",
            "limits": {"max_references": 100, "max_text_bytes": 262144},
            "parsed": {
                "detected": True,
                "format": "bibtex",
                "references": [parsed for parsed, *_ in entries],
            },
            "provider": "openalex",
            "provider_mode": mode,
            "requested_at": "2026-12-01T10:00:00.000Z",
            "text_bytes": len(text),
            "text_sha256": hashlib.sha256(text).hexdigest(),
            "tool": "check_references",
            **(extra or {}),
        }
    )
    works = [work for *_, work in entries if work is not None]
    writer.write_provider(
        {
            "attempts": [
                {
                    "capture": "parsed_json_with_secret_redaction_not_wire_bytes",
                    "observed_json": {
                        "results": [
                            {"id": f"https://openalex.org/{w['openalex_id']}"} for w in works
                        ]
                    },
                    "purpose": "doi_batch",
                }
            ],
            "max_attempts": 1,
            "pagination": False,
            "provider": "openalex",
        }
    )
    references = [
        {
            "differs": list(differs),
            "error": {"unchecked": "deadline_exceeded", "unparsed": parsed["unparsed_reason"]}.get(
                verdict
            ),
            "index": parsed["index"],
            "key": parsed["key"],
            "observation": None if work is None else 0,
            "retracted": None if work is None else work.get("is_retracted") is True,
            "verdict": verdict,
            "work": work,
        }
        for parsed, verdict, differs, work in entries
    ]
    summary = {v: 0 for v in ("verified", "metadata_mismatch", "not_found", "ambiguous")}
    for _, verdict, _, _ in entries:
        summary[verdict] = summary.get(verdict, 0) + 1
    writer.write_response(
        {**response, "evidence_id": writer.evidence_id}
        if response
        else {
            "content_notice": NOTICE,
            "evidence_id": writer.evidence_id,
            "references": references,
            "status": "ok",
            "summary": summary,
            **({"stopped": stopped} if stopped else {}),
        }
    )
    seal = writer.seal()
    if logged:
        EvidenceLog(root).append(seal.evidence_id, seal.receipt)
    return seal.evidence_id, seal.receipt


def hostile_check(root: Path, **options: Any) -> tuple[str, str]:
    """Three references: a hostile mismatch, a clean verified one, a hostile not_found."""
    return check_record(
        root,
        [
            (
                _reference(0, title=HOSTILE_TITLE, key="k|<b>`x`", doi='10.1000/x"><script>'),
                "metadata_mismatch",
                ["title", "doi", "authors"],
                _work(
                    1,
                    title=HOSTILE_WORK_TITLE,
                    authors=[{"name": "Mallory | <i>x</i>"}],
                    is_retracted=True,
                    oa_url="javascript:alert(4)",
                ),
            ),
            (_reference(1, doi=CLEAN, title="A clean title"), "verified", [], _work(2, doi=CLEAN)),
            (_reference(2, title="**Not** [found](http://x)"), "not_found", [], None),
        ],
        **options,
    )


class _Page(HTMLParser):
    """Every tag, its attributes, and the text of each table cell of an HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[list[str]] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "tr" and self._depth == 0:
            self.rows.append([])
        if tag in ("td", "th"):
            if self._depth == 0:
                self._cell = []
            self._depth += 1
        if tag == "br" and self._cell is not None:
            self._cell.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._depth -= 1
            if self._depth == 0 and self._cell is not None:
                self.rows[-1].append("".join(self._cell))
                self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse_html(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


def shown(text: str) -> str:
    """*text* as the report shows it: each non-printable character as its U+XXXX mark."""
    return "".join(ch if ch.isprintable() else f"U+{ord(ch):04X}" for ch in text)


def _assert_no_markup_escaped(page: _Page) -> None:
    names = {tag for tag, _ in page.tags}
    assert not names & {"script", "img", "iframe", "object", "embed", "b", "i", "form", "base"}
    for tag, attrs in page.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        if "href" in attrs or "src" in attrs:
            target = attrs.get("href") or attrs.get("src") or ""
            assert re.fullmatch(r"https://(doi\.org|openalex\.org)/[^\s\"'<>]+", target), target


# ------------------------------------------------------------------ HTML


def test_html_shows_hostile_values_as_text_and_links_only_to_https(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    evidence_id, receipt = hostile_check(root)
    text = build_report([evidence_id], root, "html")
    assert not any(ch in text for ch in BIDI)
    page = parse_html(text)
    _assert_no_markup_escaped(page)
    [title] = [t for t in page.text if "Notanda reference check report" in t]
    assert title == "Notanda reference check report"
    refs = [row for row in page.rows if row and re.fullmatch("#[0-9]+", row[0])]
    assert [row[0] for row in refs] == ["#0", "#1", "#2"]
    assert all(len(row) == 6 for row in refs)
    first = refs[0]
    # The title as written, whole, in its cell, beside OpenAlex's for each differing field.
    assert shown(HOSTILE_TITLE) in first[3]
    assert shown(HOSTILE_TITLE) in first[4]
    assert shown(HOSTILE_WORK_TITLE) in first[4]
    assert "Mallory | <i>x</i>" in first[4]
    assert first[1] == "k|<b>`x`"
    assert "metadata_mismatch" in first[2]
    assert "RETRACTED" in first[2]
    assert "fields listed differ" in first[2]
    links = [attrs["href"] for tag, attrs in page.tags if tag == "a"]
    assert "https://doi.org/10.1000/w1" in links
    assert "https://openalex.org/W1" in links
    assert "https://doi.org/10.1000/x%22%3E%3Cscript%3E" in links  # the DOI as written
    assert not any("javascript" in (link or "") for link in links)
    assert "verified" in refs[1][2]
    assert "not_found" in refs[2][2]
    assert "**Not** [found](http://x)" in refs[2][3]
    # The part's evidence ID and receipt, the notice, and the counts.
    body = "".join(page.text)
    assert f"evidence ID {evidence_id}" in body
    assert f"receipt {receipt}" in body
    assert NOTICE in body
    counts = next(row for row in page.rows if row and row[0].startswith("verified"))
    assert counts[:3] == ["verified 1", "metadata_mismatch 1", "not_found 1"]
    # A page that runs no script and fetches nothing, even if escaping failed.
    [csp] = [a for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    assert "default-src 'none'" in (csp["content"] or "")
    assert "script-src" not in (csp["content"] or "")


def test_the_commands_the_report_gives_verify_its_parts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evidence"
    evidence_id, receipt = hostile_check(root)
    for fmt in ("html", "md"):
        text = build_report([evidence_id], root, fmt)
        body = "".join(parse_html(text).text) if fmt == "html" else text
        block = re.search(r"(notanda-evidence verify .*?)\n(notanda-evidence audit .*?)\n", body)
        assert block, body
        verify, audit = (shlex.split(line)[1:] for line in block.groups())
        assert verify == ["verify", "--full", str(root / evidence_id), "--receipt", receipt]
        assert _cli.main(verify) == 0
        assert _cli.main(audit) == 0
    capsys.readouterr()


def test_a_record_that_does_not_verify_is_named_and_its_rows_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evidence"
    good, _ = check_record(root, [(_reference(0), "verified", [], _work(1))])
    bad, _ = check_record(root, [(_reference(0, title="Edited away"), "verified", [], _work(2))])
    response = root / bad / "response.json"
    response.write_bytes(response.read_bytes().replace(b'"verified"', b'"ambiguous"', 1))
    out = tmp_path / "report.html"
    code = _cli.main(["report", good, bad, "--root", str(root), "--output", str(out)])
    assert code == 1
    err = capsys.readouterr().err
    assert f"left out {bad}: integrity_failure" in err
    page = parse_html(out.read_text(encoding="utf-8"))
    assert [bad, "integrity_failure"] in page.rows
    assert "Edited away" not in "".join(page.text)
    assert len([row for row in page.rows if row and row[0] == "#0"]) == 1


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("receipt", "receipt_mismatch"),
        ("search", "not_a_check"),
        ("missing", "not_found"),
        ("invalid", "invalid_evidence_id"),
        ("log", "log_mismatch"),
    ],
)
def test_each_reason_to_leave_a_record_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: str, code: str
) -> None:
    root = tmp_path / "evidence"
    evidence_id, _receipt = check_record(root, [(_reference(0), "verified", [], _work(1))])
    options: list[str] = []
    if change == "receipt":
        receipts = tmp_path / "receipts.txt"
        receipts.write_text(f"{evidence_id} {'0' * 64}\n", encoding="utf-8")
        options = ["--receipts", str(receipts)]
    elif change == "search":
        writer = EvidenceStore(root).create()
        writer.write_request({"evidence_id": writer.evidence_id, "tool": "search_literature"})
        writer.write_provider({})
        writer.write_response({"evidence_id": writer.evidence_id, "results": [], "status": "ok"})
        evidence_id = writer.seal().evidence_id
    elif change == "missing":
        evidence_id = "f" * 32
    elif change == "invalid":
        evidence_id = "../<b>x</b>"
    else:
        EvidenceLog(root).append(evidence_id, "1" * 64)
    assert _cli.main(["report", evidence_id, "--root", str(root), "--format", "md", *options]) == 1
    out, err = capsys.readouterr()
    assert f": {code}" in err
    assert "## Records left out" in out
    assert "| #0 |" not in out


def test_a_broken_log_leaves_every_record_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evidence"
    evidence_id, _ = check_record(root, [(_reference(0), "verified", [], _work(1))])
    log = root / ".notanda" / "log.jsonl"
    log.write_bytes(log.read_bytes().replace(b'"index":0', b'"index":7'))
    assert _cli.main(["report", evidence_id, "--root", str(root)]) == 1
    page = parse_html(capsys.readouterr().out)
    assert [evidence_id, "log_integrity_failure (run notanda-evidence audit)"] in page.rows
    assert "The evidence log did not check out" in "".join(page.text)


def test_an_unlogged_or_injected_record_is_shown_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evidence"
    unlogged, _ = check_record(root, [(_reference(0), "verified", [], _work(1))], logged=False)
    injected, _ = check_record(root, [(_reference(0), "verified", [], _work(2))], mode="injected")
    assert _cli.main(["report", unlogged, "--root", str(root), "--format", "md"]) == 3
    out = capsys.readouterr().out
    assert "Not in the evidence log" in out
    assert "| #0 |" in out
    assert _cli.main(["report", injected, "--root", str(root), "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert "injected (test) provider, not OpenAlex" in MarkdownIt("gfm-like").render(out)
    assert "| #0 |" in out


def test_a_check_that_failed_as_a_whole_is_shown_without_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evidence"
    failed = {"error": "configuration_error", "reason": "missing_api_key", "status": "error"}
    evidence_id, _ = check_record(root, [], response=failed)
    assert _cli.main(["report", evidence_id, "--root", str(root), "--format", "md"]) == 0
    out = capsys.readouterr().out
    shown_text = "".join(parse_html(MarkdownIt("gfm-like").render(out)).text)
    assert "failed as a whole or was refused: configuration_error (missing_api_key)" in shown_text
    assert "| #0" not in out


def test_the_parts_of_a_run_are_put_in_order_and_a_missing_part_is_named(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    run = {"run_id": "r-1", "file_sha256": "ab" * 32, "file_bytes": 1234, "parts": 3}
    third, _ = check_record(
        root,
        [(_reference(0, file_index=200), "unchecked", [], None)],
        extra={"run": {**run, "part": 3}},
        stopped="rate_limit",
    )
    first, _ = check_record(
        root,
        [(_reference(0, file_index=0), "verified", [], _work(1))],
        extra={"run": {**run, "part": 1}},
    )
    lone, _ = check_record(root, [(_reference(0), "not_found", [], None)])
    text = build_report([third, lone, first], root, "md", file_name="paper|*.bib")
    assert text.index(f"Part 1 of 3: evidence ID `{first}`") < text.index(
        f"Part 3 of 3: evidence ID `{third}`"
    )
    assert text.index(f"`{third}`") < text.index(f"Check: evidence ID `{lone}`")
    assert "| SHA-256 of the file | `" + "ab" * 32 + "` |" in text
    assert "| bytes | 1234 |" in text
    assert "| parts | 2 of 3 planned |" in text
    assert "| file | paper\\|\\*.bib |" in text
    rendered = "".join(parse_html(MarkdownIt("gfm-like").render(text)).text)
    assert "Parts not in this report (not asked for, or left out below): 2." in rendered
    assert "The run stopped early (rate_limit)." in rendered
    assert "| #200 |" in text
    assert "| #0 |" in text


def test_parts_after_an_early_stop_never_ran(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    run = {"run_id": "r-2", "file_sha256": "cd" * 32, "file_bytes": 99, "parts": 5}
    first, _ = check_record(
        root, [(_reference(0), "verified", [], _work(1))], extra={"run": {**run, "part": 1}}
    )
    third, _ = check_record(
        root,
        [(_reference(0), "unchecked", [], None)],
        extra={"run": {**run, "part": 3}},
        stopped="budget",
    )
    page = parse_html(build_report([first, third], root, "html"))
    body = "".join(page.text)
    assert "Parts not in this report (not asked for, or left out below): 2." in body
    assert "The run stopped early (budget): parts 4 to 5 never ran" in body
    assert ["parts", "2 of 5 planned"] in page.rows


def test_an_output_that_cannot_be_written_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evidence"
    evidence_id, _ = hostile_check(root)
    output = tmp_path / "no-such-folder" / "report.html"
    assert _cli.main(["report", evidence_id, "--root", str(root), "--output", str(output)]) == 2
    problem, remedy = capsys.readouterr().err.splitlines()[-2:]
    assert "cannot be written (FileNotFoundError)" in problem
    assert remedy.startswith("remedy: give --output a file")


def test_unparsed_and_unchecked_rows_show_what_was_written_and_why(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    broken = _reference(
        0, title=None, authors=[], year=None, venue=None, raw="@article{x, title={<i>", key="x"
    )
    broken["unparsed_reason"] = "bibtex_syntax"
    evidence_id, _ = check_record(
        root, [(broken, "unparsed", [], None), (_reference(1), "unchecked", [], None)]
    )
    page = parse_html(build_report([evidence_id], root, "html"))
    unparsed, unchecked = (r for r in page.rows if r and re.fullmatch("#[0-9]+", r[0]))
    assert "unparsed" in unparsed[2]
    assert "error: bibtex_syntax" in unparsed[2]
    assert "as written: @article{x, title={<i>" in unparsed[3]
    assert "unchecked" in unchecked[2]
    assert "error: deadline_exceeded" in unchecked[2]
    assert "title: A title 1" in unchecked[3]


def test_the_same_records_give_the_same_bytes(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    evidence_id, _ = hostile_check(root)
    for fmt in ("html", "md"):
        assert build_report([evidence_id], root, fmt) == build_report([evidence_id], root, fmt)


def test_build_report_refuses_an_unknown_format_or_one_string(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    evidence_id, _ = hostile_check(root)
    with pytest.raises(ValueError, match="pdf"):
        build_report([evidence_id], root, "pdf")
    with pytest.raises(TypeError):
        build_report(evidence_id, root, "md")


# ------------------------------------------------------------------ Markdown


def _cells(line: str) -> list[str]:
    """A GFM table row split at its unescaped pipes (a backslash escapes the next character)."""
    cells, current, escaped = [], [], False
    for ch in line.strip()[1:-1]:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            current.append(ch)
            escaped = True
        elif ch == "|":
            cells.append("".join(current))
            current = []
        else:
            current.append(ch)
    cells.append("".join(current))
    return cells


def test_markdown_cells_hold_each_hostile_value_as_text(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    evidence_id, receipt = hostile_check(root)
    text = build_report([evidence_id], root, "md")
    assert not any(ch in text for ch in BIDI)
    rows = [line for line in text.splitlines() if re.match(r"\| #[0-9]+ \|", line)]
    assert len(rows) == 3
    assert all(len(_cells(row)) == 6 for row in rows)
    # Rendered by a GFM renderer (tables, strikethrough, autolinks): every value is text.
    rendered = MarkdownIt("gfm-like").render(text)
    page = parse_html(rendered)
    _assert_no_markup_escaped(page)
    assert {tag for tag, _ in page.tags} <= {
        "h1", "h2", "h3", "p", "blockquote", "strong", "em", "code", "pre", "br", "a",
        "table", "thead", "tbody", "tr", "th", "td", "s",
    }  # fmt: skip
    assert "s" not in {tag for tag, _ in page.tags}  # no ~~strike~~ took effect
    refs = [row for row in page.rows if row and re.fullmatch("#[0-9]+", row[0])]
    assert [len(row) for row in refs] == [6, 6, 6]
    shown_title = "".join(ch if ch.isprintable() else f"⟨U+{ord(ch):04X}⟩" for ch in HOSTILE_TITLE)
    assert f"title: {shown_title}" in refs[0][3]
    assert f"title: {shown_title} → " in refs[0][4]
    assert refs[0][1] == "k|<b>`x`"
    assert "**Not** [found](http://x)" in refs[2][3]
    links = [attrs["href"] for tag, attrs in page.tags if tag == "a"]
    assert links == [
        "https://doi.org/10.1000/w1",
        "https://openalex.org/W1",
        "https://doi.org/10.1000/x%22%3E%3Cscript%3E",
        "https://doi.org/10.1000/alpha",
        "https://openalex.org/W2",
    ]
    body = "".join(page.text)
    assert f"evidence ID {evidence_id}" in body
    assert f"receipt {receipt}" in body
    assert NOTICE in body


def test_the_report_command_is_documented(tmp_path: Path) -> None:
    docs = Path(__file__).resolve().parents[3] / "docs"
    if not docs.is_dir():
        pytest.skip("docs/ not found: run from a repository checkout")
    errors = (docs / "errors.md").read_text(encoding="utf-8")
    assert "`not_a_check`" in errors
    guide = (docs / "auditors-guide.md").read_text(encoding="utf-8")
    assert "notanda-evidence report" in guide
    del tmp_path


def test_the_command_line_prints_a_hostile_id_visibly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evidence"
    check_record(root, [(_reference(0), "verified", [], _work(1))])
    assert _cli.main(["report", "\x1b[31mred", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert "\\x1b[31mred" in err
