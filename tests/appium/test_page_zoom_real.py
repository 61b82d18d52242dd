"""Boxes and taps on a page with no <meta name="viewport">, on real Appium + Chromium (mobile emulation).

Such a page is laid out ~980 CSS px wide and shown zoomed out (visualViewport.scale 0.42 on the
Pixel 7 preset): a screenshot px is devicePixelRatio x 0.42 CSS px, not devicePixelRatio. One session
opens a page without the tag, one with it, then the first again (the zoom follows the page, it is not
kept per session), and each time the tree's box, the located element's box and a tap by point at
the coloured box's pixels must all land on the element (the tap seen in the page's own log).
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.device import Device

pytestmark = pytest.mark.appium

_LOG = ("<ol id='log'></ol><script>document.getElementById('target').addEventListener('click', (e) => "
        "document.getElementById('log').insertAdjacentHTML('beforeend', '<li>' + e.target.id + '</li>'))</script>")
# a red button 300x200 CSS px, 1000 CSS px down: below the first screen height at devicePixelRatio alone
# (915 CSS px), on screen at the page's zoom
NO_META = ("data:text/html,<body style='margin:0;background:%23fff'><div style='height:1000px'></div>"
           "<button id='target' style='display:block;margin-left:100px;width:300px;height:200px;border:0;"
           "background:%23ff0000'></button>" + _LOG + "<div style='height:3000px'></div></body>")
META = ("data:text/html,<meta name='viewport' content='width=device-width'><body style='margin:0;background:%23fff'>"
        "<div style='height:400px'></div><button id='target' style='display:block;margin-left:100px;width:200px;"
        "height:100px;border:0;background:%23ff0000'></button>" + _LOG + "<div style='height:3000px'></div></body>")


def _red(image: np.ndarray) -> Box:
    """The red button's pixels in a screenshot (BGR)."""
    red = (image[:, :, 2] > 200) & (image[:, :, 1] < 60) & (image[:, :, 0] < 60)
    ys, xs = np.nonzero(red)
    assert xs.size > 1000, "the red button is not in the screenshot"
    return Box(int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)


def _near(box: Box | None, pixels: Box, slack: int = 3) -> bool:
    return box is not None and all(abs(a - b) <= slack for a, b in zip(box.as_list(), pixels.as_list(), strict=True))


@pytest.mark.parametrize("pages", [(NO_META, META, NO_META)], ids=["no-meta, meta, no-meta"])
def test_boxes_and_taps_follow_the_pages_zoom(device: Device, pages: tuple[str, ...]) -> None:
    for page in pages:
        device.open_url(page)
        pixels = _red(device.screenshot().bgr)
        [node] = [n for n in device.ui_tree().nodes() if n.resource_id == "target"]
        assert _near(node.bounds, pixels), (page[:60], node.bounds, pixels)
        assert _near(device.box_of(device.find(id="target")), pixels), page[:60]
        device.tap(x=pixels.center[0], y=pixels.center[1])  # where the screenshot shows it
        assert device.driver.execute_script("return document.getElementById('log').textContent") == "target", page[:60]
