"""The oracle and a soft keyboard that stays up (`oracle_mask.steady_keyboard`): what changes inside
the keyboard (a key's pop-up, the suggestion strip) is not the app's effect; the keyboard coming up
is. A synthetic Android screen: a text field and Gboard's window, both drawn and in the tree."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from pytest_guistate.core.errors import StepFailed
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.oracle_mask import steady_keyboard
from pytest_guistate.core.settle import SettlePolicy, VirtualClock
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.core.uitree import parse_page_source

W, H, KEYS_TOP = 360, 640, 400
IME = "com.google.android.inputmethod.latin"


def source(keyboard: bool, text: str) -> str:
    ime = (f'<android.widget.FrameLayout index="1" package="{IME}" class="android.widget.FrameLayout" '
           f'bounds="[0,{KEYS_TOP}][{W},{H}]" displayed="true">'
           f'<android.view.View index="0" package="{IME}" class="android.view.View" resource-id="{IME}:id/key_pos_0_0" '
           f'bounds="[0,{KEYS_TOP}][{W // 2},{H}]" displayed="true"/>'
           f'<android.view.View index="1" package="{IME}" class="android.view.View" resource-id="{IME}:id/key_pos_0_1" '
           f'bounds="[{W // 2},{KEYS_TOP}][{W},{H}]" displayed="true"/></android.widget.FrameLayout>') if keyboard else ""
    return (f'<hierarchy index="0" class="hierarchy" rotation="0" width="{W}" height="{H}">'
            f'<android.widget.FrameLayout index="0" package="com.example.notes" class="android.widget.FrameLayout" '
            f'bounds="[0,0][{W},{H}]" displayed="true">'
            f'<android.widget.EditText index="0" package="com.example.notes" class="android.widget.EditText" '
            f'text="{text}" resource-id="com.example.notes:id/note" clickable="true" focused="{str(keyboard).lower()}" '
            f'bounds="[20,100][340,160]" displayed="true"/></android.widget.FrameLayout>{ime}</hierarchy>')


class NoteScreen:
    """A note field; `focus()` brings the keyboard up, `press()` shows a key's pop-up, `type()` types."""

    platform = "android"

    def __init__(self) -> None:
        self.keyboard, self.popup, self.text, self.action_count = False, False, "", 0

    def focus(self) -> None:
        self.action_count += 1
        self.keyboard = True

    def press(self) -> None:  # the key's pop-up lingers; nothing reaches the field
        self.action_count += 1
        self.popup = True

    def type(self, text: str) -> None:
        self.action_count += 1
        self.popup, self.text = True, self.text + text

    def observe(self) -> Observation:
        image = np.full((H, W, 3), 250, np.uint8)
        cv2.rectangle(image, (20, 100), (340, 160), (200, 200, 200), 2)
        cv2.putText(image, self.text, (30, 145), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (20, 20, 20), 2)
        if self.keyboard:
            image[KEYS_TOP:, :] = (60, 60, 60)
            if self.popup:
                cv2.rectangle(image, (40, KEYS_TOP + 20), (120, KEYS_TOP + 120), (255, 255, 255), -1)
        tree = parse_page_source(source(self.keyboard, self.text))
        return Observation(Frame.from_array(image), tree, "com.example.notes")

    def pull_to_refresh(self) -> bool:
        return False


def session_on(screen: NoteScreen) -> TaskSession:
    return TaskSession(screen, policy=TierPolicy.for_tier("standard"), clock=VirtualClock(), name="test_kb",
                       settle=SettlePolicy(timeout_s=0.3, interval_s=0.1))


def test_a_change_inside_a_keyboard_that_stayed_up_is_no_visible_effect() -> None:
    screen = NoteScreen()
    session = session_on(screen)
    session.perform("focus the note", screen.focus)
    with pytest.raises(StepFailed) as failed:
        session.perform("press a key", screen.press)  # only the pop-up changed: the field did not
    record = failed.value.record
    assert record.verdict == "no_change" and screen.popup
    assert all(a.verdict == "no_change" for a in record.attempts)


def test_the_keyboard_coming_up_is_the_actions_effect() -> None:
    screen = NoteScreen()
    record = session_on(screen).perform("focus the note", screen.focus)
    assert record.verdict == "changed"
    assert any(r["box"][1] >= KEYS_TOP for r in record.regions)  # the keyboard's area is in the change


def test_typing_is_seen_in_the_field_not_in_the_keys() -> None:
    screen = NoteScreen()
    session = session_on(screen)
    session.perform("focus the note", screen.focus)
    record = session.perform("type hi", lambda: screen.type("hi"))
    assert record.verdict == "changed"
    assert record.regions and all(r["box"][3] <= KEYS_TOP for r in record.regions), record.regions


def test_only_a_keyboard_at_the_same_place_in_both_trees_is_left_out() -> None:
    up, down = parse_page_source(source(True, "")), parse_page_source(source(False, ""))
    assert steady_keyboard(up, up) == [up.keyboard_box] and up.keyboard_box is not None
    assert steady_keyboard(down, up) == [] and steady_keyboard(up, down) == [] and steady_keyboard(None, up) == []
