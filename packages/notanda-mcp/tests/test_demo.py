"""``notanda-mcp demo`` (``_demo.py``): offline demo evidence, verified and audited."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from command_support import (
    console_script,
    one_line,
    run_command,
)
from conftest import (
    KEY,
    assert_sealed,
    clean_env,
    record_ids,
)

pytestmark = pytest.mark.timeout(90)


CONTACT = "contact-SECRET-8Jq2@example.org"


def _demo(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Any:
    return run_command(
        [console_script("notanda-mcp"), "demo", *args],
        cwd=cwd,
        env=env if env is not None else clean_env(HOME=str(cwd)),
    )


def _printed_commands(stdout: str) -> list[list[str]]:
    lines = stdout.splitlines()
    start = lines.index("demo done. Run the same checks by hand:") + 1
    return [shlex.split(line) for line in lines[start:] if line.startswith("  ")]


def test_demo_into_a_relative_new_folder_leaves_verified_injected_evidence(tmp_path: Path) -> None:
    env = clean_env(
        HOME=str(tmp_path), HARVESTER_OPENALEX_API_KEY=KEY, HARVESTER_CONTACT_EMAIL=CONTACT
    )
    done = _demo("kept/demo", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    root = tmp_path / "kept" / "demo"
    ids = record_ids(root)
    assert len(ids) == 3
    for evidence_id in ids:
        assert_sealed(root, evidence_id)
        request = json.loads((root / evidence_id / "request.json").read_bytes())
        assert request["provider_mode"] == "injected"
    client, verify, audit = _printed_commands(done.stdout)
    # The installed scripts by absolute path; the last search's record, receipt and head.
    assert client[0] == console_script("notanda-mcp-client")
    assert verify[:2] == [console_script("notanda-evidence"), "verify"]
    assert audit[:3] == [console_script("notanda-evidence"), "audit", str(root)]
    assert client[client.index("--id") + 1] in ids
    assert re.fullmatch(r"3:[0-9a-f]{64}", audit[audit.index("--head") + 1])
    for argv in (client, verify, audit):
        again = run_command(argv, env=env)
        assert again.returncode == 0, (argv, again.stderr)
        assert KEY not in again.stdout + again.stderr
        assert CONTACT not in again.stdout + again.stderr
    # cite refuses the demo's records unless told otherwise.
    cite = run_command(
        [console_script("notanda-evidence"), "cite", ids[0], "--root", str(root)], env=env
    )
    assert cite.returncode == 1
    # Neither the key nor the contact e-mail reaches the output or the disk.
    assert KEY not in done.stdout + done.stderr
    assert CONTACT not in done.stdout + done.stderr
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert KEY.encode() not in data
            assert CONTACT.encode() not in data


def test_demo_quotes_an_absolute_folder_with_spaces(tmp_path: Path) -> None:
    root = tmp_path / "my demo's folder"
    done = _demo(str(root), cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert shlex.quote(str(root)) in done.stdout
    assert str(root) in _printed_commands(done.stdout)[2]


@pytest.mark.parametrize("occupant", ["file", "folder", "hidden"])
def test_demo_refuses_a_folder_that_holds_anything(tmp_path: Path, occupant: str) -> None:
    root = tmp_path / "collection"
    root.mkdir()
    inside = {"file": "notes.txt", "folder": "0" * 32, "hidden": ".notanda"}[occupant]
    (root / inside).mkdir() if occupant != "file" else (root / inside).write_text("x")
    before = sorted(p.name for p in root.iterdir())
    done = _demo(str(root), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "already holds files" in one_line(done.stderr)
    assert sorted(p.name for p in root.iterdir()) == before


def test_demo_refuses_a_file_as_its_folder(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    done = _demo("f", cwd=tmp_path)
    assert done.returncode == 2
    assert "is a file, not a folder" in one_line(done.stderr)


def test_demo_exits_1_naming_the_step_that_failed(tmp_path: Path) -> None:
    # The restarted notanda-mcp reads the user's configuration and refuses to start.
    env = clean_env(HOME=str(tmp_path), HARVESTER_CONFIG=str(tmp_path / "missing.json"))
    done = _demo("demo", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout
    lines = done.stdout.splitlines()
    assert lines[-1] == "demo failed: see FAIL above"
    assert lines[-2].startswith("FAIL  a restarted server (notanda-mcp) returned the same record")
    assert "exited 3" in lines[-2]
    assert "demo done" not in done.stdout
