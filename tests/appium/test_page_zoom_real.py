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
    """Where a screenshot (BGR) is pure red (channel 2) or blue (channel 0). Its last row and column are
    left out: the viewport is 412 x 915 CSS px at 2.625, 1081.5 x 2401.9 px, and headless Chromium fills
    those fractions of a pixel from the opposite edge of the page."""
    image = image[:-1, :-1]
    strong = image[:, :, channel] > 200
    for other in {0, 1, 2} - {channel}:
        strong &= image[:, :, other] < 60
    assert strong.sum() > 1000, f"no box of colour channel {channel} in the screenshot"
    ys, xs = np.nonzero(strong)
    return Box(int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)


def _assert_lands(device: Device, what: str) -> None:
    """The tree's box and the located box are the red button's pixels, and a tap by point at those
    pixels clicks it (the page logs the click), the fixed bar's box its blue pixels when shown."""
    image = device.screenshot().bgr
    pixels = _pixels(image, 2)
    nodes = {n.resource_id: n for n in device.ui_tree().nodes()}
    assert _near(nodes["target"].bounds, pixels), (what, nodes["target"].bounds, pixels)
    if "bar" in nodes:
        assert _near(nodes["bar"].bounds, _pixels(image, 0)), (what, nodes["bar"].bounds)
    screen = Box(0, 0, image.shape[1], image.shape[0])  # the located box is not clipped to the screen
    assert _near(device.box_of(device.find(id="target")).intersection(screen), pixels), what
    device.tap(x=pixels.center[0], y=pixels.center[1])  # where the screenshot shows it
    assert device.driver.execute_script("return document.getElementById('log').textContent") == "target", what


def _near(box: Box | None, pixels: Box, slack: int = 3) -> bool:
    return box is not None and all(abs(a - b) <= slack for a, b in zip(box.as_list(), pixels.as_list(), strict=True))


@pytest.mark.parametrize("pages", [(NO_META, META, NO_META)], ids=["no-meta, meta, no-meta"])
def test_boxes_and_taps_follow_the_pages_zoom(device: Device, pages: tuple[str, ...]) -> None:
    for page in pages:
        device.open_url(page)
        assert "bar" in {n.resource_id for n in device.ui_tree().nodes()}  # the fixed bar is on screen too
        _assert_lands(device, page[:60])


def test_boxes_and_taps_on_a_pinch_zoomed_page(device: Device) -> None:
    """Pinch-zoomed 2x (DevTools' synthesized pinch): the screen shows part of the layout viewport, from
    (150, 250) CSS px; boxes take that offset off, and the driver's pointer is relative to it already."""
    device.open_url(META)
    device.driver.command_executor.add_command("executeCdpCommand", "POST", "/session/$sessionId/goog/cdp/execute")
    device.driver.execute("executeCdpCommand", {"cmd": "Input.synthesizePinchGesture",
                                                "params": {"x": 300, "y": 500, "scaleFactor": 2.0}})
    zoom = device.page_zoom()
    assert zoom.factor > 2.625 * 1.5 and zoom.left > 0 and zoom.top > 0, zoom  # pinched and panned
    _assert_lands(device, "pinch-zoomed")
