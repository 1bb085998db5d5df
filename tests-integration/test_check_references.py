"""A reference check through the installed wheels: over stdio with the SDK client, and the CLI.

The provider answers DOI batches and title lookups from the works of a real
OpenAlex page (``works_list_2025-10_search-machine-learning_per-page-20.json``);
every record is then judged by ``notanda-evidence verify --full`` and by the
copied single-file verifier alone.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness import LAUNCHER, REPO_ROOT, record_ids, run, sdk_client, verify_json

FIXTURE = "works_list_2025-10_search-machine-learning_per-page-20.json"
OPTIONS = ("--provider", "bibliography", "--fixture", FIXTURE)
#: A correct reference by DOI, a real DOI with another title, a correct one by
#: title alone, and a work OpenAlex does not hold.
BIBTEX = r"""
@book{rasmussen, title={Gaussian Processes for Machine Learning}, year={2005},
  author={Rasmussen, Carl Edward and Williams, Christopher K. I.},
  doi={10.7551/mitpress/3206.001.0001}}
@article{bishop, title={Pattern Recognition and Deep Learning}, author={Bishop, Christopher},
  year={2007}, doi={10.1117/1.2819119}}
@book{quinlan, title={{C4.5}: Programs for Machine Learning}, author={Quinlan, J. R.},
  year={1992}}
@article{ghost, title={A general theory of imaginary difference engines},
  author={Nobody, Ann}, year={2019}}
"""
EXPECTED = [
    ("rasmussen", "verified", []),
    ("bishop", "metadata_mismatch", ["title"]),
    ("quinlan", "verified", []),
    ("ghost", "not_found", []),
]


def _verdicts(content: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    return [(e["key"], e["verdict"], e["differs"]) for e in content["references"]]


async def _check_over_stdio(root: Path, era: str, errlog: Any) -> tuple[list[str], Any, Any]:
    import jsonschema

    async with sdk_client(root, era, errlog, *OPTIONS, "--toolsets", "references") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("check_references", {"references": BIBTEX})
        jsonschema.validate(result.structured_content, tools["check_references"].output_schema)
        retrieved = await client.call_tool(
            "get_evidence",
            {
                "evidence_id": result.structured_content["evidence_id"],
                "receipt": result.structured_content["receipt"],
            },
        )
    return sorted(tools), result, retrieved


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_a_check_over_stdio_leaves_a_record_the_verifier_accepts(
    root: Path, tmp_path: Path, era: str
) -> None:
    with open(tmp_path / "stderr.txt", "w") as errlog:
        tools, result, retrieved = anyio.run(_check_over_stdio, root, era, errlog)
    assert tools == ["check_references", "get_evidence", "search_literature"]
    content = result.structured_content
    assert result.is_error is False
    assert _verdicts(content) == EXPECTED
    assert content["summary"]["verified"] == 2
    assert retrieved.structured_content["references"] == content["references"]
    assert record_ids(root) == [content["evidence_id"]]
    code, report = verify_json(root, full=True)
    assert code == 0, report
    # The copied single-file verifier, with the standard library alone, agrees.
    copied = tmp_path / "verify_file.py"
    from notanda_evidence import verify_file

    shutil.copy(verify_file.__file__, copied)
    done = run([sys.executable, "-I", "-S", str(copied), "--full", str(root)])
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_default_server_offers_only_the_search_tools(root: Path, tmp_path: Path) -> None:
    async def names() -> list[str]:
        with open(tmp_path / "stderr.txt", "w") as errlog:
            async with sdk_client(root, "legacy", errlog, *OPTIONS) as client:
                return sorted(tool.name for tool in (await client.list_tools()).tools)

    assert anyio.run(names) == ["get_evidence", "search_literature"]


def _cli(tmp_path: Path, *args: str) -> Any:
    env = {**os.environ, "NOTANDA_REPO_ROOT": str(REPO_ROOT), "NOTANDA_IT_FIXTURE": FIXTURE}
    return run([sys.executable, str(LAUNCHER), "check-references", *args], env=env, cwd=tmp_path)


def test_the_cli_checks_a_file_and_an_edited_verdict_is_detected(
    root: Path, tmp_path: Path
) -> None:
    refs = tmp_path / "refs.bib"
    refs.write_text(BIBTEX, encoding="utf-8")
    done = _cli(tmp_path, str(refs), "--evidence-dir", "evidence")  # relative is fine
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("plan: 4 reference(s), 1 part(s)")
    assert lines[1] == "4 reference(s) in 1 part(s): 2 verified, 1 metadata_mismatch, 1 not_found"
    # Only the references that are not verified get a line.
    assert [line.split()[0] for line in lines[2:4]] == ["metadata_mismatch", "not_found"]
    assert "#1  [bishop]  differs: title" in lines[2]
    assert "#3  [ghost]" in lines[3]
    evidence_id = next(line.split(": ")[1] for line in lines if line.startswith("evidence ID: "))
    code, report = verify_json(root, full=True)
    assert code == 0, report
    # A verdict edited after sealing is caught like any other change.
    response = root / evidence_id / "response.json"
    response.write_bytes(response.read_bytes().replace(b'"not_found"', b'"verified"', 1))
    code, report = verify_json(root, full=True)
    assert code == 1
    [record] = report["records"]
    assert record["outcome"] == "integrity_failure"


def test_the_cli_json_is_one_document_of_the_run(root: Path, tmp_path: Path) -> None:
    refs = tmp_path / "refs.bib"
    refs.write_text(BIBTEX, encoding="utf-8")
    done = _cli(tmp_path, str(refs), "--evidence-dir", str(root), "--json")
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert _verdicts(document) == EXPECTED
    [part] = document["parts"]
    assert set(part) >= {"status", "evidence_id", "receipt", "log_head", "log_index", "summary"}
    assert record_ids(root) == [part["evidence_id"]]


def test_the_console_script_refuses_empty_input_with_exit_2(tmp_path: Path) -> None:
    from harness import script

    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARVESTER_")}
    done = run(
        [script("notanda-mcp"), "check-references", str(empty), "--evidence-dir", "ev"],
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "invalid_arguments (empty)" in done.stdout
    code, report = verify_json(tmp_path / "ev", full=True)
    assert code == 0, report


# ------------------------------------------------------------- a file of any size


def synthetic_bibliography(count: int) -> str:
    """*count* BibTeX entries matching the launcher's synthetic works, half with DOIs."""
    entries = []
    for number in range(1, count + 1):
        fields = [
            f"title={{Synthetic work number {number}}}",
            f"author={{Author {number}}}",
            f"year={{{2020 + number % 5}}}",
            "journal={Journal of Tests}",
        ]
        if number % 2 == 0:
            fields.append(f"doi={{10.5555/notanda.test.{number}}}")
        entries.append(f"@article{{ref{number},\n  " + ",\n  ".join(fields) + "\n}\n")
    return "\n".join(entries)


def _synthetic_env(count: int, delay_s: float = 0.0) -> dict[str, str]:
    return {
        **os.environ,
        "NOTANDA_REPO_ROOT": str(REPO_ROOT),
        "NOTANDA_IT_SYNTHETIC": str(count),
        "NOTANDA_IT_DELAY_S": str(delay_s),
    }


def _run_findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["log"] if f["code"].startswith("run.")]


def test_a_1000_entry_file_is_checked_in_parts_that_verify_and_audit_complete(
    root: Path, tmp_path: Path
) -> None:
    from harness import audit_json

    refs = tmp_path / "refs.bib"
    refs.write_text(synthetic_bibliography(1000), encoding="utf-8")
    done = run(
        [
            sys.executable,
            str(LAUNCHER),
            "check-references",
            str(refs),
            "--evidence-dir",
            str(root),
            "--json",
        ],
        env=_synthetic_env(1000),
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads(done.stdout)
    assert document["summary"]["verified"] == 1000
    assert len(document["parts"]) == 10
    assert "plan: 1000 reference(s), 10 part(s), at most 1010 request(s), 5010 credit(s)" in (
        done.stderr
    )
    ids = [part["evidence_id"] for part in document["parts"]]
    assert sorted(ids) == record_ids(root)
    code, report = verify_json(root, full=True)
    assert code == 0, report
    assert [r["outcome"] for r in report["records"]] == ["ok"] * 10
    code, audited = audit_json(root)
    assert code == 0, audited
    [complete] = _run_findings(audited)
    assert complete["code"] == "run.complete"
    assert complete["detail"] == f"run {document['run_id']}: all 10 parts present"
    # One part gone: audit names it.
    shutil.rmtree(root / ids[6])
    code, audited = audit_json(root)
    assert code == 1  # the log names the vanished record too
    [missing] = _run_findings(audited)
    assert missing["code"] == "run.part_missing"
    assert missing["severity"] == "warning"
    assert missing["detail"] == f"run {document['run_id']}: part 7 of 10 is missing"


def test_ctrl_c_seals_the_running_part_as_cancelled_and_exits_130(
    root: Path, tmp_path: Path
) -> None:
    import signal
    import subprocess
    import time

    from harness import audit_json

    refs = tmp_path / "refs.bib"
    refs.write_text(synthetic_bibliography(1000), encoding="utf-8")
    process = subprocess.Popen(
        [
            sys.executable,
            str(LAUNCHER),
            "check-references",
            str(refs),
            "--evidence-dir",
            str(root),
            "--json",
        ],
        env=_synthetic_env(1000, delay_s=0.05),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Once the first part is sealed, the second is running.
        deadline = time.monotonic() + 120
        while not any((root / name / "manifest.json").exists() for name in record_ids(root)):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "no part was sealed in 120 s"
            time.sleep(0.05)
        time.sleep(0.3)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err[-2000:]
    assert "interrupted: sealing the running part as cancelled" in err
    document = json.loads(out)
    assert document["stopped"]["reason"] == "interrupted"
    last = document["parts"][-1]
    assert last["cancelled"] is True
    assert last["stopped"] == "interrupted"
    assert len(document["parts"]) < 10
    assert document["summary"]["unchecked"] > 0
    code, report = verify_json(root, full=True)
    assert code == 0, report  # every part, the cancelled one too, is complete and intact
    code, audited = audit_json(root)
    assert code == 0, audited
    [stopped] = _run_findings(audited)
    assert stopped["code"] == "run.stopped"
    assert f"stopped after part {last['part']} of 10 (interrupted)" in stopped["detail"]
