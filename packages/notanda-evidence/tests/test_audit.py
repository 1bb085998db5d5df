"""The whole-collection audit (``_audit``): the log vectors' verdicts, its report, and mutations."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import LOG_EXPECTED
from notanda_evidence import (
    Code,
    Finding,
    Head,
    LogCode,
    LogFinding,
    Severity,
    TimestampCode,
    TimestampFinding,
    _cli,
    audit,
)
from vector_cases import tree

LOG_CASES = sorted(LOG_EXPECTED["cases"])


@pytest.mark.parametrize("case", LOG_CASES)
def test_audit_verdicts(case: str, log_case: Callable[[str], Path]) -> None:
    root = log_case(case)
    expected = LOG_EXPECTED["cases"][case]
    result = audit(root)
    codes = sorted(
        f.code.value for f in result.log_findings if f.severity.value in ("error", "warning")
    )
    assert (result.exit_code, codes) == (expected["exit"], expected["codes"])
    if "held" in expected:
        held = audit(root, held=Head.parse(expected["held"]["head"]))
        head_codes = sorted(
            f.code.value for f in held.log_findings if f.code.value.startswith("head.")
        )
        assert held.exit_code == expected["held"]["exit"]
        assert head_codes == expected["held"]["codes"]


@pytest.mark.parametrize("case", LOG_CASES)
def test_audit_cli_exit_codes_and_json(
    case: str, log_case: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root = log_case(case)
    expected = LOG_EXPECTED["cases"][case]
    assert _cli.main(["audit", str(root), "--json"]) == expected["exit"]
    report = json.loads(capsys.readouterr().out)
    assert report["format"] == "notanda-evidence-audit"
    assert report["summary"]["exit_code"] == expected["exit"]
    if "held" in expected:
        code = _cli.main(["audit", str(root), "--head", expected["held"]["head"]])
        assert code == expected["held"]["exit"]


# --------------------------------------------------------------- mutations


def _mutations(
    root: Path, rng: random.Random, count: int
) -> list[tuple[str, Callable[[Path], None]]]:
    files = sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())
    records = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name != ".notanda")
    log_lines = (root / ".notanda" / "log.jsonl").read_bytes().split(b"\n")[:-1]
    made: list[tuple[str, Callable[[Path], None]]] = []
    while len(made) < count:
        kind = rng.choice(
            [
                "flip",
                "flip",
                "flip",
                "truncate",
                "delete_file",
                "delete_record",
                "swap_files",
                "swap_lines",
                "drop_line",
            ]
        )
        if kind == "flip":
            name = rng.choice(files)
            size = (root / name).stat().st_size
            offset, bit = rng.randrange(size), rng.randrange(8)

            def flip(r: Path, name: Path = name, offset: int = offset, bit: int = bit) -> None:
                data = bytearray((r / name).read_bytes())
                data[offset] ^= 1 << bit
                (r / name).write_bytes(bytes(data))

            made.append((f"flip {name}@{offset}.{bit}", flip))
        elif kind == "truncate":
            name = rng.choice(files)
            keep = rng.randrange((root / name).stat().st_size)
            made.append(
                (
                    f"truncate {name} to {keep}",
                    lambda r, name=name, keep=keep: (r / name).write_bytes(
                        (r / name).read_bytes()[:keep]
                    ),
                )
            )
        elif kind == "delete_file":
            name = rng.choice(files)
            made.append((f"delete {name}", lambda r, name=name: (r / name).unlink()))
        elif kind == "delete_record":
            record = rng.choice(records)
            made.append(
                (f"delete record {record}", lambda r, record=record: shutil.rmtree(r / record))
            )
        elif kind == "swap_files":
            a, b = rng.sample(records, 2)
            name = rng.choice(["request.json", "provider.json", "response.json", "manifest.json"])

            def swap(r: Path, a: str = a, b: str = b, name: str = name) -> None:
                first, second = (r / a / name).read_bytes(), (r / b / name).read_bytes()
                (r / a / name).write_bytes(second)
                (r / b / name).write_bytes(first)

            made.append((f"swap {name} of {a} and {b}", swap))
        elif kind == "swap_lines":
            i, j = sorted(rng.sample(range(len(log_lines)), 2))

            def swap_lines(r: Path, i: int = i, j: int = j) -> None:
                lines = list(log_lines)
                lines[i], lines[j] = lines[j], lines[i]
                (r / ".notanda" / "log.jsonl").write_bytes(b"".join(x + b"\n" for x in lines))

            made.append((f"swap log lines {i} and {j}", swap_lines))
        else:
            i = rng.randrange(len(log_lines))
            made.append(
                (
                    f"drop log line {i}",
                    lambda r, i=i: (r / ".notanda" / "log.jsonl").write_bytes(
                        b"".join(x + b"\n" for n, x in enumerate(log_lines) if n != i)
                    ),
                )
            )
    return made


def test_mutation_harness_detects_everything_or_says_a_head_is_needed(
    log_case: Callable[[str], Path], tmp_path: Path
) -> None:
    """Random bit flips, truncations, deletions and swaps across records and log.

    Each mutation must fail the audit; the only ones allowed to pass without a
    held head are those that leave a consistent but different history (for
    example a changed time in the last line), and the held head must catch
    every one of them.
    """
    base = log_case("valid")
    held = audit(base).head
    rng = random.Random(20261129)
    needs_head = 0
    original = tree(base)
    applied = 0
    for description, mutate in _mutations(base, rng, 300):
        work = tmp_path / "work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(base, work)
        mutate(work)
        if tree(work) == original:
            continue  # swapping two identical files changes nothing
        applied += 1
        plain = audit(work).exit_code
        anchored = audit(work, held=held).exit_code
        assert anchored != 0, f"undetected even with the held head: {description}"
        if plain == 0:
            needs_head += 1
            assert description.startswith(("flip .notanda", "truncate .notanda")), description
    assert applied > 250
    assert needs_head < 30


def test_log_token_and_record_findings_are_one_type_with_each_familys_report_fields() -> None:

    assert LogFinding is Finding
    assert TimestampFinding is Finding
    log = Finding(LogCode.CHAIN_BREAK, Severity.ERROR, evidence_id="a" * 32, index=3)
    token = Finding(TimestampCode.MALFORMED, Severity.ERROR, "3.tsr", "truncated")
    record = Finding(Code.PAYLOAD_MISSING, Severity.ERROR, "provider.json")
    # The --json report of each family is what it was before the merge, keys sorted, and
    # (audit format 3, and 4 for the tokens) with the remedy of a family that states them.
    assert log.to_json() == {
        "code": "log.chain_break",
        "detail": None,
        "evidence_id": "a" * 32,
        "index": 3,
        "remedy": LogCode.CHAIN_BREAK.remedy,
        "severity": "error",
    }
    assert list(log.to_json()) == sorted(log.to_json())
    assert token.to_json() == {
        "code": "tsa.malformed",
        "detail": "truncated",
        "file": "3.tsr",
        "remedy": TimestampCode.MALFORMED.remedy,
        "severity": "error",
    }
    # A record finding carries its remedy (report format_version 2 of verify, 3 of audit).
    assert list(record.to_json()) == ["code", "detail", "file", "remedy", "severity"]
    assert record.to_json()["remedy"] == Code.PAYLOAD_MISSING.remedy
