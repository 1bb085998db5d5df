"""``notanda-mcp demo DIR`` from the installed wheels, then the commands it printed, by hand.

The demo must leave evidence that the installed tools accept: the printed
retrieval (a new ``notanda-mcp`` process, through ``notanda-mcp-client``),
``notanda-evidence verify`` with the receipt and ``audit --head`` with the
last search's head each succeed when run again exactly as printed, through a
shell. A configured key never appears in what the demo prints or leaves.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from harness import SCRIPTS, record_ids, run, script

pytestmark = pytest.mark.timeout(180)

KEY = "oa-INTEGRATION-demo-key-Vb31"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARVESTER_")}
    env.pop("PYTHONSTARTUP", None)
    return {**env, "HOME": str(home), "HARVESTER_OPENALEX_API_KEY": KEY}


def test_the_demo_leaves_evidence_that_its_printed_commands_check(tmp_path: Path) -> None:
    env = _env(tmp_path)
    done = run([script("notanda-mcp"), "demo", "demo evidence"], cwd=tmp_path, env=env, timeout=150)
    assert done.returncode == 0, done.stdout + done.stderr
    root = tmp_path / "demo evidence"
    assert len(record_ids(root)) == 3
    lines = done.stdout.splitlines()
    start = lines.index("demo done. Run the same checks by hand:") + 1
    printed = [line.strip() for line in lines[start:] if line.startswith("  ")]
    assert len(printed) == 3
    names = ["notanda-mcp-client", "notanda-evidence", "notanda-evidence"]
    for line, name in zip(printed, names, strict=True):
        argv = shlex.split(line)
        assert argv[0] == str(SCRIPTS / name)  # the installed script, by absolute path
        # As a user pastes it: through a shell, from another folder.
        again = subprocess.run(
            ["/bin/sh", "-c", line],
            cwd="/",
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert again.returncode == 0, (line, again.stdout, again.stderr)
        assert KEY not in again.stdout + again.stderr
    head = shlex.split(printed[2])[-1]
    assert re.fullmatch(r"3:[0-9a-f]{64}", head)
    # The records say injected: cite refuses them unless told otherwise.
    [first, *_] = record_ids(root)
    cite = run([script("notanda-evidence"), "cite", first, "--root", str(root)], env=env)
    assert cite.returncode == 1
    allowed = [script("notanda-evidence"), "cite", first, "--root", str(root), "--allow-injected"]
    assert run(allowed, env=env).returncode == 0
    assert KEY not in done.stdout + done.stderr
    for path in root.rglob("*"):
        assert not path.is_file() or KEY.encode() not in path.read_bytes()


def test_the_demo_refuses_a_folder_that_holds_a_collection(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    (root / ".notanda").mkdir(parents=True)
    done = run([script("notanda-mcp"), "demo", str(root)], env=_env(tmp_path))
    assert done.returncode == 2
    assert done.stdout == ""
    assert "already holds files" in done.stderr
    assert [p.name for p in root.iterdir()] == [".notanda"]
