"""MCP Inspector's CLI (``@modelcontextprotocol/inspector --cli``) lists and reads the resources.

The Inspector and the Node runtime it needs (22.19 or newer) are installed at
pinned versions by ``.ci/install-inspector`` into ``.ci/.tools/inspector/``;
``.ci/run`` runs it first. Without them this test fails with the command to
run: it never skips. The server is the installed ``notanda-mcp`` console
script, started by the Inspector as any client starts it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness import REPO_ROOT, run, script, seal_search_record

TOOLS = REPO_ROOT / ".ci" / ".tools" / "inspector" / "node_modules" / ".bin"
INSTALL = "run .ci/install-inspector (from the repository root) first"


def _inspector(root: Path, home: Path, *options: str) -> Any:
    node, inspector = TOOLS / "node", TOOLS / "mcp-inspector"
    assert node.exists(), f"the pinned Node runtime is missing at {node}: {INSTALL}"
    assert inspector.exists(), f"MCP Inspector is missing at {inspector}: {INSTALL}"
    env = {
        "PATH": f"{TOOLS}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),  # the Inspector's own catalog and settings stay in the test
    }
    argv = [str(node), str(inspector), "--cli", script("notanda-mcp"), "--evidence-dir", str(root)]
    done = run([*argv, *options], env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    return json.loads(done.stdout)


def test_the_inspector_lists_the_resources_and_reads_a_record(tmp_path: Path) -> None:
    root, home = tmp_path / "evidence", tmp_path / "home"
    root.mkdir(mode=0o700)
    home.mkdir()
    evidence_id = seal_search_record(root, "inspected")
    uri = f"notanda://evidence/{evidence_id}"

    listed = _inspector(root, home, "--method", "resources/list")
    templates = _inspector(root, home, "--method", "resources/templates/list")
    read = _inspector(root, home, "--method", "resources/read", "--uri", uri)

    assert [r["uri"] for r in listed["resources"]] == ["notanda://log/head", uri]
    assert listed["resources"][1]["name"] == "search: inspected (2026-12-01T10:00:00.000Z)"
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == [
        "notanda://evidence/{evidence_id}"
    ]
    (contents,) = read["contents"]
    assert contents["mimeType"] == "application/json"
    record = json.loads(contents["text"])
    assert record["evidence_id"] == evidence_id
    assert record["logged"] is True
