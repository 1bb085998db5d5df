"""Shared fixtures: the golden vectors, materialised into a temporary folder."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from notanda_evidence import EvidenceLog, EvidenceStore
from vector_cases import materialize_case

VECTORS = Path(__file__).resolve().parent / "vectors"


def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((VECTORS / name).read_text(encoding="utf-8"))
    return loaded


EXPECTED = _load("expected.json")
LOG_EXPECTED = _load("log-expected.json")


def _materializer(tmp_path: Path, cases: str, expected: dict[str, Any]) -> Callable[[str], Path]:
    """Copy one case of *cases* (links kept, empty folders made) and return its root."""

    def make(case: str) -> Path:
        empty_dirs = expected["cases"][case]["empty_dirs"]
        return materialize_case(VECTORS / cases / case, empty_dirs, tmp_path / case)

    return make


@pytest.fixture
def materialize(tmp_path: Path) -> Callable[[str], Path]:
    """A record vector case, ready to verify."""
    return _materializer(tmp_path, "cases", EXPECTED)


@pytest.fixture
def log_case(tmp_path: Path) -> Callable[[str], Path]:
    """A log vector case, ready to audit."""
    return _materializer(tmp_path, "log-cases", LOG_EXPECTED)


# The test time-stamp authority (OpenSSL's own), shared with notanda-mcp's tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests-support"))
from tsa_authority import Authorities, create_authorities  # noqa: E402


@pytest.fixture(scope="session")
def tsa(tmp_path_factory: pytest.TempPathFactory) -> Authorities:
    """A trusted and an untrusted RFC 3161 authority, made once per test run."""
    return create_authorities(tmp_path_factory.mktemp("tsa"))


@pytest.fixture(scope="session")
def real_token(tsa: Authorities) -> bytes:
    """One granted TimeStampResp with a nonce, a TSA name and certificates, to mutate."""
    return tsa.stamp(bytes(range(32)), nonce=2**63 + 5)


TITLE = "Effects of $x_1$ & {braces} #1 on 100% ~50 ^2 \\ back\nslash"


def search_record(
    root: Path,
    *,
    mode: str = "network",
    works: Sequence[Mapping[str, Any]] = ({},),
    requested_at: str = "2026-11-29T10:00:00.000Z",
    logged: bool = True,
    **work: Any,
) -> tuple[str, str]:
    """A sealed, logged record shaped like the server's, with one work per item of *works*.

    Each work is the default work updated with its item and then with *work*.
    """
    writer = EvidenceStore(root).create()
    block = {
        "authors": [
            {"name": "Ada Lovelace", "orcid": None},
            {"name": "Charles Babbage", "orcid": None},
        ],
        "authors_total": 3,
        "authors_truncated_by_provider": False,
        "cited_by_count": 4,
        "doi": "10.1234/example.5",
        "first_page": "10",
        "is_oa": True,
        "is_retracted": False,
        "issue": "3",
        "language": "en",
        "last_page": "20",
        "oa_status": "gold",
        "oa_url": "https://example.org/paper.pdf",
        "openalex_id": "W42",
        "publication_date": "2021-05-01",
        "publication_year": 2021,
        "title": TITLE,
        "type": "article",
        "venue": "Annals & Notes",
        "volume": "12",
    }
    writer.write_request(
        {
            "evidence_id": writer.evidence_id,
            "provider_mode": mode,
            "requested_at": requested_at,
            "effective": {"query": "analytical engines"},
        }
    )
    writer.write_provider({})
    results = [{**block, **item, **work} for item in works]
    writer.write_response({"evidence_id": writer.evidence_id, "status": "ok", "results": results})
    seal = writer.seal()
    if logged:
        EvidenceLog(root).append(seal.evidence_id, seal.receipt)
    return seal.evidence_id, seal.receipt
