"""``check-references`` on a file of any size: parts, plan, cited keys, stops, Ctrl-C, report."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import KEY, assert_sealed, read_json, record_ids
from fake_openalex import FakeOpenAlex, bibliography, json_response, synthetic_work
from notanda_mcp import _check_cli, _check_run

ENV = {"HARVESTER_OPENALEX_API_KEY": KEY}

pytestmark = pytest.mark.timeout(120)


def entry(number: int, *, doi: bool) -> str:
    """A BibTeX entry that matches ``synthetic_work(number)``: by DOI, or by title."""
    fields = [
        f"title={{Synthetic work number {number}}}",
        f"author={{Author {number}}}",
        f"year={{{2020 + number % 5}}}",
        "journal={Journal of Tests}",
    ]
    if doi:
        fields.append(f"doi={{10.5555/notanda.test.{number}}}")
    return f"@article{{ref{number},\n  " + ",\n  ".join(fields) + "\n}\n"


def corpus(count: int) -> tuple[str, list[dict[str, Any]]]:
    text = "@string{unused = {a macro that counts as nothing}}\n\n" + "\n".join(
        entry(number, doi=number % 2 == 0) for number in range(1, count + 1)
    )
    return text, [synthetic_work(number) for number in range(1, count + 1)]


def run(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    text: str,
    *options: str,
    provider: FakeOpenAlex,
) -> tuple[int, str, str]:
    source = tmp_path / "refs.bib"
    source.write_text(text, encoding="utf-8")
    code = _check_cli.main(
        [str(source), "--evidence-dir", str(tmp_path / "evidence"), *options],
        transport=provider.transport(),
        env=ENV,
    )
    out, err = capsys.readouterr()
    return code, out, err


def requests_of(root: Path) -> list[dict[str, Any]]:
    """Every record's request.json, in part order."""
    found = [read_json(root / name / "request.json") for name in record_ids(root)]
    return sorted(found, key=lambda request: request["run"]["part"])


def responses_of(root: Path) -> dict[int, dict[str, Any]]:
    return {
        read_json(root / name / "request.json")["run"]["part"]: read_json(
            root / name / "response.json"
        )
        for name in record_ids(root)
    }


def test_250_references_are_checked_in_three_sealed_parts_of_one_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(250)
    provider = FakeOpenAlex(bibliography(works))
    code, out, err = run(capsys, tmp_path, text, "--json", provider=provider)
    assert code == 0, out + err
    document = json.loads(out)
    assert document["summary"]["verified"] == 250
    assert [part["references"] for part in document["parts"]] == [100, 100, 50]
    assert [part["file_indexes"] for part in document["parts"]] == [[0, 99], [100, 199], [200, 249]]
    root = tmp_path / "evidence"
    for part in document["parts"]:
        assert_sealed(root, part["evidence_id"], part["receipt"])
    requests = requests_of(root)
    data = text.encode("utf-8")
    assert {request["run"]["run_id"] for request in requests} == {document["run_id"]}
    assert len(document["run_id"]) == 32
    for number, request in enumerate(requests, 1):
        assert request["run"] == {
            "file_bytes": len(data),
            "file_sha256": hashlib.sha256(data).hexdigest(),
            "part": number,
            "parts": 3,
            "references": 250,
            "run_id": document["run_id"],
        }
        references = request["parsed"]["references"]
        assert [r["index"] for r in references] == list(range(len(references)))
        first = (number - 1) * 100
        assert [r["file_index"] for r in references] == list(range(first, first + len(references)))
        joined = "\n\n".join(r["raw"] for r in references).encode("utf-8")
        assert request["text_sha256"] == hashlib.sha256(joined).hexdigest()
        assert request["text_bytes"] == len(joined)
        assert request["limits"]["max_references"] == 100
        assert request["limits"]["deadline_s"] == 60.0
        assert "stopped" not in responses_of(root)[number]
    # The @string is no reference: 250 entries, the first is ref1.
    assert requests[0]["parsed"]["references"][0]["key"] == "ref1"
    # The plan: 125 DOIs in 3 parts (50, 50, 25: 3 batches), 125 title lookups.
    assert "plan: 250 reference(s), 3 part(s), at most 253 request(s), 1253 credit(s)" in err
    assert document["plan"]["max_requests"] == 253
    assert len(provider.requests) == 3 + 125


def test_the_human_output_names_every_part_and_only_the_references_not_verified(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(120)
    works[4]["title"] = "Another title entirely"  # ref5 differs by title
    code, out, _ = run(capsys, tmp_path, text, provider=FakeOpenAlex(bibliography(works)))
    assert code == 1
    lines = out.splitlines()
    assert lines[1] == "120 reference(s) in 2 part(s): 119 verified, 1 not_found"
    assert lines[2].startswith("not_found")
    assert "#4  [ref5]" in lines[2]
    assert sum(line.startswith("evidence ID: ") for line in lines) == 2
    assert sum(line.startswith("receipt: ") for line in lines) == 2
    assert sum(line.startswith("head: ") for line in lines) == 2
    assert "part 2 of 2: references #100 to #119, ok" in lines


def test_a_plan_over_max_credits_is_refused_before_any_request(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(30)
    provider = FakeOpenAlex(bibliography(works))
    code, out, err = run(capsys, tmp_path, text, "--max-credits", "100", provider=provider)
    assert code == 2
    assert "the plan costs 151 credits, over --max-credits 100" in err
    assert provider.requests == []
    assert record_ids(tmp_path / "evidence") == []
    assert out.startswith("plan: 30 reference(s)")


def test_the_default_max_credits_is_the_free_daily_allowance() -> None:
    assert _check_cli.parser().parse_args(["f", "--evidence-dir", "e"]).max_credits == 10_000


AUX = r"""\relax
\citation{ref1,ref3}
\citation{REF4}
\citation{nowhere}
\bibdata{refs}
"""


def test_cited_in_checks_only_the_cited_entries_and_lists_the_missing_keys(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(6)
    aux = tmp_path / "paper.aux"
    aux.write_text(AUX, encoding="utf-8")
    code, out, err = run(
        capsys,
        tmp_path,
        text,
        "--cited-in",
        str(aux),
        "--json",
        provider=FakeOpenAlex(bibliography(works)),
    )
    assert code == 1  # a cited key is missing, although every checked reference is verified
    document = json.loads(out)
    assert document["summary"]["verified"] == 3
    assert [entry["key"] for entry in document["references"]] == ["ref1", "ref3", "ref4"]
    assert document["missing_entry"] == ["nowhere"]
    assert document["cited"] == {
        "case_only": [{"cited": "REF4", "entry": "ref4"}],
        "checked": 3,
        "crossref_parents": 0,
        "skipped_uncited": 3,
    }
    assert "warning: cited key 'REF4' taken as entry 'ref4' (case differs)" in err
    assert "(cited: 3 of 6 entries; 3 not cited, skipped)" in err
    [request] = requests_of(tmp_path / "evidence")
    assert [r["file_index"] for r in request["parsed"]["references"]] == [0, 2, 3]
    assert "nowhere" not in json.dumps(request)


def test_a_missing_key_is_a_line_of_the_human_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(3)
    tex = tmp_path / "paper.tex"
    tex.write_text("As shown \\citep[p.~2]{ref2, absent}. % \\cite{ref3}\n", encoding="utf-8")
    code, out, _ = run(
        capsys, tmp_path, text, "--cited-in", str(tex), provider=FakeOpenAlex(bibliography(works))
    )
    assert code == 1
    assert "missing_entry  [absent]  cited, but the bibliography has no entry" in out
    assert "1 reference(s) in 1 part(s): 1 verified" in out


def test_an_uncited_crossref_parent_is_not_checked_on_its_own(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = (
        "@inproceedings{child, title={Synthetic work number 1}, author={Author 1}, "
        "crossref={proc}, doi={10.5555/notanda.test.1}}\n"
        "@proceedings{proc, title={Proceedings of Tests}, year={2021}, booktitle={Tests}}\n"
        "@article{other, title={Synthetic work number 2}, doi={10.5555/notanda.test.2}}\n"
    )
    md = tmp_path / "paper.md"
    md.write_text("See [@child, p. 3]; mail me at child@example.org.\n", encoding="utf-8")
    provider = FakeOpenAlex(bibliography([synthetic_work(1), synthetic_work(2)]))
    code, out, _ = run(capsys, tmp_path, text, "--cited-in", str(md), provider=provider)
    assert (
        "(cited: 1 of 3 entries; 1 not cited, skipped; 1 crossref parent(s) used for fields only)"
        in out
    )
    [request] = requests_of(tmp_path / "evidence")
    assert [r["key"] for r in request["parsed"]["references"]] == ["child"]
    assert code in (0, 1)  # the verdict on the child is the reader's; only it was checked


def test_every_entry_when_the_aux_cites_star(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(4)
    aux = tmp_path / "paper.aux"
    aux.write_text("\\citation{*}\n", encoding="utf-8")
    code, out, _ = run(
        capsys, tmp_path, text, "--cited-in", str(aux), provider=FakeOpenAlex(bibliography(works))
    )
    assert code == 0, out
    assert "4 reference(s) in 1 part(s): 4 verified" in out
    # A key cited beside * that no entry has is still missing.
    aux.write_text("\\citation{*}\n\\citation{ref2,absent}\n", encoding="utf-8")
    code, out, _ = run(
        capsys, tmp_path, text, "--cited-in", str(aux), provider=FakeOpenAlex(bibliography(works))
    )
    assert code == 1
    assert "4 reference(s) in 1 part(s): 4 verified" in out
    assert "missing_entry  [absent]" in out


def test_a_cited_in_file_of_an_unknown_kind_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(2)
    other = tmp_path / "paper.docx"
    other.write_text("x", encoding="utf-8")
    provider = FakeOpenAlex(bibliography(works))
    code, _, err = run(capsys, tmp_path, text, "--cited-in", str(other), provider=provider)
    assert code == 2
    assert "unknown_kind" in err
    assert provider.requests == []


def _interrupt_on(part_request: int, works: list[dict[str, Any]]) -> FakeOpenAlex:
    """A provider that sends this process SIGINT on its *part_request*-th request."""
    inner = bibliography(works)
    seen = {"count": 0}
    lock = threading.Lock()

    def respond(request: httpx.Request) -> httpx.Response:
        with lock:
            seen["count"] += 1
            now = seen["count"]
        if now == part_request:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)  # the handler runs in the main thread meanwhile
        return inner(request)

    return FakeOpenAlex(respond)


def test_ctrl_c_seals_the_running_part_as_cancelled_and_exits_130(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(250)
    # Part 1 makes 1 DOI batch and 50 title lookups; the 60th request is in part 2.
    code, out, err = run(capsys, tmp_path, text, "--json", provider=_interrupt_on(60, works))
    assert code == 130
    document = json.loads(out)
    assert document["stopped"]["reason"] == "interrupted"
    assert document["stopped"]["after_part"] == 2
    assert [part["part"] for part in document["parts"]] == [1, 2]
    second = document["parts"][1]
    assert second["cancelled"] is True
    assert second["stopped"] == "interrupted"
    stored = assert_sealed(tmp_path / "evidence", second["evidence_id"], second["receipt"])
    assert stored["cancelled"] is True
    assert stored["stopped"] == "interrupted"
    errors = {r["error"] for r in stored["references"] if r["verdict"] == "unchecked"}
    assert errors == {"deadline_exceeded"}
    assert document["summary"]["unchecked"] >= 50
    assert {r["error"] for r in document["references"] if r["part"] == 3} == {"not_run"}
    assert "stopped after part 2 of 3: interrupted" in err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _limited(after: int, works: list[dict[str, Any]], headers: dict[str, str], body: bytes):
    """The catalogue for *after* requests, then 429 with *headers* and *body* once."""
    inner = bibliography(works)
    seen = {"count": 0, "when": []}
    lock = threading.Lock()

    def respond(request: httpx.Request) -> httpx.Response:
        with lock:
            seen["count"] += 1
            now = seen["count"]
            seen["when"].append(time.monotonic())
        if now == after + 1:
            return json_response(body, 429, headers)
        return inner(request)

    return FakeOpenAlex(respond), seen


def test_a_spent_budget_stops_the_run_after_sealing_that_part(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(250)
    provider, _ = _limited(0, works, {}, b'{"error": "Insufficient budget"}')
    code, out, err = run(capsys, tmp_path, text, "--json", provider=provider)
    document = json.loads(out)
    assert [part["part"] for part in document["parts"]] == [1]
    assert document["parts"][0]["stopped"] == "budget"
    assert document["stopped"]["reason"] == "budget"
    assert document["stopped"]["run_again_at"].endswith("T00:00:00.000Z")
    assert "stopped after part 1 of 3: the OpenAlex budget is spent" in err
    assert "part 1 of 3 is sealed; run again after" in err
    assert responses_of(tmp_path / "evidence")[1]["stopped"] == "budget"
    assert code == 3  # unchecked references, parts never run among them
    assert document["summary"]["unchecked"] >= 150


def test_a_long_retry_after_stops_the_run_and_says_when_to_run_again(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(150)
    provider, _ = _limited(0, works, {"Retry-After": "120"}, b'{"error": "slow down"}')
    code, out, _ = run(capsys, tmp_path, text, "--json", provider=provider)
    document = json.loads(out)
    assert document["stopped"]["reason"] == "rate_limit"
    assert document["stopped"]["run_again_at"] is not None
    assert [part["part"] for part in document["parts"]] == [1]
    assert code == 3


def test_a_short_retry_after_is_waited_out_before_the_next_part(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(102)  # part 1: 1 batch + 50 titles; part 2: 1 batch + 1 title
    provider, seen = _limited(50, works, {"Retry-After": "1"}, b'{"error": "slow down"}')
    code, out, _ = run(capsys, tmp_path, text, "--json", provider=provider)
    document = json.loads(out)
    assert [part["part"] for part in document["parts"]] == [1, 2]
    assert document["stopped"] is None
    assert code == 3  # the throttled reference is unchecked: nothing is retried inside a part
    when = seen["when"]
    assert len(when) == 51 + 2
    assert min(when[51:]) - max(when[:51]) >= 0.95


def test_report_is_built_from_the_parts_just_sealed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text, works = corpus(150)
    target = tmp_path / "out" / "report.md"
    target.parent.mkdir()
    code, out, _ = run(
        capsys, tmp_path, text, "--report", str(target), provider=FakeOpenAlex(bibliography(works))
    )
    assert code == 0, out
    ids = [
        line.removeprefix("evidence ID: ")
        for line in out.splitlines()
        if line.startswith("evidence ID: ")
    ]
    assert len(ids) == 2
    report = target.read_text(encoding="utf-8")
    # The real report: both parts verified and shown in order, every reference a row.
    assert report.index(f"Part 1 of 2: evidence ID `{ids[0]}`") < report.index(
        f"Part 2 of 2: evidence ID `{ids[1]}`"
    )
    assert "Records left out" not in report
    rows = [line for line in report.splitlines() if re.match(r"\| #\d+ ", line)]
    assert len(rows) == 150
    assert not list(target.parent.glob("*.partial"))


def test_report_takes_only_html_or_md() -> None:
    with pytest.raises(SystemExit):
        _check_cli.parser().parse_args(["f", "--evidence-dir", "e", "--report", "r.pdf"])


def test_provider_limit_rules() -> None:
    from notanda_openalex import (
        CheckAttempt,
        ErrorCode,
        ProviderFailure,
        ProviderReason,
        ReferenceCheck,
    )
    from notanda_openalex._observation import Capture, ProviderObservation

    def check(*failures: ProviderFailure | None) -> ReferenceCheck:
        observation = ProviderObservation(capture=Capture.NOT_ATTEMPTED, attempt=None)
        return ReferenceCheck(
            references=(),
            attempts=tuple(CheckAttempt("title", observation, failure) for failure in failures),
            max_attempts=len(failures),
        )

    def limited(seconds: float | None, reason: ProviderReason = ProviderReason.RATE_LIMITED):
        return ProviderFailure(code=ErrorCode.PROVIDER_ERROR, reason=reason, retry_after_s=seconds)

    assert _check_run.provider_limit(None).stop is None
    assert _check_run.provider_limit(check(None)) == _check_run.Limit(None)
    assert _check_run.provider_limit(check(limited(5.0))).wait_s == 5.0
    assert _check_run.provider_limit(check(limited(None))).wait_s == 60.0
    assert _check_run.provider_limit(check(limited(61.0))).stop is _check_run.StopReason.RATE_LIMIT
    budget = limited(None, ProviderReason.BUDGET_EXHAUSTED)
    assert (
        _check_run.provider_limit(check(limited(5.0), budget)).stop is _check_run.StopReason.BUDGET
    )


def test_the_tool_keeps_its_limit_and_says_how_to_check_more() -> None:
    from notanda_mcp._schemas import CHECK_REFERENCES, TOOLS

    description = TOOLS[CHECK_REFERENCES]["description"]
    assert "(at most 100)" in description
    assert "call this tool several times, each with at most 100 of its entries" in description
    assert "notanda-mcp check-references FILE" in description


def test_ctrl_c_while_reading_exits_130_without_a_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import notanda_openalex

    def interrupted(text: str, format: str = "auto") -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(notanda_openalex, "read_references", interrupted)
    text, works = corpus(3)
    provider = FakeOpenAlex(bibliography(works))
    code, _, err = run(capsys, tmp_path, text, provider=provider)
    assert code == 130
    assert "no record made, nothing sent" in err
    assert record_ids(tmp_path / "evidence") == []
    assert provider.requests == []
