"""Property tests: any bytes in any record file give documented findings, never an exception.

The ``ci`` profile (the default) is derandomized with a bounded number of
examples, so every run tries the same inputs; ``nox -s fuzz`` loads the
``fuzz`` profile, which explores far more of them (``NOTANDA_HYPOTHESIS_PROFILE``).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notanda_evidence import EvidenceStore, _cli, verify_file, verify_record, verify_root

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    max_examples=2_000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("NOTANDA_HYPOTHESIS_PROFILE", "ci"))

RECORD_FILES = ("manifest.json", *verify_file.PAYLOADS)
_REPO = Path(os.environ.get("NOTANDA_REPO_ROOT") or Path(__file__).resolve().parents[3])


def _documented_codes() -> set[str]:
    """The finding codes docs/errors.md lists for records (its first findings table)."""
    text = (_REPO / "docs" / "errors.md").read_text(encoding="utf-8")
    section = text.split("## Verifier findings", 1)[1].split("Log and head findings", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {code for row in rows for code in re.findall(r"`([a-z_]+\.[a-z_]+)`", row.split("|")[1])}


DOCUMENTED = _documented_codes()
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


# ------------------------------------------------------------ strategies


def _nesting(depth: int, opener: str) -> str:
    closer = {"[": "]", '{"a":': "}"}[opener]
    inner = "0" if opener != "[" else ""
    return opener * depth + inner + closer * depth


#: Depths around the limit and past Python's recursion limit, and any other.
_DEPTHS = st.sampled_from([64, 65, 999, 1_000, 5_000, 100_000]) | st.integers(1, 100_000)
adversarial_values = st.one_of(
    st.builds(_nesting, _DEPTHS, st.sampled_from(["[", '{"a":'])),  # deep, balanced
    _DEPTHS.map(lambda n: "[" * n),  # deep and never closed
    (st.sampled_from([4_300, 4_301, 6_000]) | st.integers(1, 6_000)).map(lambda n: "9" * n),
    st.sampled_from(
        ["1e99999", "-1e99999", "1e15", "-0", "0.1e1", "NaN", "Infinity", "-Infinity", "1.0"]
    ),
    st.sampled_from(['"\\ud800"', '"\\udfff\\ud800"', '"\\u0000"', '"\\\\\\""']),  # surrogates
    st.just('{"a":1,"a":2}'),  # a duplicate key
    st.text(max_size=50).map(json.dumps),
)


def _embedded(valid: bytes, fragment: str) -> bytes:
    """Put *fragment* where a value of *valid* was: still canonical around it."""
    text = valid.decode("utf-8")
    return text.replace(':"', ":" + fragment + ',"x":"', 1).encode("utf-8", "surrogatepass")


#: A BOM, an encoded surrogate, a byte UTF-8 never uses, nothing.
_PREFIXES = st.sampled_from([b"\xef\xbb\xbf", b"\xed\xa0\x80", b"\xff", b""])
hostile_bytes = st.one_of(
    st.binary(max_size=2_000),
    adversarial_values.map(lambda v: v.encode("utf-8", "surrogatepass") + b"\n"),
    st.tuples(_PREFIXES, adversarial_values).map(
        lambda t: t[0] + t[1].encode("utf-8", "surrogatepass") + b"\n"
    ),
    st.tuples(_PREFIXES, st.binary(max_size=50)).map(lambda t: t[0] + t[1]),
)


# ---------------------------------------------------------------- helpers


def _sealed(root: Path) -> Path:
    writer = EvidenceStore(root).create()
    writer.write_request({"evidence_id": writer.evidence_id, "query": "q"})
    writer.write_provider({"attempts": [], "observed_json": {"results": []}})
    writer.write_response({"evidence_id": writer.evidence_id, "status": "ok", "results": []})
    writer.seal()
    return writer.path


def _plant(record: Path, name: str, data: bytes, *, reseal: bool) -> None:
    (record / name).write_bytes(data)
    if reseal and name != "manifest.json":
        manifest = json.loads((record / "manifest.json").read_bytes())
        manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        (record / "manifest.json").write_bytes(verify_file.canonical_bytes(manifest))


def _check(result: verify_file.RecordResult) -> None:
    assert isinstance(result.outcome, verify_file.Outcome)
    for finding in result.findings:
        assert finding.code.value in DOCUMENTED, finding.code


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = verify_file.main(argv)
    return code, out.getvalue(), err.getvalue()


def _exercise(name: str, data: bytes, reseal: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        root = Path(tmp)
        bad, good = _sealed(root), _sealed(root)
        _plant(bad, name, data, reseal=reseal)
        for full in (False, True):
            _check(verify_record(bad, full=full))
            results = {r.evidence_id: r for r in verify_root(root, full=full).records}
            for result in results.values():
                _check(result)
            assert results[good.name].outcome is verify_file.Outcome.OK
        for argv in ([str(root)], [str(root), "--full"], [str(bad), "--json", "--full"]):
            code, out, err = _run_cli(argv)
            assert code in (0, 1, 2, 3), (argv, code, err)
            assert "internal error" not in err
            if "--json" in argv:
                assert json.loads(out)["summary"]["exit_code"] == code
            else:
                assert not _CONTROL.search(out.replace("\n", ""))
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert _cli.main(["verify", str(root), "--full"]) in (0, 1, 2, 3)


# ------------------------------------------------------------- properties


@given(name=st.sampled_from(RECORD_FILES), data=hostile_bytes, reseal=st.booleans())
def test_any_bytes_as_any_record_file_give_findings_never_an_exception(
    name: str, data: bytes, reseal: bool
) -> None:
    _exercise(name, data, reseal)


@given(name=st.sampled_from(RECORD_FILES), fragment=adversarial_values, prefix=_PREFIXES)
def test_adversarial_json_inside_canonical_record_files_gives_findings(
    name: str, fragment: str, prefix: bytes
) -> None:
    with tempfile.TemporaryDirectory(prefix="fuzz-valid-") as tmp:
        valid = (_sealed(Path(tmp)) / name).read_bytes()
    _exercise(name, prefix + _embedded(valid, fragment), reseal=True)


def _depth(value: object) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


json_texts = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(alphabet='[]{}"\\ab', max_size=5)),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=30,
).map(json.dumps)


@given(
    data=st.one_of(st.binary(max_size=500), json_texts.map(str.encode)), limit=st.integers(0, 12)
)
def test_json_depth_exceeds_is_total_and_exact_on_json(data: bytes, limit: int) -> None:
    """On any bytes it answers; on JSON text it says exactly whether the nesting passes *limit*."""
    exceeds = verify_file.json_depth_exceeds(data, limit)
    try:
        value = json.loads(data)
    except ValueError:
        return
    assert exceeds is (_depth(value) > limit)


@given(
    data=st.binary(max_size=300) | st.text(alphabet='\\\\\\"[]{}a', max_size=300).map(str.encode),
    step=st.integers(1, 9),
    kind=st.sampled_from([bytes, bytearray]),
)
def test_the_skeleton_read_in_pieces_is_the_skeleton_of_the_whole(
    data: bytes, step: int, kind: type
) -> None:
    """Escapes split across pieces (runs of backslashes at every offset) pair as in the whole."""
    whole = verify_file._ESCAPE_RE.sub(b"", data).translate(
        verify_file._SKELETON, verify_file._NOT_STRUCTURE
    )
    saved, verify_file._SKELETON_STEP = verify_file._SKELETON_STEP, step
    try:
        assert verify_file._skeleton(kind(data)) == whole
    finally:
        verify_file._SKELETON_STEP = saved


@given(depth=st.integers(0, 200), limit=st.integers(0, 100), opener=st.sampled_from(["[", "{"]))
def test_json_depth_exceeds_is_exact_on_valid_nesting(depth: int, limit: int, opener: str) -> None:
    text = _nesting(depth, opener if opener == "[" else '{"a":') if depth else "0"
    assert verify_file.json_depth_exceeds(text, limit) is (depth > limit)
    assert verify_file.json_depth_exceeds(text.encode(), limit) is (depth > limit)


# ------------------------------------------- RFC 3161 tokens (the DER reader)

_DER_TAGS = (0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0C, 0x13, 0x18, 0x30, 0x31, 0xA0, 0xA1, 0xA4)


def _der(tag: int, content: bytes) -> bytes:
    n = len(content)
    length = (
        bytes([n])
        if n < 0x80
        else bytes([0x80 | ((n.bit_length() + 7) // 8)])
        + (n.to_bytes((n.bit_length() + 7) // 8, "big"))
    )
    return bytes([tag]) + length + content


_DER_TREES = st.recursive(
    st.builds(_der, st.sampled_from(_DER_TAGS), st.binary(max_size=40)),
    lambda children: st.builds(
        lambda tag, parts: _der(tag, b"".join(parts)),
        st.sampled_from((0x30, 0x31, 0xA0, 0xA1, 0xA4)),
        st.lists(children, max_size=6),
    ),
    max_leaves=40,
)


def _answers(data: bytes) -> None:
    from notanda_evidence._der import DerProblem, TimeStampResponse, read_time_stamp_response

    assert isinstance(read_time_stamp_response(data), DerProblem | TimeStampResponse)


@given(st.one_of(st.binary(max_size=4096), _DER_TREES))
def test_any_bytes_give_a_time_stamp_answer_never_an_exception(data: bytes) -> None:
    _answers(data)


@given(st.data())
def test_a_mutated_real_token_gives_an_answer_never_an_exception(
    real_token: bytes, data: st.DataObject
) -> None:
    token = bytearray(real_token)
    for _ in range(data.draw(st.integers(1, 8), label="mutations")):
        at = data.draw(st.integers(0, len(token) - 1), label="at")
        kind = data.draw(st.sampled_from(("set", "cut", "insert", "truncate")), label="kind")
        if kind == "set":
            token[at] = data.draw(st.integers(0, 255))
        elif kind == "cut":
            del token[at : at + data.draw(st.integers(1, 16))]
        elif kind == "insert":
            token[at:at] = data.draw(st.binary(min_size=1, max_size=16))
        else:
            del token[at:]
        if not token:
            token = bytearray(b"\x30")
    _answers(bytes(token))


# ------------------------------------------------------- canonical encoding

#: Arbitrary JSON values: nested objects and arrays, text well beyond the BMP
#: (lone surrogates excluded: UTF-8 cannot hold them, and the writer replaces
#: them before encoding), ints of any size, finite floats, bools and null.
_JSON_TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _JSON_TEXT,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(_JSON_TEXT, children, max_size=5)
    ),
    max_leaves=40,
)


@given(json_values)
def test_the_piecewise_encoder_gives_the_one_shot_bytes_and_they_are_canonical(
    value: object,
) -> None:
    pieces = list(verify_file.canonical_pieces(value))
    data = verify_file.canonical_bytes(value)
    assert b"".join(pieces) == data
    assert (verify_file.canonical_text(value) + "\n").encode("utf-8") == data
    parsed, problem = verify_file.parse_canonical(data)
    assert problem is None
    assert verify_file.canonical_bytes(parsed) == data


@given(json_values)
def test_a_parsed_value_inside_a_payload_encodes_as_the_value_itself(value: object) -> None:
    """The body the server hands over is split from its own top, like a payload."""
    wrapped = {"observed_json": verify_file.ParsedJSON(value, verify_file.MAX_JSON_DEPTH - 1)}
    data = b"".join(verify_file.canonical_pieces(wrapped))
    assert data == verify_file.canonical_bytes({"observed_json": value})
