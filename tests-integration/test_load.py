"""Load: 1,000 searches in one server process, without leaking memory or descriptors.

Resident memory (``VmRSS``) may grow by at most 10 MiB between search 100 and
search 1,000, and the number of open file descriptors must be the same at
both points. Each search uses a realistic 105 KB OpenAlex page.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import REALISTIC_FIXTURE, audit_json, open_fds, record_ids, rss_kib, session

SEARCHES = 1000
WARM = 100
MAX_GROWTH_KIB = 10 * 1024


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_thousand_searches_one_process(root: Path) -> None:
    with session(root, "--fixture", REALISTIC_FIXTURE) as raw:
        for number in range(1, SEARCHES + 1):
            content, is_error = raw.search(f"load search {number}", limit=5)
            assert not is_error, content
            assert content["log_index"] == number - 1
            if number == 1:
                first = content
            if number == WARM:
                rss_warm, fds_warm = rss_kib(raw.pid), open_fds(raw.pid)
        rss_end, fds_end = rss_kib(raw.pid), open_fds(raw.pid)
        stored, is_error = raw.get(first["evidence_id"], first["receipt"])
        assert not is_error, stored
        assert stored["logged"] is True
    assert len(record_ids(root)) == SEARCHES
    growth = rss_end - rss_warm
    assert growth <= MAX_GROWTH_KIB, f"RSS grew by {growth} KiB ({rss_warm} -> {rss_end})"
    assert fds_end == fds_warm, f"open descriptors went from {fds_warm} to {fds_end}"
    code, audit = audit_json(root)
    assert code == 0
    assert audit["summary"]["log_entries"] == SEARCHES
    assert audit["summary"]["ok"] == SEARCHES
