"""Issue 26, one concept in one place: a class is not split into mixins to keep its files short.
Each of these classes defines all of its members in its own module (a part with a state of its own
is a collaborator it holds), and no class in the package is a mixin (found by the class graph, not
by its name) or typed over a protocol that exists only to see across such a split."""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from pathlib import Path

import pytest

import pytest_guistate
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim.phone import Phone
from pytest_guistate.report.recorder import ArtifactRecorder
from pytest_guistate.runtime import GuistateRuntime

PACKAGE = Path(pytest_guistate.__file__).parent


@pytest.mark.parametrize("cls", [TaskSession, Device, Phone, ArtifactRecorder, GuistateRuntime], ids=lambda cls: cls.__name__)
def test_the_class_is_whole_in_its_own_module(cls: type) -> None:
    assert cls.__mro__ == (cls, object), [klass.__qualname__ for klass in cls.__mro__]
    assert not inspect.isabstract(cls)


# A mixin, whatever its name: a class other package classes inherit from whose methods read
# attributes (`self.x`) that neither it nor its own bases set, define or declare: it only works
# glued onto a class that sets them, i.e. one class split over two. A real base class is whole on
# its own. (Mixins come first or second in a class's bases by convention; position is not the test.)
@dataclass
class _ClassInfo:
    module: str
    name: str
    line: int
    bases: list[str]  # resolved "module:Class" of package bases
    foreign_bases: bool  # a base outside the package (Exception, Protocol, ...): its attributes are unknown
    sets: set[str]  # attributes it assigns, declares or defines (methods, properties, class attributes)
    reads: set[str]  # self.<name> read in its methods


def _self_attrs(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[set[str], set[str]]:
    """(set, read) attribute names on the method's first argument."""
    if not func.args.args:
        return set(), set()
    me = func.args.args[0].arg
    written: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me:
            (written if isinstance(node.ctx, (ast.Store, ast.Del)) else read).add(node.attr)
    return written, read


def class_graph(sources: dict[str, str]) -> dict[str, _ClassInfo]:
    """Every class of the modules (module name -> source), keyed "module:Class", bases resolved
    through the module's own classes and its `from <package module> import` names."""
    classes: dict[str, _ClassInfo] = {}
    trees = {module: ast.parse(source) for module, source in sources.items()}
    for module, tree in trees.items():
        local = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        imported = {alias.asname or alias.name: f"{node.module}:{alias.name}"
                    for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module in sources
                    for alias in node.names}
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases, foreign = [], False
            for base in node.bases:
                name = base.id if isinstance(base, ast.Name) else None
                if name in local:
                    bases.append(f"{module}:{name}")
                elif name in imported:
                    bases.append(imported[name])
                else:
                    foreign = True
            sets: set[str] = set()
            reads: set[str] = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    sets.add(item.name)
                    written, read = _self_attrs(item)
                    sets |= written
                    reads |= read
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    sets.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    sets |= {t.id for t in item.targets if isinstance(t, ast.Name)}
            classes[f"{module}:{node.name}"] = _ClassInfo(module, node.name, node.lineno, bases, foreign, sets,
                                                         {r for r in reads if not r.startswith("__")})
    return classes


def mixins(classes: dict[str, _ClassInfo]) -> list[str]:
    """The mixin-shaped classes: inherited by another class, reading attributes nothing of its own sets."""
    inherited = {base for info in classes.values() for base in info.bases}

    def known(key: str, seen: frozenset[str] = frozenset()) -> set[str] | None:
        """What the class and its bases set; None when a base is outside the package (unknowable)."""
        info = classes.get(key)
        if info is None or info.foreign_bases or key in seen:
            return None
        found = set(info.sets)
        for base in info.bases:
            more = known(base, seen | {key})
            if more is None:
                return None
            found |= more
        return found

    found = []
    for key in sorted(inherited):
        attrs = known(key)
        if attrs is None:
            continue
        missing = sorted(classes[key].reads - attrs)
        if missing:
            info = classes[key]
            found.append(f"{info.module}:{info.line} {info.name} reads {', '.join(missing)} without setting them")
    return found


def _package_sources() -> dict[str, str]:
    return {".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"):
            path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py"))}


def test_no_class_in_the_package_is_a_mixin() -> None:
    assert mixins(class_graph(_package_sources())) == []


MIXED = {
    "pkg.parts": (
        "class CartParts:\n"
        "    def total(self):\n"
        "        return sum(self.prices) + self.shipping\n"
        "class Whole:\n"
        "    def __init__(self):\n"
        "        self.count = 0\n"
        "    def bump(self):\n"
        "        self.count += 1\n"
    ),
    "pkg.cart": (
        "from pkg.parts import CartParts, Whole\n"
        "class Cart(Whole, CartParts):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.prices = [1, 2]\n"
        "        self.shipping = 3\n"
        "class Error(Exception):\n"
        "    pass\n"
        "class Worse(Error):\n"
        "    def say(self):\n"
        "        return self.args\n"
    ),
}


def test_the_mixin_check_finds_a_split_class_by_its_graph_not_its_name() -> None:
    """A base that reads what only its subclass sets is found; a whole base, and a subclass of a
    class from outside the package (its attributes unknowable), are not."""
    assert mixins(class_graph(MIXED)) == ["pkg.parts:1 CartParts reads prices, shipping without setting them"]
