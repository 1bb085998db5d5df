"""Generate the log vectors under ``log-cases/`` and their verdicts in ``log-expected.json``.

Each case is an evidence root with records and ``.notanda/log.jsonl``. The
expected audit exit code and the codes of its error and warning log findings
are given without a held head and, where the case has one, the exit code and
the ``head.*`` finding with it. ``test_log.py`` regenerates everything into a
temporary folder and compares it byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))
sys.path.insert(0, str(HERE))

from generate import b3, canonical_bytes, evidence_id, manifest_for, ours  # noqa: E402
from notanda_evidence import _merkle  # noqa: E402
from notanda_evidence._log import EntryType, encode_entry  # noqa: E402

PAYLOADS = ("request.json", "provider.json", "response.json")


def record(root: Path, label: str, *, legacy: bool = False) -> tuple[str, str]:
    """Write a sealed record; return its ID and receipt."""
    rid = evidence_id(label)
    payloads = (b3 if legacy else ours)(label)
    folder = root / rid
    folder.mkdir(parents=True)
    blobs = {name: canonical_bytes(payloads[name]) for name in PAYLOADS}
    for name, data in blobs.items():
        (folder / name).write_bytes(data)
    manifest = canonical_bytes(
        manifest_for(blobs, payloads["response.json"]["status"], None if legacy else rid)
    )
    (folder / "manifest.json").write_bytes(manifest)
    return rid, hashlib.sha256(manifest).hexdigest()


def time_at(second: int) -> str:
    return f"2026-11-29T10:{second // 60:02d}:{second % 60:02d}.000Z"


def lines_for(entries: list[dict[str, Any]]) -> list[bytes]:
    """Encode entries with correct indexes and a correct chain."""
    lines: list[bytes] = []
    prev = "0" * 64
    for index, entry in enumerate(entries):
        line = encode_entry(
            index=index,
            kind=EntryType(entry.get("type", "sealed")),
            evidence_id=entry["evidence_id"],
            receipt=entry["receipt"],
            time=entry.get("time", time_at(index)),
            prev=prev,
            reason=entry.get("reason"),
        )
        lines.append(line)
        prev = hashlib.sha256(line).hexdigest()
    return lines


def write_log(root: Path, lines: list[bytes], *, torn: bytes = b"") -> None:
    folder = root / ".notanda"
    folder.mkdir(exist_ok=True)
    (folder / "log.jsonl").write_bytes(b"".join(line + b"\n" for line in lines) + torn)


def head_of(lines: list[bytes]) -> str:
    root = _merkle.root_of([_merkle.leaf_hash(line) for line in lines])
    return f"{len(lines)}:{root.hex()}"


class Case:
    def __init__(self, base: Path, name: str, description: str) -> None:
        self.root = base / "log-cases" / name
        self.root.mkdir(parents=True)
        self.description = description
        self.expected: dict[str, Any] = {}

    def five(self) -> tuple[list[tuple[str, str]], list[bytes]]:
        """Five sealed, logged records."""
        name = self.root.name
        records = [record(self.root, f"{name}/{i}") for i in range(5)]
        lines = lines_for([{"evidence_id": i, "receipt": r} for i, r in records])
        write_log(self.root, lines)
        return records, lines

    def expect(
        self,
        exit_code: int,
        codes: list[str],
        *,
        held: str | None = None,
        held_exit: int | None = None,
        held_codes: list[str] | None = None,
    ) -> None:
        self.expected = {"codes": sorted(codes), "exit": exit_code}
        if held is not None:
            self.expected["held"] = {
                "codes": sorted(held_codes or []),
                "exit": held_exit,
                "head": held,
            }


def build(base: Path) -> dict[str, Any]:
    cases: dict[str, Case] = {}

    def case(name: str, description: str) -> Case:
        cases[name] = Case(base, name, description)
        return cases[name]

    c = case("valid", "five records, all logged, checked against every earlier head")
    _, lines = c.five()
    c.expect(0, [], held=head_of(lines[:3]), held_exit=0, held_codes=["head.consistent"])

    c = case("record_deleted", "a logged record's folder deleted without a tombstone")
    records, lines = c.five()
    shutil.rmtree(c.root / records[2][0])
    c.expect(1, ["log.record_missing"])

    c = case("record_replaced", "a record consistently replaced: new payloads, new manifest")
    records, lines = c.five()
    folder = c.root / records[1][0]
    response = json.loads((folder / "response.json").read_bytes())
    response["results"][0]["title"] = "A more convenient title"
    blobs = {name: (folder / name).read_bytes() for name in PAYLOADS}
    blobs["response.json"] = canonical_bytes(response)
    (folder / "response.json").write_bytes(blobs["response.json"])
    (folder / "manifest.json").write_bytes(canonical_bytes(manifest_for(blobs, "ok", folder.name)))
    c.expect(1, ["log.receipt_mismatch"])

    c = case("line_deleted", "a middle log line and its record removed")
    records, lines = c.five()
    shutil.rmtree(c.root / records[2][0])
    write_log(c.root, lines[:2] + lines[3:])
    c.expect(1, ["log.chain_break", "log.index_mismatch", "log.index_mismatch"])

    c = case("lines_swapped", "two log lines swapped")
    records, lines = c.five()
    write_log(c.root, [lines[0], lines[2], lines[1], lines[3], lines[4]])
    c.expect(
        1,
        [
            "log.chain_break",
            "log.chain_break",
            "log.chain_break",
            "log.index_mismatch",
            "log.index_mismatch",
        ],
    )

    c = case("inserted", "a back-dated record and entry inserted in the middle, chain patched")
    records, lines = c.five()
    extra = record(c.root, "inserted/extra")
    entries = [{"evidence_id": i, "receipt": r} for i, r in records]
    patched = lines_for(
        [*entries[:2], {"evidence_id": extra[0], "receipt": extra[1]}, *entries[2:]]
    )
    # The inserted line and the ones after it carry the indexes they would have had.
    write_log(c.root, patched)
    c.expect(0, [], held=head_of(lines), held_exit=1, held_codes=["head.mismatch"])

    c = case("inserted_naively", "an entry inserted without re-chaining the rest")
    records, lines = c.five()
    extra = record(c.root, "inserted_naively/extra")
    line = encode_entry(
        index=2,
        kind=EntryType.SEALED,
        evidence_id=extra[0],
        receipt=extra[1],
        time=time_at(2),
        prev=hashlib.sha256(lines[1]).hexdigest(),
    )
    write_log(c.root, [*lines[:2], line, *lines[2:]])
    c.expect(
        1, ["log.chain_break", "log.index_mismatch", "log.index_mismatch", "log.index_mismatch"]
    )

    c = case("truncated", "the last record and its line removed")
    records, lines = c.five()
    shutil.rmtree(c.root / records[4][0])
    write_log(c.root, lines[:4])
    c.expect(0, [], held=head_of(lines), held_exit=1, held_codes=["head.truncated"])

    c = case("suffix_rewritten", "record 3 removed and the lines after it rewritten consistently")
    records, lines = c.five()
    shutil.rmtree(c.root / records[2][0])
    kept = [records[i] for i in (0, 1, 3, 4)]
    rewritten = lines_for([{"evidence_id": i, "receipt": r} for i, r in kept])
    write_log(c.root, rewritten)
    # A head of three entries held before the rewrite no longer matches its prefix.
    c.expect(0, [], held=head_of(lines[:3]), held_exit=1, held_codes=["head.mismatch"])

    c = case("forked", "a head of the same size from a different history")
    records, lines = c.five()
    other = lines_for(
        [
            {"evidence_id": i, "receipt": r, "time": time_at(30 + n)}
            for n, (i, r) in enumerate(records)
        ]
    )
    c.expect(0, [], held=head_of(other), held_exit=1, held_codes=["head.mismatch"])

    c = case("unlogged", "a sealed record that never reached the log")
    records, lines = c.five()
    record(c.root, "unlogged/late")
    c.expect(3, ["log.record_unlogged"])

    c = case("missing_log", "sealed records and no log at all")
    for i in range(2):
        record(c.root, f"missing_log/{i}")
    c.expect(3, ["log.missing", "log.record_unlogged", "log.record_unlogged"])

    c = case("adopted", "two notanda-mcp 0.1.0b3 records adopted after three sealed ones")
    first = [record(c.root, f"adopted/{i}") for i in range(3)]
    legacy = [record(c.root, f"adopted/b3/{i}", legacy=True) for i in range(2)]
    entries = [{"evidence_id": i, "receipt": r} for i, r in first]
    entries += [{"evidence_id": i, "receipt": r, "type": "adopted"} for i, r in legacy]
    write_log(c.root, lines_for(entries))
    c.expect(0, [])

    c = case("tombstoned", "a record pruned through a logged tombstone")
    records, lines = c.five()
    shutil.rmtree(c.root / records[1][0])
    entries = [{"evidence_id": i, "receipt": r} for i, r in records]
    entries.append(
        {
            "evidence_id": records[1][0],
            "receipt": records[1][1],
            "type": "tombstone",
            "reason": "sensitive query removed at the participant's request",
        }
    )
    write_log(c.root, lines_for(entries))
    c.expect(0, [])

    c = case("tombstone_present", "a tombstone whose folder was never deleted")
    records, lines = c.five()
    entries = [{"evidence_id": i, "receipt": r} for i, r in records]
    entries.append(
        {
            "evidence_id": records[3][0],
            "receipt": records[3][1],
            "type": "tombstone",
            "reason": "interrupted prune",
        }
    )
    write_log(c.root, lines_for(entries))
    c.expect(0, ["log.tombstone_present"])

    c = case("torn_tail", "a crash in the middle of an append left half a line")
    records, lines = c.five()
    write_log(c.root, lines, torn=b'{"evidence_id":"')
    c.expect(3, ["log.tail_torn"])

    c = case("time_regression", "an entry dated a minute before its predecessor: a warning")
    records = [record(c.root, f"time_regression/{i}") for i in range(3)]
    times = [time_at(120), time_at(121), time_at(60)]
    write_log(
        c.root,
        lines_for(
            [
                {"evidence_id": i, "receipt": r, "time": t}
                for (i, r), t in zip(records, times, strict=True)
            ]
        ),
    )
    c.expect(0, ["log.time_regression"])

    c = case("small_clock_skew", "an entry two seconds early: within tolerance, no warning")
    records = [record(c.root, f"small_clock_skew/{i}") for i in range(2)]
    times = [time_at(10), time_at(8)]
    write_log(
        c.root,
        lines_for(
            [
                {"evidence_id": i, "receipt": r, "time": t}
                for (i, r), t in zip(records, times, strict=True)
            ]
        ),
    )
    c.expect(0, [])

    c = case("duplicate_entry", "one record logged twice")
    records, lines = c.five()
    entries = [{"evidence_id": i, "receipt": r} for i, r in records]
    entries.append({"evidence_id": records[0][0], "receipt": records[0][1]})
    write_log(c.root, lines_for(entries))
    c.expect(1, ["log.duplicate_entry"])

    c = case("unparsable_line", "a line that is not a log entry")
    records, lines = c.five()
    write_log(c.root, [*lines[:2], b"not json at all", *lines[2:]])
    c.expect(
        1,
        [
            "log.chain_break",
            "log.index_mismatch",
            "log.index_mismatch",
            "log.index_mismatch",
            "log.unparsable",
        ],
    )

    c = case("incomplete_beside_logged", "an incomplete record beside logged ones")
    records, lines = c.five()
    (c.root / evidence_id("incomplete_beside_logged/open")).mkdir()
    c.expect(3, [])

    expected: dict[str, Any] = {
        "cases": {},
        "format": "notanda-evidence-log-vectors",
        "format_version": 1,
    }
    for name, item in sorted(cases.items()):
        empty = sorted(
            str(Path(folder).relative_to(item.root))
            for folder, dirs, files in os.walk(item.root)
            if not dirs and not files
        )
        expected["cases"][name] = {
            **item.expected,
            "description": item.description,
            "empty_dirs": empty,
        }
    return expected


def generate(out: Path) -> None:
    """Write the log vectors under *out*."""
    if (out / "log-cases").exists():
        shutil.rmtree(out / "log-cases")
    expected = build(out)
    (out / "log-expected.json").write_text(
        json.dumps(expected, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    generate(HERE)
    print(f"wrote {len(json.loads((HERE / 'log-expected.json').read_text())['cases'])} log cases")
