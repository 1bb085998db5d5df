"""A configured key (and contact e-mail) never reaches the evidence root, stdout or stderr.

The fake provider echoes the key it receives as a bearer token, and the other
configured secrets, in the body, the headers, a redirect ``Location``, error
text and an exception message, while the server logs at its most verbose
level. Each secret is built around a distinctive alphanumeric core, so any
encoding of it (raw, percent-encoded, JSON-escaped) or any fragment long
enough to matter still contains the core, and the search for the core is
case-insensitive.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import (
    MODERN,
    RawSession,
    launcher_argv,
    record_ids,
    run,
    script,
    verify_json,
)

KEY_CORE = "NOTANDAKEYCORE7f3a9c"
KEY = f"sk+Q/{KEY_CORE}=z~"
FILE_KEY_CORE = "FILEKEYCORE5e1d0b"
FILE_KEY = f"oa_{FILE_KEY_CORE}/+=="
EMAIL_CORE = "EMAILCORE4d2b"
EMAIL = f"owner.{EMAIL_CORE}+notanda@example.org"
#: Each query makes the echo provider leak the secrets a different way.
ECHO_QUERIES = (
    "echo-body",
    "echo-redirect",
    "echo-error-text",
    "echo-error-json",
    "echo-429",
    "echo-raise",
)


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARVESTER_")}
    env.update(extra)
    return env


def _owner_only_config(tmp_path: Path) -> Path:
    """A configuration file (mode 0600) with the file key and the contact e-mail."""
    config = tmp_path / "harvester.json"
    config.write_text(json.dumps({"contact_email": EMAIL, "openalex": {"api_key": FILE_KEY}}))
    config.chmod(0o600)
    return config


def _every_file(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            yield path


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _assert_nowhere(cores: tuple[str, ...], root: Path, raw: RawSession) -> None:
    lowered = [core.lower().encode() for core in cores]
    for path in _every_file(root):
        data = path.read_bytes().lower()
        for core in lowered:
            assert core not in data, f"a secret is in {path.relative_to(root)}"
    stdout = b"".join(raw.stdout_lines)
    stderr = raw.stderr
    for core in lowered:
        assert core not in stdout.lower(), "a secret is on stdout"
        assert core not in stderr.lower(), "a secret is on stderr"
    # The same on the decoded protocol messages (escapes cannot hide a secret).
    for line in raw.stdout_lines:
        for text in _strings(json.loads(line)):
            for secret in cores:
                assert secret.lower() not in text.lower(), "a secret is in a protocol message"


def _run_echo_searches(raw: RawSession) -> list[dict[str, Any]]:
    answers = []
    for query in ECHO_QUERIES:
        content, is_error = raw.search(f"{query} Does X improve Y?")
        answers.append(content)
        if query == "echo-body":
            assert not is_error, content
        else:
            assert is_error
            assert content["error"] == "provider_error"
        # Retrieval sends the stored answer back over stdout as well.
        stored, retrieval_failed = raw.get(content["evidence_id"], content["receipt"])
        assert not retrieval_failed, stored
    reasons = [a.get("reason") for a in answers]
    assert reasons == [
        None,
        "redirect",
        "http_error",
        "http_error",
        "rate_limited",
        "transport_error",
    ]
    return answers


def _assert_the_secret_was_in_play(provider_log: Path, key: str, root: Path) -> None:
    seen = {line.split()[2] for line in provider_log.read_text().splitlines()}
    assert seen == {hashlib.sha256(key.encode()).hexdigest()}, "the provider never got the key"
    redacted = [p for p in _every_file(root) if b"REDACTED" in p.read_bytes()]
    assert redacted, "nothing was redacted: the echo never reached the record"


def _echo_argv(root: Path, provider_log: Path) -> list[str]:
    """A verbose server whose provider echoes the configured secrets back."""
    return launcher_argv(
        root,
        "--provider",
        "echo",
        "--config",
        "env",
        "--log-level",
        "debug",
        "--provider-log",
        str(provider_log),
    )


@pytest.mark.parametrize("era", ["legacy", MODERN])
def test_key_from_the_environment_never_leaks(root: Path, tmp_path: Path, era: str) -> None:
    provider_log = tmp_path / "provider.log"
    env = _clean_env(HARVESTER_OPENALEX_API_KEY=KEY, NOTANDA_IT_ECHO=json.dumps([KEY]))
    argv = _echo_argv(root, provider_log)
    with RawSession(argv, era=era, env=env, stderr_path=tmp_path / "stderr.txt") as raw:
        raw.start()
        _run_echo_searches(raw)
        assert raw.close() == 0
        assert raw.garbage == []
        assert b"sealed" in raw.stderr, "the server did not log at its verbose level"
        _assert_nowhere((KEY_CORE,), root, raw)
    _assert_the_secret_was_in_play(provider_log, KEY, root)
    code, _ = verify_json(root, full=True)
    assert code == 0


def test_key_and_email_from_an_owner_only_config_file_never_leak(
    root: Path, tmp_path: Path
) -> None:
    config = _owner_only_config(tmp_path)
    provider_log = tmp_path / "provider.log"
    env = _clean_env(HARVESTER_CONFIG=str(config), NOTANDA_IT_ECHO=json.dumps([EMAIL, FILE_KEY]))
    argv = _echo_argv(root, provider_log)
    with RawSession(argv, env=env, stderr_path=tmp_path / "stderr.txt") as raw:
        raw.start()
        _run_echo_searches(raw)
        assert raw.close() == 0
        _assert_nowhere((FILE_KEY_CORE, EMAIL_CORE), root, raw)
    _assert_the_secret_was_in_play(provider_log, FILE_KEY, root)
    assert len(record_ids(root)) == len(ECHO_QUERIES)


def test_console_script_at_debug_level_never_leaks(tmp_path: Path) -> None:
    """The installed entry point, key in the environment and e-mail in the file, no network.

    The configured base URL is a loopback address the client refuses to use, so
    every search leaves a ``configuration_error`` record without any request.
    """
    config = tmp_path / "harvester.json"
    config.write_text(
        json.dumps(
            {
                "contact_email": EMAIL,
                "openalex": {"api_key": FILE_KEY, "base_url": "http://127.0.0.1:9"},
            }
        )
    )
    config.chmod(0o600)
    root = tmp_path / "evidence"
    env = _clean_env(HARVESTER_CONFIG=str(config), HARVESTER_OPENALEX_API_KEY=KEY)
    argv = [script("notanda-mcp"), "--evidence-dir", str(root), "--log-level", "debug"]
    with RawSession(argv, env=env, stderr_path=tmp_path / "stderr.txt") as raw:
        raw.start()
        content, is_error = raw.search(f"{KEY} {EMAIL} Does X improve Y?")
        assert is_error
        assert (content["error"], content["detail"]) == (
            "configuration_error",
            "endpoint_not_allowed",
        )
        stored, failed = raw.get(content["evidence_id"], content["receipt"])
        assert not failed
        assert stored["status"] == "error"
        assert raw.close() == 0
        assert b"sealed" in raw.stderr
        _assert_nowhere((KEY_CORE, FILE_KEY_CORE, EMAIL_CORE), root, raw)
    request = json.loads((root / content["evidence_id"] / "request.json").read_bytes())
    assert "REDACTED" in request["supplied"]["query"]


def test_a_query_holding_the_key_and_the_e_mail_is_scrubbed_everywhere(
    root: Path, tmp_path: Path
) -> None:
    """The query is stored in request.json and response.json and answered: one rule for all."""
    env = _clean_env(HARVESTER_CONFIG=str(_owner_only_config(tmp_path)))
    argv = launcher_argv(root, "--config", "env", "--log-level", "debug")
    with RawSession(argv, env=env, stderr_path=tmp_path / "stderr.txt") as raw:
        raw.start()
        content, is_error = raw.search(f"{FILE_KEY} {EMAIL} Does X improve Y?")
        assert not is_error, content
        stored, failed = raw.get(content["evidence_id"], content["receipt"])
        assert not failed, stored
        assert raw.close() == 0
        assert b"sealed" in raw.stderr
        _assert_nowhere((FILE_KEY_CORE, EMAIL_CORE), root, raw)
    assert content["query"].startswith("REDACTED REDACTED")
    code, _ = verify_json(root, full=True)
    assert code == 0


@pytest.mark.parametrize(
    "text",
    [
        '{"openalex": {"api_key": "' + KEY + '"',
        '{"' + KEY + '": 1}',
        '{"openalex": {"api_key": "' + KEY + '", "allow_keyless": "' + KEY + '"}}',
    ],
    ids=["truncated-json", "unknown-key", "invalid-value"],
)
def test_unusable_config_file_exits_with_one_line_and_no_value(tmp_path: Path, text: str) -> None:
    config = tmp_path / "harvester.json"
    config.write_text(text)
    config.chmod(0o600)
    env = _clean_env(HARVESTER_CONFIG=str(config))
    done = run([script("notanda-mcp"), "--evidence-dir", str(tmp_path / "e")], env=env, input="")
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    # The line names the variable, its path and the expected shape; never a value.
    assert lines[0].startswith(
        f"notanda-mcp: unusable notanda configuration (HARVESTER_CONFIG={config})"
    )
    assert "HARVESTER_CONFIG name" in lines[0]
    assert KEY_CORE.lower() not in done.stderr.lower()
