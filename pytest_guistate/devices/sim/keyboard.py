"""The iOS persona's soft keyboard: a window of keys over the bottom of the screen (issue 25).

When a text field has the focus, UIKit slides the keyboard up and WebDriverAgent lists it as an
`XCUIElementTypeKeyboard` (keys are `XCUIElementTypeKey`, the action key and "Next keyboard" are
`XCUIElementTypeButton`s) in a window after the app's. The sim draws it into the screenshot and
lists it in the tree, so `tree.keyboard_box`, controls hidden under it and a keyboard coming up
are exercised on iOS as on a device. Geometry follows an iPhone's portrait keyboard: 336 points high
on a Face ID iPhone (291 of keys, the rest the globe / dictation strip; 260 on a home-button one),
four rows of 50-point keys.

A key types its character into the focused field, `delete` removes the last one, `shift`
capitalises the next letter, the action key is `done` (UIReturnKeyType.done: it hides the keyboard,
as `mobile: hideKeyboard`'s default key name expects). The Android persona tracks the same state
(`mobile: isKeyboardShown`) but draws no IME window: see docs/platforms.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps.base import WHITE, Metrics, Style, View

__all__ = ["KEYBOARD_PACKAGE", "KEYBOARD_ROWS", "KeyHandlers", "keyboard_window"]

KEYBOARD_PACKAGE = "com.apple.keyboard"  # the sim's own marker: the translator turns it into XCUIElementTypeKeyboard
KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_KEY_PT, _PITCH_PT, _TOP_PT = 50, 54, 8
_FACE_ID_MIN_HEIGHT_PT = 812  # iPhone X and later: a taller keyboard over the home indicator
_BG = (209, 212, 217)
_SPECIAL = (172, 177, 185)


@dataclass(frozen=True)
class KeyHandlers:
    """What the phone does for each kind of key (the focused field is the phone's business)."""

    type_char: Callable[[str], None]
    delete: Callable[[], None]
    shift: Callable[[], None]
    done: Callable[[], None]


def keyboard_window(m: Metrics, handlers: KeyHandlers, point: float, shifted: bool = False) -> View:
    """The keyboard as a window of views, `point` pixels per point; `shifted` draws capitals."""
    unit = point
    width = m.width
    tall = m.height / point >= _FACE_ID_MIN_HEIGHT_PT
    height_pt, keys_pt = (336, 291) if tall else (260, 216)

    def y(points: float) -> int:
        return m.height - round((height_pt - points) * unit)

    frame = Box(0, y(0), width, m.height)
    window = View("keyboard", "android.widget.FrameLayout", frame, package=KEYBOARD_PACKAGE,
                  style=Style(bg=_BG))
    board = View("keyboard/board", "android.widget.FrameLayout", frame, rid="keyboard", style=Style(bg=_BG))
    plane = View("keyboard/keys", "android.widget.FrameLayout", Box(0, frame.top, width, y(keys_pt)),
                 on_tap=lambda: None)  # a touch between keys lands on the keyboard, not the app beneath
    key_w = width / 10
    size = max(8, round(22 * unit))

    def key(name: str, label: str, left: float, right: float, row: int, action: Callable[[], None],
            special: bool = False, rid: str = "key") -> View:
        top = y(_TOP_PT + row * _PITCH_PT)
        box = Box(round(left) + 2, top, round(right) - 2, top + round(_KEY_PT * unit))
        return View(f"keyboard/{rid}/{name}", "android.widget.Button", box, text=label, desc=name, rid=rid,
                    on_tap=action, style=Style(kind="button", bg=_SPECIAL if special else WHITE, size=size,
                                               align="center", radius=max(2, round(5 * unit))))

    for row, letters in enumerate(KEYBOARD_ROWS):
        start = (width - len(letters) * key_w) / 2
        for i, letter in enumerate(letters):
            shown = letter.upper() if shifted else letter
            plane.add(key(letter, shown, start + i * key_w, start + (i + 1) * key_w, row,
                          partial(handlers.type_char, shown)))
    plane.add(key("shift", "^", 0, 1.3 * key_w, 2, handlers.shift, special=True))
    plane.add(key("delete", "<", width - 1.3 * key_w, width, 2, handlers.delete, special=True))
    plane.add(key("more", "123", 0, 2.5 * key_w, 3, lambda: None, special=True))
    plane.add(key("space", "space", 2.5 * key_w, 7.5 * key_w, 3, lambda: handlers.type_char(" ")))
    plane.add(key("Done", "done", 7.5 * key_w, width, 3, handlers.done, special=True, rid="button"))
    strip_top = y(keys_pt + 10)
    globe = View("keyboard/button/next", "android.widget.Button",
                 Box(round(0.1 * key_w), strip_top, round(1.4 * key_w), strip_top + round(40 * unit)),
                 text="", desc="Next keyboard", rid="button", on_tap=lambda: None,
                 style=Style(kind="box", bg=_BG))
    board.add(plane, globe)
    window.add(board)
    return window
