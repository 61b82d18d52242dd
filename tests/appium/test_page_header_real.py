"""A desktop browser's page has no system bars: a change in its top band is the page's (real Chromium).

The oracle sets a phone's status bar aside (its clock, its icons). A desktop browser's screenshot is the
page's viewport alone, so its top band is the page's own header. Set aside as a status bar, a tap whose only
effect was a counter in that header was judged "no visible effect": at light the step's evidence said nothing
changed, at standard and full the step failed ("expected a visible change on screen") though the item was saved.
"""

from __future__ import annotations

import pytest

from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.devices.device import Device

pytestmark = pytest.mark.appium

HEADER_PAGE = (
    "data:text/html,<meta name=viewport content='width=device-width'>"
    "<style>body{margin:0;font:18px sans-serif} header{position:fixed;top:0;left:0;right:0;height:28px;"
    "background:%23246;color:white;padding:0 12px;line-height:28px} main{padding:120px 12px}</style>"
    "<header><span>Shop</span> <span id=saved style='float:right'>0 saved</span></header>"
    "<main><button id=save onclick=\"window.saves=(window.saves||0)+1;"
    "document.getElementById('saved').textContent=window.saves+' saved'\">Save</button></main>"
)


@pytest.mark.parametrize("tier", ["light", "standard", "full"])
def test_a_change_in_the_page_header_is_the_steps_effect_and_the_tap_is_not_repeated(device: Device,
                                                                                    tier: str) -> None:
    device.driver.get(HEADER_PAGE)
    assert device.system_bars is False
    session = TaskSession(device, policy=TierPolicy.for_tier(tier), name="header")
    assert session.oracle.config.ignore_status_bar is False
    session.goal("save the item", plan=[])
    record = session.perform("save", lambda: device.tap(id="save"))
    assert device.driver.execute_script("return window.saves") == 1  # tapped once, never again
    assert record.outcome == "ok", record.explanation
    assert session.last_transition is not None and session.last_transition.verdict == "changed"
    header_bottom = 28 * device.scale
    assert any(r.raw.top < header_bottom for r in session.last_transition.regions)  # the header's change, found
