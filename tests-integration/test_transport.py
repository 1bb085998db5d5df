"""The stdio transport of the installed server: answers at the end of input, long lines.

* A call in flight when stdin closes, or when SIGTERM arrives, that finishes
  inside the two-second grace is answered before the process exits.
* A request line over the documented 4 MiB limit is refused with JSON-RPC
  ``-32600`` under its own id, and the server serves the next line.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from harness import MODERN, RawSession, launcher_argv, record_ids, tool_result, verify_json

MAX_LINE_BYTES = 4 * 1024 * 1024  # docs/input-boundary.md


@pytest.mark.parametrize("era", ["legacy", MODERN])
@pytest.mark.parametrize("ending", ["stdin-eof", "sigterm"])
def test_a_call_in_flight_at_the_end_is_answered(root: Path, era: str, ending: str) -> None:
    with RawSession(launcher_argv(root, "--delay", "0.3"), era=era) as raw:
        raw.start()
        request_id = raw.send_call("search_literature", {"query": "Does X improve Y?"})
        if ending == "stdin-eof":
            code = raw.close()  # every call read before the end is served
        else:
            deadline = time.monotonic() + 10
            while not record_ids(root):  # a call after the signal would be refused
                assert time.monotonic() < deadline, "the search never created its record"
                time.sleep(0.01)
            raw.proc.send_signal(signal.SIGTERM)
            code = raw.wait_exit()
        content, is_error = tool_result(raw.wait(request_id, timeout=1))
    assert code == 0
    assert is_error is False, content
    assert content["status"] == "ok"
    verdict, report = verify_json(root, full=True)
    assert verdict == 0, report


def _call_line(request_id: int, size: int) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "search_literature", "arguments": {"query": ""}},
    }
    bare = len(json.dumps(message).encode())
    message["params"]["arguments"]["query"] = "x" * (size - bare)  # type: ignore[index]
    line = json.dumps(message).encode()
    assert len(line) == size
    return line + b"\n"


def test_a_request_line_over_the_limit_is_refused_and_the_server_serves_on(root: Path) -> None:
    with RawSession(launcher_argv(root)) as raw:
        raw.start()
        raw.send_raw(_call_line(9001, MAX_LINE_BYTES + 1))
        refused = raw.wait(9001)
        content, is_error = raw.search()
        assert raw.close() == 0
    assert refused["error"]["code"] == -32600
    assert str(MAX_LINE_BYTES) in refused["error"]["message"]
    assert is_error is False, content
    assert record_ids(root) == [content["evidence_id"]]  # the refused line left nothing
