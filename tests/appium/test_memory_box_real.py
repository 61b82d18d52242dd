"""The box the cross-run memory learns a tapped element's look from, on real Appium + Chromium (issue 38).

On a browser page the box comes from the find's own answer (`web.LOCATE_JS` returns the element's
viewport rect), so learning asks the element nothing; and it is where the screenshot shows the
element on a scrolled page too (the W3C element rect is relative to the document, off by the scroll,
so a look cropped at it would be another element's pixels).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.command_log import CommandLog
from pytest_guistate.devices.device import Device

pytestmark = pytest.mark.appium

# a green button 1500 CSS px down a 4580 px page, on white (laid out at the phone's width)
TALL_PAGE = ("data:text/html,<meta name='viewport' content='width=device-width'><body style='margin:0;background:%23fff'><div style='height:1500px'></div>"
             "<button data-testid='go' style='display:block;width:200px;height:80px;border:0;background:%2300c000'>"
             "</button><div style='height:3000px'></div></body>")
GREEN_BGR = np.array([0, 192, 0], np.int16)


class _Boxes:
    """A memory that keeps the box each located tap gives it (what `MemoryBridge` learns from)."""

    def __init__(self) -> None:
        self.boxes: list[Box] = []

    def found(self, kind: str, value: str, box: Box | Callable[[], Box], function: str | None, *,
              screen: Any = None, facts: Any = None) -> None:
        self.boxes.append(box() if callable(box) else box)

    def heal(self, kind: str, value: str, function: str | None) -> tuple[tuple[int, int] | None, str]:
        return None, "no heal in this test"


def test_a_tapped_elements_box_is_where_the_screenshot_shows_it_and_costs_no_request(device: Device) -> None:
    device.open_url(TALL_PAGE)
    device.driver.execute_script("window.scrollTo(0, 1200)")
    image = device.screenshot().bgr
    scale = device.scale  # measured once a session (a script)
    memory = _Boxes()
    device.memory = memory
    log = CommandLog.attach(device.driver)
    assert log is not None
    log.take()
    device.tap(id="go")
    sent = [entry["command"].split()[0] for entry in log.take()]
    [box] = memory.boxes
    assert box == Box(0, round(300 * scale), round(200 * scale), round(380 * scale))  # 1500 - 1200 CSS px down
    crop = image[box.top:box.bottom, box.left:box.right].astype(np.int16)
    assert np.all(np.abs(crop - GREEN_BGR) <= 8, axis=2).mean() > 0.95  # the button's pixels, not the page's
    assert sent == ["w3cExecuteScript", "clickElement"], sent  # the find's one script and the click: no rect
    element = device.find(id="go")
    assert device.box_of(element) == box  # asked of the element, the same place
