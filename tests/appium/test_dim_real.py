"""Closing the web Feed's dimmed dialog on real Chromium (issue 15): the scrim undims every pixel,
yet the step's region is the dialog (from the before-tree) and its crop is smaller than the screen."""

from __future__ import annotations

import base64
import time

import pytest

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.settle import SettlePolicy
from pytest_guistate.core.task_session import StepHandle, TaskSession
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.web_feed import FeedServer

pytestmark = pytest.mark.appium


def test_cancelling_the_dimmed_dialog_crops_the_dialog_not_the_screen(device: Device, feed_server: FeedServer) -> None:
    device.open_url(feed_server.page_url(delay_ms=0))
    session = TaskSession(device, name="real_dim", settle=SettlePolicy(timeout_s=2.0, interval_s=0.15))
    session.perform("open delete dialog", lambda: device.tap("Delete"), expect=visible("Delete post?"))
    with session.step("cancel", expect=gone("Delete post?")) as step:
        device.tap(id="cancel_delete")
    transition = step.transition
    assert transition is not None and transition.verdict == "changed"
    width, height = device.screenshot().size
    first = transition.regions[0]
    assert first.container is not None and "vanished" in first.container, transition.regions
    assert transition.crops and all(c.box.area < 0.5 * width * height for c in transition.crops), \
        [c.box for c in transition.crops]
    assert any("undim" in note for note in transition.notes), transition.notes


@pytest.mark.parametrize("change", ["appeared", "vanished"])
def test_a_full_screen_dialog_layer_gives_the_dialog_box_not_the_frame(device: Device, feed_server: FeedServer,
                                                                        change: str) -> None:
    """Issue 23: the web app's `role="dialog"` element is the full-screen dim layer; opening and
    closing it gave a region of the whole frame (container null). The dialog box is its content."""
    device.open_url(feed_server.page_url(delay_ms=0, scrim_dialog=True))
    session = TaskSession(device, name="real_dim_layer", settle=SettlePolicy(timeout_s=2.0, interval_s=0.15))
    with session.step("open delete dialog", expect=visible("Delete post?")) as opened:
        device.tap("Delete")
    step = opened
    if change == "vanished":
        with session.step("cancel", expect=gone("Delete post?")) as closed:
            device.tap(id="cancel_delete")
        step = closed
    transition = step.transition
    assert transition is not None and transition.verdict == "changed"
    width, height = device.screenshot().size
    first = transition.regions[0]
    assert first.container is not None and change in first.container, transition.regions
    assert first.box.area < 0.5 * width * height, first.box
    assert transition.crops and all(c.box.area < 0.5 * width * height for c in transition.crops), \
        [c.box for c in transition.crops]


def open_the_delete_dialog(device: Device, page: str, name: str) -> StepHandle:
    """The notes page's "Delete" tapped in a step expecting its dialog: the step, for its record and evidence."""
    device.open_url("data:text/html;base64," + base64.b64encode(page.encode()).decode())
    device.find(text="Note by Bob")
    session = TaskSession(device, name=name, settle=SettlePolicy(timeout_s=3.0, interval_s=0.15))
    with session.step("open the delete dialog", expect=visible("Delete note by Bob?")) as opened:
        device.tap("Delete")
    return opened


LATE_FADE = """<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { font: 18px sans-serif; margin: 16px } [role=dialog] { position: fixed; left: 10%; right: 10%; top: 30%;
padding: 24px; background: #fff; border: 2px solid #000; opacity: 0.01 }</style></head><body>
<h1>Notes</h1><p>Note by Bob</p><button id="delete">Delete</button>
<script>
document.getElementById("delete").addEventListener("click", () => {
  const dialog = document.createElement("div");
  dialog.setAttribute("role", "dialog");
  dialog.textContent = "Delete note by Bob?";
  document.body.append(dialog);  // in the DOM at once, at opacity 0.01 (Ionic's start), its fade begins later
  setTimeout(() => dialog.animate([{opacity: 0.01}, {opacity: 1}], {duration: 250, fill: "forwards"}), 600);
});
</script></body></html>"""


def test_a_dialog_in_the_page_before_its_fade_begins_is_evidenced_once_drawn(device: Device) -> None:
    """Ionic's alert through a Grid hub (CI, stop 40): the dialog is in the DOM at opacity 0.01 when the
    after-frame is taken and its fade starts later, so the check held on a frame that showed nothing new
    and the step's evidence was the whole screen, 'no change'. The screen wins: the kept frame is the
    first that draws it, once its fade ends; the crop is the dialog."""
    opened = open_the_delete_dialog(device, LATE_FADE, "late_fade")
    transition = opened.transition
    assert transition is not None and transition.verdict == "changed", transition and transition.notes
    width, height = device.screenshot().size
    assert transition.crops and all(c.box.area < 0.5 * width * height for c in transition.crops), \
        [c.box for c in transition.crops]
    assert device.driver.execute_script(
        "return getComputedStyle(document.querySelector('[role=dialog]')).opacity") == "1"


BACKDROP_FIRST = """<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { font: 18px sans-serif; margin: 16px }
.backdrop { position: fixed; inset: 0; background: #000; opacity: 0; transition: opacity .4s linear }
.backdrop.show { opacity: .5 }
[role=dialog] { display: none; position: fixed; left: 10%; right: 10%; top: 30%; padding: 24px; background: #fff;
  opacity: 0; transform: translateY(-120px); transition: opacity .5s linear, transform .5s linear }
[role=dialog].show { opacity: 1; transform: none }</style></head><body>
<h1>Notes</h1><p>Note by Bob</p><button id="delete">Delete</button>
<div role="dialog" aria-modal="true" id="dialog">Delete note by Bob?</div>
<script>
// Bootstrap 5's modal, in its shape: the backdrop is appended and fades in first (a CSS transition after a
// forced reflow); only once it ends is the dialog set display:block and given .show, sliding in
document.getElementById("delete").addEventListener("click", () => {
  const backdrop = document.createElement("div");
  backdrop.className = "backdrop";
  document.body.append(backdrop);
  backdrop.offsetHeight;
  backdrop.classList.add("show");
  backdrop.addEventListener("transitionend", () => {
    const dialog = document.getElementById("dialog");
    dialog.style.display = "block";
    dialog.offsetHeight;
    dialog.classList.add("show");
  }, {once: true});
});
</script></body></html>"""


def test_a_dialog_shown_after_its_backdrop_fades_is_no_stale_screen(device: Device) -> None:
    """Bootstrap's modal: the first look after the tap sees the backdrop half faded and no dialog yet
    (it is display:none until the backdrop's transition ends). That look was mid-motion, not on a
    stale screen: the step waits for the motion and is met at once ("ok", one look, no stale-screen
    episode), and the frame it keeps is the dialog where it rests, not sliding in."""
    opened = open_the_delete_dialog(device, BACKDROP_FIRST, "backdrop_first")
    record = opened.record
    assert (record.outcome, [a.stage for a in record.attempts]) == ("ok", ["initial"]), \
        [(a.stage, a.evidence) for a in record.attempts]
    assert not record.episode
    transition = opened.transition
    assert transition is not None and transition.regions, transition
    top, scale = device.driver.execute_script(
        "return [document.getElementById('dialog').getBoundingClientRect().top, devicePixelRatio]")
    dialog = transition.regions[0]
    assert dialog.container is not None and "appeared" in dialog.container, transition.regions
    # the kept frame shows the dialog at rest: its drawn top is where the page has it now (mid-slide it is
    # up to 120 CSS px higher)
    assert abs(dialog.raw.top - top * scale) <= 0.1 * 120 * scale, (dialog.raw, top, scale)


TIMED_OPEN = """<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { font: 18px sans-serif; margin: 16px; background: #777 } [role=dialog] { position: fixed; left: 10%;
right: 10%; top: 30%; padding: 24px; background: #fff; color: #000; border: 2px solid #000 }
[role=dialog].opening { opacity: 0.1 } .scrim { position: fixed; inset: 0; background: rgba(0, 0, 0, 0.3) }</style></head><body>
<h1>Notes</h1><p>Note by Bob</p><button id="delete">Delete</button>
<script>
document.getElementById("delete").addEventListener("click", () => {
  const dialog = document.createElement("div");
  dialog.setAttribute("role", "dialog");
  dialog.className = "opening";  // drawn faint, whole once a timer drops the class: no animation runs
  dialog.textContent = "Delete note by Bob?";
  document.body.append(Object.assign(document.createElement("div"), {className: "scrim"}), dialog);
  setTimeout(() => dialog.classList.remove("opening"), 800);
});
</script></body></html>"""


def test_a_dialog_drawn_faint_by_a_timer_is_evidenced_once_whole(device: Device) -> None:
    """UI5 Web Components' popups open under a class at opacity 0.1 that a timer drops 50 ms later: no
    animation runs, so nothing was listed as moving and the dialog's kept crop was the faint first
    frame (the scrim dimming the page is change enough to judge the step at once). A dialog that
    appeared is looked at again, and on while it is drawn translucent (here held faint 0.8 s, longer
    than the frames take to look still): the crop kept is the dialog as it stays."""
    opened = open_the_delete_dialog(device, TIMED_OPEN, "timed_open")
    transition = opened.transition
    assert transition is not None and transition.crops, transition and transition.notes
    deadline = time.monotonic() + 3
    while device.driver.execute_script("return !!document.querySelector('.opening')") and time.monotonic() < deadline:
        time.sleep(0.1)
    kept, screen = transition.crops[0], device.screenshot()  # the dialog whole now
    assert kept.box.area < 0.5 * screen.size[0] * screen.size[1], kept.box
    box = kept.box
    now = screen.bgr[box.top:box.bottom, box.left:box.right]
    assert abs(float(kept.pixels.mean()) - float(now.mean())) < 8, (kept.pixels.mean(), now.mean())
