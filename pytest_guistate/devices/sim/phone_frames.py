"""Frames and ground truth for the simulated phone: overlays, screenshots, transitions, truth.

A mixin of `Phone` (split out to keep each module readable). Screenshots are cached as PNG bytes
keyed by (state version, overlays, transition step), so an unchanged screen costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps.base import TEXT, View
from pytest_guistate.devices.sim.apps.system import STATUS_BG
from pytest_guistate.devices.sim.render import Overlay, Renderer, cursor_box
from pytest_guistate.devices.sim.truth import Snapshot, changed_regions, snapshot

if TYPE_CHECKING:
    from pytest_guistate.devices.sim.apps.base import App, Metrics
    from pytest_guistate.devices.sim.faults import Faults
    from pytest_guistate.devices.sim.model import SimNode

__all__ = ["PhoneFrames"]

CURSOR_HALF_PERIOD_S = 0.53
ANIM_STEPS = 20


class PhoneFrames:
    """Pixels and ground truth derived from the current view tree; see `Phone` for state."""

    width: int
    height: int
    m: Metrics
    frozen: bool
    _t0: float
    _apps: dict[str, App]
    _foreground: str
    _faults: Faults
    _version: int
    _renderer: Renderer
    _png_cache: dict[tuple[Any, ...], bytes]
    _transition: tuple[float, View] | None
    _before: tuple[Snapshot, list[Box], tuple[str, str], View] | None

    if TYPE_CHECKING:
        def _sync(self) -> None: ...
        def _root_view(self) -> tuple[View, SimNode]: ...
        def now(self) -> float: ...

    def _overlays(self, root: View, now: float, for_truth: bool = False) -> list[Overlay]:
        app = self._apps[self._foreground]
        cursor_on = self.frozen or int((now - app.focus_since) / CURSOR_HALF_PERIOD_S) % 2 == 0
        phase = 0 if self.frozen else int((now - self._t0) * Renderer.SPINNER_STEPS) % Renderer.SPINNER_STEPS
        out: list[Overlay] = []
        for view in root.walk():
            kind = view.style.kind
            if kind == "clock":
                out.append(Overlay("clock", view.box, view.text, bg=STATUS_BG, fg=view.style.fg, size=view.style.size))
            elif kind == "spinner":
                out.append(Overlay("spinner", view.box, phase=phase, fg=view.style.fg))
            elif kind == "edit" and view.focused and (cursor_on or for_truth):
                out.append(Overlay("cursor", cursor_box(view, self.m.scale), fg=TEXT))
        return out

    def screenshot_png(self) -> bytes:
        self._sync()
        now = self.now()
        root, _ = self._root_view()
        overlays = self._overlays(root, now)
        step = None
        if self._transition is not None:
            progress = (now - self._transition[0]) / max(1e-9, self._faults.animation_ms / 1000)
            step = min(ANIM_STEPS - 1, int(progress * ANIM_STEPS))
        key = (self._version, tuple(overlays), step)
        cached = self._png_cache.get(key)
        if cached is not None:
            return cached
        base = self._renderer.base(root)
        if step is not None and self._transition is not None:
            base = self._slide(self._renderer.base(self._transition[1]), base, step / ANIM_STEPS)
            overlays = [o for o in overlays if o.kind == "clock"]
        png = self._renderer.encode(self._renderer.compose(base, overlays))
        if len(self._png_cache) >= 4:
            self._png_cache.pop(next(iter(self._png_cache)))
        self._png_cache[key] = png
        return png

    def _slide(self, old: np.ndarray, new: np.ndarray, progress: float) -> np.ndarray:
        """An intermediate transition frame: the new screen slides in from the right."""
        eased = 1.0 - (1.0 - progress) ** 2
        dx = int(self.width * (1.0 - eased))
        top = self.m.status_h
        frame = old.copy()
        frame[top:, dx:] = new[top:, : self.width - dx]
        return frame

    def ground_truth(self) -> dict[str, Any]:
        """Semantic change between the screen before the most recent action and now (tree-based)."""
        self._sync()
        root, node = self._root_view()
        after = snapshot(node)
        noise = self._noise(root)
        if self._before is None:
            return {"changed": False, "regions": [], "noise": [b.as_list() for b in noise],
                    "animating": self._transition is not None}
        before, before_noise, _, _ = self._before
        regions = changed_regions(before, after, gap=self.m.px(16))
        unique = list(dict.fromkeys([*before_noise, *noise]))
        return {"changed": bool(regions), "regions": [b.as_list() for b in regions],
                "noise": [b.as_list() for b in unique], "animating": self._transition is not None}

    def _noise(self, root: View) -> list[Box]:
        return [o.box for o in self._overlays(root, self.now(), for_truth=True)]
