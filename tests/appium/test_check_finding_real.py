"""Locator checks answered by a find on real Appium + Chromium give the tree's verdict (issue 24).

On the web the tree is the DOM walk of `web.TREE_JS`; the find is that walk with the check's match at
its end (`devices/check_finding.FIND_JS`), so whatever CSS hides, clips or scrolls away is left out
by both. Each case compares the find's verdict with the page source's on the same screen.
"""

from __future__ import annotations

import base64
import time

import pytest

from pytest_guistate.core.checks import Check, gone, visible
from pytest_guistate.core.observation import Observation
from pytest_guistate.devices import web
from pytest_guistate.devices.device import Device

pytestmark = pytest.mark.appium

PAGE = """<!doctype html><html><head><meta name="viewport" content="width=device-width"></head><body>
<h1>Drafts</h1>
<button disabled data-testid="save">Save draft</button>
<button aria-label="Delete draft by Alice">x</button>
<p style="display:none">Hidden by display</p>
<p style="visibility:hidden">Hidden by visibility</p>
<p style="opacity:0">Hidden by opacity</p>
<div style="height:30px;overflow:hidden"><div style="height:30px">Top line</div><p>Clipped away</p></div>
<div style="position:absolute;left:-2000px">Pushed off the left</div>
<input placeholder="Search drafts" data-testid="search">
<ul>{rows}</ul>
</body></html>"""
DIALOG = """<div role="dialog" style="position:fixed;inset:30% 10%;background:#fff;border:1px solid #000">
<p>Discard changes?</p><button>Discard</button></div>"""


def page(dialog: bool = False) -> str:
    rows = "".join(f"<li style='height:60px'>Row {i}</li>" for i in range(80))
    html = PAGE.format(rows=rows).replace("</body>", (DIALOG if dialog else "") + "</body>")
    return "data:text/html;base64," + base64.b64encode(html.encode()).decode()


def both_verdicts(device: Device, check: Check) -> tuple[bool, bool, bool]:
    sources = device.page_source_calls
    by_find = device.observe()
    found = check(by_find).ok
    decided = by_find.finds == 1 and device.page_source_calls == sources
    by_tree = Observation(device.screenshot(), tree=device.ui_tree())
    return found, check(by_tree).ok, decided


CASES = [
    visible("Drafts"), visible("Save draft"), visible(id="save"), gone(id="save"),  # disabled: still visible
    visible(desc="Delete draft by Alice"), visible(desc="Delete draft", exact=True),
    visible("Hidden by display"), visible("Hidden by visibility"), visible("Hidden by opacity"),
    visible("Clipped away"), visible("Top line"), visible("Pushed off the left"),
    visible("Row 1", exact=True), visible("Row 79", exact=True), gone("Row 79", exact=True),
    visible(id="search"), visible("Search drafts"), visible("Nothing like this"),
    visible(text="Save draft", id="save"), visible(text="Save draft", id="search"),
]


@pytest.mark.parametrize("dialog", [False, True], ids=["plain", "dialog"])
def test_find_and_tree_agree_on_what_css_shows(device: Device, dialog: bool) -> None:
    device.open_url(page(dialog))
    device.find(text="Drafts")
    verdicts = {}
    for check in [*CASES, visible("Discard changes?")]:
        found, tree, decided = both_verdicts(device, check)
        assert found == tree, check.description
        assert decided, f"{check.description}: the DOM walk answers every web check"
        verdicts[check.description] = found
    assert verdicts["text 'Save draft' (substring) visible"]  # disabled is still visible
    assert not any(verdicts[f"text 'Hidden by {how}' (substring) visible"] for how in ("display", "visibility",
                                                                                      "opacity"))
    assert not verdicts["text 'Clipped away' (substring) visible"] and verdicts["text 'Top line' (substring) visible"]
    assert verdicts["text 'Row 1' visible"] and not verdicts["text 'Row 79' visible"]  # below the fold
    assert verdicts["text 'Discard changes?' (substring) visible"] == dialog


SLIDING = """<!doctype html><html><head><meta name="viewport" content="width=device-width"><style>
@keyframes slide { from { transform: translateY(40px); opacity: 0.2 } to { transform: none; opacity: 1 } }
.sheet { animation: slide {seconds}s linear }</style></head>
<body><h1>Drafts</h1><div class="sheet"><p>Saved</p></div></body></html>"""


@pytest.mark.parametrize("seconds", [0, 30], ids=["still", "sliding"])
def test_the_check_and_the_tree_say_whether_the_page_moves_so_the_step_asks_nothing_more(
        device: Device, monkeypatch: pytest.MonkeyPatch, seconds: int) -> None:
    """Evidence after the motion needs to know whether the page animates once the expectation held:
    the check's find and the tree walk on that screen say it in the same request, so `in_motion()`
    sends none of its own until the next screenshot or input."""
    html = SLIDING.replace("{seconds}", str(seconds))
    device.open_url("data:text/html;base64," + base64.b64encode(html.encode()).decode())
    device.find(text="Drafts")  # the page is drawn
    scripts: list[str] = []
    run = device.driver.execute_script

    def counted(script: str, *args: object) -> object:
        scripts.append(script)
        return run(script, *args)

    monkeypatch.setattr(device.driver, "execute_script", counted)
    by_find = device.observe()
    assert visible("Saved")(by_find).ok and by_find.finds == 1
    assert device.in_motion() is bool(seconds)
    assert len(scripts) == 1, "the check's find answered the motion question"
    by_tree = device.observe()
    assert by_tree.tree is not None and device.in_motion() is bool(seconds)
    assert len(scripts) == 2, "the tree walk answered it"
    device.action_count += 1  # an input since: the page may have changed, so it is asked again
    assert device.in_motion() is bool(seconds) and scripts[2:] == [web.MOTION_JS]


FADE = """<!doctype html><html><head><meta name="viewport" content="width=device-width"></head>
<body><h1>Notes</h1><div id="alert" style="opacity: 0.01">Delete note by Bob?</div></body></html>"""
FADE_IN = ("document.getElementById('alert').animate([{opacity: 0.01}, {opacity: 1}], "
           "{duration: 150, fill: 'both'})")  # Ionic's alert: 150 ms, fills both, stays listed once finished


def test_a_fade_that_ended_between_the_screenshot_and_the_question_is_motion(device: Device) -> None:
    """The step asks whether the page moves after its screenshot: a 150 ms fade can end in between, and
    the kept frame showed the dialog half drawn (issue 34's race). An animation that ended after the
    screenshot was asked for is motion; one that ended before it is not."""
    device.open_url("data:text/html;base64," + base64.b64encode(FADE.encode()).decode())
    device.find(text="Notes")
    device.driver.execute_script(FADE_IN)
    device.observe()  # the screenshot during (or at the very end of) the fade
    time.sleep(0.4)  # the fade is over when the question comes
    assert device.driver.execute_script(web.MOTION_JS) is not True  # nothing runs any more...
    assert device.in_motion() is True  # ...but it ended after that screenshot was asked for
    device.observe()  # a screenshot asked for after the fade ended
    assert device.in_motion() is False
