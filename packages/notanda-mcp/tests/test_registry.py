"""The MCP Registry manifest ``server.json``, its ownership marker and the installed metadata."""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonschema
import notanda_mcp
import pytest
from checkout import absent
from fake_openalex import REFERENCE_DIR, fixture_path
from notanda_mcp._cli import _server_parser

PACKAGE_DIR = Path(__file__).resolve().parents[1]
SERVER_JSON = PACKAGE_DIR / "server.json"
README = PACKAGE_DIR / "README.md"
REGISTRY_SCHEMA = "mcp-registry-server.schema.2025-12-11.json"
REGISTRY_SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
MARKER = re.compile(r"<!--\s*mcp-name:\s*(\S+)\s*-->")


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    if not SERVER_JSON.is_file():
        absent(f"{SERVER_JSON} is not part of this checkout (an sdist?)")
    value: dict[str, Any] = json.loads(SERVER_JSON.read_text(encoding="utf-8"))
    return value


@pytest.fixture(scope="module")
def pypi_package(manifest: dict[str, Any]) -> dict[str, Any]:
    [package] = [p for p in manifest["packages"] if p["registryType"] == "pypi"]
    return package


def test_manifest_validates_against_the_published_schema(manifest: dict[str, Any]) -> None:
    data = fixture_path(REGISTRY_SCHEMA, REFERENCE_DIR).read_bytes()
    assert hashlib.sha256(data).hexdigest() == REGISTRY_SCHEMA_SHA256
    schema = json.loads(data)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(manifest), key=lambda e: list(e.absolute_path))
    assert [f"{list(e.absolute_path)}: {e.message}" for e in errors] == []
    assert manifest["$schema"] == schema["$id"]


def test_manifest_names_this_release(
    manifest: dict[str, Any], pypi_package: dict[str, Any]
) -> None:
    assert len(manifest["description"]) <= 100
    assert manifest["version"] == notanda_mcp.__version__
    assert pypi_package["version"] == notanda_mcp.__version__
    assert pypi_package["identifier"] == "notanda-mcp"
    assert pypi_package["runtimeHint"] == "uvx"
    assert pypi_package["transport"] == {"type": "stdio"}


def test_the_evidence_dir_is_the_one_required_named_argument(pypi_package: dict[str, Any]) -> None:
    arguments = {a["name"]: a for a in pypi_package.get("packageArguments", [])}
    assert {name for name, a in arguments.items() if a.get("isRequired")} == {"--evidence-dir"}
    assert {a["type"] for a in arguments.values()} == {"named"}
    assert arguments["--evidence-dir"]["format"] == "filepath"
    assert not [a for a in pypi_package.get("runtimeArguments", []) if "key" in str(a).lower()]
    assert not [name for name in arguments if "key" in name.lower()]


#: Server options a registry client has no use for: they print and exit.
NOT_FOR_THE_REGISTRY = {"--help", "--version"}


def _server_options() -> dict[str, argparse.Action]:
    return {
        option: action
        for action in _server_parser()._actions
        for option in action.option_strings
        if option.startswith("--")
    }


def test_every_server_option_is_in_the_manifest_or_named_as_not_for_the_registry(
    pypi_package: dict[str, Any],
) -> None:
    listed = {a["name"] for a in pypi_package.get("packageArguments", [])}
    options = set(_server_options())
    assert options >= NOT_FOR_THE_REGISTRY
    assert listed == options - NOT_FOR_THE_REGISTRY
    assert not listed & NOT_FOR_THE_REGISTRY


def test_the_manifest_says_what_the_command_line_accepts(pypi_package: dict[str, Any]) -> None:
    options = _server_options()
    for argument in pypi_package["packageArguments"]:
        action = options[argument["name"]]
        if action.choices is not None:
            assert argument["choices"] == list(action.choices), argument["name"]
        if "default" in argument:
            assert argument["default"] == str(action.default), argument["name"]
    # A client that passes every default must still start: an interval is
    # refused without a TSA, so the manifest gives it no default.
    [every] = [a for a in pypi_package["packageArguments"] if a["name"] == "--timestamp-every"]
    assert "default" not in every
    assert "value" not in every


def test_the_key_is_an_optional_secret_with_harvester_config_as_the_alternative(
    pypi_package: dict[str, Any],
) -> None:
    variables = {v["name"]: v for v in pypi_package["environmentVariables"]}
    key = variables["HARVESTER_OPENALEX_API_KEY"]
    assert key["isSecret"] is True
    assert key["isRequired"] is False
    assert "HARVESTER_CONFIG" in key["description"]
    assert "default" not in key
    assert "value" not in key


def test_the_readme_carries_the_ownership_marker(manifest: dict[str, Any]) -> None:
    markers = MARKER.findall(README.read_text(encoding="utf-8"))
    assert markers == [manifest["name"]]


def test_the_installed_metadata_matches_the_manifest(manifest: dict[str, Any]) -> None:
    meta = metadata.metadata("notanda-mcp")
    assert meta["Name"] == "notanda-mcp"
    assert meta["Version"] == manifest["version"] == notanda_mcp.__version__
    description = meta.get_payload()  # type: ignore[attr-defined]
    assert isinstance(description, str)
    assert description
    assert MARKER.findall(description) == [manifest["name"]]
