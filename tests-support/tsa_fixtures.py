"""The pytest fixtures both suites take the test TSA from: ``tsa`` and ``loopback_tsa``.

A conftest (or test module) imports them by name after putting
``tests-support`` on ``sys.path``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tsa_authority import Authorities, create_authorities
from tsa_http import LoopbackTSA

__all__ = ["loopback_tsa", "tsa"]


@pytest.fixture(scope="session")
def tsa(tmp_path_factory: pytest.TempPathFactory) -> Authorities:
    """A trusted and an untrusted RFC 3161 authority, made once per test run."""
    return create_authorities(tmp_path_factory.mktemp("tsa"))


@pytest.fixture
def loopback_tsa(tsa: Authorities) -> Iterator[LoopbackTSA]:
    """The trusted authority served over HTTP on 127.0.0.1, granting until told otherwise."""
    with LoopbackTSA(tsa) as served:
        yield served
