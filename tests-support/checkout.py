"""What a test does when a file the repository holds (a doc, the vectors, a manifest) is absent.

Under ``CI=true`` the whole checkout is required, so the test fails with the message.
Elsewhere it skips with the message, since a package's tests can also run from its
sdist, which holds no docs. The OpenAlex fixtures are not of this kind: a missing one
is always an error (``openalex_fixtures``).
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def absent(message: str) -> NoReturn:
    """Fail under ``CI=true``, else skip, saying which file of the checkout is missing."""
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"{message} (under CI=true every file of the checkout is required)")
    pytest.skip(message)
