"""``notanda-mcp doctor`` (``_doctor.py``): the set-up checks and the offline self-test."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from command_support import (
    SECRET_IN_FILE,
    UNUSABLE_CONFIGS,
    assert_no_raw_unsafe,
    one_line,
    run_server,
)
from conftest import (
    KEY,
    assert_sealed,
    clean_env,
    record_ids,
)

pytestmark = pytest.mark.timeout(90)


def _doctor(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_server("doctor", *args, env=env)


def test_doctor_is_ready_offline_and_warns_without_a_key(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    root.mkdir()
    root.chmod(0o755)
    # --live without a key is refused before any request: offline, and only a warning.
    done = _doctor("--evidence-dir", str(root), "--live", env=clean_env(HOME=str(tmp_path)))
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert lines[-1] == "ready"
    assert not [line for line in lines if line.startswith("FAIL")]
    assert any(line.startswith("warn  no OpenAlex key") for line in lines)
    assert sum(line.startswith("ok    self-test:") for line in lines) == 3
    assert "warn  the evidence folder is readable by others (mode 755); queries can be " in (
        done.stdout.replace("\n", " ")
    )
    # The self-test never writes into DIR; the live search leaves its one record there.
    [live] = record_ids(root)
    assert any(
        line.startswith("warn  live search failed: configuration_error (missing_api_key)")
        and live in line
        for line in lines
    )
    response = assert_sealed(root, live)
    assert response["error"] == "configuration_error"
    request = json.loads((root / live / "request.json").read_bytes())
    assert request["provider_mode"] == "network"
    assert [p.name for p in (root / ".notanda").iterdir() if "probe" in p.name] == []


def test_doctor_fails_when_the_folder_probe_fails_and_never_prints_the_key(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    config = tmp_path / "notanda.json"
    config.write_text(json.dumps({"openalex": {"api_key": KEY}}))
    config.chmod(0o644)
    env = clean_env(HOME=str(tmp_path), HARVESTER_CONFIG=str(config))
    done = _doctor("--evidence-dir", str(blocker / "evidence"), env=env)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("not ready")
    [fail] = [line for line in lines if line.startswith("FAIL")]
    assert fail.startswith("FAIL  cannot create the evidence folder (NotADirectoryError): ")
    assert "ok    an OpenAlex API key is configured (not shown)" in lines
    assert "warn  the configuration file is readable by others: chmod 600 it" in lines
    assert KEY not in done.stdout + done.stderr


def _configuration_verdict(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **env: str
) -> tuple[bool, str]:
    """The doctor's configuration check alone, in this process: (failed, printed lines)."""
    from notanda_mcp._doctor import _check_configuration, _Report

    for name in [k for k in os.environ if k.startswith("HARVESTER_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    report = _Report()
    _check_configuration(report)
    return report.failed, capsys.readouterr().out


@pytest.mark.parametrize("make_config", UNUSABLE_CONFIGS.values(), ids=UNUSABLE_CONFIGS.keys())
def test_doctor_fails_for_every_configuration_the_server_refuses(
    tmp_path: Path,
    make_config: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = make_config(tmp_path)
    failed, out = _configuration_verdict(monkeypatch, capsys, HARVESTER_CONFIG=str(config))
    refused = run_server(
        "--evidence-dir", str(tmp_path / "e"), env=clean_env(HARVESTER_CONFIG=str(config))
    )
    assert refused.returncode == 2
    assert failed
    # The same line the server prints, after the doctor's own words.
    assert out == f"FAIL  the server would refuse to start: {one_line(refused.stderr)[13:]}\n"
    assert SECRET_IN_FILE not in out


@pytest.mark.parametrize(
    ("env", "config"),
    [
        ({}, {"openalex": {"api_key": ""}}),
        ({}, {"openalex": {"api_key": "   "}}),
        ({"HARVESTER_OPENALEX_API_KEY": "  "}, None),
        ({}, {"openalex": {"api_key": KEY + " with space"}}),
        ({"HARVESTER_OPENALEX_BASE_URL": "https://oa.example"}, {"openalex": {"api_key": KEY}}),
    ],
    ids=["empty-in-file", "blank-in-file", "blank-variable", "invalid-key", "foreign-endpoint"],
)  # fmt: skip
def test_doctor_fails_when_every_search_would_fail_for_a_fixable_reason(
    tmp_path: Path,
    env: dict[str, str],
    config: dict[str, Any] | None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if config is not None:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config))
        path.chmod(0o600)
        env = {**env, "HARVESTER_CONFIG": str(path)}
    failed, out = _configuration_verdict(monkeypatch, capsys, **env)
    assert failed, out
    [line] = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert line.startswith("FAIL  every search would answer configuration_error (")
    assert "restart the server" in line
    assert KEY not in out


def test_doctor_only_warns_about_an_absent_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An empty variable is no key at all to the loader: a CI job with an unset secret.
    failed, out = _configuration_verdict(monkeypatch, capsys, HARVESTER_OPENALEX_API_KEY="")
    assert not failed
    assert out.startswith("warn  no OpenAlex key: searches will answer configuration_error")
    assert "HARVESTER_OPENALEX_API_KEY" in out


def test_doctor_is_not_ready_with_a_configuration_the_server_refuses(tmp_path: Path) -> None:
    config = UNUSABLE_CONFIGS["invalid-json"](tmp_path)
    done = _doctor(env=clean_env(HOME=str(tmp_path), HARVESTER_CONFIG=str(config)))
    assert done.returncode == 1, done.stdout
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("not ready")
    assert "ready" not in lines
    assert SECRET_IN_FILE not in done.stdout + done.stderr


#: A name that would clear the screen, ring, reverse and hide text if printed raw.
HOSTILE_NAME = "e\x1b[2J\x07\u202eevil\u200b"
ESCAPED_NAME = "e\\x1b[2J\\x07\\u202eevil\\u200b"


def test_doctor_prints_hostile_paths_as_visible_escapes(tmp_path: Path) -> None:
    root = tmp_path / HOSTILE_NAME
    config = UNUSABLE_CONFIGS["invalid-json"](tmp_path).rename(tmp_path / f"{HOSTILE_NAME}.json")
    env = clean_env(HOME=str(tmp_path), HARVESTER_CONFIG=str(config))
    done = _doctor("--evidence-dir", str(root), env=env)
    assert done.returncode == 1, done.stdout
    assert_no_raw_unsafe(done.stdout + done.stderr)
    lines = done.stdout.splitlines()
    assert f"ok    evidence folder {tmp_path}/{ESCAPED_NAME} is writable and fsync works" in lines
    [fail] = [line for line in lines if line.startswith("FAIL")]
    assert f"(HARVESTER_CONFIG={tmp_path}/{ESCAPED_NAME}.json)" in fail
    assert lines[-1].startswith("not ready")
    # The server refuses the same configuration on stderr, escaped the same way.
    served = run_server("--evidence-dir", str(root), env=env)
    assert served.returncode == 2
    assert_no_raw_unsafe(served.stderr)
    assert f"(HARVESTER_CONFIG={tmp_path}/{ESCAPED_NAME}.json)" in one_line(served.stderr)


def test_doctor_usage_error_exits_2() -> None:
    done = _doctor("--no-such-option", env=clean_env())
    assert done.returncode == 2
    assert done.stdout == ""
