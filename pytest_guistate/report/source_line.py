"""The line of the test that ran a step, for the viewer (issue 23: Playwright's trace viewer shows
the source of each action). The recorder hears of a step on the test's own thread, from inside the
`with guistate.step(...)` exit or the `guistate.perform(...)` call: the innermost frame of the
test's file on that stack is the line that ran the step."""

from __future__ import annotations

import linecache
import os
import sys
from types import FrameType
from typing import Any

__all__ = ["test_source_line"]


def test_source_line(nodeid: str) -> dict[str, Any] | None:
    """{file, line, code} of the innermost frame in the test file of `nodeid` (None outside it)."""
    path = nodeid.split("::", 1)[0].replace("/", os.sep)
    if not path.endswith(".py"):
        return None
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename == path or filename.endswith(os.sep + path):
            code = linecache.getline(filename, frame.f_lineno).strip()
            return {"file": nodeid.split("::", 1)[0], "line": frame.f_lineno, "code": code}
        frame = frame.f_back
    return None
