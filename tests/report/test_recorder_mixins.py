"""`ArtifactRecorder` is assembled from typed mixins (recorder_screens, recorder_files) over the
`Protocol`s of recorder_protocols.py: no protocol's empty body may stand in for an implementation."""

from __future__ import annotations

import inspect
from typing import Protocol

from pytest_guistate.report.recorder import ArtifactRecorder


def test_every_member_resolves_to_an_implementation_not_a_protocol_stub() -> None:
    mro = ArtifactRecorder.__mro__
    protocols = [klass for klass in mro if Protocol in klass.__bases__]
    assert protocols, "the mixins are typed against protocols"
    stubs = {name for klass in protocols for name, value in vars(klass).items()
             if not name.startswith("__") and callable(value)}
    owners = {name: next(klass for klass in mro if name in vars(klass)) for name in stubs}
    shadowed = {name: owner.__name__ for name, owner in owners.items() if owner in protocols}
    assert not shadowed, f"protocol stubs resolve before an implementation: {shadowed}"
    assert not inspect.isabstract(ArtifactRecorder)
