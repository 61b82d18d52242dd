"""Locator checks answered with a find instead of a page source (issue 24, `core/finding.py`).

The find asks the driver for the elements a `visible`/`gone` check names, with no implicit wait,
and gives the tree's verdict or none at all:

* nothing matches: nothing is visible (one find, what a careful script pays; on iOS after the alert question);
* a match is found: it is visible when it is displayed and on screen (iOS: the predicate asks for
  `visible == 1`, which WebDriverAgent sets only for elements on screen; Android: UiAutomator2
  finds only elements visible to the user, and the first one's rect is checked against the screen);
  on iOS the alert is asked about first (`GET /alert/text`): with an alert or action sheet open
  (WebDriverAgent still lists the screen beneath it) only the modal or what is inside it counts,
  asked with class chains scoped to it instead of the predicate over the whole screen;
* unless an element has focus (`GET /element/active`): a soft keyboard may be up, and only the tree
  knows where. Then, and when the driver refuses a query or too many candidates need a look, the
  answer is None and the check reads the page source.

In a web context the page source is itself a script (`web.TREE_JS`: a DOM walk building the
tree), so the find is that same walk with the check's match at its end (`FIND_JS`): the very nodes
the tree would hold, matched by the rules of `checks.visible`, and only the first match comes back -
no XML serialised, sent or parsed. The same nodes make the same verdict, whatever CSS hides.
"""

from __future__ import annotations

import re
from typing import Any

from appium.webdriver.common.appiumby import AppiumBy
from selenium.common.exceptions import NoAlertPresentException, NoSuchElementException, WebDriverException

from pytest_guistate.core.finding import FindAnswer, FoundNode, NodeQuery
from pytest_guistate.core.geometry import Box
from pytest_guistate.devices import ios, web
from pytest_guistate.devices.errors import DeviceError

__all__ = ["FIND_JS", "MAX_LOOKS", "android_query", "answer", "ios_query", "java_literal"]

MAX_LOOKS = 3  # candidates whose rect an Android answer may ask for before the tree is cheaper


def ios_query(query: NodeQuery) -> tuple[str, str]:
    """One `-ios predicate string` for the check's target among elements WDA says are visible:
    text = label, name (when no desc) or a text element's value; desc = label or name; id = name."""
    op = "==" if query.exact else "CONTAINS"
    parts = []
    if query.text is not None:
        lit = ios.predicate_literal(query.text)
        alternatives = [f"label {op} {lit}", f"(value {op} {lit} AND type IN {_IOS_VALUE_TYPES})"]
        if query.desc is None:
            alternatives.append(f"name {op} {lit}")
        parts.append("(" + " OR ".join(alternatives) + ")")
    if query.desc is not None:
        lit = ios.predicate_literal(query.desc)
        parts.append(f"(label {op} {lit} OR name {op} {lit})")
    if query.id is not None:
        parts.append(f"name == {ios.predicate_literal(query.id)}")
    return AppiumBy.IOS_PREDICATE, " AND ".join([*parts, "visible == 1"])


_IOS_VALUE_TYPES = ("{'XCUIElementTypeStaticText', 'XCUIElementTypeTextField', 'XCUIElementTypeSecureTextField', "
                    "'XCUIElementTypeSearchField', 'XCUIElementTypeTextView', 'XCUIElementTypePickerWheel'}")


def java_literal(value: str) -> str:
    """A double-quoted Java string, as a UiSelector argument takes it."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def android_query(query: NodeQuery) -> tuple[str, str]:
    """One `-android uiautomator` locator whose matches are the check's (XPath makes the driver dump
    the window first): a text without `desc=` matches the text or the description, as the tree's
    matcher does, so it is two selectors joined by `;`, which the UiAutomator2 server parses as
    statements and answers with their deduplicated union in one request (`UiAutomatorParser`,
    `ByUiAutomatorFinder.findMany`). UiAutomator2 finds, like its page source, hold only elements
    visible to the user (its `allowInvisibleElements` setting is off by default), so displayed is
    given; on screen is the rect's."""
    def call(method: str, value: str) -> str:
        return f".{method}{'' if query.exact else 'Contains'}({java_literal(value)})"

    common = ""
    if query.desc is not None:
        common += call("description", query.desc)
    if query.id is not None:
        common += f".resourceIdMatches({java_literal('(.*/)?' + re.escape(query.id))})"
    if query.text is None:
        return AppiumBy.ANDROID_UIAUTOMATOR, "new UiSelector()" + common
    selectors = ["new UiSelector()" + call("text", query.text) + common]
    if query.desc is None:
        selectors.append("new UiSelector()" + call("description", query.text) + common)
    return AppiumBy.ANDROID_UIAUTOMATOR, "; ".join(selectors)


def _may_have_focus(driver: Any) -> bool:
    """True unless no element has focus (then no soft keyboard is up): `GET /element/active`."""
    try:
        driver.switch_to.active_element  # noqa: B018 - the request is the question
    except NoSuchElementException:
        return False
    except WebDriverException:
        return True
    return True


def _alert_open(driver: Any) -> bool:
    """An iOS alert (or action sheet) is up: `GET /alert/text`; unsure counts as open."""
    try:
        _ = driver.switch_to.alert.text
    except NoAlertPresentException:
        return False
    except WebDriverException:
        return True
    return True


_IOS_MODALS = '`type IN {"XCUIElementTypeAlert", "XCUIElementTypeSheet"}`'


def _inside_ios_modal(driver: Any, predicate: str) -> bool:
    """Whether a match is the open alert / sheet or inside it (what the tree counts as visible then):
    `-ios class chain` queries scoped to the modal, its descendants first, then the modal itself."""
    for chain in (f"**/*[{_IOS_MODALS}]/**/*[`{predicate}`]", f"**/*[{_IOS_MODALS}][`{predicate}`]"):
        if driver.find_elements(AppiumBy.IOS_CLASS_CHAIN, chain):
            return True
    return False


_TREE_TAIL = ('const roots = pageRoots();\ntop.setAttribute("moving", String(pageMoving(roots)));\n'
              'top.setAttribute("quiet", String(pageQuiet(roots)));\nreturn new XMLSerializer().serializeToString(out);')
_MATCH_TAIL = r"""
const roots = pageRoots(), moving = pageMoving(roots), quiet = pageQuiet(roots);
const q = arguments[0];
for (const key of ["text", "desc"]) if (q[key] !== null) q[key] = norm(q[key]);
const same = (value, wanted) => q.exact ? value === wanted : value.includes(wanted);
for (const node of top.getElementsByTagName("node")) {
  const text = node.getAttribute("text"), desc = node.getAttribute("content-desc");
  const rid = node.getAttribute("resource-id"), source = node.getAttribute("source-text");
  const shown = same(text, q.text) || source !== null && same(source, q.text);
  if (q.text !== null && !(shown || (q.desc === null && same(desc, q.text)))) continue;
  if (q.desc !== null && !same(desc, q.desc)) continue;
  if (q.id !== null && !(rid === q.id || rid.slice(rid.lastIndexOf("/") + 1) === q.id)) continue;
  return {moving, quiet, match: {label: text || desc || node.getAttribute("hint") || rid ||
          node.getAttribute("class"), kind: node.getAttribute("class").split(".").pop(),
          bounds: node.getAttribute("bounds")}};
}
return {moving, quiet, match: null};
"""
if _TREE_TAIL not in web.TREE_JS:  # pragma: no cover - the tree script changed its last line
    raise ImportError("web.TREE_JS no longer ends by noting motion and serialising its document: "
                      "update check_finding.FIND_JS")
FIND_JS = web.TREE_JS.replace(_TREE_TAIL, _MATCH_TAIL)
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def _web_answer(device: Any, query: NodeQuery) -> FindAnswer | None:
    try:
        found = device.driver.execute_script(FIND_JS, {"text": query.text, "desc": query.desc, "id": query.id,
                                                        "exact": query.exact})
    except WebDriverException:
        return None  # a context that runs no script: the tree route says why
    moving = web.motion_answer(found.get("moving")) if isinstance(found, dict) else None
    if moving is None:
        return None
    device.saw_motion(moving)  # the step loop's motion question, answered by this same request
    device.saw_quiet(web.quiet_answer(found.get("quiet")))
    match = found.get("match")
    if not isinstance(match, dict):
        return FindAnswer((), "find (DOM walk)")
    corners = _BOUNDS.fullmatch(str(match.get("bounds", "")))
    box = Box(*(int(v) for v in corners.groups())) if corners else None
    return FindAnswer((FoundNode(str(match.get("label", "")), str(match.get("kind", "element")), box),),
                      "find (DOM walk)")


def _ios_answer(driver: Any, query: NodeQuery) -> FindAnswer | None:
    """The alert is asked about first: WebDriverAgent still lists the screen beneath an open alert,
    so with one up only the modal's own elements are searched (class chains scoped to it), and the
    predicate over the whole screen is not sent for nothing; without one, the predicate decides."""
    by, predicate = ios_query(query)
    try:
        if _alert_open(driver):
            found, via = _inside_ios_modal(driver, predicate), f"{AppiumBy.IOS_CLASS_CHAIN} (inside the alert)"
        else:
            found, via = bool(driver.find_elements(by, predicate)), f"find {by}"
    except WebDriverException:
        return None  # a driver that cannot run this query: the tree can
    if not found:
        return FindAnswer((), via)
    if _may_have_focus(driver):
        return None
    return FindAnswer((FoundNode(next(v for _, v in query.given)),), via)


def answer(device: Any, query: NodeQuery) -> FindAnswer | None:
    """The check's answer by a find on `device`'s current screen, or None (read the tree)."""
    if not query.given:
        return None
    if getattr(device, "in_webview", False):
        return None  # the screen is the native tree with the page mapped in: a DOM find sees half of it
    if device.is_web:
        return _web_answer(device, query)
    found = _ios_answer(device.driver, query) if device.platform == "ios" else _android_answer(device, query)
    if found is not None and not found.found and getattr(device, "hybrid_native", False):
        return None  # a hybrid app in NATIVE_APP: the page of a web view on screen may show it (the tree maps it in)
    return found


def _android_answer(device: Any, query: NodeQuery) -> FindAnswer | None:
    by, value = android_query(query)
    via = f"find {by}"
    try:
        elements = device.driver.find_elements(by, value)
    except WebDriverException:
        return None  # a driver that cannot run this query: the tree can
    if not elements:
        return FindAnswer((), via)
    label = next(v for _, v in query.given)
    width, height = device.size
    screen = Box(0, 0, width, height)
    for element in elements[:MAX_LOOKS]:
        try:
            box = device.box_of(element)
        except (WebDriverException, DeviceError):
            return None  # gone stale between the find and the rect: the tree decides
        if not box.is_empty and box.intersects(screen):
            if _may_have_focus(device.driver):
                return None
            return FindAnswer((FoundNode(label, bounds=box),), via)
    return None if len(elements) > MAX_LOOKS else FindAnswer((), via)
