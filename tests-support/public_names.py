"""The one list of a package's public names, checked against what type checkers see.

Each package's ``__init__.py`` keeps one table, ``_EXPORTS`` (public name ->
the module that defines it), from which ``__all__`` is derived and which its
lazy ``__getattr__`` reads. Type checkers cannot run that code, so the same
names are imported under ``if TYPE_CHECKING:`` as explicit re-exports
(``from ._store import EvidenceStore as EvidenceStore``, which mypy's strict
mode and pyright both read as "exported"). Those imports cannot be derived at
run time; :func:`problems` shows, from the module's syntax tree, that
they name exactly the names and homes of ``_EXPORTS``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from types import ModuleType

__all__ = ["problems", "static_exports"]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def static_exports(module: ModuleType) -> tuple[dict[str, str], list[str]]:
    """What type checkers see *module* export, and the imports they would not see as exports.

    The first is every explicit re-export (``from H import X as X``) at the top
    level or under ``TYPE_CHECKING``, as name -> ``H`` written as ``_EXPORTS``
    writes it (``.name`` for the package's own modules). The second lists the
    names imported under ``TYPE_CHECKING`` without ``as`` (private to a type
    checker) or imported twice.
    """
    tree = ast.parse(inspect.getsource(module))
    exports: dict[str, str] = {}
    wrong: list[str] = []
    for node in tree.body:
        checking = isinstance(node, ast.If) and _is_type_checking(node.test)
        statements = node.body if isinstance(node, ast.If) and checking else [node]
        for statement in statements:
            if not isinstance(statement, ast.ImportFrom):
                continue
            home = "." * statement.level + (statement.module or "")
            for alias in statement.names:
                if alias.asname == alias.name and alias.name not in exports:
                    exports[alias.name] = home
                elif checking or alias.asname == alias.name:
                    wrong.append(alias.name)
    return exports, wrong


def problems(module: ModuleType) -> list[str]:
    """How *module*'s public names break the rule above (none when they keep it).

    ``__all__`` must be ``list(_EXPORTS)``, and the explicit re-exports must
    name the same names from the same homes, each the very object exported.
    """
    table: dict[str, str] = module._EXPORTS
    found = []
    if module.__all__ != list(table):
        found.append("__all__ is not list(_EXPORTS)")
    exports, wrong = static_exports(module)
    found += [f"{name}: import it once, as `{name} as {name}`" for name in wrong]
    for name in sorted(set(table) | set(exports)):
        if table.get(name) != exports.get(name):
            found.append(f"{name}: _EXPORTS {table.get(name)}, imports {exports.get(name)}")
            continue
        source = importlib.import_module(table[name], module.__name__)
        if getattr(module, name) is not getattr(source, name):
            found.append(f"{name} is not {table[name]}.{name}")
    return found
