"""The answer codes are string enums, and each one is published in a tool's output schema."""

from __future__ import annotations

import json

from notanda_mcp._codes import AnswerStatus, BusyReason, RecordState, ToolError
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
    for enum in (AnswerStatus, BusyReason, RecordState, ToolError):
        for member in enum:
            assert str(member) == f"{member}" == member.value
