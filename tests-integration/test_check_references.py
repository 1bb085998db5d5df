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
    assert [line.split()[0] for line in lines[:4]] == [v for _, v, _ in EXPECTED]
    assert "differs: title" in lines[1]
    assert "doi: 10.7551/mitpress/3206.001.0001" in lines[0]
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


def test_the_cli_json_is_the_tools_answer(root: Path, tmp_path: Path) -> None:
    refs = tmp_path / "refs.bib"
    refs.write_text(BIBTEX, encoding="utf-8")
    done = _cli(tmp_path, str(refs), "--evidence-dir", str(root), "--json")
    assert done.returncode == 1, done.stderr
    answer = json.loads(done.stdout)
    assert _verdicts(answer) == EXPECTED
    assert set(answer) >= {"status", "evidence_id", "receipt", "log_head", "log_index", "summary"}


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
