"""The answer codes are string enums, and each one is published in a tool's output schema."""

from __future__ import annotations

import json

from notanda_mcp._codes import AnswerStatus, BusyReason, RecordState, SchemaReason, ToolError
from notanda_mcp._schemas import RETRIEVAL_ERRORS, SEARCH_ERRORS, TOOLS


def test_every_error_code_is_answered_by_some_tool_and_published() -> None:
    assert set(ToolError) == {*SEARCH_ERRORS, *RETRIEVAL_ERRORS}
    published = {
        code
        for tool in TOOLS.values()
        for code in tool["outputSchema"]["properties"]["error"]["enum"]
    }
    assert published == {code.value for code in ToolError}


def test_every_status_is_published_by_get_evidence() -> None:
    statuses = TOOLS["get_evidence"]["outputSchema"]["properties"]["status"]["enum"]
    assert statuses == [status.value for status in AnswerStatus]


def test_the_published_schemas_hold_plain_strings_not_enum_members() -> None:
    # A client reads the schema as JSON; an enum member would print as its value
    # through json but not through repr, so the schemas hold plain strings.
    for tool in TOOLS.values():
        properties = tool["outputSchema"]["properties"]
        for field in ("status", "error"):
            assert {type(value) for value in properties[field]["enum"]} == {str}
    assert json.loads(json.dumps(TOOLS)) == TOOLS


def test_a_code_prints_as_its_value() -> None:
    for enum in (AnswerStatus, BusyReason, RecordState, SchemaReason, ToolError):
        for member in enum:
            assert str(member) == f"{member}" == member.value


#: Keywords that annotate or only descend into subschemas: they never fail themselves.
_NOT_ASSERTIONS = {"default", "description", "items", "properties", "title", "$schema"}


def _keywords(schema: object) -> set[str]:
    """Every keyword in *schema*, property names excluded."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            children = value.values() if key == "properties" else [value]
            for child in children:
                found |= _keywords(child)
    elif isinstance(schema, list):
        for item in schema:
            found |= _keywords(item)
    return found


def test_every_assertion_keyword_of_the_input_schemas_has_its_reason() -> None:
    # A refusal names SchemaReason(f"schema_{keyword}"): a keyword without a
    # member would turn a wrong argument into an internal error.
    used = set().union(*(_keywords(tool["inputSchema"]) for tool in TOOLS.values()))
    assertions = used - _NOT_ASSERTIONS
    assert {f"schema_{keyword}" for keyword in assertions} == {r.value for r in SchemaReason}
