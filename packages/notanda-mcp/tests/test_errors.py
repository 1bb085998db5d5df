"""The package's one exception base: every exception class notanda_mcp defines derives from it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import notanda_mcp
import pytest
from notanda_mcp import NotandaMcpError


def _defined_exceptions() -> list[type[BaseException]]:
    found = []
    for info in pkgutil.iter_modules(notanda_mcp.__path__, "notanda_mcp."):
        if info.name == "notanda_mcp.__main__":
            continue
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ == info.name and issubclass(value, BaseException):
                found.append(value)
    return found


def test_every_exception_the_package_defines_derives_from_the_one_base() -> None:
    defined = _defined_exceptions()
    # The sweep finds the exceptions it is about, so it cannot pass by finding none.
    names = {cls.__name__ for cls in defined}
    assert {"StampFailure", "LogUnavailable", "_Usage", "_Refusal"} <= names
    assert [cls.__qualname__ for cls in defined if not issubclass(cls, NotandaMcpError)] == []


def test_the_base_is_exported_and_catches_a_documented_failure() -> None:
    from notanda_mcp._stamper import StampCode, StampFailure

    assert notanda_mcp.NotandaMcpError is NotandaMcpError
    assert issubclass(NotandaMcpError, Exception)
    with pytest.raises(NotandaMcpError, match=r"^tsa_timeout$"):
        raise StampFailure(StampCode.TIMEOUT)
