"""Generate the golden evidence records under ``cases/`` and their verdicts in ``expected.json``.

Run ``python generate.py`` to rewrite the vectors; ``test_vectors.py`` runs the
generator into a temporary folder and compares the result byte for byte, so a
vector can only change together with this script.

Each case is a small evidence root. ``expected.json`` gives, per record, the
outcome and the sorted error codes of the default pass and of the ``--full``
pass, the receipt to supply (if any), the verify command's exit codes, and the
empty folders a case needs (git cannot store them; tests create them).
Everything is deterministic: fixed IDs, timestamps and content. Records in the
``b3_*`` cases have the exact byte form notanda-mcp 0.1.0b3 writes, built from
its documented contract (no ``evidence_id`` in the manifest).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))

from notanda_evidence.verify_file import MAX_PAYLOAD_BYTES, NOTICE, canonical_bytes  # noqa: E402

PAYLOADS = ("request.json", "provider.json", "response.json")
#: Nesting of the deep cases: far past any limit and Python's recursion limit.
DEEP = 5000


def evidence_id(label: str) -> str:
    """A fixed, realistic-looking evidence ID derived from a label."""
    return hashlib.sha256(label.encode()).hexdigest()[:32]


def work(openalex_id: str, title: str, doi: str, year: int, authors: list[str]) -> dict[str, Any]:
    return {
        "authors": [{"name": name, "orcid": None} for name in authors],
        "authors_total": len(authors),
        "authors_truncated_by_provider": False,
        "cited_by_count": 12,
        "doi": doi,
        "first_page": "1",
        "is_oa": True,
        "is_retracted": False,
        "issue": "2",
        "language": "en",
        "last_page": "14",
        "oa_status": "gold",
        "oa_url": f"https://doi.org/{doi}",
        "openalex_id": openalex_id,
        "publication_date": f"{year}-03-01",
        "publication_year": year,
        "title": title,
        "type": "article",
        "venue": "Journal of Reproducible Results",
        "volume": "7",
    }


def ours(label: str, *, outcome: str = "ok", error: str = "provider_error") -> dict[str, Any]:
    """The payloads of a record in this project's v1 form."""
    rid = evidence_id(label)
    query = "replication crisis psychology"
    effective = {
        "filter": "has_doi:true,is_oa:true",
        "filters": None,
        "limit": 2,
        "ordering": "openalex_default",
        "params": [
            ["search", query],
            ["filter", "has_doi:true,is_oa:true"],
            ["per-page", "2"],
        ],
        "query": query,
    }
    request = {
        "client": {"name": "vector-client", "version": "1.0"},
        "effective": effective if error != "invalid_arguments" else None,
        "evidence_id": rid,
        "limit": 2 if error != "invalid_arguments" else None,
        "protocol_version": "2025-11-25",
        "provider": "openalex",
        "provider_mode": "injected",
        "requested_at": "2026-11-29T10:00:00.000Z",
        "schema_version": 1,
        "software": {
            "code_digest": "0" * 64,
            "mcp": "2.3.0",
            "notanda_core": "1.3.2",
            "notanda_evidence": "0.2.0b1",
            "notanda_mcp": "0.2.0b1",
            "notanda_openalex": "0.2.0b1",
            "python": "3.11.7",
        },
        "supplied": {"filters": None, "limit": 2, "query": query},
        "tool": "search_literature",
    }
    observed = {
        "meta": {"count": 2, "db_response_time_ms": 31, "page": 1, "per_page": 2},
        "results": [
            {
                "id": "https://openalex.org/W1000000001",
                "doi": "https://doi.org/10.1000/alpha",
                "title": "Estimating the reproducibility of psychological science",
            },
            {
                "id": "https://openalex.org/W1000000002",
                "doi": "https://doi.org/10.1000/beta",
                "title": "Many Labs: variation in replicability",
            },
        ],
    }
    provider = {
        "attempts": [
            {
                "finished_at": "2026-11-29T10:00:00.412Z",
                "headers": {"content-type": "application/json", "x-ratelimit-cost-usd": "0.001"},
                "http_status": 200,
                "method": "GET",
                "started_at": "2026-11-29T10:00:00.003Z",
                "url": "https://api.openalex.org/works?search=replication+crisis+psychology"
                "&filter=has_doi%3Atrue%2Cis_oa%3Atrue&per-page=2",
                "body_bytes": 3114,
            }
        ],
        "capture": "parsed_json_with_secret_redaction_not_wire_bytes",
        "max_attempts": 1,
        "observed_json": observed,
        "pagination": False,
        "provider": "openalex",
    }
    if outcome == "ok":
        response = {
            "content_notice": NOTICE,
            "evidence_id": rid,
            "limit": 2,
            "pagination": False,
            "results": [
                work(
                    "W1000000001",
                    "Estimating the reproducibility of psychological science",
                    "10.1000/alpha",
                    2015,
                    ["Open Science Collaboration"],
                ),
                work(
                    "W1000000002",
                    "Many Labs: variation in replicability",
                    "10.1000/beta",
                    2014,
                    ["Richard A. Klein", "Kate A. Ratliff", "Michelangelo Vianello"],
                ),
            ],
            "skipped_count": 0,
            "status": "ok",
            "total_count": 2,
        }
    else:
        response = {"error": error, "evidence_id": rid, "status": "error"}
        if error == "provider_error":
            response.update({"http_status": 429, "reason": "rate_limited", "retry_after_s": 1})
            provider["attempts"][0]["http_status"] = 429
            provider["observed_json"] = {"error": "Rate limit exceeded"}
        else:
            provider = {
                "attempts": [],
                "capture": "not_attempted",
                "max_attempts": 1,
                "pagination": False,
                "provider": "openalex",
            }
    return {"request.json": request, "provider.json": provider, "response.json": response}


def check(label: str, *, outcome: str = "ok") -> dict[str, Any]:
    """The payloads of a reference-check record (``tool: check_references``).

    Two references: one verified through a DOI batch (attempt 0), one
    ``metadata_mismatch`` found by its title (attempt 1). The error form is a
    check refused before anything was sent (an empty bibliography).
    """
    payloads = ours(label)
    rid = evidence_id(label)
    text = "10.1000/alpha\nMany labs: variation in replicibility, 2015\n"
    request = payloads["request.json"]
    for key in ("effective", "limit", "supplied"):
        del request[key]
    request.update(
        {
            "format": "auto",
            "limits": {"max_references": 100, "max_text_bytes": 262144},
            "parsed": None,
            "text_bytes": len(text.encode()),
            "text_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "tool": "check_references",
        }
    )
    provider = payloads["provider.json"]
    del provider["observed_json"], provider["capture"]
    observed = provider.pop("attempts")[0]
    doi_batch = {
        **observed,
        "capture": "parsed_json_with_secret_redaction_not_wire_bytes",
        "observed_json": {
            "meta": {"count": 1},
            "results": [{"id": "https://openalex.org/W1000000001"}],
        },
        "purpose": "doi_batch",
        "url": "https://api.openalex.org/works?filter=doi%3A10.1000%2Falpha&per_page=50",
    }
    by_title = {
        **observed,
        "capture": "parsed_json_with_secret_redaction_not_wire_bytes",
        "observed_json": {
            "meta": {"count": 1},
            "results": [{"id": "https://openalex.org/W1000000002"}],
        },
        "purpose": "title",
        "url": "https://api.openalex.org/works?search=Many+labs+variation+in+replicibility&per_page=10",
    }
    provider["attempts"] = [doi_batch, by_title]
    provider["max_attempts"] = 3
    first, second = payloads["response.json"]["results"]
    references = [
        {"differs": [], "error": None, "index": 0, "key": None, "observation": 0,
         "retracted": False, "verdict": "verified", "work": first},
        {"differs": ["title", "year"], "error": None, "index": 1, "key": None, "observation": 1,
         "retracted": False, "verdict": "metadata_mismatch", "work": second},
    ]  # fmt: skip
    verdicts = ("verified", "metadata_mismatch", "not_found", "ambiguous", "unchecked", "unparsed")
    summary = {verdict: 0 for verdict in verdicts}
    summary.update(verified=1, metadata_mismatch=1)
    response: dict[str, Any] = {
        "content_notice": NOTICE,
        "evidence_id": rid,
        "references": references,
        "status": "ok",
        "summary": summary,
    }
    if outcome != "ok":
        request["text_bytes"], request["text_sha256"] = 0, hashlib.sha256(b"").hexdigest()
        provider = {
            "attempts": [],
            "max_attempts": 0,
            "pagination": False,
            "provider": "openalex",
        }
        response = {
            "error": "invalid_arguments",
            "evidence_id": rid,
            "field": "references",
            "reason": "empty",
            "status": "error",
        }
    else:
        request["parsed"] = {"detected": True, "format": "text", "references": []}
    return {"request.json": request, "provider.json": provider, "response.json": response}


def b3(label: str, *, outcome: str = "ok") -> dict[str, Any]:
    """The payloads of a record as notanda-mcp 0.1.0b3 wrote them."""
    rid = evidence_id(label)
    query = "scientific reproducibility"
    request = {
        "client": {"name": "mcp", "version": "0.1.0"},
        "effective": {
            "affiliation_countries": [],
            "extra_filters": [],
            "filter": "has_doi:true,is_oa:true",
            "from_publication_year": None,
            "has_doi": True,
            "is_oa": True,
            "languages": [],
            "oa_status": None,
            "primary_topic_only": False,
            "publication_year": None,
            "search": query,
            "to_publication_year": None,
            "topic_id": None,
        },
        "evidence_id": rid,
        "limit": 2,
        "notanda_core_version": "1.3.2",
        "provider": "openalex",
        "requested_at": "2026-10-02T09:14:07Z",
        "schema_version": 1,
        "server_sha256": "5" * 64,
        "source_experiment_commit": "366bc2d4827aa915e2e58a82cd567163ed63d4be",
        "supplied": {"limit": 2, "query": query},
        "tool": "search_literature",
    }
    attempt = {
        "finished_at": "2026-10-02T09:14:08Z",
        "http_status": 200,
        "method": "GET",
        "started_at": "2026-10-02T09:14:07Z",
        "url": "https://api.openalex.org/works?filter=has_doi%3Atrue%2Cis_oa%3Atrue&per-page=2"
        "&cursor=%2A&select=id&search=scientific+reproducibility&api_key=REDACTED",
        "body_bytes": 1201,
    }
    provider = {
        "attempts": [attempt],
        "capture": "parsed_json_with_secret_redaction_not_wire_bytes",
        "max_attempts": 1,
        "observed_json": {
            "meta": {"count": 1},
            "results": [{"id": "https://openalex.org/W2000000001"}],
        },
        "pagination": False,
        "raw_record_count": 1,
        "normalized_record_count": 1,
    }
    if outcome == "ok":
        response = {
            "content_notice": NOTICE,
            "evidence_id": rid,
            "limit": 2,
            "pagination": False,
            "results": [
                {
                    "document_id": "doi_10_1000_gamma_0123456789ab",
                    "doi": "10.1000/gamma",
                    "source_id": "W2000000001",
                    "title": "Reproducibility in science",
                    "year": 2020,
                }
            ],
            "status": "ok",
            "total_count": 1,
        }
    else:
        attempt["http_status"] = 500
        attempt["error_type"] = "ProviderError"
        response = {
            "error": "provider_error",
            "error_type": "ProviderError",
            "evidence_id": rid,
            "status": "error",
        }
    return {"request.json": request, "provider.json": provider, "response.json": response}


def manifest_for(blobs: dict[str, bytes], outcome: str, rid: str | None) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "files": {
            name: {"bytes": len(blobs[name]), "sha256": hashlib.sha256(blobs[name]).hexdigest()}
            for name in PAYLOADS
        },
        "outcome": outcome,
        "schema_version": 1,
        "status": "complete",
    }
    if rid is not None:
        manifest["evidence_id"] = rid
    return manifest


class Root:
    """One case: an evidence root with records and expected verdicts."""

    def __init__(self, base: Path, name: str, description: str) -> None:
        self.path = base / "cases" / name
        self.path.mkdir(parents=True)
        self.description = description
        self.records: dict[str, dict[str, Any]] = {}
        self.exit: dict[str, int] = {}

    def write(
        self,
        folder: str,
        payloads: dict[str, Any],
        *,
        outcome: str | None = None,
        with_id: bool = True,
        manifest: bool = True,
    ) -> dict[str, Any]:
        """Write a record folder from payload values; return the blobs and receipt."""
        directory = self.path / folder
        directory.mkdir()
        blobs = {name: canonical_bytes(value) for name, value in payloads.items()}
        for name, data in blobs.items():
            (directory / name).write_bytes(data)
        info: dict[str, Any] = {"dir": directory, "blobs": blobs}
        if manifest:
            status = outcome or payloads["response.json"]["status"]
            data = canonical_bytes(manifest_for(blobs, status, folder if with_id else None))
            (directory / "manifest.json").write_bytes(data)
            info["manifest"] = data
            info["receipt"] = hashlib.sha256(data).hexdigest()
        return info

    def reseal(
        self, info: dict[str, Any], *, with_id: bool = True, outcome: str | None = None
    ) -> None:
        """Recompute the manifest from the payload files now on disk."""
        directory: Path = info["dir"]
        blobs = {name: (directory / name).read_bytes() for name in PAYLOADS}
        status = outcome or json.loads(blobs["response.json"])["status"]
        data = canonical_bytes(manifest_for(blobs, status, directory.name if with_id else None))
        (directory / "manifest.json").write_bytes(data)
        info["receipt"] = hashlib.sha256(data).hexdigest()

    def expect(
        self,
        rid: str,
        outcome: str,
        codes: list[str] | None = None,
        *,
        full: tuple[str, list[str]] | None = None,
        receipt: str | None = None,
    ) -> None:
        entry: dict[str, Any] = {
            "default": {"codes": sorted(codes or []), "outcome": outcome},
            "full": {
                "codes": sorted((full or (outcome, codes or []))[1]),
                "outcome": (full or (outcome, codes or []))[0],
            },
        }
        if receipt is not None:
            entry["receipt"] = receipt
        self.records[rid] = entry

    def exits(self, default: int, full: int | None = None) -> None:
        self.exit = {"default": default, "full": default if full is None else full}


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def dumps_loose(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode()


def build(base: Path) -> dict[str, Any]:
    cases: dict[str, Root] = {}

    def case(name: str, description: str) -> Root:
        root = Root(base, name, description)
        cases[name] = root
        return root

    # ---- valid records -------------------------------------------------
    for label, payloads, text in (
        ("ok", ours("ok"), "a sealed successful search in this project's form"),
        (
            "error_provider",
            ours("error_provider", outcome="error"),
            "a sealed provider failure: a failed search is evidence too",
        ),
        (
            "error_invalid_arguments",
            ours("error_invalid_arguments", outcome="error", error="invalid_arguments"),
            "a sealed invalid-arguments record with no provider call",
        ),
        (
            "error_configuration",
            ours("error_configuration", outcome="error", error="configuration_error"),
            "a sealed configuration-error record (no API key)",
        ),
    ):
        root = case(label, text)
        rid = evidence_id(label)
        root.write(rid, payloads)
        root.expect(rid, "ok")
        root.exits(0)

    for label, outcome, text in (
        ("check_ok", "ok", "a sealed reference check: one verified, one metadata_mismatch"),
        ("check_refused", "error", "a sealed reference check refused before anything was sent"),
    ):
        root = case(label, text)
        rid = evidence_id(label)
        root.write(rid, check(label, outcome=outcome))
        root.expect(rid, "ok")
        root.exits(0)

    for label, outcome in (("b3_ok", "ok"), ("b3_error", "error")):
        root = case(label, f"notanda-mcp 0.1.0b3 byte form, outcome {outcome}: must verify forever")
        rid = evidence_id(label)
        root.write(rid, b3(label, outcome=outcome), with_id=False)
        root.expect(rid, "ok")
        root.exits(0)

    root = case("unicode", "CJK, Cyrillic, right-to-left and astral text, stored as UTF-8")
    rid = evidence_id("unicode")
    payloads = ours("unicode")
    payloads["response.json"]["results"][0]["title"] = (
        "再現性の危機 / Кризис воспроизводимости / אמינות 🧪"
    )
    root.write(rid, payloads)
    root.expect(rid, "ok")
    root.exits(0)

    root = case("surrogate_replaced", "provider text that held a lone surrogate, stored as U+FFFD")
    rid = evidence_id("surrogate_replaced")
    payloads = ours("surrogate_replaced")
    payloads["provider.json"]["observed_json"]["results"][0]["title"] = "broken \ufffd emoji"
    payloads["response.json"]["results"][0]["title"] = "broken \ufffd emoji"
    root.write(rid, payloads)
    root.expect(rid, "ok")
    root.exits(0)

    root = case("with_receipt", "a sealed record checked with its correct receipt")
    rid = evidence_id("with_receipt")
    info = root.write(rid, ours("with_receipt"))
    root.expect(rid, "ok", receipt=info["receipt"])
    root.exits(0)

    root = case("manifest_extra_key", "an unknown manifest key is ignored by v1 readers")
    rid = evidence_id("manifest_extra_key")
    info = root.write(rid, ours("manifest_extra_key"))
    manifest = json.loads(info["manifest"])
    manifest["x_future"] = {"note": "ignored"}
    (info["dir"] / "manifest.json").write_bytes(canonical_bytes(manifest))
    root.expect(rid, "ok")
    root.exits(0)

    root = case("stray_root_entries", "stray entries in the root are warnings, never records")
    rid = evidence_id("stray_root_entries")
    root.write(rid, ours("stray_root_entries"))
    (root.path / "notes.txt").write_text("not a record\n")
    (root.path / rid.upper()).mkdir()
    (root.path / (rid + "0")).mkdir()
    (root.path / ".notanda").mkdir()
    root.expect(rid, "ok")
    root.exits(0)

    # ---- incomplete records --------------------------------------------
    root = case("incomplete_empty", "the writer died right after creating the folder")
    rid = evidence_id("incomplete_empty")
    (root.path / rid).mkdir()
    root.expect(rid, "incomplete", ["record.no_manifest"])
    root.exits(3)

    root = case("incomplete_request_only", "the writer died while waiting on the provider")
    rid = evidence_id("incomplete_request_only")
    info = root.write(rid, ours("incomplete_request_only"), manifest=False)
    for name in ("provider.json", "response.json"):
        (info["dir"] / name).unlink()
    root.expect(rid, "incomplete", ["record.no_manifest"])
    root.exits(3)

    for label, source, pending, text in (
        (
            "incomplete_pending_zero",
            ours,
            "provider.json.pending",
            "request.json plus a zero-byte provider.json.pending",
        ),
        (
            "incomplete_b3_pending",
            b3,
            "provider.pending",
            "a 0.1.0b3 record interrupted mid-write: request.json and an empty provider.pending",
        ),
    ):
        root = case(label, text)
        rid = evidence_id(label)
        info = root.write(rid, source(label), manifest=False)
        for name in ("provider.json", "response.json"):
            (info["dir"] / name).unlink()
        (info["dir"] / pending).write_bytes(b"")
        root.expect(rid, "incomplete", ["record.no_manifest"])
        root.exits(3)

    root = case("incomplete_all_payloads", "all three payloads but no manifest")
    rid = evidence_id("incomplete_all_payloads")
    root.write(rid, ours("incomplete_all_payloads"), manifest=False)
    root.expect(rid, "incomplete", ["record.no_manifest"])
    root.exits(3)

    root = case("incomplete_beside_ok", "one complete and one incomplete record")
    good, bad = evidence_id("incomplete_beside_ok/1"), evidence_id("incomplete_beside_ok/2")
    payloads = ours("incomplete_beside_ok/1")
    root.write(good, payloads)
    other = copy.deepcopy(payloads)
    other["request.json"]["evidence_id"] = bad
    other["response.json"]["evidence_id"] = bad
    root.write(bad, other, manifest=False)
    root.expect(good, "ok")
    root.expect(bad, "incomplete", ["record.no_manifest"])
    root.exits(3)

    # ---- damage ------------------------------------------------------------
    def damaged(
        name: str,
        description: str,
        mutate: Callable[[Root, dict[str, Any]], None],
        outcome: str,
        codes: list[str],
        *,
        full: tuple[str, list[str]] | None = None,
        source: Callable[[str], dict[str, Any]] = ours,
        with_id: bool = True,
    ) -> None:
        root = case(name, description)
        rid = evidence_id(name)
        info = root.write(rid, source(name), with_id=with_id)
        mutate(root, info)
        root.expect(rid, outcome, codes, full=full)
        full_outcome = outcome if full is None else full[0]
        root.exits(0 if outcome == "ok" else 1, 0 if full_outcome == "ok" else 1)

    for name in PAYLOADS:
        stem = name.split(".")[0]
        damaged(
            f"flip_{stem}",
            f"one bit flipped in {name}, same size",
            lambda r, i, n=name: flip(i["dir"] / n, 40),
            "integrity_failure",
            ["payload.digest_mismatch"],
        )
    damaged(
        "flip_b3_response",
        "one bit flipped in a 0.1.0b3 response.json",
        lambda r, i: flip(i["dir"] / "response.json", 40),
        "integrity_failure",
        ["payload.digest_mismatch"],
        source=b3,
        with_id=False,
    )
    damaged(
        "flip_manifest_digest",
        "one hex digit of request.json's digest changed in the manifest",
        lambda r, i: _replace_in(
            i["dir"] / "manifest.json",
            hashlib.sha256(i["blobs"]["request.json"]).hexdigest()[:8],
            "ffffffff",
        ),
        "integrity_failure",
        ["payload.digest_mismatch"],
    )
    damaged(
        "truncated_provider",
        "provider.json cut short",
        lambda r, i: _truncate(i["dir"] / "provider.json", 100),
        "integrity_failure",
        ["payload.size_mismatch"],
    )
    damaged(
        "truncated_manifest",
        "manifest.json cut mid-JSON",
        lambda r, i: _truncate(i["dir"] / "manifest.json", 60),
        "integrity_failure",
        ["manifest.unparsable"],
    )
    damaged(
        "empty_manifest",
        "a zero-byte manifest.json",
        lambda r, i: (i["dir"] / "manifest.json").write_bytes(b""),
        "integrity_failure",
        ["manifest.unparsable"],
    )
    damaged(
        "missing_provider",
        "manifest present, provider.json deleted",
        lambda r, i: (i["dir"] / "provider.json").unlink(),
        "integrity_failure",
        ["payload.missing"],
    )
    damaged(
        "extra_file",
        "an extra file inside a sealed record",
        lambda r, i: (i["dir"] / "notes.txt").write_text("added later\n"),
        "integrity_failure",
        ["record.unexpected_entry"],
    )
    damaged(
        "pending_in_sealed",
        "a .pending file inside a sealed record",
        lambda r, i: (i["dir"] / "response.json.pending").write_bytes(b"{}"),
        "integrity_failure",
        ["record.pending_file"],
    )
    damaged(
        "b3_pending_in_sealed",
        "a 0.1.0b3 temporary file (response.pending) inside a sealed 0.1.0b3 record",
        lambda r, i: (i["dir"] / "response.pending").write_bytes(b""),
        "integrity_failure",
        ["record.pending_file"],
        source=b3,
        with_id=False,
    )
    deep = "[" * DEEP + "]" * DEEP
    damaged(
        "deep_manifest",
        f"the manifest nests {DEEP} arrays deep: a finding, never a RecursionError",
        lambda r, i: _raw_manifest(i, lambda t: t.replace('"outcome":"ok"', f'"outcome":{deep}')),
        "integrity_failure",
        ["manifest.too_deep"],
    )
    damaged(
        "deep_response",
        f"response.json nests {DEEP} arrays deep, consistently hashed",
        lambda r, i: _rewrite_payload(
            r,
            i,
            "response.json",
            lambda t: t.replace('"pagination":false', f'"pagination":{deep}'),
            outcome="ok",
        ),
        "integrity_failure",
        ["payload.too_deep"],
    )
    damaged(
        "deep_provider",
        f"provider.json nests {DEEP} arrays deep: only the full pass parses it",
        lambda r, i: _rewrite_payload(
            r, i, "provider.json", lambda t: t.replace('"pagination":false', f'"pagination":{deep}')
        ),
        "ok",
        [],
        full=("integrity_failure", ["payload.too_deep"]),
    )
    damaged(
        "too_large_provider",
        "the manifest states provider.json is one byte over the 64 MiB limit: never read",
        lambda r, i: _edit_manifest(
            i, lambda m: m["files"]["provider.json"].update(bytes=MAX_PAYLOAD_BYTES + 1)
        ),
        "integrity_failure",
        ["payload.too_large"],
    )
    damaged(
        "wrong_size",
        "the manifest states a wrong size for response.json",
        lambda r, i: _edit_manifest(
            i,
            lambda m: m["files"]["response.json"].update(
                bytes=m["files"]["response.json"]["bytes"] + 1
            ),
        ),
        "integrity_failure",
        ["payload.size_mismatch"],
    )
    damaged(
        "wrong_digest",
        "the manifest states a wrong digest for provider.json",
        lambda r, i: _edit_manifest(
            i, lambda m: m["files"]["provider.json"].update(sha256="a" * 64)
        ),
        "integrity_failure",
        ["payload.digest_mismatch"],
    )
    damaged(
        "uppercase_digest",
        "a digest in the manifest written in uppercase hex",
        lambda r, i: _edit_manifest(
            i,
            lambda m: m["files"]["request.json"].update(
                sha256=m["files"]["request.json"]["sha256"].upper()
            ),
        ),
        "integrity_failure",
        ["manifest.invalid"],
    )
    damaged(
        "duplicate_key_manifest",
        "the manifest repeats the files key; the last one is consistent",
        lambda r, i: _raw_manifest(i, lambda t: t.replace('"files":', '"files":{},"files":', 1)),
        "integrity_failure",
        ["manifest.duplicate_key"],
    )
    damaged(
        "duplicate_key_response",
        "response.json repeats a key, consistently hashed",
        lambda r, i: _rewrite_payload(
            r, i, "response.json", lambda t: t.replace('"status":', '"status":"error","status":', 1)
        ),
        "integrity_failure",
        ["payload.duplicate_key"],
    )
    damaged(
        "duplicate_key_provider",
        "provider.json repeats a key: only the full pass parses it",
        lambda r, i: _rewrite_payload(
            r, i, "provider.json", lambda t: t.replace('"capture":', '"capture":"x","capture":', 1)
        ),
        "ok",
        [],
        full=("integrity_failure", ["payload.duplicate_key"]),
    )
    damaged(
        "nan_manifest",
        "NaN as a size in the manifest",
        lambda r, i: _raw_manifest(i, lambda t: t.replace('"bytes":', '"bytes":NaN,"x":', 1)),
        "integrity_failure",
        ["manifest.unparsable"],
    )
    damaged(
        "nan_response",
        "NaN inside response.json, consistently hashed",
        lambda r, i: _rewrite_payload(
            r, i, "response.json", lambda t: t.replace('"limit":2', '"limit":NaN', 1)
        ),
        "integrity_failure",
        ["payload.unparsable"],
    )
    damaged(
        "whitespace_manifest",
        "a pretty-printed manifest",
        lambda r, i: (i["dir"] / "manifest.json").write_bytes(
            dumps_loose(json.loads(i["manifest"]))
        ),
        "integrity_failure",
        ["manifest.not_canonical"],
    )
    damaged(
        "whitespace_request",
        "a pretty-printed request.json, consistently hashed",
        lambda r, i: _rewrite_payload(
            r, i, "request.json", lambda t: dumps_loose(json.loads(t)).decode()
        ),
        "integrity_failure",
        ["payload.not_canonical"],
    )
    damaged(
        "whitespace_provider",
        "a pretty-printed provider.json: only the full pass parses it",
        lambda r, i: _rewrite_payload(
            r, i, "provider.json", lambda t: dumps_loose(json.loads(t)).decode()
        ),
        "ok",
        [],
        full=("integrity_failure", ["payload.not_canonical"]),
    )
    damaged(
        "bom_manifest",
        "a UTF-8 byte-order mark before the manifest",
        lambda r, i: (i["dir"] / "manifest.json").write_bytes(b"\xef\xbb\xbf" + i["manifest"]),
        "integrity_failure",
        ["manifest.not_canonical"],
    )
    damaged(
        "ascii_escaped_response",
        "response.json written with \\u escapes instead of UTF-8",
        lambda r, i: _rewrite_payload(
            r,
            i,
            "response.json",
            lambda t: (
                json.dumps(json.loads(t), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
                + "\n"
            ),
        ),
        "integrity_failure",
        ["payload.not_canonical"],
        source=_with_unicode,
    )
    damaged(
        "lone_surrogate_response",
        "an escaped lone surrogate: canonical form cannot hold it",
        lambda r, i: _rewrite_payload(
            r, i, "response.json", lambda t: t.replace("Estimating", "\\ud83dEstimating", 1)
        ),
        "integrity_failure",
        ["payload.not_canonical"],
    )
    damaged(
        "schema_version_true",
        "schema_version true instead of 1",
        lambda r, i: _edit_manifest(i, lambda m: m.update(schema_version=True)),
        "integrity_failure",
        ["manifest.invalid"],
    )
    damaged(
        "schema_version_float",
        "schema_version 1.0 instead of 1",
        lambda r, i: _raw_manifest(
            i, lambda t: t.replace('"schema_version":1', '"schema_version":1.0')
        ),
        "integrity_failure",
        ["manifest.invalid"],
    )
    damaged(
        "schema_version_string",
        'schema_version "1" instead of 1',
        lambda r, i: _edit_manifest(i, lambda m: m.update(schema_version="1")),
        "integrity_failure",
        ["manifest.invalid"],
    )
    damaged(
        "status_not_complete",
        'manifest status "pending"',
        lambda r, i: _edit_manifest(i, lambda m: m.update(status="pending")),
        "integrity_failure",
        ["manifest.invalid"],
    )
    damaged(
        "manifest_missing_outcome",
        "the manifest lacks outcome",
        lambda r, i: _edit_manifest(i, lambda m: m.pop("outcome")),
        "integrity_failure",
        ["manifest.invalid"],
    )
    damaged(
        "manifest_not_object",
        "the manifest is a JSON array",
        lambda r, i: (i["dir"] / "manifest.json").write_bytes(canonical_bytes([1])),
        "integrity_failure",
        ["manifest.invalid"],
    )
    damaged(
        "manifest_extra_payload",
        "the manifest lists a fourth file",
        lambda r, i: _edit_manifest(
            i, lambda m: m["files"].update({"notes.json": m["files"]["request.json"]})
        ),
        "integrity_failure",
        ["manifest.invalid"],
    )
    damaged(
        "id_mismatch_request",
        "request.json names another evidence ID",
        lambda r, i: _rewrite_payload(
            r, i, "request.json", lambda t: t.replace(i["dir"].name, "f" * 32)
        ),
        "integrity_failure",
        ["identity.mismatch"],
    )
    damaged(
        "id_mismatch_manifest",
        "the manifest names another evidence ID",
        lambda r, i: _edit_manifest(i, lambda m: m.update(evidence_id="e" * 32)),
        "integrity_failure",
        ["identity.mismatch"],
    )
    damaged(
        "outcome_mismatch",
        "manifest outcome error for an ok response",
        lambda r, i: r.reseal(i, outcome="error"),
        "integrity_failure",
        ["outcome.mismatch"],
    )
    damaged(
        "response_status_invalid",
        'response status "maybe", consistently hashed',
        lambda r, i: _rewrite_payload(
            r,
            i,
            "response.json",
            lambda t: t.replace('"status":"ok"', '"status":"maybe"'),
            outcome="ok",
        ),
        "integrity_failure",
        ["payload.invalid"],
    )
    damaged(
        "response_not_object",
        "response.json is a JSON string, consistently hashed",
        lambda r, i: _rewrite_payload(r, i, "response.json", lambda t: '"ok"\n', outcome="ok"),
        "integrity_failure",
        ["payload.invalid"],
    )

    root = case("id_mismatch_folder", "a whole record moved under another folder name")
    rid, moved = evidence_id("id_mismatch_folder"), evidence_id("id_mismatch_folder/moved")
    info = root.write(rid, ours("id_mismatch_folder"))
    info["dir"].rename(root.path / moved)
    root.expect(moved, "integrity_failure", ["identity.mismatch"] * 3)
    root.exits(1)

    root = case(
        "schema_version_2", "a record of a later schema version is never judged by v1 rules"
    )
    rid = evidence_id("schema_version_2")
    info = root.write(rid, ours("schema_version_2"))
    _edit_manifest(info, lambda m: m.update(schema_version=2))
    root.expect(rid, "unsupported_schema_version", ["manifest.unsupported_version"])
    root.exits(1)

    # ---- links ---------------------------------------------------------
    root = case("symlink_payload", "response.json is a symlink to an identical copy outside")
    rid = evidence_id("symlink_payload")
    info = root.write(rid, ours("symlink_payload"))
    (root.path / "elsewhere.json").write_bytes(info["blobs"]["response.json"])
    (info["dir"] / "response.json").unlink()
    os.symlink("../elsewhere.json", info["dir"] / "response.json")
    root.expect(rid, "integrity_failure", ["fs.symlink"])
    root.exits(1)

    root = case("symlink_record", "the record folder is a symlink to a valid record elsewhere")
    rid = evidence_id("symlink_record")
    info = root.write(rid, ours("symlink_record"))
    hidden = root.path / "hidden"
    hidden.mkdir()
    info["dir"].rename(hidden / rid)
    os.symlink(f"hidden/{rid}", root.path / rid)
    root.expect(rid, "integrity_failure", ["fs.symlink"])
    root.exits(1)

    # ---- reference checks ------------------------------------------------
    damaged(
        "check_verdict_edited",
        "a check's metadata_mismatch edited to verified, the manifest left as it was",
        lambda r, i: _replace_in(i["dir"] / "response.json", "metadata_mismatch", "verified"),
        "integrity_failure",
        ["payload.size_mismatch"],
        source=check,
    )
    damaged(
        "check_observation_wrong",
        "a check's observation pointed at the other attempt and the manifest recomputed:"
        " only the full pass sees that the attempt never returned the work",
        lambda r, i: _rewrite_payload(
            r, i, "response.json", lambda t: t.replace('"observation":1', '"observation":0', 1)
        ),
        "ok",
        [],
        full=("integrity_failure", ["observation.work_missing"]),
        source=check,
    )
    damaged(
        "check_work_swapped",
        "a check's matched work replaced by one no attempt returned, the manifest recomputed",
        lambda r, i: _rewrite_payload(
            r,
            i,
            "response.json",
            lambda t: t.replace('"openalex_id":"W1000000002"', '"openalex_id":"W1999999999"', 1),
        ),
        "ok",
        [],
        full=("integrity_failure", ["observation.work_missing"]),
        source=check,
    )

    # ---- receipts ------------------------------------------------------
    for name, with_receipt in (
        ("coordinated_no_receipt", False),
        ("coordinated_with_receipt", True),
    ):
        root = case(name, "a title edited and the manifest recomputed: only a receipt catches it")
        rid = evidence_id(name)
        info = root.write(rid, ours(name))
        original = info["receipt"]
        _rewrite_payload(
            root, info, "response.json", lambda t: t.replace("Estimating", "Confirming", 1)
        )
        if with_receipt:
            root.expect(rid, "receipt_mismatch", ["receipt.mismatch"], receipt=original)
            root.exits(1)
        else:
            root.expect(rid, "ok")
            root.exits(0)

    root = case("provider_swap", "provider.json taken from another record, manifest recomputed")
    rid, donor = evidence_id("provider_swap"), evidence_id("provider_swap/donor")
    info = root.write(rid, ours("provider_swap"))
    original = info["receipt"]
    donor_payloads = ours("provider_swap/donor", outcome="error")
    (info["dir"] / "provider.json").write_bytes(canonical_bytes(donor_payloads["provider.json"]))
    root.reseal(info)
    root.expect(rid, "receipt_mismatch", ["receipt.mismatch"], receipt=original)
    root.exits(1)
    del donor

    root = case("uppercase_receipt", "the correct receipt, but in uppercase")
    rid = evidence_id("uppercase_receipt")
    info = root.write(rid, ours("uppercase_receipt"))
    root.expect(rid, "receipt_mismatch", ["receipt.malformed"], receipt=info["receipt"].upper())
    root.exits(1)

    root = case("malformed_receipt", "a receipt that is not 64 hex digits")
    rid = evidence_id("malformed_receipt")
    root.write(rid, ours("malformed_receipt"))
    root.expect(rid, "receipt_mismatch", ["receipt.malformed"], receipt="not-a-receipt")
    root.exits(1)

    root = case("other_record_receipt", "record B checked with record A's receipt")
    first, second = evidence_id("other_record_receipt/a"), evidence_id("other_record_receipt/b")
    info_a = root.write(first, _relabel(ours("other_record_receipt/a"), first))
    root.write(second, _relabel(ours("other_record_receipt/b"), second))
    root.expect(first, "ok", receipt=info_a["receipt"])
    root.expect(second, "receipt_mismatch", ["receipt.mismatch"], receipt=info_a["receipt"])
    root.exits(1)

    root = case("receipt_for_missing_record", "a receipt held for a record that was deleted")
    rid, gone = (
        evidence_id("receipt_for_missing_record"),
        evidence_id("receipt_for_missing_record/gone"),
    )
    root.write(rid, ours("receipt_for_missing_record"))
    root.expect(rid, "ok")
    root.expect(gone, "not_found", ["record.missing"], receipt="0" * 64)
    root.exits(1)

    return {
        "cases": {
            name: {"description": c.description, "exit": c.exit, "records": c.records}
            for name, c in sorted(cases.items())
        },
        "format": "notanda-evidence-vectors",
        "format_version": 1,
    }


def _with_unicode(label: str) -> dict[str, Any]:
    payloads = ours(label)
    payloads["response.json"]["results"][0]["title"] = "Überprüfung der Replizierbarkeit"
    return payloads


def _relabel(payloads: dict[str, Any], rid: str) -> dict[str, Any]:
    payloads["request.json"]["evidence_id"] = rid
    payloads["response.json"]["evidence_id"] = rid
    return payloads


def _replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise ValueError(f"{old!r} not in {path}")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _truncate(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def _edit_manifest(info: dict[str, Any], edit: Callable[[dict[str, Any]], object]) -> None:
    manifest = json.loads(info["manifest"])
    edit(manifest)
    (info["dir"] / "manifest.json").write_bytes(canonical_bytes(manifest))


def _raw_manifest(info: dict[str, Any], edit: Callable[[str], str]) -> None:
    text = info["manifest"].decode("utf-8")
    changed = edit(text)
    if changed == text:
        raise ValueError("manifest edit changed nothing")
    (info["dir"] / "manifest.json").write_bytes(changed.encode("utf-8"))


def _rewrite_payload(
    root: Root,
    info: dict[str, Any],
    name: str,
    edit: Callable[[str], str],
    outcome: str | None = None,
) -> None:
    path: Path = info["dir"] / name
    text = path.read_text(encoding="utf-8", errors="surrogatepass")
    changed = edit(text)
    if changed == text:
        raise ValueError(f"{name} edit changed nothing")
    path.write_bytes(changed.encode("utf-8", errors="surrogatepass"))
    root.reseal(info, outcome=outcome)


def generate(out: Path) -> None:
    """Write the vectors under *out* (``cases/`` and ``expected.json``)."""
    if (out / "cases").exists():
        shutil.rmtree(out / "cases")
    expected = build(out)
    # Git keeps no empty folders, so they are listed and made when a case is used.
    for name, entry in expected["cases"].items():
        case_dir = out / "cases" / name
        entry["empty_dirs"] = sorted(
            str(Path(folder).relative_to(case_dir))
            for folder, dirs, files in os.walk(case_dir)
            if not dirs and not files
        )
    (out / "expected.json").write_text(
        json.dumps(expected, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    generate(HERE)
    print(f"wrote {len(json.loads((HERE / 'expected.json').read_text())['cases'])} cases")
