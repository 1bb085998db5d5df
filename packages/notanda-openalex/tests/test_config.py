"""OpenAlexClient.from_core_config: the notanda core configuration, read safely."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import (
    SECRET_ADVISOR,
    SECRET_EMAIL,
    SECRET_KEY,
    FakeClock,
    Recorder,
    assert_no_secret,
    json_response,
    stored_body,
)
from harvester.config import env_variable_names
from notanda_openalex import (
    ConfigProblem,
    ConfigurationDetail,
    ConfigurationError,
    ErrorCode,
    OpenAlexClient,
    prepare_search,
)

PAGE = {"meta": {"count": 0}, "results": []}


def client_for(
    env: dict[str, str], clock: FakeClock, handler: Any = None
) -> tuple[OpenAlexClient, Recorder]:
    recorder = Recorder(handler or (lambda request: json_response(PAGE)))
    client = OpenAlexClient.from_core_config(
        env=env, transport=httpx.MockTransport(recorder), clock=clock
    )
    return client, recorder


def write_config(tmp_path: Path, payload: Any) -> Path:
    path = tmp_path / "harvester.json"
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    return path


def test_key_from_environment(clock: FakeClock) -> None:
    client, recorder = client_for({"HARVESTER_OPENALEX_API_KEY": SECRET_KEY}, clock)
    assert client.configuration_problem is None
    assert client.search(prepare_search("q")).ok
    assert recorder.requests[0].headers["authorization"] == f"Bearer {SECRET_KEY}"
    assert SECRET_KEY not in str(recorder.requests[0].url)


def test_missing_key_does_not_raise(clock: FakeClock) -> None:
    client, recorder = client_for({}, clock)
    assert client.configuration_problem is ConfigurationDetail.MISSING_API_KEY
    result = client.search(prepare_search("q"))
    assert result.error is not None
    assert (result.error.code, result.error.detail) == (
        ErrorCode.CONFIGURATION_ERROR,
        ConfigurationDetail.MISSING_API_KEY,
    )
    assert recorder.requests == []


@pytest.mark.parametrize("value", ["true", "1", "yes", "on"])
def test_keyless_opt_in(value: str, clock: FakeClock) -> None:
    client, recorder = client_for({"HARVESTER_OPENALEX_ALLOW_KEYLESS": value}, clock)
    assert client.search(prepare_search("q")).ok
    assert "authorization" not in recorder.requests[0].headers


@pytest.mark.parametrize("value", ["false", "0", "no"])
def test_keyless_opt_out(value: str, clock: FakeClock) -> None:
    client, _ = client_for({"HARVESTER_OPENALEX_ALLOW_KEYLESS": value}, clock)
    assert client.configuration_problem is ConfigurationDetail.MISSING_API_KEY


@pytest.mark.parametrize("base_url", ["https://api.openalex.org", "https://api.openalex.org/"])
def test_the_real_endpoint_is_accepted(base_url: str, clock: FakeClock) -> None:
    env = {"HARVESTER_OPENALEX_API_KEY": "k", "HARVESTER_OPENALEX_BASE_URL": base_url}
    client, recorder = client_for(env, clock)
    assert client.search(prepare_search("q")).ok
    assert recorder.requests[0].url.host == "api.openalex.org"


@pytest.mark.parametrize(
    "base_url",
    [
        "https://evil.example",
        "http://api.openalex.org",
        "https://api.openalex.org:8443",
        "https://API.openalex.org",
        "https://api.openalex.org/v2",
        "https://api.openalex.org.evil.example",
        "https://user@api.openalex.org",
    ],
)
def test_configuration_pointing_elsewhere_is_refused(base_url: str, clock: FakeClock) -> None:
    env = {"HARVESTER_OPENALEX_API_KEY": SECRET_KEY, "HARVESTER_OPENALEX_BASE_URL": base_url}
    client, recorder = client_for(env, clock)
    assert client.configuration_problem is ConfigurationDetail.ENDPOINT_NOT_ALLOWED
    result = client.search(prepare_search("q"))
    assert recorder.requests == []
    assert result.error is not None
    assert result.error.detail is ConfigurationDetail.ENDPOINT_NOT_ALLOWED
    assert result.observation.attempt is None


def test_config_file_secrets_are_all_scrubbed(tmp_path: Path, clock: FakeClock) -> None:
    path = write_config(
        tmp_path,
        {"contact_email": SECRET_EMAIL, "openalex": {"api_key": SECRET_KEY}},
    )
    echo = {
        "results": [
            {
                "id": "https://openalex.org/W1",
                "title": f"{SECRET_KEY} {SECRET_EMAIL} {SECRET_ADVISOR}",
            }
        ]
    }
    client, recorder = client_for(
        {"HARVESTER_CONFIG": str(path), "ANTHROPIC_API_KEY": SECRET_ADVISOR},
        clock,
        lambda request: json_response(echo),
    )
    result = client.search(prepare_search("q"))
    assert recorder.requests[0].headers["authorization"] == f"Bearer {SECRET_KEY}"
    assert result.works[0].title == "REDACTED REDACTED REDACTED"
    assert_no_secret(
        stored_body(result.observation),
        json.dumps(result.observation.record_fields(), default=str),
        json.dumps(result.to_record()),
    )
    # The contact address never becomes part of the User-Agent (the core's would).
    assert SECRET_EMAIL not in recorder.requests[0].headers["user-agent"]


def test_environment_is_the_default(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    for name in env_variable_names():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HARVESTER_OPENALEX_API_KEY", "from-os-environ")
    client = OpenAlexClient.from_core_config(
        transport=httpx.MockTransport(lambda request: json_response(PAGE)), clock=clock
    )
    assert client.configuration_problem is None
    assert os.environ["HARVESTER_OPENALEX_API_KEY"] == "from-os-environ"


@pytest.mark.parametrize(
    ("setup", "problem", "message"),
    [
        (
            lambda tmp: {"HARVESTER_CONFIG": str(tmp / "absent.json")},
            ConfigProblem.FILE_NOT_FOUND,
            "configuration file not found",
        ),
        (
            lambda tmp: {"HARVESTER_CONFIG": str(tmp)},
            ConfigProblem.FILE_NOT_READABLE,
            "configuration file not readable",
        ),
        (
            lambda tmp: {"HARVESTER_CONFIG": str(write_config(tmp, "{oops"))},
            ConfigProblem.INVALID_JSON,
            "invalid JSON in configuration file",
        ),
        (
            lambda tmp: {"HARVESTER_CONFIG": str(write_config(tmp, "[1]"))},
            ConfigProblem.NOT_AN_OBJECT,
            "configuration file is not a JSON object",
        ),
        (
            lambda tmp: {"HARVESTER_CONFIG": str(write_config(tmp, {"openalex": {"apikey": "x"}}))},
            ConfigProblem.UNKNOWN_KEY,
            "unknown configuration key",
        ),
        (
            lambda tmp: {"HARVESTER_CONFIG": str(write_config(tmp, {"nope": 1}))},
            ConfigProblem.UNKNOWN_KEY,
            "unknown configuration key",
        ),
        (
            lambda tmp: {"HARVESTER_CONFIG": str(write_config(tmp, {"openalex": "x"}))},
            ConfigProblem.SECTION_NOT_AN_OBJECT,
            "configuration section is not an object",
        ),
        (
            lambda tmp: {"HARVESTER_OPENALEX_ALLOW_KEYLESS": "maybe"},
            ConfigProblem.INVALID_VALUE,
            "invalid configuration value",
        ),
        (
            lambda tmp: {"HARVESTER_OPENALEX_PER_PAGE": "many"},
            ConfigProblem.INVALID_VALUE,
            "invalid configuration value",
        ),
    ],
)
def test_unreadable_or_invalid_configuration(
    setup: Any, problem: ConfigProblem, message: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigurationError) as info:
        OpenAlexClient.from_core_config(env=setup(tmp_path))
    assert info.value.problem is problem
    assert info.value.code is ErrorCode.CONFIGURATION_ERROR
    assert str(info.value) == message
    assert str(tmp_path) not in str(info.value)


def test_non_utf8_configuration_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"contact_email": "caf\xe9@example.org"}')
    with pytest.raises(ConfigurationError) as info:
        OpenAlexClient.from_core_config(env={"HARVESTER_CONFIG": str(path)})
    assert info.value.problem is ConfigProblem.FILE_NOT_READABLE
