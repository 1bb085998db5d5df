"""What our answers cost a client and a model, and the first search after start.

Two figures of issue 11, measured on our server alone (the anchor's answers
have another shape, so they are no reference):

* bytes of the search answer's text (the ``TextContent`` the model reads, as
  the raw client receives it from ``launch_ours.py``) per work, mean over
  three real OpenAlex list pages of the shared fixtures, against the same
  answers in the
  form notanda-mcp wrote before issue 11 (every citation-block field, ``null``
  kept, ORCID iDs as ``https://orcid.org/`` URLs, ``json.dumps`` default
  separators), rebuilt here from the new answer so both come from one search;
  the schema-check cost uses the output schemas that server's tools/list
  publishes and its answers, so no private API of ours is involved;
* the first search after start against later ones, through a raw
  newline-delimited JSON-RPC client over stdio (no SDK on the client side),
  with the pause a client leaves between listing the tools and its first call.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import HERE, Bench, median, ms, times
from client_paths import SEARCH, RawClient, checked

#: Real pages with full records and at least ten works (the issue's 611 - 1,741 bytes).
PAGES = (
    "works_list_2025-10_filter-publication-year-2020_per-page-50_retracted-and-truncated-authors.json",
    "works_list_2025-10_search-machine-learning_per-page-20.json",
    "works_list_2022-05_filter-author-id_per-page-25.json",
)
#: Between the tools/list answer and the first call: a model takes longer to choose a tool.
FIRST_CALL_AFTER_S = 1.0
#: The first search at most this many times a later one (issue 23; issue 11 asked 1.5x).
FIRST_SEARCH_BOUND = 1.3


def _previous_form(content: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """*content* as notanda-mcp answered before issue 11 (see the module docstring)."""
    works = []
    for work in content["results"]:
        authors = [
            {
                "name": author.get("name"),
                "orcid": None
                if author.get("orcid") is None
                else f"https://orcid.org/{author['orcid']}",
            }
            for author in work["authors"]
        ]
        works.append({**{field: work.get(field) for field in fields}, "authors": authors})
    return {**content, "results": works}


def bench_answer_bytes(bench: Bench) -> None:
    from notanda_openalex import Work

    fields = tuple(Work.model_fields)
    ours: list[float] = []
    before: list[float] = []
    # One server; the launcher reads its page afresh per request, so each search gets
    # the fixture page copied there just before it.
    page = bench.workdir / "answer-page.json"
    page.write_bytes(b"{}")
    with (bench.workdir / "answer-servers.stderr").open("a") as errlog:
        raw = RawClient(launch_ours(Path(tempfile.mkdtemp(dir=bench.workdir)), page), errlog)
        try:
            # Through the protocol, as a client reads it: no private API of ours.
            schemas = {tool["name"]: tool.get("outputSchema") for tool in raw.handshake()}
            answers: list[tuple[str, dict[str, Any]]] = []
            for name in PAGES:
                page.write_bytes(bench.fixture(name))
                result = raw.tool_result("search_literature", SEARCH)[1]
                content = result.get("structuredContent")
                found = checked("search_literature", result.get("isError"), content)
                answers.append((result["content"][0]["text"], found))
            arguments = {"evidence_id": found["evidence_id"], "receipt": found["receipt"]}
            retrieved = raw.call_tool("get_evidence", arguments)[1]
        finally:
            raw.close()
    for text, content in answers:
        count = len(content["results"])
        previous = json.dumps(_previous_form(content, fields), ensure_ascii=False, sort_keys=True)
        ours.append(len(text.encode("utf-8")) / count)
        before.append(len(previous.encode("utf-8")) / count)
    schema_check(bench, schemas, {"search_literature": found, "get_evidence": retrieved})
    mean_ours, mean_before = sum(ours) / len(ours), sum(before) / len(before)
    bench.row(
        "answer: search text bytes per work, mean of 3 real pages",
        f"{mean_ours:.0f} B",
        f"before issue 11 {mean_before:.0f} B",
        times(mean_ours / mean_before),
        "<= 0.75x before",
        met=mean_ours / mean_before <= 0.75,
        goal="answer-bytes",
    )
    per_page = ", ".join(f"{o:.0f}/{b:.0f}" for o, b in zip(ours, before, strict=True))
    bench.note(
        "answer bytes: the TextContent of a 10-work search answer on each of three real "
        f"fixture pages (2020, machine learning, author ID), ours/before per page {per_page}; "
        "'before' is the same answer in the earlier form (every field, nulls kept, ORCID URLs, "
        "default separators)."
    )


def schema_check(
    bench: Bench, schemas: dict[str, dict[str, Any]], answers: dict[str, dict[str, Any]]
) -> None:
    """What the mcp 1.x client's per-call ``jsonschema.validate`` of our answers costs.

    *schemas* are the output schemas our tools/list publishes, *answers* one real
    answer of each tool.
    """
    import timeit

    import jsonschema

    def cost(schema: dict[str, Any], answer: dict[str, Any]) -> float:
        def check() -> None:
            jsonschema.validate(answer, schema)

        return min(timeit.repeat(check, number=10, repeat=bench.scale(9, 3))) / 10

    ours = {name: cost(schemas[name], answer) for name, answer in answers.items()}
    generic = {name: cost({"type": "object"}, answer) for name, answer in answers.items()}
    bench.row(
        "answer: mcp 1.x client's schema check per call, search/get",
        f"{ms(ours['search_literature'])} / {ms(ours['get_evidence'])}",
        f"{{type: object}} {ms(generic['search_literature'])} / {ms(generic['get_evidence'])}",
        "-",
        "report",
        met=None,
    )
    bench.note(
        "schema check: jsonschema.validate(answer, outputSchema), which the mcp 1.x Python SDK "
        "client runs on every call (a metaschema check of the schema, then the answer), on a "
        "real 10-work answer and its get_evidence; best of the repeats. Before issue 11 the "
        "same check took 11.4 / 10.2 ms on this machine (37 and 32 subschemas; now 7 each)."
    )


def launch_ours(root: Path, page: Path) -> list[str]:
    """Our server on *root*, every search answered with *page* (``launch_ours.py``)."""
    return [
        sys.executable,
        str(HERE / "launch_ours.py"),
        "--evidence-dir",
        str(root),
        "--page",
        str(page),
    ]


def _first_and_later(bench: Bench, root: Path, page: Path, later: int) -> tuple[float, list[float]]:
    with (bench.workdir / "answer-servers.stderr").open("a") as errlog:
        raw = RawClient(launch_ours(root, page), errlog)
        try:
            raw.handshake()
            time.sleep(FIRST_CALL_AFTER_S)
            samples = [raw.call_tool("search_literature", SEARCH)[0] for _ in range(later + 1)]
        finally:
            raw.close()
    return samples[0], samples[1:]


def bench_first_search(bench: Bench) -> None:
    page = bench.page("small")
    # One evidence root for every process, as a restarted server has: the
    # first record of a new root also creates its log (more fsyncs), which
    # is not what this figure is about. The priming run is not counted.
    root = Path(tempfile.mkdtemp(dir=bench.workdir))
    _first_and_later(bench, root, page, 0)
    firsts: list[float] = []
    laters: list[float] = []
    for _ in range(bench.scale(5, 2, 1)):
        first, later = _first_and_later(bench, root, page, bench.scale(10, 4, 1))
        firsts.append(first)
        laters.extend(later)
    f, s = median(firsts), median(laters)
    bench.row(
        "mcp raw client: first search after start / later ones",
        ms(f),
        f"later {ms(s)}",
        times(f / s),
        f"<= {FIRST_SEARCH_BOUND:g}x a later one",
        met=f / s <= FIRST_SEARCH_BOUND,
        goal="first-search",
    )
    bench.note(
        f"first search: {len(firsts)} fresh server processes (launch_ours.py, the ~100 KB page, "
        "one evidence root that a priming run gave its log) driven by a raw newline-delimited "
        "JSON-RPC client: initialize, initialized, "
        f"tools/list, a {FIRST_CALL_AFTER_S:.0f} s pause (a client's think time, in which the "
        "server loads the search path in the background), then searches; medians of the first "
        "searches and of all later ones."
    )


def run(bench: Bench) -> None:
    for name, step in (("answer bytes", bench_answer_bytes), ("first search", bench_first_search)):
        try:
            step(bench)
        except Exception as exc:
            bench.failed(f"answer: {name}", f"{type(exc).__name__}: {exc}")
