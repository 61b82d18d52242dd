"""Small memory patches (a shaded 8x6 PNG under a function name) for tests that fill a memory store."""

from __future__ import annotations

import io

from PIL import Image

from pytest_guistate.memory.store import NewPatch

__all__ = ["new_patch", "shaded_png"]


def shaded_png(shade: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 6), (shade, 40, 200 - shade)).save(out, format="PNG")
    return out.getvalue()


def new_patch(function: str, shade: int, version: str = "1") -> NewPatch:
    return NewPatch(function=function, app="com.guistate.shopa", png=shaded_png(shade), size=(8, 6), screen=(1080, 2400),
                    app_version=version, locator=f"id={function.replace(' ', '_')}", test=f"t.py::{function}")
