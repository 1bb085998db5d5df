"""Property tests: any bytes as the log, a proof, a head or a receipts file give findings.

Derandomized with bounded examples, so a run is deterministic and short;
the assertion is always the same: the reader answers with its documented
result or error type, never another exception.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notanda_evidence import (
    EvidenceLog,
    Head,
    ProofError,
    _cli,
    audit,
    verify_file,
    verify_proof,
)
from notanda_evidence._log import encode_entry, parse_line, parse_log
from notanda_evidence._proofs import read_proof
from test_log import sealed

FUZZ = settings(
    derandomize=True,
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
DEEP = st.integers(min_value=60, max_value=3_000).flatmap(
    lambda n: st.sampled_from(
        [b"[" * n + b"]" * n, b"[" * n, b'{"a":' * n + b"0" + b"}" * n, b'["\\"' * n]
    )
)
HEX64 = st.text("0123456789abcdef", min_size=64, max_size=64)
ID = st.text("0123456789abcdef", min_size=32, max_size=32)


@st.composite
def entry_lines(draw: st.DrawFn) -> bytes:
    """A canonical log line, some of whose fields hold adversarial values."""
    fields: dict[str, Any] = {
        "evidence_id": draw(ID),
        "index": draw(st.integers(min_value=0, max_value=5)),
        "prev": draw(HEX64),
        "receipt": draw(HEX64),
        "time": "2026-11-29T10:00:00.000Z",
        "type": draw(st.sampled_from(["sealed", "adopted", "tombstone"])),
        "v": 1,
    }
    for name in draw(st.lists(st.sampled_from(sorted(fields)), max_size=3)):
        fields[name] = draw(JSON)
    if draw(st.booleans()):
        fields["reason"] = draw(JSON)
    try:
        return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()
    except ValueError:
        return b"{}"


LINE = st.one_of(entry_lines(), DEEP, st.binary(max_size=200), JSON.map(lambda v: repr(v).encode()))
LOG = st.one_of(
    st.lists(LINE, max_size=6).map(lambda lines: b"\n".join(lines) + b"\n"),
    st.binary(max_size=500),
)


@contextlib.contextmanager
def a_root(log: bytes | None = None) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        sealed(root, EvidenceLog(root))
        if log is not None:
            (root / ".notanda" / "log.jsonl").write_bytes(log)
        yield root


def quietly(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = _cli.main(argv)
    return code, out.getvalue()


@FUZZ
@given(LINE)
def test_any_line_parses_or_is_refused(line: bytes) -> None:
    entry = parse_line(line)
    if entry is not None:
        assert line == encode_entry(
            index=entry.index,
            kind=entry.type,
            evidence_id=entry.evidence_id,
            receipt=entry.receipt,
            time=entry.time,
            prev=entry.prev,
            reason=entry.reason,
        )


@FUZZ
@given(LOG)
def test_any_log_gives_findings(log: bytes) -> None:
    entries, leaves, findings = parse_log(log)
    assert len(entries) <= len(leaves)
    with a_root(log) as root:
        assert audit(root).exit_code in {1, 3} or not findings
        code, out = quietly(["audit", str(root), "--json"])
        assert code == json.loads(out)["summary"]["exit_code"]
        reader = EvidenceLog(root)
        assert reader.head().size == len(leaves)
        evidence_id, receipt = sealed(root, reader)  # the next search still appends
        assert [r for _, _, r in reader.lookup(evidence_id)] == [receipt]


@FUZZ
@given(st.one_of(DEEP, st.binary(max_size=300), JSON.map(lambda v: json.dumps(v).encode())))
def test_any_proof_file_fails_as_a_proof(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "proof.json"
        path.write_bytes(content)
        with contextlib.suppress(ProofError):
            verify_proof(read_proof(path))
        assert quietly(["prove", "--verify", str(path)])[0] == 1


@st.composite
def proof_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A proof whose fields are each either plausible or adversarial."""
    document: dict[str, Any] = {
        "entry": draw(st.one_of(entry_lines().map(bytes.decode), JSON)),
        "evidence_id": draw(st.one_of(ID, JSON)),
        "format": "notanda-evidence-inclusion-proof",
        "format_version": 1,
        "head": draw(
            st.one_of(
                st.fixed_dictionaries({"root": st.one_of(HEX64, JSON), "size": JSON}),
                JSON,
            )
        ),
        "index": draw(st.one_of(st.integers(), JSON)),
        "path": draw(st.one_of(st.lists(HEX64, max_size=5), JSON)),
        "receipt": draw(st.one_of(HEX64, JSON)),
    }
    return document


@FUZZ
@given(proof_documents())
def test_any_proof_document_fails_as_a_proof(document: dict[str, Any]) -> None:
    with contextlib.suppress(ProofError):
        verify_proof(document)


@FUZZ
@given(st.one_of(st.text(max_size=80), st.builds("{}:{}".format, st.integers(), HEX64)))
def test_any_head_text_is_a_head_or_a_usage_error(text: str) -> None:
    try:
        held = Head.parse(text)
    except ValueError:
        return
    with a_root() as root:
        assert audit(root, held=held).exit_code in {0, 1}


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=300),
        st.lists(st.text(max_size=70), max_size=5).map(
            lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass")
        ),
    )
)
def test_any_receipts_file_is_receipts_or_a_usage_error(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "receipts.txt"
        path.write_bytes(content)
        try:
            receipts = verify_file.read_receipts_file(str(path))
        except verify_file.UsageError:
            return
        assert all(verify_file.is_evidence_id(key) for key in receipts)
