"""The server command line, ``notanda-mcp``: its options, usage errors and configuration."""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import Any

import pytest
from command_support import (
    SECRET_IN_FILE,
    UNUSABLE_CONFIGS,
    assert_usage_error_has_a_remedy,
    console_script,
    one_line,
    run_command,
    run_server,
)
from conftest import (
    KEY,
    clean_env,
)

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize("relative", ["evidence", "./evidence", "../evidence", "~evidence"])
def test_a_relative_evidence_dir_is_refused(tmp_path: Path, relative: str) -> None:
    done = run_server("--evidence-dir", relative, cwd=tmp_path)
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert line.startswith("notanda-mcp: ")
    assert "absolute" in line
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []  # nothing was created in the working directory


def test_a_file_as_evidence_dir_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("x")
    done = run_server("--evidence-dir", str(target))
    assert done.returncode == 2
    assert "names a file" in one_line(done.stderr)
    assert target.read_text() == "x"


def test_a_missing_folder_is_created_owner_only_with_tilde_expanded(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = run_command(
        [console_script("notanda-mcp"), "--evidence-dir", "~/research/evidence"],
        env=clean_env(HOME=str(home)),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr  # stdin was empty: served until EOF
    created = home / "research" / "evidence"
    assert created.is_dir()
    assert stat.S_IMODE(created.stat().st_mode) == 0o700
    assert not (tmp_path / "~").exists()
    assert done.stdout == ""


def test_search_slots_below_one_is_a_usage_error(tmp_path: Path) -> None:
    done = run_server("--evidence-dir", str(tmp_path), "--search-slots", "0")
    assert done.returncode == 2
    assert "search-slots" in one_line(done.stderr)


@pytest.mark.parametrize("toolsets", ["", "search,", "search,,references", "bogus", "Search"])
def test_an_empty_or_unknown_toolset_is_a_usage_error(tmp_path: Path, toolsets: str) -> None:
    done = run_server("--evidence-dir", str(tmp_path), "--toolsets", toolsets)
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert "--toolsets" in line
    assert "search,references" in line  # the remedy shows a valid value
    assert_usage_error_has_a_remedy("notanda-mcp", done.stderr)


@pytest.mark.parametrize("toolsets", ["references", " references , search ", "search,search"])
def test_valid_toolsets_start_the_server(tmp_path: Path, toolsets: str) -> None:
    env = {**clean_env(), "HARVESTER_OPENALEX_API_KEY": KEY}
    done = run_server("--evidence-dir", str(tmp_path), "--toolsets", toolsets, env=env)
    assert done.returncode == 0, done.stderr  # stdin was empty: served until EOF


@pytest.mark.parametrize(
    ("args", "prog"),
    [
        (["--evidence-dir", "relative"], "notanda-mcp"),
        (["--evidence-dir", "/tmp", "--search-slots", "0"], "notanda-mcp"),
        ([], "notanda-mcp"),
        (["--no-such-option"], "notanda-mcp"),
        (["doctor", "--no-such-option"], "notanda-mcp doctor"),
        (["demo"], "notanda-mcp demo"),
        (["demo", "a", "b"], "notanda-mcp demo"),
    ],
    ids=["relative", "slots", "no-dir", "bad-option", "doctor-option", "demo-no-dir", "demo-two"],
)
def test_server_usage_errors_exit_2_with_a_remedy(
    tmp_path: Path, args: list[str], prog: str
) -> None:
    done = run_server(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert_usage_error_has_a_remedy(
        prog if args[:1] != ["--evidence-dir"] else "notanda-mcp", done.stderr
    )


@pytest.mark.parametrize("make_config", UNUSABLE_CONFIGS.values(), ids=UNUSABLE_CONFIGS.keys())
def test_an_unusable_configuration_exits_with_one_line_naming_the_fix_and_no_value(
    tmp_path: Path, make_config: Any
) -> None:
    config = make_config(tmp_path)
    root = tmp_path / "evidence"
    done = run_server("--evidence-dir", str(root), env=clean_env(HARVESTER_CONFIG=str(config)))
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert line.startswith(
        f"notanda-mcp: unusable notanda configuration (HARVESTER_CONFIG={config}): "
    )
    # The remedy names the variable and the expected shape and mode.
    assert "HARVESTER_CONFIG name" in line
    assert '{"openalex": {"api_key": "..."}}, mode 600' in line or "HARVESTER_* variable" in line
    assert SECRET_IN_FILE not in done.stderr
    assert done.stdout == ""


def _options(help_text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--?[a-zA-Z][\w-]*", help_text))


@pytest.mark.parametrize(
    "command",
    [["notanda-mcp"], ["notanda-mcp", "doctor"], ["notanda-mcp-client"]],
    ids=["server", "doctor", "client"],
)
def test_no_argument_accepts_a_key(command: list[str]) -> None:
    done = run_command([console_script(command[0]), *command[1:], "--help"])
    assert done.returncode == 0
    options = _options(done.stdout)
    assert "--evidence-dir" in options
    assert not [o for o in options if re.search("key|token|secret|api", o, re.IGNORECASE)]
    # The provider's endpoint is never an argument; the one URL is the TSA's
    # (off by default, refused when it carries a user name or password).
    urls = [o for o in options if re.search("url|endpoint|base|host", o, re.IGNORECASE)]
    assert urls == (["--timestamp-url"] if command[0] == "notanda-mcp" else [])


def test_the_server_help_names_where_the_key_comes_from() -> None:
    done = run_command([console_script("notanda-mcp"), "--help"])
    text = " ".join(done.stdout.split())
    assert "HARVESTER_OPENALEX_API_KEY" in text
    assert "HARVESTER_CONFIG" in text
