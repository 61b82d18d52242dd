"""System UI every screen shares: status bar, alert dialogs, toasts and the ANR pop-up.

The status bar is its own window with package `com.android.systemui`, so an oracle can ignore it
by package or resource id; its clock ticks every second on purpose (a noise source).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps.base import (
    RGB,
    TEXT2,
    WHITE,
    Metrics,
    Style,
    View,
)
from pytest_guistate.devices.sim.render import text_width

__all__ = ["STATUS_BG", "SYSTEMUI", "alert", "status_bar", "toast_window"]

SYSTEMUI = "com.android.systemui"
STATUS_BG: RGB = (32, 33, 36)
DialogButton = tuple[str, str, str, Callable[[], None]]  # (key, rid, label, handler)
DialogItem = tuple[str, str, Callable[[], None]]  # (key, label, handler)


def status_bar(m: Metrics, clock_text: str) -> View:
    bar = Box(0, 0, m.width, m.status_h)
    root = View("system/status_bar", "android.widget.FrameLayout", bar, package=SYSTEMUI,
                rid=f"{SYSTEMUI}:id/status_bar", style=Style(bg=STATUS_BG))
    size = m.px(34)
    clock_w = text_width("88:88:88", size) + m.px(8)
    root.add(View("system/clock", "android.widget.TextView",
                  Box(m.px(40), bar.top + m.px(12), m.px(40) + clock_w, bar.bottom - m.px(12)), text=clock_text,
                  rid=f"{SYSTEMUI}:id/clock", style=Style(kind="clock", fg=WHITE, size=size)))
    root.add(View("system/battery", "android.widget.ImageView",
                  Box(m.width - m.px(110), bar.top + m.px(22), m.width - m.px(40), bar.bottom - m.px(22)),
                  desc="Battery 87 percent.", rid=f"{SYSTEMUI}:id/battery", style=Style(kind="battery", fg=WHITE)))
    return root


def alert(m: Metrics, key: str, package: str, title: str, message: str, buttons: Sequence[DialogButton],
          color: RGB, items: Sequence[DialogItem] | None = None) -> View:
    """A Material alert dialog window, centred; modal (taps outside it are swallowed).

    Resource ids follow Android's `AlertDialog` (`android:id/message`, `android:id/button1` ...),
    which is what locators written against real apps use.
    """
    px = m.px
    width = m.width - 2 * px(80)
    rows = items or []
    height = px(64) + px(80) + (px(130) if message else 0) + len(rows) * px(120) + px(170)
    left, top = (m.width - width) // 2, (m.height - height) // 2
    box = Box(left, top, left + width, top + height)
    window = View(key, "android.widget.FrameLayout", box, package=package, rid="android:id/parentPanel",
                  modal=True, style=Style(bg=WHITE, radius=px(36), shadow=True))
    inner_l, inner_r = left + px(64), left + width - px(64)
    y = top + px(64)
    window.add(View(f"{key}/title", "android.widget.TextView", Box(inner_l, y, inner_r, y + px(80)), text=title,
                    rid="android:id/alertTitle", style=Style(kind="text", size=px(52), bold=True)))
    y += px(80)
    if message:
        window.add(View(f"{key}/message", "android.widget.TextView", Box(inner_l, y + px(10), inner_r, y + px(120)),
                        text=message, rid="android:id/message",
                        style=Style(kind="text", size=px(40), fg=TEXT2, max_lines=2)))
        y += px(130)
    for item_key, label, handler in rows:
        window.add(View(item_key, "android.widget.TextView", Box(inner_l, y, inner_r, y + px(120)), text=label,
                        rid="android:id/text1", on_tap=handler, focusable=True,
                        style=Style(kind="text", size=px(44), border=None)))
        y += px(120)
    button_w, gap = px(260), px(24)
    bx = inner_r
    for b_key, rid, label, handler in reversed(buttons):
        window.add(View(b_key, "android.widget.Button", Box(bx - button_w, y + px(40), bx, y + px(136)), text=label,
                        rid=rid, on_tap=handler, focusable=True,
                        style=Style(kind="button", bg=_tint(color), fg=color, size=px(40), bold=True, align="center",
                                    radius=px(48))))
        bx -= button_w + gap
    return window


def toast_window(m: Metrics, package: str, text: str) -> View:
    """Android reports toasts as `android.widget.Toast` nodes; they never take touches."""
    px = m.px
    size = px(38)
    width = min(m.width - px(120), text_width(text, size) + px(96))
    height = px(110)
    left = (m.width - width) // 2
    top = m.height - px(260) - height
    return View("system/toast", "android.widget.Toast", Box(left, top, left + width, top + height), text=text,
                package=package, style=Style(kind="button", bg=(60, 60, 60), fg=WHITE, size=size, align="center",
                                             radius=height // 2))


def _tint(color: RGB) -> RGB:
    """A light tonal background for dialog buttons (so they are visible in pixels, not only text)."""
    red, green, blue = (int(255 - (255 - c) * 0.18) for c in color)
    return red, green, blue
