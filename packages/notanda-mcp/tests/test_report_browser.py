"""A report of a real check with hostile titles, opened in a real browser (headless Chromium).

The check runs through ``notanda-mcp check-references`` against a fake
OpenAlex whose works carry script, markup and ``javascript:`` URLs, and a
bibliography that carries them too; ``notanda_evidence.build_report`` makes
the HTML from the sealed record. Chromium (the Debian package ``chromium``:
``--headless --dump-dom`` and ``--screenshot``, no driver) then shows what a
reader sees: the rows and the hostile text as text, no script run, no element
injected, and a valid PNG. A control page with the same title written
unescaped proves the same run would have seen a script that ran.

``.ci/run`` installs ``chromium`` and exports ``NOTANDA_REQUIRE_BROWSER=1``:
there the browser is required. Elsewhere without it (a developer's machine,
or the GitHub workflow, whose runners set ``CI=true`` but have no Debian
``chromium``) the test skips and says why.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import notanda_evidence
import pytest
from conftest import KEY
from fake_openalex import FakeOpenAlex, bibliography, catalogue_works, synthetic_work
from notanda_mcp import _check_cli

#: Runs if it is ever parsed as markup: renames the page and marks the root element.
SCRIPT = (
    "<script>document.title='PWNED';"
    "document.documentElement.setAttribute('data-pwned','1')</script>"
)
BREAKOUT = "</td></tr></table><img src=x onerror=\"document.title='PWNED'\">"
WORK_TITLE = f"{SCRIPT}{BREAKOUT} [x](javascript:alert(1)) evil"
WRITTEN_TITLE = "<script>document.title='PWNED'</script> </td> <b>not bold</b>"
BIBTEX = rf"""
@article{{evil, title={{Sketch of the analytical engine}}, author={{Lovelace, Ada}},
  year={{2021}}, journal={{Journal of Tests}}, doi={{10.5555/notanda.test.1}}}}
@article{{ghost, title={{{WRITTEN_TITLE}}}, author={{Nobody, Ann}}, year={{2019}}}}
@article{{turing, title={{On computable numbers, with an application to the
  Entscheidungsproblem}}, author={{Turing, Alan}}, year={{2023}}, journal={{Journal of Tests}}}}
"""
#: Set by ``.ci/run``, which installs the browser: a missing one is then a failure.
REQUIRED = "NOTANDA_REQUIRE_BROWSER"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Let load-time work (an image's onerror) finish before the DOM is dumped.
    "--virtual-time-budget=3000",
)


def _chromium() -> str:
    path = shutil.which("chromium")
    if path:
        return path
    if os.environ.get(REQUIRED) == "1":
        pytest.fail(
            f"chromium is missing and {REQUIRED}=1: .ci/run installs the Debian package"
            " chromium, and the report's browser test must run there"
        )
    pytest.skip("no chromium on PATH (Debian package chromium): the report's browser test skips")


def _browse(chromium: str, page: Path, profile: Path, *action: str) -> str:
    profile.mkdir()
    done = subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={profile}", *action, page.as_uri()],
        capture_output=True,
        timeout=110,
        check=False,
        cwd=page.parent,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return done.stdout.decode("utf-8")


class _Dom(HTMLParser):
    """The elements, attributes, title and table rows of a dumped DOM."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.title = ""
        self.rows: list[list[str]] = []
        self._in_title = False
        self._cell: list[str] | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        self._in_title = tag == "title"
        if tag == "tr" and self._depth == 0:
            self.rows.append([])
        if tag in ("td", "th"):
            if self._depth == 0:
                self._cell = []
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False
        if tag in ("td", "th"):
            self._depth -= 1
            if self._depth == 0 and self._cell is not None:
                self.rows[-1].append("".join(self._cell))
                self._cell = None

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._cell is not None:
            self._cell.append(data)


def _dom(text: str) -> _Dom:
    dom = _Dom()
    dom.feed(text)
    dom.close()
    return dom


def _assert_png(data: bytes) -> tuple[int, int]:
    """A PNG signature, then an IHDR chunk of 13 bytes whose CRC holds; its width and height."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert (length, kind) == (13, b"IHDR")
    header = data[16:29]
    (crc,) = struct.unpack(">I", data[29:33])
    assert zlib.crc32(kind + header) == crc
    width, height = struct.unpack(">II", header[:8])
    return width, height


def _hostile_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    works = catalogue_works()
    works[0] = synthetic_work(
        1,
        title=WORK_TITLE,
        display_name=WORK_TITLE,
        authorships=[{"author": {"display_name": "Mallory <b>| x", "orcid": None}}],
        open_access={"is_oa": True, "oa_status": "gold", "oa_url": "javascript:alert(2)"},
    )
    source = tmp_path / "refs.bib"
    source.write_text(BIBTEX, encoding="utf-8")
    root = tmp_path / "evidence"
    code = _check_cli.main(
        [str(source), "--evidence-dir", str(root)],
        transport=FakeOpenAlex(bibliography(works)).transport(),
        env={"HARVESTER_OPENALEX_API_KEY": KEY},
    )
    out = capsys.readouterr().out
    assert code == 1, out  # a metadata_mismatch and a not_found
    [evidence_id] = re.findall(r"^evidence ID: ([0-9a-f]{32})$", out, re.M)
    return root, evidence_id


def test_a_hostile_report_renders_as_text_in_chromium_and_runs_no_script(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chromium = _chromium()
    root, evidence_id = _hostile_check(tmp_path, capsys)
    page = tmp_path / "report.html"
    page.write_text(
        notanda_evidence.build_report([evidence_id], root, "html", file_name="refs.bib"),
        encoding="utf-8",
    )

    dom = _dom(_browse(chromium, page, tmp_path / "profile-dom", "--dump-dom"))
    assert dom.title == "Notanda reference check report"
    names = {tag for tag, _ in dom.elements}
    assert not names & {"script", "img", "b"}
    assert not any("data-pwned" in attrs for _, attrs in dom.elements)
    assert not any(key.startswith("on") for _, attrs in dom.elements for key in attrs)
    links = [attrs.get("href") or "" for tag, attrs in dom.elements if tag == "a"]
    assert links
    assert all(re.fullmatch(r"https://(doi\.org|openalex\.org)/\S+", link) for link in links)
    rows = [row for row in dom.rows if row and re.fullmatch("#[0-9]+", row[0])]
    assert [(row[0], row[1]) for row in rows] == [("#0", "evil"), ("#1", "ghost"), ("#2", "turing")]
    assert all(len(row) == 6 for row in rows)
    mismatch, ghost, turing = rows
    assert "metadata_mismatch" in mismatch[2]
    assert "fields listed differ" in mismatch[2]
    assert WORK_TITLE in mismatch[4]  # what OpenAlex holds, as text
    assert "Sketch of the analytical engine" in mismatch[4]  # beside the title as written
    assert "Mallory <b>| x" in mismatch[4]
    assert "not_found" in ghost[2]
    assert WRITTEN_TITLE in ghost[3]
    assert "verified" in turing[2]
    assert "https://openalex.org/W7000000001" in links
    assert "https://doi.org/10.5555/notanda.test.1" in links

    shot = tmp_path / "report.png"
    _browse(
        chromium, page, tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=1280,1600"
    )
    assert _assert_png(shot.read_bytes()) == (1280, 1600)


def test_the_browser_check_sees_a_script_that_runs(tmp_path: Path) -> None:
    """The control: the same hostile title written into a page unescaped does run."""
    chromium = _chromium()
    page = tmp_path / "control.html"
    page.write_text(
        f"<!DOCTYPE html><html><head><title>control</title></head><body><table><tr><td>"
        f"{WORK_TITLE}</td></tr></table></body></html>",
        encoding="utf-8",
    )
    dom = _dom(_browse(chromium, page, tmp_path / "profile", "--dump-dom"))
    assert dom.title == "PWNED"
    assert any(attrs.get("data-pwned") == "1" for _, attrs in dom.elements)
