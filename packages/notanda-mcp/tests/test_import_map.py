"""docs/architecture.md's import lines are made from the code, and a stale one fails lint.

The checker is ``tests-support/import_map.py`` (``nox -s lint`` runs it); these
tests show that it reads every kind of import, writes the lines it promises,
and refuses a doc whose lines or drawing the code no longer bears out.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import import_map
import pytest

PACKAGES = {
    "pkg": ["_top", "_middle", "_leaf", "_alone", "_shared"],
    "sib": ["_private", "public"],
}


def _imports(source: str, module: str = "_top") -> import_map.Imports:
    return import_map.module_imports(textwrap.dedent(source), "pkg", module, PACKAGES)


def test_every_kind_of_import_is_read_without_importing_anything() -> None:
    found = _imports(
        """
        from __future__ import annotations

        import os
        from typing import TYPE_CHECKING

        import sib as sibling
        import third_lib.sub
        from sib.public import name
        from . import _middle
        from ._leaf import thing

        if TYPE_CHECKING:
            from other_lib import Type
            from ._shared import Shared

        def lazy():
            import heavy_lib  # noqa: PLC0415
            from sib import public  # noqa: PLC0415
            from ._alone import x  # noqa: PLC0415
            from . import _top  # itself: not a dependency
        """
    )
    assert found == import_map.Imports(
        own=("_alone", "_leaf", "_middle", "_shared"),
        siblings=("sib", "sib.public"),
        third_party=("heavy-lib", "other-lib", "third-lib"),
    )
    assert found.names()[:4] == ["_alone", "_leaf", "_middle", "_shared"]


def test_a_name_of_a_sibling_package_is_the_package_not_its_home_module() -> None:
    # ``from sib import Thing`` goes through the sibling's public table, whatever
    # module defines Thing; only a module named as such is listed as one.
    assert _imports("from sib import Thing, public\n").siblings == ("sib", "sib.public")


def test_the_lines_run_from_the_top_layer_down_and_share_equal_imports() -> None:
    sources = {
        "pkg": {
            "__init__": "from ._top import everything\n",
            "_top": "from . import _middle, _shared\nimport anyio\n",
            "_middle": "from ._leaf import x\nfrom ._shared import y\nimport sib\n",
            "_shared": "from ._leaf import x\n",
            "_alone": "from ._leaf import x\n",
            "_leaf": "import os\n",
        },
        "sib": {"_private": "", "public": ""},
    }
    assert import_map.render(import_map.import_lines(sources, "pkg")) == textwrap.dedent(
        """\
        _top     --> _middle, _shared, anyio
        _middle  --> _leaf, _shared, sib
        _alone, _shared --> _leaf
        _leaf    --> the standard library only
        """
    )


def test_a_long_line_is_wrapped_under_its_first_name() -> None:
    names = [f"_module_number_{n}" for n in range(8)]
    graph = {"_a": import_map.Imports(tuple(names), (), ())}
    graph.update({name: import_map.Imports((), (), ()) for name in names})
    lines = import_map.render(graph).splitlines()
    assert lines[0].startswith("_a  --> _module_number_0, ")
    assert len(lines[0]) <= import_map.WIDTH
    assert lines[1].startswith(" " * len("_a  --> ") + "_module_number_")


def test_the_architecture_doc_is_the_code() -> None:
    assert import_map.check() == []


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    copy = tmp_path / "architecture.md"
    shutil.copyfile(import_map.DOC, copy)
    return copy


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_stale_line_fails_with_a_diff_that_shows_it(doc: Path) -> None:
    # The line as it stood before this check: _guard without notanda_evidence.
    _edit(doc, "_guard         --> _errors, notanda_evidence\n", "_guard         --> _errors\n")
    problems = import_map.check(doc_path=doc)
    diff = "".join(problems)
    assert "-_guard         --> _errors\n" in diff
    assert "+_guard         --> _errors, notanda_evidence\n" in diff


def test_a_module_the_doc_does_not_know_fails(doc: Path) -> None:
    _edit(doc, "_stdin         --> anyio\n", "")
    assert "+_stdin         --> anyio\n" in "".join(import_map.check(doc_path=doc))


def test_a_drawing_that_forgets_a_library_fails(doc: Path) -> None:
    _edit(doc, "cryptography, rfc3161-client\n", "cryptography\n")
    assert import_map.check(doc_path=doc) == [
        "the drawing does not name rfc3161-client, which the code imports"
    ]


def test_a_doc_without_a_block_fails(doc: Path) -> None:
    _edit(doc, "<!-- import-map: notanda_openalex -->\n", "")
    assert import_map.check(doc_path=doc) == [
        "notanda_openalex: expected one <!-- import-map: notanda_openalex --> block"
    ]


def test_write_makes_a_stale_doc_current(
    doc: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    current = import_map.DOC.read_bytes()
    _edit(doc, "_guard         --> _errors, notanda_evidence\n", "_guard         --> _errors\n")
    monkeypatch.setattr(import_map, "DOC", doc)
    assert import_map.main([]) == 1
    out, err = capsys.readouterr()
    assert "+_guard         --> _errors, notanda_evidence" in out
    assert "is stale: run python tests-support/import_map.py --write" in err
    assert import_map.main(["--write"]) == 0
    assert doc.read_bytes() == current
    assert import_map.main([]) == 0
