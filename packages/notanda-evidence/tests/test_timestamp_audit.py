"""audit and RFC 3161 tokens: each stored token checked against the log, and by openssl."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from notanda_evidence import EvidenceLog, _cli, _timestamp_audit, audit
from notanda_evidence._timestamp_audit import SignatureCheck, TimestampCode
from notanda_evidence._timestamps import TIMESTAMPS_DIR, checkpoint_digest, token_name
from stamped import stamped_collection
from tsa_authority import Authorities, create_authority


def _codes(root: Path, **kwargs: object) -> tuple[int, list[str]]:
    result = audit(root, **kwargs)  # type: ignore[arg-type]
    assert result.timestamps is not None
    codes = sorted(f.code.value for f in result.timestamps.findings if f.severity.value != "info")
    return result.exit_code, codes


@pytest.fixture
def stamped(tmp_path: Path, tsa: Authorities) -> Path:
    return stamped_collection(tmp_path / "root", tsa, (1, 3), 4)


def test_a_stamped_root_audits_clean_and_says_what_each_token_proves(
    stamped: Path, tsa: Authorities, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli.main(["audit", str(stamped), "--tsa-ca", str(tsa.ca_pem)]) == 0
    out = capsys.readouterr().out
    assert "info tsa.stamped 3.tsr: the first 3 log entries existed no later than 20" in out
    assert "according to TSA CN=Notanda Test TSA,O=Notanda tests" in out
    assert "nonce 1003" in out
    assert out.count("info tsa.verified") == 2
    assert "signatures: 2 verified by openssl under" in out
    assert _cli.main(["audit", str(stamped), "--tsa-ca", str(tsa.ca_pem), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["format_version"] == 4
    assert report["checks"] == ["records", "log", "timestamp_imprints", "timestamp_signatures"]
    tokens = report["timestamps"]["tokens"]
    assert [(t["size"], t["nonce"], t["signature"]) for t in tokens] == [
        (1, "1001", "verified"),
        (3, "1003", "verified"),
    ]
    assert all(t["imprint_matches"] and t["gen_time"].endswith("Z") for t in tokens)


def test_without_tsa_ca_the_imprints_are_checked_and_the_report_says_signatures_were_not(
    stamped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli.main(["audit", str(stamped)]) == 0
    out = capsys.readouterr().out
    assert "2 time-stamp token(s) checked against the log's heads" in out
    assert "their signatures NOT checked (give --tsa-ca FILE)" in out
    result = audit(stamped)
    assert result.timestamps is not None
    assert {t.signature for t in result.timestamps.tokens} == {SignatureCheck.NOT_REQUESTED}


def test_a_root_without_tokens_has_no_timestamp_finding(tmp_path: Path, tsa: Authorities) -> None:
    root = stamped_collection(tmp_path / "root", tsa, (), 2)
    assert _codes(root) == (0, [])
    result = audit(root)
    assert result.timestamps is not None
    assert result.timestamps.findings == ()


def test_tsa_ca_on_a_root_without_tokens_is_a_usage_error(
    tmp_path: Path, tsa: Authorities, capsys: pytest.CaptureFixture[str]
) -> None:
    root = stamped_collection(tmp_path / "root", tsa, (), 2)
    assert _cli.main(["audit", str(root), "--tsa-ca", str(tsa.ca_pem)]) == 2
    err = capsys.readouterr().err
    assert "holds no time-stamp token" in err
    assert "remedy: audit without --tsa-ca" in err


def test_tsa_ca_must_be_a_pem_bundle(
    stamped: Path, tsa: Authorities, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_pem = tmp_path / "ca.txt"
    not_pem.write_text("hello\n")
    assert _cli.main(["audit", str(stamped), "--tsa-ca", str(not_pem)]) == 2
    assert _cli.main(["audit", str(stamped), "--tsa-ca", str(tmp_path / "absent.pem")]) == 2
    assert _cli.main(["audit", str(stamped), "--tsa-ca", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("remedy: give --tsa-ca the PEM file") == 3
    linked = tmp_path / "linked.pem"
    linked.symlink_to(tsa.ca_pem)  # as in /etc/ssl/certs: the auditor's own choice
    assert _cli.main(["audit", str(stamped), "--tsa-ca", str(linked)]) == 0


def test_a_token_from_an_untrusted_ca_fails(stamped: Path, tsa: Authorities) -> None:
    assert _codes(stamped, tsa_ca=tsa.untrusted_ca_pem) == (
        1,
        ["tsa.signature_invalid", "tsa.signature_invalid"],
    )
    # And the other way round: a token the untrusted TSA made, for the right head.
    folder = stamped / TIMESTAMPS_DIR
    head = EvidenceLog(stamped).head()
    (folder / token_name(head.size)).write_bytes(
        tsa.untrusted.stamp(checkpoint_digest(head.size, head.root))
    )
    assert _codes(stamped, tsa_ca=tsa.ca_pem) == (1, ["tsa.signature_invalid"])


def test_every_time_stamp_finding_is_printed_with_its_remedy(
    stamped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = stamped / TIMESTAMPS_DIR
    (folder / "3.tsr").write_bytes(b"not a token at all\n")
    (folder / "notes.txt").write_text("a stray file")
    assert _cli.main(["audit", str(stamped)]) == 1
    lines = capsys.readouterr().out.splitlines()
    for code in (TimestampCode.MALFORMED, TimestampCode.STRAY_ENTRY):
        at = next(i for i, line in enumerate(lines) if f" {code.value} " in line)
        assert lines[at + 1] == f"    remedy: {code.remedy}"
    # A token that checks out needs nothing done: no remedy line under it.
    at = next(i for i, line in enumerate(lines) if "info tsa.stamped 1.tsr" in line)
    assert not lines[at + 1].lstrip().startswith("remedy:")
    assert _cli.main(["audit", str(stamped), "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)["timestamps"]["findings"]
    assert {f["code"]: f["remedy"] for f in findings} == {
        "tsa.malformed": TimestampCode.MALFORMED.remedy,
        "tsa.stray_entry": TimestampCode.STRAY_ENTRY.remedy,
        "tsa.stamped": None,
    }


def test_a_token_swapped_between_two_sizes_fails(stamped: Path, tsa: Authorities) -> None:
    folder = stamped / TIMESTAMPS_DIR
    one, three = (folder / "1.tsr").read_bytes(), (folder / "3.tsr").read_bytes()
    (folder / "1.tsr").write_bytes(three)
    (folder / "3.tsr").write_bytes(one)
    assert _codes(stamped) == (1, ["tsa.imprint_mismatch", "tsa.imprint_mismatch"])
    assert _codes(stamped, tsa_ca=tsa.ca_pem)[0] == 1


def test_a_truncated_or_replaced_token_file_fails(stamped: Path) -> None:
    folder = stamped / TIMESTAMPS_DIR
    token = (folder / "1.tsr").read_bytes()
    (folder / "1.tsr").write_bytes(token[: len(token) // 2])
    (folder / "3.tsr").write_bytes(b"not a token at all\n")
    assert _codes(stamped) == (1, ["tsa.malformed", "tsa.malformed"])
    (folder / "1.tsr").write_bytes(b"\x30" * (70 * 1024))
    assert _codes(stamped) == (1, ["tsa.malformed", "tsa.too_large"])


def test_a_refusal_stored_as_a_token_fails(stamped: Path, tsa: Authorities) -> None:
    (stamped / TIMESTAMPS_DIR / "1.tsr").write_bytes(tsa.reply_to_request(b"\x30\x00"))
    exit_code, codes = _codes(stamped)
    assert (exit_code, codes) == (1, ["tsa.not_granted"])


def test_a_log_rewritten_after_stamping_fails(
    stamped: Path, tsa: Authorities, tmp_path: Path
) -> None:
    log_file = stamped / ".notanda" / "log.jsonl"
    lines = log_file.read_bytes().splitlines(keepends=True)
    # A self-consistent rewrite: another, fully valid history of the same length.
    other = stamped_collection(tmp_path / "other", tsa, (), len(lines))
    log_file.write_bytes((other / ".notanda" / "log.jsonl").read_bytes())
    _, codes = _codes(stamped)
    assert codes == ["tsa.imprint_mismatch", "tsa.imprint_mismatch"]
    assert audit(stamped).exit_code == 1


def test_a_token_for_a_size_beyond_the_log_fails(stamped: Path) -> None:
    folder = stamped / TIMESTAMPS_DIR
    (folder / "9.tsr").write_bytes((folder / "3.tsr").read_bytes())
    assert _codes(stamped) == (1, ["tsa.beyond_log"])


def test_stray_names_are_findings_and_not_read(stamped: Path, tsa: Authorities) -> None:
    folder = stamped / TIMESTAMPS_DIR
    for name in ("007.tsr", "1.tsr.tmp", "notes.txt"):
        (folder / name).write_bytes(b"junk")
    assert _codes(stamped) == (0, ["tsa.stray_entry"] * 3)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_non_regular_token_files_are_refused_unread(stamped: Path) -> None:
    folder = stamped / TIMESTAMPS_DIR
    (folder / "1.tsr").unlink()
    os.mkfifo(folder / "1.tsr")
    (folder / "3.tsr").unlink()
    (folder / "3.tsr").symlink_to(folder / "1.tsr")
    (folder / "2.tsr").mkdir()
    assert _codes(stamped) == (1, ["tsa.unreadable"] * 3)


def test_a_linked_tokens_folder_is_refused(stamped: Path, tmp_path: Path) -> None:
    folder = stamped / TIMESTAMPS_DIR
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere, target_is_directory=True)
    assert _codes(stamped) == (1, ["tsa.unreadable"])


def test_an_openssl_that_does_not_answer_in_time_leaves_each_token_unchecked(
    stamped: Path, tsa: Authorities, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hanging = tmp_path / "openssl"
    hanging.write_text("#!/bin/sh\nexec sleep 30\n")
    hanging.chmod(0o700)
    monkeypatch.setattr(shutil, "which", lambda name: str(hanging))
    monkeypatch.setattr(_timestamp_audit, "OPENSSL_DEADLINE_S", 0.2)
    result = audit(stamped, tsa_ca=tsa.ca_pem)
    assert result.exit_code == 3
    assert result.timestamps is not None
    unchecked = [f for f in result.timestamps.findings if f.code is TimestampCode.UNCHECKED]
    assert len(unchecked) == 2
    assert all("did not answer within 0.2 s" in (f.detail or "") for f in unchecked)


def test_without_openssl_each_token_is_unchecked_with_the_command_to_run(
    stamped: Path, tsa: Authorities, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    result = audit(stamped, tsa_ca=tsa.ca_pem)
    assert result.exit_code == 3
    assert result.timestamps is not None
    unchecked = [f for f in result.timestamps.findings if f.code is TimestampCode.UNCHECKED]
    assert len(unchecked) == 2
    command = unchecked[0].detail.split("run: ", 1)[1]  # type: ignore[union-attr]
    assert command.startswith("openssl ts -verify -digest ")
    # The command given is the one that checks the token, once openssl is there.
    completed = subprocess.run(
        command.split(), cwd=stamped, capture_output=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr


def test_without_openssl_on_path_the_cli_exits_3(
    stamped: Path, tsa: Authorities, tmp_path: Path
) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    completed = subprocess.run(
        [sys.executable, "-m", "notanda_evidence", "audit", str(stamped), "--tsa-ca",
         str(tsa.ca_pem)],
        env={**os.environ, "PATH": str(empty)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert completed.returncode == 3, completed.stderr
    assert completed.stdout.count("warning tsa.unchecked") == 2
    assert "openssl is not on PATH; to check the signature, run: openssl ts -verify" in (
        completed.stdout
    )
    assert "0 verified by openssl" in completed.stdout
    assert "2 NOT checked" in completed.stdout


def test_a_bag_carries_its_tokens_beside_its_log(
    stamped: Path, tsa: Authorities, tmp_path: Path
) -> None:
    bag = tmp_path / "bag"
    assert _cli.main(["export", "--root", str(stamped), "--bagit", str(bag)]) == 0
    tokens = bag / "notanda" / "timestamps"
    source = stamped / TIMESTAMPS_DIR
    assert sorted(p.name for p in tokens.iterdir()) == sorted(p.name for p in source.iterdir())
    assert all((tokens / p.name).read_bytes() == p.read_bytes() for p in source.iterdir())
    tagged = (bag / "tagmanifest-sha256.txt").read_text()
    assert all(f"  notanda/timestamps/{p.name}\n" in tagged for p in source.iterdir())
    assert _codes(bag, tsa_ca=tsa.ca_pem) == (0, [])


def test_errors_md_lists_exactly_the_timestamp_codes_each_with_a_remedy() -> None:
    errors_md = Path(__file__).resolve().parents[3] / "docs" / "errors.md"
    section = errors_md.read_text(encoding="utf-8").split("## Time-stamp findings (`audit`)")[1]
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in section.split("\n## ")[0].splitlines()
        if line.startswith("| `")
    ]
    listed = {code for row in rows for code in re.findall(r"`(tsa\.[a-z_]+)`", row[0])}
    assert listed == {code.value for code in TimestampCode}
    assert all(len(row) == 4 and row[1] in {"error", "warning", "info"} and row[3] for row in rows)
    # Each row's remedy is, word for word, the one audit prints under the finding.
    remedies = {code: row[3] for row in rows for code in re.findall(r"`(tsa\.[a-z_]+)`", row[0])}
    assert remedies == {code.value: code.remedy or "none" for code in TimestampCode}
    # What the table says about exit codes is what audit does.
    exits = {code: row[2] for row in rows for code in re.findall(r"`(tsa\.[a-z_]+)`", row[0])}
    assert exits["tsa.unchecked"] == "3"
    assert exits["tsa.stray_entry"] == "0"


def test_a_hostile_tsa_name_reaches_the_terminal_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evil = create_authority(tmp_path / "evil", "Evil \x1b[2J\u202eTSA")
    root = stamped_collection(tmp_path / "root", Authorities(evil, evil), (1,), 1)
    assert _cli.main(["audit", str(root), "--tsa-ca", str(evil.ca_pem)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "\u202e" not in out
    assert "according to TSA CN=Evil \\x1b[2J\\u202eTSA,O=Notanda tests" in out
