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

# and a blue bar fixed at the top (fixed elements are clipped to what the screen shows)
_LOG = ("<div id='bar' style='position:fixed;top:0;left:0;width:100%;height:40px;background:%230000ff'></div>"
        "<ol id='log'></ol><script>document.getElementById('target').addEventListener('click', (e) => "
        "document.getElementById('log').insertAdjacentHTML('beforeend', '<li>' + e.target.id + '</li>'))</script>")
# a red button 300x200 CSS px, 1000 CSS px down: below the first screen height at devicePixelRatio alone
# (915 CSS px), on screen at the page's zoom
NO_META = ("data:text/html,<body style='margin:0;background:%23fff'><div style='height:1000px'></div>"
           "<button id='target' style='display:block;margin-left:100px;width:300px;height:200px;border:0;"
           "background:%23ff0000'></button>" + _LOG + "<div style='height:3000px'></div></body>")
META = ("data:text/html,<meta name='viewport' content='width=device-width'><body style='margin:0;background:%23fff'>"
        "<div style='height:400px'></div><button id='target' style='display:block;margin-left:100px;width:200px;"
        "height:100px;border:0;background:%23ff0000'></button>" + _LOG + "<div style='height:3000px'></div></body>")


def _pixels(image: np.ndarray, channel: int) -> Box:
    """Where a screenshot (BGR) is pure red (channel 2) or blue (channel 0). Its last row is left out: the
    viewport is 915 x 2.625 = 2401.9 px high, and headless Chromium fills that fraction of a row from the
    top of the page (the fixed bar's blue)."""
    image = image[:-1]
    strong = image[:, :, channel] > 200
    for other in {0, 1, 2} - {channel}:
        strong &= image[:, :, other] < 60
    assert strong.sum() > 1000, f"no box of colour channel {channel} in the screenshot"
    ys, xs = np.nonzero(strong)
    return Box(int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)


def _near(box: Box | None, pixels: Box, slack: int = 3) -> bool:
    return box is not None and all(abs(a - b) <= slack for a, b in zip(box.as_list(), pixels.as_list(), strict=True))


@pytest.mark.parametrize("pages", [(NO_META, META, NO_META)], ids=["no-meta, meta, no-meta"])
def test_boxes_and_taps_follow_the_pages_zoom(device: Device, pages: tuple[str, ...]) -> None:
    for page in pages:
        device.open_url(page)
        image = device.screenshot().bgr
        pixels, bar = _pixels(image, 2), _pixels(image, 0)
        nodes = {n.resource_id: n for n in device.ui_tree().nodes()}
        assert _near(nodes["target"].bounds, pixels), (page[:60], nodes["target"].bounds, pixels)
        assert _near(nodes["bar"].bounds, bar), (page[:60], nodes["bar"].bounds, bar)
        assert _near(device.box_of(device.find(id="target")), pixels), page[:60]
        device.tap(x=pixels.center[0], y=pixels.center[1])  # where the screenshot shows it
        assert device.driver.execute_script("return document.getElementById('log').textContent") == "target", page[:60]
