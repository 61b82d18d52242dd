"""A browser page that says it changed nothing since the after-frame was asked for (issue 42), on real Chromium.

A dialog that appeared used to be looked at once more (a screenshot, a motion question) in case its first
frame was still faint. The page's scripts now watch it (`web.MOVING_JS` `pageQuiet`): DOM mutations in every
watched root, scrolls, focus moves, loads, resizes. When none came after the after-frame's screenshot was asked
for, that frame is what the screen still shows and no look again is taken; when one came, or the page has
something that draws unwatched, the look again is taken as before.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from pytest_guistate.core.checks import visible
from pytest_guistate.core.settle import SettlePolicy
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices import web
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.web_feed import FeedServer

pytestmark = pytest.mark.appium


def quiet(device: Device) -> float | None:
    """The page's own answer: ms without a change, None when it cannot tell."""
    said = device.driver.execute_script(web.MOTION_JS)
    assert isinstance(said, dict) and "moving" in said
    return web.quiet_answer(said["quiet"])


def page(device: Device, body: str) -> None:
    device.driver.get("data:text/html," + body)


def test_the_watch_starts_unknown_and_counts_quiet_time(device: Device) -> None:
    page(device, "<p id=p>still</p>")
    first = quiet(device)
    assert first is not None and first < 50  # nothing was watched before: what came before is unknown
    time.sleep(0.4)
    later = quiet(device)
    assert later is not None and later >= 300


@pytest.mark.parametrize(("change", "what"), [
    ("document.getElementById('p').textContent = 'moved';", "a text change"),
    ("document.getElementById('p').className = 'faint';", "a class change"),
    ("document.body.appendChild(document.createElement('div'));", "a node added"),
    ("window.scrollTo(0, 500);", "a scroll"),
    ("document.getElementById('b').focus();", "a focus move"),
    ("document.getElementById('host').shadowRoot.querySelector('i').setAttribute('style', 'opacity:.1');",
     "a change inside a watched shadow root"),
    ("document.body.appendChild(document.createElement('span')).attachShadow({mode: 'open'}).innerHTML = '<b>x</b>';",
     "a new shadow root"),
])
def test_a_change_after_the_last_answer_resets_the_quiet(device: Device, change: str, what: str) -> None:
    page(device, "<p id=p>still</p><button id=b>b</button><div id=host></div><div style='height:3000px'></div>"
                 "<script>document.getElementById('host').attachShadow({mode:'open'}).innerHTML='<i>in</i>'</script>")
    quiet(device)
    time.sleep(0.4)
    assert (quiet(device) or 0) >= 300
    device.driver.execute_script(change)
    time.sleep(0.3)  # the scroll event comes on the next frame
    after = quiet(device)
    assert after is not None and after < 400, what


@pytest.mark.parametrize("body", [
    "<canvas width=100 height=100></canvas>",
    "<video width=100 height=100></video>",
    "<iframe src='about:blank' width=100 height=100></iframe>",
    # a custom element drawing from a closed shadow root: its inside is never watched
    ("<x-closed></x-closed><script>customElements.define('x-closed', class extends HTMLElement {"
    " constructor() { super(); this.attachShadow({mode: 'closed'}).innerHTML = '<b>hidden</b>'; } })</script>"),
])
def test_what_draws_unwatched_makes_the_page_unable_to_tell(device: Device, body: str) -> None:
    page(device, body)
    quiet(device)
    time.sleep(0.3)
    assert quiet(device) is None


def test_what_draws_off_screen_does_not(device: Device) -> None:
    page(device, "<div style='height:5000px'></div><canvas width=100 height=100></canvas>")
    quiet(device)
    time.sleep(0.3)
    assert (quiet(device) or 0) >= 200


def shots_in_step(device: Device, monkeypatch: pytest.MonkeyPatch, after_shot: Callable[[], Any] | None) -> int:
    """Screenshots the step that opens the Feed's delete dialog takes after its action; `after_shot` runs
    on the page once, right after the after-frame's screenshot came back (a change the frame missed)."""
    session = TaskSession(device, name="quiet", settle=SettlePolicy(timeout_s=3.0, interval_s=0.15))
    session.goal("open the delete dialog", plan=[])
    taken: list[float] = []
    acted: list[float] = []
    screenshot = device.screenshot

    def counted(**kwargs: Any) -> Any:
        frame = screenshot(**kwargs)
        taken.append(time.monotonic())
        if after_shot is not None and acted and len(taken) == 1:
            after_shot()
        return frame

    def tap() -> None:
        taken.clear()
        device.tap("Delete")
        # the page draws its dialog in the click's handlers, which may end a few ms after the click returned:
        # a change that late is rightly a change after the screenshot was asked for (looked at again), so the
        # test leaves the page time to finish before the step asks for its after-frame
        time.sleep(0.2)
        acted.append(time.monotonic())

    monkeypatch.setattr(device, "screenshot", counted)
    record = session.perform("open delete dialog", tap, expect=visible("Delete post?"))
    assert record.outcome == "ok"
    return len(taken)


def test_a_dialog_the_page_did_not_change_after_is_not_looked_at_again(
        device: Device, feed_server: FeedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    device.open_url(feed_server.page_url())
    assert shots_in_step(device, monkeypatch, None) == 1  # the after-frame alone


def test_a_dialog_the_page_changed_after_its_screenshot_is_looked_at_again(
        device: Device, feed_server: FeedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    device.open_url(feed_server.page_url())

    def late_change() -> None:  # the dialog's text redrawn after the frame was taken (a timer would)
        device.driver.execute_script("document.querySelector('[role=dialog]').setAttribute('data-late', '1')")

    assert shots_in_step(device, monkeypatch, late_change) >= 2
