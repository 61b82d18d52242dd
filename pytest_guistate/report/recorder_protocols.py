"""What `ArtifactRecorder`'s mixins rely on, as typed `Protocol`s (as `Device`'s do, devices/protocols.py).

The recorder (report/recorder.py) keeps the writer thread and the journal events; the screens it
saw (`recorder_screens.py`: password boxes per observed screen) and the artifact files
(`recorder_files.py`: bytes held until named, redacted and written) are mixins. The protocols come
last in the recorder's MRO, so their empty bodies never stand in for an implementation.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pytest_guistate.core.geometry import Box
from pytest_guistate.report.frame_store import FrameStore
from pytest_guistate.report.redact import Redactor

__all__ = ["CanRecord", "CanTrackScreens"]


class CanRecord(Protocol):
    """One test's folder, its redactor and frame store, the screen size once known, and the serial
    writer that runs every job in event order (`_submit`; `drain` waits for it)."""

    folder: Path
    redactor: Redactor
    frames: FrameStore
    screen_size: tuple[int, int] | None

    def drain(self) -> None: ...

    def _submit(self, what: str, fn: Callable[..., Any], *args: Any, step: bool = False) -> None: ...


class CanTrackScreens(CanRecord, Protocol):
    """The password boxes of the screens observed so far (report/recorder_screens.py)."""

    def _settle_deferred(self, *, resolve: bool) -> None: ...

    def _boxes_for(self, data: bytes, key: str, name: str = "", cut_from: Any = None) -> list[Box]: ...
