"""``--jobs``: records verified over a process pool give what one process gives, in order."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from notanda_evidence import EvidenceLog, EvidenceStore, _cli, _pool, audit, verify_file
from notanda_evidence.verify_file import Outcome, verify_root

#: More than the pool's threshold, so the command line really uses the pool.
RECORDS = _pool.MIN_POOL_RECORDS + 6


def _seal(root: Path, log: EvidenceLog, number: int) -> tuple[str, str]:
    writer = EvidenceStore(root).create()
    writer.write_request({"evidence_id": writer.evidence_id, "n": number})
    writer.write_provider({"p": number})
    writer.write_response({"evidence_id": writer.evidence_id, "status": "ok", "results": []})
    seal = writer.seal()
    log.append(seal.evidence_id, seal.receipt)
    return writer.evidence_id, seal.receipt


@pytest.fixture(scope="module")
def damaged_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A logged root whose records are damaged in every way a pass can see; and receipts."""
    root = tmp_path_factory.mktemp("pool") / "root"
    root.mkdir()
    log = EvidenceLog(root)
    sealed = [_seal(root, log, number) for number in range(RECORDS)]
    ids = [evidence_id for evidence_id, _ in sealed]
    (root / ids[3] / "response.json").write_bytes(b"{}\n")  # integrity
    (root / ids[10] / "manifest.json").unlink()  # incomplete
    (root / ids[17] / "extra.txt").write_bytes(b"x")  # an unexpected file
    (root / ids[-1] / "provider.json").write_bytes(b"[" * 200 + b"]" * 200)
    (root / ("f" * 31)).mkdir()  # a stray entry: a root warning
    receipts = root.parent / "receipts.txt"
    lines = [f"{i} {r}" for i, r in sealed]
    lines[5] = f"{ids[5]} {'0' * 64}"  # a receipt mismatch
    receipts.write_text("\n".join(lines) + "\n")
    return root, receipts


def _outcomes(records: Any) -> set[Outcome]:
    return {record.outcome for record in records}


def test_the_pool_gives_the_records_and_findings_of_one_process_in_order(
    damaged_root: tuple[Path, Path],
) -> None:
    root, receipts_file = damaged_root
    receipts = verify_file.read_receipts_file(str(receipts_file))
    one = verify_root(root, receipts, full=True)
    verify_many = _pool.records_verifier(3, min_records=2)
    assert verify_many is not None
    pooled = verify_root(root, receipts, full=True, verify_many=verify_many)
    assert pooled == one
    assert len(one.records) == RECORDS
    # The root really is damaged in several ways, so equality says something.
    assert {Outcome.OK, Outcome.INCOMPLETE, Outcome.RECEIPT_MISMATCH} <= _outcomes(one.records)
    assert sum(record.outcome is not Outcome.OK for record in one.records) >= 5
    assert one.findings


def test_one_job_runs_without_a_pool() -> None:
    assert _pool.records_verifier(1) is None


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = _cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


class _CountingPool(concurrent.futures.ProcessPoolExecutor):
    started = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        type(self).started += 1
        super().__init__(*args, **kwargs)


@pytest.mark.parametrize("command", ["verify", "audit"])
@pytest.mark.parametrize("output", [["--json"], []], ids=["json", "text"])
def test_the_command_prints_the_same_report_for_any_number_of_jobs(
    damaged_root: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    output: list[str],
) -> None:
    root, receipts = damaged_root
    argv = [command, str(root), *output]
    if command == "verify":
        argv += ["--full", "--receipts", str(receipts)]
    single = _run([*argv, "--jobs", "1"], capsys)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", _CountingPool)
    _CountingPool.started = 0
    pooled = _run([*argv, "--jobs", "2"], capsys)
    assert _CountingPool.started == 1
    assert pooled == single
    assert single[0] == 1  # the damage is found
    if output:
        assert json.loads(single[1])["records"]


@pytest.mark.parametrize("command", ["verify", "audit"])
@pytest.mark.parametrize("jobs", ["0", "-3"])
def test_fewer_than_one_job_is_a_usage_error_with_a_remedy(
    damaged_root: tuple[Path, Path], capsys: pytest.CaptureFixture[str], command: str, jobs: str
) -> None:
    root, _ = damaged_root
    code, out, err = _run([command, str(root), "--jobs", jobs], capsys)
    assert code == 2
    assert out == ""
    assert err.splitlines() == [
        f"error: --jobs must be 1 or more, not {jobs}",
        "remedy: give --jobs 1 to verify in this process alone, or leave it out to use "
        f"every CPU this process may use ({_pool.available_cpus()})",
    ]


def test_by_default_every_cpu_this_process_may_use() -> None:
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert _pool.checked_jobs(None) == expected
    assert _pool.checked_jobs(5) == 5


def test_the_pool_is_safe_in_a_threaded_process(damaged_root: tuple[Path, Path]) -> None:
    """A running thread: fork would warn (an error here), forkserver and spawn do not."""
    root, _ = damaged_root
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert audit(root, jobs=2).records == audit(root, jobs=1).records
    finally:
        stop.set()
        thread.join()
    assert _pool._start_method() != "fork"


def test_the_single_file_verifier_refuses_jobs(damaged_root: tuple[Path, Path]) -> None:
    root, _ = damaged_root
    done = subprocess.run(
        [sys.executable, "-I", "-S", verify_file.__file__, "--jobs", "2", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "error: unrecognized arguments: --jobs" in done.stderr
    assert done.stdout == ""
