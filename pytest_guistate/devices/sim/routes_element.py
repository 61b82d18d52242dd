"""Element endpoints: find (with implicit wait), click, text, send keys and the element getters.

Importing this module registers its routes in `routes.ROUTES`.
"""

from __future__ import annotations

import base64
import time
from typing import Any

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.actions import focused_node
from pytest_guistate.devices.sim.errors import W3CError, arg_str, invalid_argument
from pytest_guistate.devices.sim.locators import find_nodes
from pytest_guistate.devices.sim.model import SimNode
from pytest_guistate.devices.sim.routes import Request, route
from pytest_guistate.devices.sim.scrollable import is_ui_scrollable, scroll_into_view
from pytest_guistate.devices.sim.webdriver_session import SimSession, element_ref

__all__ = ["visible_centre"]


def _find(req: Request, many: bool) -> Any:
    """Find with implicit wait: poll (lock released in between) until found or the wait is over."""
    session = req.sess
    using, value = arg_str(req.body, "using"), arg_str(req.body, "value")
    scope_id = req.params.get("eid")
    with session.lock:
        deadline = time.monotonic() + session.implicit_ms / 1000
    while True:
        with session.lock:
            if session.closed:
                raise W3CError("invalid session id", f"session {session.session_id!r} was closed during the wait")
            root = session.phone.root()
            scope = session.resolve(scope_id, root) if scope_id else None
            own = getattr(session.phone, "find_nodes", None)  # a persona with its own strategies (iOS)
            helper = getattr(session.phone, "find_xpath", None)
            if callable(own):
                nodes = own(using, value, scope)
            elif using == "-android uiautomator" and is_ui_scrollable(value):
                nodes = scroll_into_view(session.phone, value)  # scrolls the list: it is an action
            else:
                nodes = find_nodes(
                    root,
                    using,
                    value,
                    scope=scope,
                    width=session.phone.width,
                    height=session.phone.height,
                    xpath_helper=helper if callable(helper) else None,
                )
            if nodes:
                refs = [element_ref(session.element_id(node)) for node in nodes]
                return refs if many else refs[0]
        remaining = deadline - time.monotonic()
        if remaining <= 0 or req.store.stopping.wait(min(0.05, remaining)):
            break
    if many:
        return []
    if getattr(session.phone, "platform", "android") == "ios":  # WDA's wording, as the XCUITest driver relays it
        raise W3CError("no such element", "An element could not be located on the page using the given search "
                                          f"parameters ({using}={value!r}).")
    raise W3CError("no such element", f"no element found with {using}={value!r}")


route("POST", "/session/{sid}/element", locked=False)(lambda req: _find(req, False))
route("POST", "/session/{sid}/elements", locked=False)(lambda req: _find(req, True))
route("POST", "/session/{sid}/element/{eid}/element", locked=False)(lambda req: _find(req, False))
route("POST", "/session/{sid}/element/{eid}/elements", locked=False)(lambda req: _find(req, True))


@route("GET", "/session/{sid}/element/active")
def _active(req: Request) -> Any:
    node = focused_node(req.sess.phone.root())
    if node is None:
        raise W3CError("no such element", "no element has focus")
    return element_ref(req.sess.element_id(node))


def _node(req: Request) -> SimNode:
    return req.sess.resolve(req.params["eid"])


def visible_centre(session: SimSession, node: SimNode) -> tuple[int, int]:
    """Centre of the on-screen part of a node: where UiAutomator2 taps for `click` (an iOS row partly
    scrolled out of its list reports its whole frame; the part still inside the list is `shown`)."""
    shown = getattr(node, "shown", None) or node.bounds
    visible = shown.clamp(session.phone.width, session.phone.height)
    if visible.is_empty:
        raise W3CError(
            "element not interactable", f"element {node.key} has no on-screen area ({node.bounds.to_bounds()})"
        )
    return visible.center


@route("POST", "/session/{sid}/element/{eid}/click")
def _click(req: Request) -> Any:
    x, y = visible_centre(req.sess, _node(req))
    req.sess.phone.tap(x, y)
    return None


@route("POST", "/session/{sid}/element/{eid}/value")
def _send_keys(req: Request) -> Any:
    text = req.body.get("text")
    if text is None and isinstance(req.body.get("value"), list):
        text = "".join(str(part) for part in req.body["value"])
    if not isinstance(text, str):
        raise invalid_argument("send keys needs a 'text' string (or a 'value' list of strings)")
    req.sess.phone.type_text(_node(req).key, text)
    return None


@route("POST", "/session/{sid}/element/{eid}/clear")
def _clear(req: Request) -> Any:
    req.sess.phone.clear_text(_node(req).key)
    return None


@route("GET", "/session/{sid}/element/{eid}/text")
def _text(req: Request) -> Any:
    return _node(req).text


@route("GET", "/session/{sid}/element/{eid}/name")
def _name(req: Request) -> Any:
    return _node(req).cls


@route("GET", "/session/{sid}/element/{eid}/rect")
def _rect(req: Request) -> Any:
    x, y, width, height = _node(req).bounds.to_xywh()
    return {"x": x, "y": y, "width": width, "height": height}


@route("GET", "/session/{sid}/element/{eid}/location_in_view")
def _location(req: Request) -> Any:
    bounds = _node(req).bounds
    return {"x": bounds.left, "y": bounds.top}


@route("GET", "/session/{sid}/element/{eid}/attribute/{name}")
@route("GET", "/session/{sid}/element/{eid}/property/{name}")
def _attribute(req: Request) -> Any:
    return _node(req).attribute(req.params["name"])


@route("GET", "/session/{sid}/element/{eid}/displayed")
def _displayed(req: Request) -> Any:
    return _node(req).displayed


@route("GET", "/session/{sid}/element/{eid}/enabled")
def _enabled(req: Request) -> Any:
    return _node(req).enabled


@route("GET", "/session/{sid}/element/{eid}/selected")
def _selected(req: Request) -> Any:
    node = _node(req)
    return node.selected or node.checked


@route("GET", "/session/{sid}/element/{eid}/screenshot")
def _element_screenshot(req: Request) -> Any:
    box = _node(req).bounds.clamp(req.sess.phone.width, req.sess.phone.height)
    if box.is_empty:
        raise W3CError("unable to capture screen", "the element has no on-screen area")
    scale = getattr(req.sess.phone, "scale", 1)  # element rects in points, screenshots in pixels (iOS)
    if scale != 1:
        box = Box(box.left * scale, box.top * scale, box.right * scale, box.bottom * scale)
    pixels = cv2.imdecode(np.frombuffer(req.sess.phone.screenshot_png(), np.uint8), cv2.IMREAD_UNCHANGED)
    if pixels is None:
        raise W3CError("unable to capture screen", "the phone produced an undecodable screenshot")
    ok, png = cv2.imencode(".png", pixels[box.top : box.bottom, box.left : box.right])
    if not ok:
        raise W3CError("unable to capture screen", "could not encode the element crop")
    return base64.b64encode(png.tobytes()).decode("ascii")
