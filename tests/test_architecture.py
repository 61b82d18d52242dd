"""The package's import architecture (issue 26): the import-linter contracts of pyproject.toml are
kept, and no modules import each other in a circle, type-only (`if TYPE_CHECKING:`) imports
included. A circle means two concepts that cannot be read, tested or moved apart; these tests
name its modules so it is broken by design (move the shared thing down), not hidden."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "pytest_guistate"


def _lint_imports() -> str:
    """The `lint-imports` console script of this interpreter's environment."""
    beside = Path(sys.executable).with_name("lint-imports")
    found = str(beside) if beside.exists() else shutil.which("lint-imports")
    if found is None:
        pytest.fail("lint-imports is not installed: `pip install -e '.[dev]'` (import-linter is in the dev extra)")
    return found


def test_import_linter_contracts_are_kept() -> None:
    """The layers and the forbidden imports of `[tool.importlinter]`, checked on this checkout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([_lint_imports(), "--no-cache", "--config", str(ROOT / "pyproject.toml")], check=False, cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (
        f"import-linter contracts broken (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    assert "0 broken" in done.stdout, done.stdout


def strongly_connected(nodes: Iterable[str], imports: Callable[[str], Iterable[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (iterative: no recursion
    limit on a deep import chain), each sorted, the list sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(nodes):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(imports(root)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                child = pending.pop()
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, sorted(imports(child))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_circle_finder_finds_circles() -> None:
    """The check below can fail: a made-up graph with two circles and a chain."""
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["f"], "f": ["e"], "g": ["a"]}
    assert strongly_connected(graph, lambda m: graph[m]) == [["a", "b", "c"], ["e", "f"]]


def test_no_import_circles() -> None:
    """No two modules of the package import each other, directly or round a longer loop."""
    graph = grimp.build_graph(PACKAGE, exclude_type_checking_imports=False)
    circles = strongly_connected(graph.modules, graph.find_modules_directly_imported_by)
    lines = []
    for circle in circles:
        members = set(circle)
        edges = sorted(f"{src} -> {dst}" for src in circle
                       for dst in graph.find_modules_directly_imported_by(src) if dst in members)
        lines.append(f"{len(circle)} modules: {', '.join(circle)}\n    " + "\n    ".join(edges))
    assert not circles, "import circles (type-only imports count):\n  " + "\n  ".join(lines)
