"""The README path, as a newcomer and an auditor meet it, against the installed wheels.

Search with ``notanda-mcp-client`` (the server started through
``--server-command``, a launcher using ``build_server``), keep the evidence ID
and receipt in a file outside the evidence directory, stop, start a new
server, retrieve with the receipt, then verify with ``notanda-evidence`` and
with the single-file verifier copied elsewhere and run under ``python -I -S``,
and audit the log. Also: the console scripts start, and every record names the
exact code it was made with.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import shutil
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest
from checkout import absent
from harness import (
    DIST_DIR,
    REPO_ROOT,
    SCRIPTS,
    RawSession,
    launcher_argv,
    record_ids,
    run,
    script,
    session,
    verdicts,
    verify_json,
    wheel_code_digest,
    wheel_file_names,
)
from notanda_mcp._schemas import REMEDIES

QUESTION = "Does X improve Y?"


def _client(root: Path, *args: str) -> tuple[int, dict[str, object], str]:
    done = run(
        [
            script("notanda-mcp-client"),
            "--evidence-dir",
            str(root),
            "--server-command",
            shlex.join(launcher_argv(root)),
            *args,
        ],
        timeout=120,
    )
    answer = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, answer, done.stderr


def _servers_on(root: Path) -> list[int]:
    """Live processes whose command line names *root* (the launcher serving it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(root).encode() in cmdline and b"launcher.py" in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def _copied_verifier(tmp_path: Path) -> Path:
    import notanda_evidence

    source = Path(notanda_evidence.__file__).with_name("verify_file.py")
    elsewhere = tmp_path / "auditor"
    elsewhere.mkdir()
    return Path(shutil.copy(source, elsewhere / "verify_file.py"))


def test_packages_are_the_installed_wheels() -> None:
    purelib = Path(sysconfig.get_paths()["purelib"]).resolve()
    for name in ("notanda_evidence", "notanda_openalex", "notanda_mcp"):
        module = importlib.import_module(name)
        assert purelib in Path(module.__file__ or "").resolve().parents
        assert module.__version__ == metadata.version(name.replace("_", "-"))


@pytest.mark.parametrize(
    ("protocol", "negotiated"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
)
def test_readme_search_restart_retrieve_verify_audit(
    root: Path, tmp_path: Path, protocol: str, negotiated: str
) -> None:
    receipts = tmp_path / "kept" / "receipts.txt"
    receipts.parent.mkdir()
    code, answer, stderr = _client(
        root,
        "--query",
        QUESTION,
        "--limit",
        "3",
        "--protocol",
        protocol,
        "--save-receipt",
        str(receipts),
    )
    assert code == 0, stderr
    assert answer["status"] == "ok"
    evidence_id, receipt = answer["evidence_id"], answer["receipt"]
    assert isinstance(evidence_id, str)
    assert isinstance(receipt, str)
    assert receipts.read_text() == f"{evidence_id} {receipt}\n"
    assert record_ids(root) == [evidence_id]
    assert not [p for p in root.rglob("*") if p.is_file() and receipt in p.name]
    # The client stopped its server: nothing is left serving this root.
    assert _servers_on(root) == []
    request = json.loads((root / evidence_id / "request.json").read_bytes())
    assert request["protocol_version"] == negotiated
    assert request["client"] == {
        "name": "notanda-mcp-client",
        "version": metadata.version("notanda-mcp"),
    }
    assert request["supplied"]["query"] == QUESTION
    assert request["provider_mode"] == "injected"

    # A new server process retrieves the first one's record, with the receipt.
    code, retrieved, stderr = _client(
        root, "--id", evidence_id, "--receipt", receipt, "--protocol", protocol
    )
    assert code == 0, stderr
    assert retrieved["status"] == "ok"
    assert retrieved["receipt"] == receipt
    assert retrieved["logged"] is True
    assert retrieved["results"] == answer["results"]
    assert len(answer["results"]) == 3  # type: ignore[arg-type]

    # notanda-evidence checks the receipts file against the root.
    code, report = verify_json(root, receipts=receipts, full=True)
    assert code == 0, report
    (record,) = report["records"]
    assert (record["evidence_id"], record["outcome"], record["receipt_checked"]) == (
        evidence_id,
        "ok",
        True,
    )

    # The single file, copied anywhere, with no site-packages and no environment.
    verifier = _copied_verifier(tmp_path)
    done = run([sys.executable, "-I", "-S", str(verifier), str(root), "--receipts", str(receipts)])
    assert done.returncode == 0, done.stderr
    assert f"{evidence_id}  ok (receipt checked)" in done.stdout

    done = run([script("notanda-evidence"), "audit", str(root)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{evidence_id}  ok  logged" in done.stdout
    assert "1 record(s), 1 log entries" in done.stdout

    if protocol == "auto":
        # The same checks fail for a receipt that is not the record's.
        wrong = receipt[::-1]
        code, refused, _ = _client(root, "--id", evidence_id, "--receipt", wrong)
        assert code == 1
        assert refused == {
            "error": "receipt_mismatch",
            "evidence_id": evidence_id,
            "remedy": REMEDIES["receipt_mismatch"],
            "status": "error",
        }
        receipts.write_text(f"{evidence_id} {wrong}\n")
        done = run(
            [sys.executable, "-I", "-S", str(verifier), str(root), "--receipts", str(receipts)]
        )
        assert done.returncode == 1
        assert f"{evidence_id}  receipt_mismatch" in done.stdout
        code, report = verify_json(root, receipts=receipts)
        assert code == 1
        assert report["records"][0]["outcome"] == "receipt_mismatch"


def test_console_scripts_start() -> None:
    version = metadata.version("notanda-mcp")
    done = run([script("notanda-mcp"), "--help"])
    assert done.returncode == 0, done.stderr
    assert "--evidence-dir" in done.stdout
    assert "HARVESTER_OPENALEX_API_KEY" in done.stdout
    for name, dist in (
        ("notanda-mcp", "notanda-mcp"),
        ("notanda-mcp-client", "notanda-mcp"),
        ("notanda-evidence", "notanda-evidence"),
    ):
        done = run([script(name), "--version"])
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"{name} {metadata.version(dist)}"
    assert version == metadata.version("notanda-evidence") == metadata.version("notanda-openalex")


@pytest.mark.parametrize("kind", ["relative", "file"])
def test_console_script_refuses_a_bad_evidence_dir(tmp_path: Path, kind: str) -> None:
    target = "relative/evidence"
    if kind == "file":
        path = tmp_path / "a-file"
        path.write_text("not a folder")
        target = str(path)
    done = run([script("notanda-mcp"), "--evidence-dir", target], cwd=tmp_path, input="")
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("notanda-mcp: ")
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "relative").exists()


def test_console_script_serves_without_a_key(tmp_path: Path) -> None:
    """The real entry point over stdio: two tools; a keyless search leaves a configuration_error."""

    evidence = tmp_path / "created-by-the-server"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARVESTER_")}
    with RawSession([script("notanda-mcp"), "--evidence-dir", str(evidence)], env=env) as raw:
        raw.start()
        listed = raw.request("tools/list")["result"]["tools"]
        assert sorted(tool["name"] for tool in listed) == ["get_evidence", "search_literature"]
        annotations = {tool["name"]: tool["annotations"] for tool in listed}
        assert annotations["search_literature"] == {
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": False,
            "openWorldHint": True,
        }
        assert annotations["get_evidence"]["readOnlyHint"] is True
        content, is_error = raw.search(QUESTION)
        assert is_error
        assert content["error"] == "configuration_error"
        assert content["detail"] == "missing_api_key"
        assert content["receipt"]
        assert raw.close() == 0
        assert raw.garbage == []
    assert evidence.stat().st_mode & 0o777 == 0o700
    assert verdicts(evidence) == {content["evidence_id"]: "ok"}
    provider = json.loads((evidence / content["evidence_id"] / "provider.json").read_bytes())
    assert provider["capture"] == "not_attempted"
    assert provider["attempts"] == []


@pytest.fixture(scope="module")
def recorded_software(
    tmp_path_factory: pytest.TempPathFactory, fixtures_dir: Path
) -> dict[str, str]:
    """The ``software`` block of a record made by the installed server."""
    root = tmp_path_factory.mktemp("digest") / "evidence"
    root.mkdir()
    with session(root) as raw:
        content, is_error = raw.search(QUESTION)
        assert not is_error, content
    request = json.loads((root / content["evidence_id"] / "request.json").read_bytes())
    software: dict[str, str] = request["software"]
    return software


def test_code_digest_names_the_built_wheels(recorded_software: dict[str, str]) -> None:
    recorded = recorded_software["code_digest"]
    assert re.fullmatch(r"[0-9a-f]{64}", recorded)
    shipped = wheel_file_names(DIST_DIR)
    installed = {
        str(path)
        for dist in ("notanda-evidence", "notanda-openalex", "notanda-mcp")
        for path in metadata.distribution(dist).files or ()
    }
    # Files an installer adds (uv's uv_cache.json, pip's INSTALLER...) are not the code.
    added = sorted(
        name
        for name in installed - shipped
        if not name.startswith("..") and "__pycache__" not in name
    )
    assert recorded == wheel_code_digest(DIST_DIR), (
        "request.json software.code_digest differs from the digest of the wheels in "
        f"{DIST_DIR}; installed files the wheels do not ship: {added}"
    )
    assert recorded_software["notanda_mcp"] == metadata.version("notanda-mcp")
    assert recorded_software["mcp"] == metadata.version("mcp")
    assert recorded_software["python"] == ".".join(map(str, sys.version_info[:3]))


def test_code_digest_equals_source_provenance(recorded_software: dict[str, str]) -> None:
    provenance = REPO_ROOT / "SOURCE_PROVENANCE.json"
    if not provenance.is_file():
        absent(f"{provenance} is absent: it is generated by nox -s provenance")
    expected = json.loads(provenance.read_text())["code_digest"]
    assert expected == wheel_code_digest(DIST_DIR), "SOURCE_PROVENANCE.json is stale"
    assert recorded_software["code_digest"] == expected


NEWCOMER_MARKER = "<!-- integration: newcomer -->"


def _newcomer_blocks() -> list[str]:
    """The README's ``newcomer`` blocks: the demo, the offline client, the copied verifier."""
    lines = (REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    blocks = []
    for number, line in enumerate(lines):
        if line.strip() == NEWCOMER_MARKER:
            assert lines[number + 1] == "```sh", f"README.md line {number + 2}: not a sh block"
            end = lines.index("```", number + 2)
            blocks.append("\n".join(lines[number + 2 : end]))
    return blocks


def test_readme_newcomer_path_runs_as_written(tmp_path: Path) -> None:
    """The README's newcomer path, pasted into a shell: demo, offline client, copied verifier.

    The install line before it is the README's ``ci: run`` block, which ``.ci/run``
    runs as written; here the wheels this suite tests stand in for its ``.venv``
    (a link named ``.venv`` in a checkout-shaped folder), ``~`` is a fresh home,
    and no OpenAlex key or configuration is set.
    """
    blocks = _newcomer_blocks()
    assert len(blocks) == 3
    assert "notanda-mcp demo" in blocks[0]
    assert "--offline" in blocks[1]
    assert "verify_file.py" in blocks[2]
    assert "-I -S" in blocks[2]
    home = tmp_path / "home"
    home.mkdir()
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".venv").symlink_to(SCRIPTS.parent, target_is_directory=True)
    (checkout / "packages").symlink_to(REPO_ROOT / "packages", target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARVESTER_", "NOTANDA_"))}
    env.pop("PYTHONSTARTUP", None)
    env["HOME"] = str(home)
    outputs = []
    for block in blocks:
        done = run(["bash", "-c", block], cwd=checkout, env=env, timeout=240)
        assert done.returncode == 0, (block, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        outputs.append(done)
    demo, client, verified = outputs
    assert "demo done." in demo.stdout
    answer = json.loads(client.stdout)
    assert answer["status"] == "ok"
    assert "the record says injected" in client.stderr
    folder = home / "notanda-demo"
    request = json.loads((folder / answer["evidence_id"] / "request.json").read_bytes())
    assert request["provider_mode"] == "injected"
    receipts = (home / "notanda-receipts.txt").read_text(encoding="utf-8")
    assert receipts == f"{answer['evidence_id']} {answer['receipt']}\n"
    # Four records (the demo's three and the client's), the client's against its receipt.
    assert f"{answer['evidence_id']}  ok (receipt checked)" in verified.stdout
    assert verified.stdout.rstrip().endswith("4 record(s), default pass: 4 ok")
    assert (home / "verify_file.py").read_bytes() == (
        REPO_ROOT / "packages/notanda-evidence/src/notanda_evidence/verify_file.py"
    ).read_bytes()
