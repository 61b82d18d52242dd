"""Issue 26, one concept in one place: a class is not split into mixins to keep its files short.
Each of these classes defines all of its members in its own module (a part with a state of its own
is a collaborator it holds), and no class in the package is a mixin or typed over a protocol that
exists only to see across such a split."""

from __future__ import annotations

import ast
import inspect
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


def test_no_class_in_the_package_is_a_mixin() -> None:
    mixins = [f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
              for path in sorted(PACKAGE.rglob("*.py"))
              for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
              if isinstance(node, ast.ClassDef) and "mixin" in node.name.lower()]
    assert mixins == []
