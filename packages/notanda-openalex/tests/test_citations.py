"""The keys a manuscript cites: ``.aux``, ``.bcf``, LaTeX and Pandoc Markdown, on any input."""

from __future__ import annotations

import time

import pytest
from notanda_openalex import (
    MAX_CITATION_BYTES,
    CitationError,
    CitationReason,
    CitationSource,
    citation_source,
    parse_references,
    read_citations,
    read_references,
)
from notanda_openalex._errors import InputReason, ReferenceInputError


def keys(text: str, source: str) -> tuple[str, ...]:
    return read_citations(text, source).keys


def test_aux_citations_in_order_once_each() -> None:
    aux = "\\relax\n\\citation{b,a}\n\\citation{ a , c }\n\\citation{b}\n\\bibdata{refs}\n"
    found = read_citations(aux, "aux")
    assert found.keys == ("b", "a", "c")
    assert found.every is False
    assert found.source is CitationSource.AUX


def test_aux_star_and_biblatex_forms() -> None:
    found = read_citations("\\citation{*}\n\\abx@aux@cite{0}{x}\n\\abx@aux@cite{y}\n", "aux")
    assert found.every is True
    assert found.keys == ("x", "y")


BCF = """<?xml version="1.0" encoding="UTF-8"?>
<bcf:controlfile version="3.8" xmlns:bcf="https://sourceforge.net/projects/biblatex">
  <bcf:section number="0">
    <bcf:citekey order="1" intorder="1">knuth:1984</bcf:citekey>
    <bcf:citekey order="2" intorder="1">a&amp;b</bcf:citekey>
    <bcf:citekey order="3" intorder="1">knuth:1984</bcf:citekey>
  </bcf:section>
</bcf:controlfile>
"""


def test_bcf_citekeys() -> None:
    assert keys(BCF, "bcf") == ("knuth:1984", "a&b")
    assert read_citations(BCF.replace("knuth:1984", "*", 1), "bcf").every is True


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<a><b></a>", CitationReason.MALFORMED_XML),
        (
            '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
            "<x><citekey>&b;</citekey></x>",
            CitationReason.XML_DOCTYPE,
        ),
        ("<x><citekey>k</citekey>", CitationReason.MALFORMED_XML),
    ],
    ids=["mismatched", "entities", "cut-off"],
)
def test_a_bad_bcf_is_refused_with_its_reason(text: str, reason: CitationReason) -> None:
    with pytest.raises(CitationError) as refused:
        read_citations(text, "bcf")
    assert refused.value.reason is reason


LATEX = r"""
\documentclass{article}
% \cite{commented} is not cited
\begin{document}
As \cite{plain} and \citep[p.~3]{withopt} and \citet*[see][12]{star, two}.
\parencite{paren}\textcite{text}\autocite[4]{auto}\footcite{foot}
\nocite{no1,no2} \Citet{cap} 50\% of \cite{afterpercent}
\citestyle{notakey} \cites(all)(x)[1]{multi1}[2]{multi2} \citealp{
  broken, line}
\end{document}
"""


def test_latex_commands_their_forms_and_comments() -> None:
    assert keys(LATEX, "latex") == (
        "plain",
        "withopt",
        "star",
        "two",
        "paren",
        "text",
        "auto",
        "foot",
        "no1",
        "no2",
        "cap",
        "afterpercent",
        "multi1",
        "multi2",
        "broken",
        "line",
    )
    assert read_citations("\\nocite{*}", "latex").every is True
    # An escaped backslash before % leaves the % a comment.
    assert keys("\\\\% \\cite{gone}\n\\cite{kept}", "latex") == ("kept",)


MARKDOWN = """---
title: A paper
author: someone@example.org
---

Blah blah [see @doe99, pp. 33-35; also @smith04, chap. 1].
Blah blah [@doe99, pp. 33-35, 38-39 and *passim*].
Smith says blah [-@smith04]. @knuth1984 says so.
Write to jane.doe@example.com or @{odd key} and @end.

```
@notacitation in code
```

Inline `@code` is no citation either; <https://x.org/@user> neither.
"""


def test_pandoc_markdown_citations_and_not_email_or_code() -> None:
    assert keys(MARKDOWN, "markdown") == ("doe99", "smith04", "knuth1984", "odd key", "end")
    assert read_citations("nocite: |\n  @*\n", "markdown").every is True


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("paper.aux", CitationSource.AUX),
        ("paper.bcf", CitationSource.BCF),
        ("a/paper.TEX", CitationSource.LATEX),
        ("paper.md", CitationSource.MARKDOWN),
        ("paper.qmd", CitationSource.MARKDOWN),
    ],
)
def test_the_kind_comes_from_the_suffix(name: str, kind: CitationSource) -> None:
    assert citation_source(name) is kind


def test_an_unknown_suffix_is_refused() -> None:
    with pytest.raises(CitationError) as refused:
        citation_source("paper.docx")
    assert refused.value.reason is CitationReason.UNKNOWN_KIND


def test_too_large_is_refused() -> None:
    with pytest.raises(CitationError) as refused:
        read_citations("x" * (MAX_CITATION_BYTES + 1), "latex")
    assert refused.value.reason is CitationReason.TOO_LARGE


HOSTILE = {
    "latex": ["\\cite[" * 200_000, "\\cite{" * 200_000, "\\%" * 500_000 + "%", "\\" * 1_000_000],
    "markdown": ["@" * 1_000_000, "a@" * 500_000, "@a." * 300_000, "```\n" * 200_000],
    "aux": ["\\citation{" * 100_000, "\\abx@aux@cite{" * 100_000 + "}"],
    "bcf": ["<citekey>" * 100_000],
}


@pytest.mark.parametrize(
    ("kind", "text"),
    [(kind, text) for kind, texts in HOSTILE.items() for text in texts],
)
def test_hostile_input_is_read_in_linear_time(kind: str, text: str) -> None:
    # About a megabyte each; a quadratic reader would take minutes.
    started = time.process_time()
    if kind == "bcf":
        with pytest.raises(CitationError) as refused:
            read_citations(text, kind)
        assert refused.value.reason is CitationReason.MALFORMED_XML
    else:
        read_citations(text, kind)
    assert time.process_time() - started < 5.0


def _bibtex(count: int) -> str:
    return "@string{j = {Journal of Tests}}\n" + "".join(
        f"@article{{k{n}, title={{Title number {n} of a long series of titles}}, journal=j,"
        f" year={{2020}}, note={{{'x' * 2000}}}}}\n"
        for n in range(count)
    )


def test_read_references_takes_any_number_of_entries_and_bytes() -> None:
    text = _bibtex(300)
    assert len(text.encode()) > 262_144
    with pytest.raises(ReferenceInputError) as refused:
        parse_references(text)
    assert refused.value.reason is InputReason.TOO_LONG
    parsed = read_references(text)
    assert len(parsed) == 300
    assert [r.index for r in parsed] == list(range(300))
    assert parsed[299].venue == "Journal of Tests"  # the @string, file-wide
    assert parsed[0].raw.startswith("@article{k0,")


def test_read_references_refuses_what_parse_references_refuses_but_the_limits() -> None:
    for text, reason in (("  \n", InputReason.EMPTY), (3, InputReason.NOT_A_STRING)):
        with pytest.raises(ReferenceInputError) as refused:
            read_references(text)  # type: ignore[arg-type]
        assert refused.value.reason is reason
    with pytest.raises(ReferenceInputError) as refused:
        read_references("x", "endnote")
    assert refused.value.reason is InputReason.INVALID_VALUE
