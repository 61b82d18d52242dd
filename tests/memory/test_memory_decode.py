"""Where the memory's learning decodes the before-frame (issue 38): on the decode thread, once, while
the tap is sent, not on the step loop after the step's verdict; what is learnt is the same."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_guistate.core import frame as frame_module
from pytest_guistate.devices.sim import SimServer
from pytest_guistate.memory.bridge import MemoryBridge
from tests.memory.test_memory_cost import open_and_cancel, run, server  # noqa: F401 - `server` is a fixture


@pytest.mark.parametrize("tier", ["standard", "light"])
def test_the_learnt_before_frames_are_decoded_on_the_decode_thread(
        server: SimServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tier: str) -> None:  # noqa: F811
    decoded: dict[int, list[str]] = {}  # id of a PNG's bytes -> the threads that decoded it in full
    decode = frame_module._imdecode

    def spied(png: bytes) -> np.ndarray | None:
        decoded.setdefault(id(png), []).append(threading.current_thread().name)
        return decode(png)

    learnt_from: list[bytes] = []
    learn = MemoryBridge._learn

    def learning(self: MemoryBridge, item: Any, step_name: str) -> None:
        learnt_from.append(item.before.frame.png)  # kept alive: its id stays its own
        frame_module._decode_pool().submit(lambda: None).result()  # the time a real tap and screenshot take
        learn(self, item, step_name)

    monkeypatch.setattr(frame_module, "_imdecode", spied)
    monkeypatch.setattr(MemoryBridge, "_learn", learning)
    result = run(server, tmp_path, tier, open_and_cancel, memory=True)
    assert len(result.looks) == 2 and len(learnt_from) == 2  # both taps learnt (new looks: standard and light)
    assert all(decoded.get(id(png)) == ["guistate-decode_0"] for png in learnt_from), decoded
