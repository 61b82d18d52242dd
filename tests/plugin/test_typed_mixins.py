"""`GuistateRuntime` is assembled from typed mixins over a small
`Protocol` (runtime_session.py): no
protocol's empty body may stand in for an implementation, and none of the classes is abstract."""

from __future__ import annotations

import inspect
from typing import Protocol

import pytest

from pytest_guistate.runtime import GuistateRuntime


@pytest.mark.parametrize("cls", [GuistateRuntime], ids=lambda cls: cls.__name__)
def test_every_member_resolves_to_an_implementation_not_a_protocol_stub(cls: type) -> None:
    mro = cls.__mro__
    protocols = [klass for klass in mro if Protocol in klass.__bases__]
    assert protocols, "the mixins are typed against protocols"
    stubs = {name for klass in protocols for name, value in vars(klass).items()
             if not name.startswith("__") and (callable(value) or isinstance(value, property))}
    assert stubs, "the protocols declare what the mixins call"
    owners = {name: next(klass for klass in mro if name in vars(klass)) for name in stubs}
    shadowed = {name: owner.__name__ for name, owner in owners.items() if owner in protocols}
    assert not shadowed, f"protocol stubs resolve before an implementation: {shadowed}"
    assert not inspect.isabstract(cls)
