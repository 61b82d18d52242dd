"""The step loop's motion question on the web is answered by the request that checked the screen
(issue 34): the check's find and the tree walk say whether the page animates, so `in_motion()` sends
nothing of its own while that screen is current. Real Chromium: tests/appium/test_check_finding_real.py."""

from __future__ import annotations

import time
from typing import Any

import cv2
import numpy as np
import pytest

from pytest_guistate.core.finding import NodeQuery
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.observation import Observation
from pytest_guistate.devices import check_finding, web
from pytest_guistate.devices.device import Device


class ScriptedBrowser:
    """A browser session that answers scripts from a table and remembers which it ran."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.capabilities = {"browserName": "chrome"}
        self.answers = answers
        self.ran: list[str] = []

    def execute_script(self, script: str, *args: Any) -> Any:
        self.ran.append(script)
        return self.answers[script]


def web_device(answers: dict[str, Any]) -> tuple[Device, ScriptedBrowser]:
    browser = ScriptedBrowser(answers)
    return Device(browser, url="http://127.0.0.1:1/fake"), browser  # type: ignore[arg-type]


@pytest.mark.parametrize("moving", [True, False])
def test_a_checks_find_answers_the_motion_question_until_the_next_input(moving: bool) -> None:
    device, browser = web_device({check_finding.FIND_JS: {"moving": moving, "match": None},
                                  web.MOTION_JS: not moving})  # a later question gets the other answer
    answer = check_finding.answer(device, NodeQuery(text="Saved"))
    assert answer is not None and list(answer.found) == []
    assert device.in_motion() is moving and browser.ran == [check_finding.FIND_JS]
    device.action_count += 1  # an input since: the page may have changed, so it is asked
    assert device.in_motion() is (not moving) and browser.ran == [check_finding.FIND_JS, web.MOTION_JS]


def test_a_find_that_says_nothing_of_motion_is_no_answer() -> None:
    """An answer without the motion flag is not the script's: the check reads the tree instead."""
    device, browser = web_device({check_finding.FIND_JS: {"label": "Saved"}, web.MOTION_JS: False})
    assert check_finding.answer(device, NodeQuery(text="Saved")) is None
    assert device.in_motion() is False and browser.ran[-1] == web.MOTION_JS


@pytest.mark.parametrize(("xml", "moving"), [
    ('<hierarchy width="1" height="1" moving="true"><node moving="false"/></hierarchy>', True),
    ('<hierarchy width="1" height="1" moving="false"/>', False),
    ('<hierarchy width="1" height="1"><node moving="true"/></hierarchy>', None),  # only the root says it
])
def test_the_tree_walk_says_motion_on_its_root(xml: str, moving: bool | None) -> None:
    assert web.tree_moving(xml) is moving
    assert 'top.setAttribute("moving", String(pageMoving(roots)));' in web.TREE_JS


@pytest.mark.parametrize(("xml", "answer"), [
    ('<hierarchy width="1" height="1" moving="42.5"/>', 42.5),
    ('<hierarchy width="1" height="1" moving="soon"/>', None),
    ('<hierarchy width="1" height="1" moving="-3"/>', None),
])
def test_the_tree_walk_says_how_long_ago_the_last_animation_ended(xml: str, answer: float | None) -> None:
    assert web.tree_moving(xml) == answer


def observed(device: Device, monkeypatch: pytest.MonkeyPatch) -> Observation:
    """One observation of a blank page: the newest screenshot, asked for now."""
    png = cv2.imencode(".png", np.full((8, 8, 3), 255, np.uint8))[1].tobytes()
    monkeypatch.setattr(device, "screenshot", lambda **_: Frame(png=png, timestamp=time.time()))
    return device.observe()


@pytest.mark.parametrize(("ended_ms_ago", "moving"), [(0.0, True), (60_000.0, False)])
def test_a_fade_that_ended_after_the_screenshot_was_asked_for_is_motion(
        monkeypatch: pytest.MonkeyPatch, ended_ms_ago: float, moving: bool) -> None:
    """The question comes after the screenshot: a fade of 150 ms can end in between, leaving the frame
    half drawn while nothing runs any more. An animation that ended after the screenshot was asked for
    counts as motion (Ionic's alert fills 'both', so it stays listed once finished); one that ended
    long before does not."""
    device, browser = web_device({check_finding.FIND_JS: {"moving": ended_ms_ago, "match": None},
                                  web.MOTION_JS: ended_ms_ago})
    observed(device, monkeypatch)
    check_finding.answer(device, NodeQuery(text="Saved"))
    assert device.in_motion() is moving and browser.ran == [check_finding.FIND_JS]
    device.action_count += 1  # asked of the page itself: the same rule
    assert device.in_motion() is moving and browser.ran[-1] == web.MOTION_JS


@pytest.mark.parametrize(("xml", "quiet"), [
    ('<hierarchy width="1" height="1" moving="false" quiet="812.5"/>', 812.5),
    ('<hierarchy width="1" height="1" quiet="-1"/>', None),  # something draws unwatched: it cannot tell
    ('<hierarchy width="1" height="1" moving="false"/>', None),
    ('<hierarchy width="1" height="1"><node quiet="5"/></hierarchy>', None),  # only the root says it
])
def test_the_tree_walk_says_how_long_the_page_was_quiet(xml: str, quiet: float | None) -> None:
    assert web.tree_quiet(xml) == quiet
    assert 'top.setAttribute("quiet", String(pageQuiet(roots)));' in web.TREE_JS


@pytest.mark.parametrize(("quiet_ms", "drawn"), [(60_000.0, True), (0.0, False), (None, False)])
def test_a_page_quiet_since_before_the_screenshot_was_asked_for_is_drawn(
        monkeypatch: pytest.MonkeyPatch, quiet_ms: float | None, drawn: bool) -> None:
    """Issue 42: the step loop keeps a dialog's first frame when the page changed nothing after that
    frame's screenshot was asked for; a change since (or no answer) means looking again."""
    device, _browser = web_device({check_finding.FIND_JS: {"moving": False, "quiet": quiet_ms, "match": None}})
    newest = observed(device, monkeypatch)
    check_finding.answer(device, NodeQuery(text="Saved"))
    assert device.drawn_when_shot(newest) is drawn
    device.action_count += 1  # an input since: the answer no longer describes this screen
    assert device.drawn_when_shot(newest) is False


def test_the_motion_question_also_says_the_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    device, browser = web_device({web.MOTION_JS: {"moving": False, "quiet": 60_000.0}})
    newest = observed(device, monkeypatch)
    assert device.drawn_when_shot(newest) is False  # nothing said yet
    assert device.in_motion() is False and browser.ran == [web.MOTION_JS]
    assert device.drawn_when_shot(newest) is True
    newer = observed(device, monkeypatch)  # a newer screenshot: the answer was for the one before
    assert device.drawn_when_shot(newest) is False and device.drawn_when_shot(newer) is False


def test_a_native_screen_is_never_taken_as_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """A web view's screenshot is the phone's, a frame or more behind its page: only a browser's counts."""
    device, browser = web_device({web.MOTION_JS: {"moving": False, "quiet": 60_000.0}})
    browser.capabilities = {"platformName": "Android"}
    device = Device(browser, url="http://127.0.0.1:1/fake")  # type: ignore[arg-type]
    newest = observed(device, monkeypatch)
    device.saw_quiet(60_000.0)
    assert device.drawn_when_shot(newest) is False
