"""The 100-reference check the bench runs in process and through the real server.

50 references with DOIs (one DOI batch) and 50 with titles only (50 title
lookups), each answered by a fake OpenAlex after ``CHECK_LATENCY_S``. Imported
by ``openalex_bench.py`` (the check in process) and by ``launch_ours.py
--references`` (the same provider behind the server, for its memory).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: How long the fake OpenAlex takes to answer each request of the reference check.
CHECK_LATENCY_S = 0.2
CHECK_REFERENCES = 100


def check_fixture(
    count: int = CHECK_REFERENCES,
) -> tuple[str, dict[str, list[dict[str, object]]]]:
    """The bibliography (BibTeX) of *count* references, half with DOIs, and the works by kind."""
    entries: list[str] = []
    by_doi: list[dict[str, object]] = []
    titled: list[dict[str, object]] = []
    for number in range(count):
        title = f"A large scale study of topic {number} in the analysis of complex systems"
        names = [f"Author{number}x{rank} Family{number}x{rank}" for rank in range(8)]
        record: dict[str, object] = {
            "id": f"https://openalex.org/W{1000 + number}",
            "doi": f"https://doi.org/10.5555/bench.{number}",
            "title": title,
            "publication_year": 2020,
            "authorships": [{"author": {"display_name": name}} for name in names],
            "primary_location": {"source": {"display_name": "Journal of Complex Systems"}},
            "type": "article",
            "is_retracted": False,
        }
        authors = " and ".join(f"Family{number}x{rank}, A." for rank in range(8))
        fields = (
            f"author={{{authors}}}, title={{{title}}}, journal={{J. Complex Syst.}}, year={{2020}}"
        )
        if number % 2 == 0:
            fields += f", doi={{10.5555/bench.{number}}}"
            by_doi.append(record)
        else:
            titled.append(record)
        entries.append(f"@article{{ref{number}, {fields}}}")
    return "\n".join(entries), {"doi": by_doi, "title": titled}


def check_provider(
    delay: float = CHECK_LATENCY_S, count: int = CHECK_REFERENCES
) -> Callable[[Any], Any]:
    """A MockTransport handler answering the check's requests after *delay* seconds."""
    import httpx
    from notanda_openalex._matching import normalize_text

    _, works = check_fixture(count)
    pool = works["title"]
    position = {normalize_text(str(work["title"])): i for i, work in enumerate(pool)}

    def answer(request: httpx.Request) -> httpx.Response:
        time.sleep(delay)
        value = request.url.params["filter"]
        if value.startswith("doi:"):
            wanted = {f"https://doi.org/{doi}" for doi in value[4:].split("|")}
            results = [work for work in works["doi"] if work["doi"] in wanted]
        else:
            # The matching work and nine near neighbours, as a relevance search answers.
            hit = position[normalize_text(value.removeprefix("title.search:"))]
            results = [pool[(hit + offset) % len(pool)] for offset in range(10)]
        return httpx.Response(200, json={"meta": {"count": len(results)}, "results": results})

    return answer
