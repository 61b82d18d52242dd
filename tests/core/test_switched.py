"""`switched(label, on)` (issue 45): the state of the one switch bound to a label, never another switch's."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_guistate.core.checks import switched
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import parse_page_source


def _row(y: int, label: str, on: bool) -> str:
    return (
        f'<node class="android.widget.LinearLayout" bounds="[0,{y}][100,{y + 20}]">'
        f'<node class="android.widget.TextView" text="{label}" bounds="[0,{y}][60,{y + 10}]"/>'
        f'<node class="android.widget.Switch" text="{"ON" if on else "OFF"}" checkable="true" '
        f'checked="{str(on).lower()}" bounds="[70,{y}][100,{y + 20}]"/></node>'
    )


def screen(*rows: tuple[str, bool]) -> Observation:
    body = "".join(_row(20 + 30 * n, label, on) for n, (label, on) in enumerate(rows))
    xml = f'<hierarchy width="100" height="200"><node class="android.widget.FrameLayout" bounds="[0,0][100,200]">{body}</node></hierarchy>'
    return Observation(Frame.from_array(np.zeros((200, 100, 3), np.uint8)), parse_page_source(xml), "com.settings")


def test_the_switch_bound_to_the_label_is_judged_not_another_one() -> None:
    shown = screen(("Wi-Fi", True), ("Dark mode", False), ("Notifications", True))
    assert not switched("Dark mode")(shown).ok  # Wi-Fi and Notifications are on: they prove nothing
    assert switched("Dark mode", on=False)(shown).ok
    assert switched("DARK-MODE")(screen(("DARK MODE", True))).ok  # in any case or punctuation
    result = switched("Dark mode")(screen(("Wi-Fi", True)))
    assert not result.ok and "0 switches bound to 'Dark mode'" in result.evidence


def test_two_switches_bound_to_the_label_fail() -> None:
    result = switched("Dark mode")(screen(("Dark mode", True), ("Dark mode", True)))
    assert not result.ok and "2 switches" in result.evidence
    with pytest.raises(ValueError):
        switched("  ")
