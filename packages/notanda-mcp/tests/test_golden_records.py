"""Golden records: a search and a check written by the server, compared byte for byte.

A search and a reference check go through the real server code path (an SDK
client session on ``build_server`` with an ``httpx.MockTransport`` provider)
with every varying input fixed: the evidence IDs, the three clocks (the
server's ``requested_at``, the OpenAlex client's attempt times, the log's
entry time), the software record (versions, Python and code digest) and the
client's ``User-Agent`` (its version), which change with every release and
interpreter. Every file of both records and
both lines of ``.notanda/log.jsonl`` must then equal the files in
``tests/golden/`` byte for byte: a change to the code that moves a single byte
of a record is seen here, and such a change is a change of the evidence
format, never a side effect of a refactoring.

The golden files were recorded from the code before the work of issue 23 and
are regenerated only on purpose, for a change to what records hold::

    python packages/notanda-mcp/tests/test_golden_records.py --write

Each seam below is replaced with ``monkeypatch.setattr`` (which fails when the
name is gone), so a refactoring that moves a seam breaks this test loudly
instead of letting real IDs or times through.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import (
    CLIENT_INFO,
    HANDSHAKE_VERSION,
    assert_sealed,
    call,
    make_server,
    open_session,
)
from fake_openalex import FakeOpenAlex, bibliography

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
#: The evidence IDs the store hands out, in order: the search's, then the check's.
SEARCH_ID = "5ea4c0000000000000000000000000a1"
CHECK_ID = "c4ec000000000000000000000000000b"
#: The server's clock (``requested_at``), the client's (attempt times), the log's.
REQUESTED_AT = "2026-12-01T12:00:00.000Z"
PROVIDER_NOW = dt.datetime(2026, 12, 1, 12, 0, 1, 250000, tzinfo=dt.UTC)
LOGGED_AT = "2026-12-01T12:00:02.500Z"
SOFTWARE = {
    "code_digest": "d" * 64,
    "mcp": "1.0.0",
    "notanda_core": None,
    "notanda_evidence": "0.0.0",
    "notanda_mcp": "0.0.0",
    "notanda_openalex": "0.0.0",
    "python": "3.11.0",
}
#: The client's ``User-Agent`` names its version; the goldens must outlive a release.
USER_AGENT = "notanda-openalex/0.0.0 (+https://github.com/notanda/notanda)"
#: Three references: one found by its DOI, one by its title alone, one not found.
BIBTEX = r"""
@article{lovelace, title={Sketch of the {A}nalytical Engine}, author={Lovelace, Ada and
  Babbage, Charles}, year={2021}, journal={Journal of Tests}, doi={10.5555/notanda.test.1}}
@article{turing, title={On computable numbers, with an application to the
  Entscheidungsproblem}, author={Turing, Alan}, year={2023}, journal={Journal of Tests}}
@article{ghost, title={A treatise nobody ever wrote about imaginary engines},
  author={Nobody, Ann}, year={2019}}
"""


class FixedClock:
    """The OpenAlex client's clock, stopped: ``now`` never moves, ``monotonic`` does."""

    def now(self) -> dt.datetime:
        return PROVIDER_NOW

    def monotonic(self) -> float:
        import time

        return time.monotonic()


def fix_seams(patch: Any) -> None:
    """Replace every varying input of a record with a fixed one (*patch* is ``setattr``)."""
    import notanda_evidence._log as evidence_log
    import notanda_evidence._store as evidence_store
    import notanda_mcp._service as service
    import notanda_mcp._software as software
    import notanda_openalex._client as openalex_client

    ids: Iterator[str] = iter((SEARCH_ID, CHECK_ID))
    patch(evidence_store, "_new_evidence_id", lambda: next(ids))
    patch(evidence_log, "_now", lambda: LOGGED_AT)
    patch(service, "_timestamp", lambda: REQUESTED_AT)
    patch(software, "software_record", lambda: dict(SOFTWARE))
    patch(openalex_client, "SystemClock", FixedClock)
    patch(openalex_client, "DEFAULT_USER_AGENT", USER_AGENT)


async def write_records(root: Path) -> None:
    """Search, then check, through one server session; both must succeed."""
    server = make_server(root, FakeOpenAlex(bibliography()), toolsets=("search", "references"))
    async with open_session(server, "legacy", client_info=CLIENT_INFO) as client:
        found = await call(client, "search_literature", {"query": "analytical engine", "limit": 3})
        assert found.is_error is False, found.structured_content
        checked = await call(client, "check_references", {"references": BIBTEX})
        assert checked.is_error is False, checked.structured_content


def record_files(root: Path) -> dict[str, bytes]:
    """Every file the two records and the log hold, by golden name."""
    files: dict[str, bytes] = {}
    for name, evidence_id in (("search", SEARCH_ID), ("check", CHECK_ID)):
        for path in sorted((root / evidence_id).rglob("*")):
            if path.is_file():
                files[f"{name}/{path.relative_to(root / evidence_id).as_posix()}"] = (
                    path.read_bytes()
                )
    files["log.jsonl"] = (root / ".notanda" / "log.jsonl").read_bytes()
    return files


def golden_files() -> dict[str, bytes]:
    return {
        path.relative_to(GOLDEN_DIR).as_posix(): path.read_bytes()
        for path in sorted(GOLDEN_DIR.rglob("*"))
        if path.is_file()
    }


@pytest.mark.anyio
async def test_a_search_and_a_check_write_the_golden_bytes(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fix_seams(monkeypatch.setattr)
    await write_records(evidence_root)
    for evidence_id in (SEARCH_ID, CHECK_ID):
        assert_sealed(evidence_root, evidence_id)
    written = record_files(evidence_root)
    expected = golden_files()
    assert sorted(written) == sorted(expected)
    for name, data in expected.items():
        assert written[name] == data, f"{name} differs from tests/golden/{name}"


def test_the_golden_records_were_written_by_the_session_they_name() -> None:
    """The goldens hold what the test fixes: its IDs, times, client and protocol."""
    expected = golden_files()
    request = expected["search/request.json"]
    for fixed in (SEARCH_ID, REQUESTED_AT, HANDSHAKE_VERSION, CLIENT_INFO.name, "d" * 64):
        assert fixed.encode() in request
    assert CHECK_ID.encode() in expected["check/request.json"]
    log = expected["log.jsonl"].splitlines()
    assert len(log) == 2
    assert all(LOGGED_AT.encode() in line for line in log)


def _write_golden() -> None:
    """Record the goldens from the code as it is (run on purpose, never by the tests)."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "evidence"
        root.mkdir(mode=0o700)
        patch = pytest.MonkeyPatch()
        try:
            fix_seams(patch.setattr)
            anyio.run(write_records, root)
        finally:
            patch.undo()
        shutil.rmtree(GOLDEN_DIR, ignore_errors=True)
        for name, data in record_files(root).items():
            target = GOLDEN_DIR / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: test_golden_records.py --write")
    _write_golden()
