"""A tiny synthetic phone screen for the step loop's unit tests: real frames (OpenCV-drawn), real XML.

It reproduces, on a virtual clock, the behaviours the step loop must handle: a list whose
redraw lags the backend (stale screen), pull-to-refresh with a spinner, taps the touchscreen
drops, a counter (a non-idempotent action), a blinking banner (flicker) and a toast that ends on its own.
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

import cv2
import numpy as np

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.settle import VirtualClock
from pytest_guistate.core.uitree import parse_page_source

W, H = 360, 640
STATUS_H = 20
ROW_H = 60
LIST_TOP = 80
PACKAGE = "com.example.list"


class ListScreen:
    def __init__(self, clock: VirtualClock, rows: tuple[str, ...] = ("Post 1", "Post 2", "Post 3", "Post 4"), *,
                 redraw_delay: float = 0.0, refresh_duration: float = 0.3, blink: bool = False,
                 package: str = PACKAGE, tap_s: float = 0.0, clickable_rows: bool = False) -> None:
        self.clock = clock
        self.backend = list(rows)
        self.shown = list(rows)
        self.redraw_delay = redraw_delay
        self.refresh_duration = refresh_duration
        self.redraw_at: float | None = None
        self.refreshing_until: float | None = None
        self.drop_taps = 0
        self.counter = 0
        self.blink = blink
        self.package = package
        self.tap_s = tap_s  # virtual time a tap takes (lets a flickering banner move between frames)
        self.dialog: str | None = None
        self.clickable_rows = clickable_rows
        self.pressed: tuple[int, float, float | None] | None = None  # (row, since, fade_s; None: it stays)
        self.toast: tuple[str, float, bool] | None = None  # (text, until, in the page source)
        self.action_count = 0
        self.log: list[tuple[str, object]] = []
        self.frames: list[Frame] = []
        self.observations = 0

    # -- actions (what a test's taps do) ---------------------------------------------------
    def _tap(self) -> bool:
        self.action_count += 1
        self.clock.sleep(self.tap_s)
        if self.drop_taps > 0:
            self.drop_taps -= 1
            self.log.append(("dropped", None))
            return False
        return True

    def delete(self, text: str) -> None:
        """Delete by *position* of the shown row, like a stale RecyclerView adapter."""
        if not self._tap():
            return
        position = self.shown.index(text)
        if position >= len(self.backend):
            return
        removed = self.backend.pop(position)
        self.log.append(("delete", removed))
        if self.redraw_delay <= 0:
            self.shown = list(self.backend)
        elif self.redraw_at is None:
            self.redraw_at = self.clock() + self.redraw_delay

    def increment(self) -> None:
        if self._tap():
            self.counter += 1
            self.log.append(("increment", self.counter))

    def set_counter(self, value: int) -> None:
        if self._tap():
            self.counter = value
            self.log.append(("set", value))

    def open_app(self, package: str) -> None:
        if self._tap():
            self.package = package
            self.shown = [f"{package} item {i}" for i in range(1, 4)]
            self.backend = list(self.shown)

    def show_dialog(self, title: str) -> None:
        if self._tap():
            self.dialog = title

    def nothing(self) -> None:
        self._tap()

    def press_row(self, row: int, fade_s: float | None) -> None:
        """A tap on a row that changes nothing but its look: a ripple fading over `fade_s`, or
        (None) a highlight that stays (an activated row the tree does not report)."""
        if self._tap():
            self.pressed = (row, self.clock(), fade_s)

    def show_toast(self, text: str, lasts_s: float, *, in_tree: bool = True) -> None:
        """A tap whose only effect is a toast that ends `lasts_s` later; `in_tree=False`: a toast the
        dump does not hold (Android's own, issue 43's docs: its area is a change)."""
        if self._tap():
            self.toast = (text, self.clock() + lasts_s, in_tree)
            self.log.append(("toast", text))

    def pull_to_refresh(self) -> bool:
        self.action_count += 1
        self.log.append(("refresh", None))
        if self.refreshing_until is None:
            self.refreshing_until = self.clock() + self.refresh_duration
        return True

    # -- observation -------------------------------------------------------------------------
    def _advance(self) -> None:
        now = self.clock()
        if self.redraw_at is not None and now >= self.redraw_at:
            self.shown, self.redraw_at = list(self.backend), None
        if self.refreshing_until is not None and now >= self.refreshing_until:
            self.shown, self.refreshing_until = list(self.backend), None
        if self.toast is not None and now >= self.toast[1]:
            self.toast = None

    def _draw(self) -> np.ndarray:
        img = np.full((H, W, 3), 255, np.uint8)
        now = self.clock()
        cv2.rectangle(img, (0, 0), (W, STATUS_H), (60, 60, 60), -1)
        cv2.putText(img, f"{now:9.2f}", (8, 15), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1)
        cv2.rectangle(img, (0, STATUS_H), (W, LIST_TOP), (180, 90, 30), -1)
        cv2.putText(img, f"Count: {self.counter}", (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (255, 255, 255), 2)
        for i, text in enumerate(self.shown):
            top = LIST_TOP + i * ROW_H
            cv2.line(img, (0, top + ROW_H - 1), (W, top + ROW_H - 1), (200, 200, 200), 1)
            cv2.putText(img, text, (12, top + 38), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (30, 30, 30), 2)
        if self.refreshing_until is not None:
            phase = round(now * 10) % 4
            cv2.circle(img, (W // 2, LIST_TOP + 20), 12, (200, 120, 0), 3)
            cv2.rectangle(img, (W // 2 - 3 + phase * 2, LIST_TOP + 6), (W // 2 + 3 + phase * 2, LIST_TOP + 12),
                          (0, 0, 255), -1)
        if self.blink and round(now * 10) % 2 == 0:  # flips every 0.1 s
            cv2.rectangle(img, (300, H - 40), (340, H - 20), (0, 200, 0), -1)
        if self.pressed is not None:
            row, since, fade_s = self.pressed
            alpha = 0.15 if fade_s is None else 0.15 * max(0.0, 1.0 - (now - since) / fade_s)
            top = LIST_TOP + row * ROW_H
            part = img[top:top + ROW_H].astype(np.float32)
            img[top:top + ROW_H] = (part * (1.0 - alpha)).astype(np.uint8)  # a black layer, `alpha` opaque
        if self.toast is not None:
            cv2.rectangle(img, (60, H - 110), (300, H - 70), (50, 50, 50), -1)
            cv2.putText(img, self.toast[0], (72, H - 84), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1)
        if self.dialog is not None:
            cv2.rectangle(img, (40, 250), (320, 390), (250, 250, 250), -1)
            cv2.rectangle(img, (40, 250), (320, 390), (0, 0, 0), 2)
            cv2.putText(img, self.dialog, (55, 320), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 2)
        return img

    def _xml(self) -> str:
        clickable = ' clickable="true"' if self.clickable_rows else ""
        rows = "".join(
            f'<android.view.ViewGroup class="android.view.ViewGroup" resource-id="{self.package}:id/row" '
            f'bounds="[0,{LIST_TOP + i * ROW_H}][{W},{LIST_TOP + (i + 1) * ROW_H}]" package="{self.package}"'
            f'{clickable}>'
            f'<android.widget.TextView class="android.widget.TextView" text={quoteattr(text)} '
            f'resource-id="{self.package}:id/title" package="{self.package}" '
            f'bounds="[12,{LIST_TOP + i * ROW_H + 10}][{W - 12},{LIST_TOP + (i + 1) * ROW_H - 10}]"/>'
            f"</android.view.ViewGroup>"
            for i, text in enumerate(self.shown)
        )
        spinner = (f'<android.widget.ProgressBar class="android.widget.ProgressBar" content-desc="Refreshing" '
                   f'bounds="[160,{LIST_TOP}][200,{LIST_TOP + 40}]" package="{self.package}"/>'
                   if self.refreshing_until is not None else "")
        dialog = (f'<android.widget.FrameLayout class="android.widget.FrameLayout" resource-id="android:id/parentPanel" '
                  f'bounds="[40,250][320,390]" package="{self.package}"><android.widget.TextView '
                  f'class="android.widget.TextView" resource-id="android:id/alertTitle" text={quoteattr(self.dialog)} '
                  f'bounds="[55,300][300,330]"/></android.widget.FrameLayout>' if self.dialog else "")
        toast = (f'<android.widget.Toast class="android.widget.Toast" package="com.android.systemui" '
                 f'bounds="[60,{H - 110}][300,{H - 70}]"><android.widget.TextView class="android.widget.TextView" '
                 f'text={quoteattr(self.toast[0])} bounds="[72,{H - 100}][290,{H - 80}]"/></android.widget.Toast>'
                 if self.toast is not None and self.toast[2] else "")
        return (
            f'<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0" width="{W}" height="{H}">'
            f'<android.widget.FrameLayout class="android.widget.FrameLayout" bounds="[0,0][{W},{H}]" package="{self.package}">'
            f'<android.view.View class="android.view.View" resource-id="com.android.systemui:id/status_bar" '
            f'package="com.android.systemui" bounds="[0,0][{W},{STATUS_H}]"/>'
            f'<android.widget.TextView class="android.widget.TextView" resource-id="{self.package}:id/counter" '
            f'text="Count: {self.counter}" package="{self.package}" bounds="[0,{STATUS_H}][{W},{LIST_TOP}]"/>'
            f'<androidx.recyclerview.widget.RecyclerView class="androidx.recyclerview.widget.RecyclerView" '
            f'resource-id="{self.package}:id/list" scrollable="false" package="{self.package}" '
            f'bounds="[0,{LIST_TOP}][{W},{H}]">{rows}{spinner}</androidx.recyclerview.widget.RecyclerView>'
            f"{dialog}{toast}</android.widget.FrameLayout></hierarchy>"
        )

    def observe(self) -> Observation:
        self._advance()
        self.observations += 1
        frame = Frame.from_array(self._draw(), timestamp=self.clock())
        self.frames.append(frame)
        return Observation(frame=frame, tree=parse_page_source(self._xml()), package=self.package,
                           timestamp=self.clock())

    def deletes(self) -> list[object]:
        return [value for kind, value in self.log if kind == "delete"]


def decoded_frames(frames: list[Frame]) -> int:
    """Frames still holding decoded pixels (the memory the frame window must bound)."""
    return sum(1 for f in frames if f._bgr is not None or f._grey_cache or getattr(f, "_small_cache", None))
