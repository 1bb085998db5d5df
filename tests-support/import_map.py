"""The import lines of ``docs/architecture.md``, made from the code; checked in ``nox -s lint``.

For each package the doc holds one generated block (between the markers
``<!-- import-map: PACKAGE -->`` and ``<!-- /import-map -->``): one line per
module, "this module imports these ones", read from the syntax tree of every
module under ``packages/*/src/`` with the standard library's ``ast``, never by
importing them. Every import counts, as import-linter counts it: at the top,
inside a function (the lazy ones) and under ``TYPE_CHECKING``. A line names
the package's own modules first, then the sibling packages (as imported:
``notanda_openalex``, or a public module such as
``notanda_evidence.verify_file``), then the third-party distributions;
standard-library imports are left out, and modules that import nothing else
share the last line. Lines run from the top of the package's layers down.

After the blocks, the drawing at the top of the doc must name every
third-party distribution a package imports (the check cannot tell which arrow
of the drawing it belongs to, but it catches a library the drawing forgets).

``python tests-support/import_map.py`` exits 1 with a unified diff when the
doc is stale; ``--write`` rewrites the blocks from the code.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import re
import sys
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DOC",
    "PACKAGES",
    "check",
    "drawing_problems",
    "import_lines",
    "main",
    "module_imports",
    "render",
    "rewrite",
]

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
#: Import package -> its ``src`` folder, relative to the repository root.
PACKAGES = {
    "notanda_evidence": "packages/notanda-evidence/src/notanda_evidence",
    "notanda_openalex": "packages/notanda-openalex/src/notanda_openalex",
    "notanda_mcp": "packages/notanda-mcp/src/notanda_mcp",
}
WIDTH = 100
#: The line of modules that import nothing outside the standard library.
STDLIB_ONLY = "the standard library only"
_BLOCK = re.compile(
    r"(?P<open><!-- import-map: (?P<package>\w+) -->\n```text\n)"
    r"(?P<body>.*?)"
    r"(?P<close>```\n<!-- /import-map -->)",
    re.DOTALL,
)
_DRAWING = re.compile(r"```text\n(?P<body>.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Imports:
    """What one module imports, in three groups (each sorted)."""

    own: tuple[str, ...]
    siblings: tuple[str, ...]
    third_party: tuple[str, ...]

    def names(self) -> list[str]:
        """Every name of the line, in the order it is written."""
        return [*self.own, *self.siblings, *self.third_party]


def _distribution(top: str) -> str:
    """The distribution's name as the drawing and ``pyproject.toml`` spell it."""
    return top.replace("_", "-")


def module_imports(
    source: str, package: str, module: str, modules: Mapping[str, Collection[str]]
) -> Imports:
    """What *module* of *package* (source text *source*) imports, by group.

    *modules* names each package of the repository with its module names
    (``_server``, ``verify_file``): so ``from . import _usage`` reads as the
    module it names, and a package in it other than *package* is a sibling.
    """
    own: set[str] = set()
    siblings: set[str] = set()
    third: set[str] = set()

    def add(target: str) -> None:
        top, _, rest = target.partition(".")
        head = rest.partition(".")[0]
        if top == package:
            if head and head != module:
                own.add(head)
        elif top in modules:
            # A sibling as written: the package itself, or one public module of it.
            siblings.add(f"{top}.{head}" if head else top)
        elif top not in sys.stdlib_module_names and top != "__future__":
            third.add(_distribution(top))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: this package has no subpackages
                base = ".".join(filter(None, (package, base)))
            for alias in node.names:
                is_module = base in modules and alias.name in modules[base]
                add(f"{base}.{alias.name}" if is_module else base)
    return Imports(tuple(sorted(own)), tuple(sorted(siblings)), tuple(sorted(third)))


def import_lines(sources: Mapping[str, Mapping[str, str]], package: str) -> dict[str, Imports]:
    """Each module of *package* with what it imports; *sources*: package -> module -> text.

    ``__init__`` is left out: it is the package's lazy table of public names,
    and names every home module only for type checkers.
    """
    modules = {name: [m for m in texts if m != "__init__"] for name, texts in sources.items()}
    return {
        name: module_imports(text, package, name, modules)
        for name, text in sources[package].items()
        if name != "__init__"
    }


def _heights(graph: Mapping[str, Imports]) -> dict[str, int]:
    heights: dict[str, int] = {}

    def height(name: str, seen: tuple[str, ...] = ()) -> int:
        if name in heights:
            return heights[name]
        if name in seen:  # a cycle: import-linter's acyclic contract reports it
            return 0
        below = [height(dep, (*seen, name)) for dep in graph[name].own if dep in graph]
        heights[name] = 1 + max(below, default=-1)
        return heights[name]

    for name in graph:
        height(name)
    return heights


def _wrapped(left: str, column: int, names: list[str]) -> list[str]:
    head = f"{left.ljust(column - 1)} --> " if len(left) < column else f"{left} --> "
    indent = " " * (column + 4)
    lines: list[str] = []
    line = head
    for number, name in enumerate(names):
        piece = name + ("," if number < len(names) - 1 else "")
        start = line in (head, indent)
        if not start and len(line) + 1 + len(piece) > WIDTH:
            lines.append(line.rstrip())
            line = indent
            start = True
        line += piece if start else " " + piece
    lines.append(line)
    return lines


def render(graph: Mapping[str, Imports]) -> str:
    """The block's text: one line per group of modules with the same imports, top layer first."""
    heights = _heights(graph)
    groups: dict[tuple[str, ...], list[str]] = {}
    for name in graph:
        groups.setdefault(tuple(graph[name].names()), []).append(name)
    alone = sorted(groups.pop((), []))
    ordered = sorted(
        groups.items(), key=lambda item: (-max(heights[n] for n in item[1]), sorted(item[1]))
    )
    lefts = [", ".join(sorted(names)) for _, names in ordered] + ([", ".join(alone)] * bool(alone))
    column = max((len(left) for left in lefts if "," not in left), default=8) + 2
    out: list[str] = []
    for left, (names, _) in zip(lefts, ordered, strict=False):
        out += _wrapped(left, column, list(names))
    if alone:
        out += _wrapped(", ".join(alone), column, [STDLIB_ONLY])
    return "\n".join(out) + "\n"


def _sources(root: Path) -> dict[str, dict[str, str]]:
    return {
        package: {
            path.stem: path.read_text(encoding="utf-8")
            for path in sorted((root / folder).glob("*.py"))
        }
        for package, folder in PACKAGES.items()
    }


def _blocks(sources: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    return {package: render(import_lines(sources, package)) for package in sources}


def rewrite(doc: str, blocks: Mapping[str, str]) -> str:
    """*doc* with each generated block replaced by the one made from the code.

    Raises:
        ValueError: The doc lacks a package's block, or has one twice.
    """
    found = [match.group("package") for match in _BLOCK.finditer(doc)]
    for package in blocks:
        if found.count(package) != 1:
            raise ValueError(f"{package}: expected one <!-- import-map: {package} --> block")

    def replaced(match: re.Match[str]) -> str:
        body = blocks.get(match.group("package"), match.group("body"))
        return match.group("open") + body + match.group("close")

    return _BLOCK.sub(replaced, doc)


def drawing_problems(doc: str, third_party: Iterable[str]) -> list[str]:
    """The distributions the doc's first drawing does not name."""
    drawing = _DRAWING.search(doc)
    text = drawing.group("body") if drawing else ""
    return [
        f"the drawing does not name {name}, which the code imports"
        for name in sorted(set(third_party))
        if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text.replace("_", "-"))
    ]


def check(root: Path = ROOT, doc_path: Path | None = None) -> list[str]:
    """What is stale in the doc: a unified diff of its blocks, and the drawing's omissions."""
    doc_path = DOC if doc_path is None else doc_path
    doc = doc_path.read_text(encoding="utf-8")
    sources = _sources(root)
    try:
        wanted = rewrite(doc, _blocks(sources))
    except ValueError as exc:
        return [str(exc)]
    problems = list(
        difflib.unified_diff(
            doc.splitlines(keepends=True),
            wanted.splitlines(keepends=True),
            fromfile=f"{doc_path.name} (as written)",
            tofile=f"{doc_path.name} (from the code)",
        )
    )
    third = {
        name
        for package in sources
        for imports in import_lines(sources, package).values()
        for name in imports.third_party
    }
    return problems + drawing_problems(doc, third)


def main(argv: list[str] | None = None) -> int:
    """Check the doc (exit 1 with a diff when stale) or, with ``--write``, rewrite it."""
    parser = argparse.ArgumentParser(prog="python tests-support/import_map.py")
    parser.add_argument("--write", action="store_true", help="rewrite the blocks from the code")
    args = parser.parse_args(argv)
    if args.write:
        doc = DOC.read_text(encoding="utf-8")
        DOC.write_text(rewrite(doc, _blocks(_sources(ROOT))), encoding="utf-8")
    problems = check()
    shown = DOC.relative_to(ROOT) if DOC.is_relative_to(ROOT) else DOC
    if problems:
        sys.stdout.write("".join(p if p.endswith("\n") else p + "\n" for p in problems))
        print(f"{shown} is stale: run python tests-support/import_map.py --write", file=sys.stderr)
        return 1
    print(f"{shown}: the import lines are the code's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
