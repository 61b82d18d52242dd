"""Web contexts (the chromium driver, a phone's browser or webview) seen as a UiAutomator2 screen.

A web session's page source is HTML without geometry, and the chromium driver rejects the `id`
and `accessibility id` strategies (issue 6). So in a web context `Device` builds its tree with a
small script that walks the rendered DOM and returns UiAutomator2-shaped XML whose bounds are in
*screenshot* pixels (CSS px x devicePixelRatio, clipped to the viewport and to scrolling
ancestors), and locators are translated to XPath over the DOM. The core then sees the same
`UITree` it sees for the sim: buttons, text views, scroll views, dialogs.
"""

from __future__ import annotations

from typing import Any

from selenium.common.exceptions import InvalidSelectorException, WebDriverException

from pytest_guistate.core.uitree import UITree, UITreeError, parse_page_source

__all__ = [
    "GEOMETRY_JS",
    "PICK_JS",
    "TREE_JS",
    "looks_like_html",
    "pick_reachable",
    "script_tree",
    "tree_from_script",
    "web_locator",
    "xpath_literal",
]

# Returns the tree as XML text. The XML is built with DOM APIs and XMLSerializer, never by string
# concatenation, so hostile page text (`<img src=x onerror=...>`) arrives escaped.
TREE_JS = r"""
const dpr = window.devicePixelRatio || 1, vw = window.innerWidth, vh = window.innerHeight;
const SKIP = new Set(["SCRIPT", "STYLE", "HEAD", "META", "LINK", "TEMPLATE", "NOSCRIPT", "TITLE", "IFRAME"]);
const CLICK_ROLES = new Set(["button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "option"]);
const TEXT_INPUTS = new Set(["text", "search", "email", "url", "tel", "number", "password", ""]);
const BAD = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const out = document.implementation.createDocument(null, "hierarchy", null);
const top = out.documentElement;
const pkg = location.origin && location.origin !== "null" ? location.origin : location.href;
const active = document.activeElement;
const norm = (s) => (s || "").replace(/\s+/g, " ").trim().replace(BAD, "?");
const px = (v) => String(Math.round(v * dpr));
for (const [k, v] of [["index", "0"], ["class", "hierarchy"], ["rotation", "0"],
                      ["width", px(vw)], ["height", px(vh)]]) top.setAttribute(k, v);

function kind(el, style, role) {
  const tag = el.tagName, type = (el.getAttribute("type") || "").toLowerCase();
  if (role === "dialog" || role === "alertdialog" || tag === "DIALOG") return "android.app.Dialog";
  if (role === "progressbar" || tag === "PROGRESS") return "android.widget.ProgressBar";
  if (tag === "INPUT" && type === "checkbox" || role === "checkbox") return "android.widget.CheckBox";
  if (tag === "INPUT" && type === "radio" || role === "radio") return "android.widget.RadioButton";
  if (tag === "TEXTAREA" || el.isContentEditable || tag === "INPUT" && TEXT_INPUTS.has(type))
    return "android.widget.EditText";
  if (tag === "BUTTON" || tag === "A" || tag === "SUMMARY" || role === "button" || role === "link" ||
      tag === "INPUT" && ["button", "submit", "reset"].includes(type)) return "android.widget.Button";
  if (tag === "IMG" || tag === "SVG" || tag === "CANVAS" || tag === "VIDEO" || role === "img")
    return "android.widget.ImageView";
  return "";
}

function visit(el, parent, clip) {
  if (SKIP.has(el.tagName)) return;
  const style = getComputedStyle(el);
  if (style.display === "none") return;
  const r = el.getBoundingClientRect();
  const base = style.position === "fixed" ? [0, 0, vw, vh] : clip;
  const box = [Math.max(r.left, base[0]), Math.max(r.top, base[1]), Math.min(r.right, base[2]), Math.min(r.bottom, base[3])];
  const shown = box[2] > box[0] && box[3] > box[1] && style.visibility !== "hidden" && parseFloat(style.opacity) > 0;
  const clipsKids = style.overflowX !== "visible" || style.overflowY !== "visible";
  const node = parent.appendChild(out.createElement("node"));
  for (const child of el.children) visit(child, node, clipsKids ? box : base);
  if (!shown) {  // an unrendered wrapper: its rendered children take its place
    while (node.firstChild) parent.insertBefore(node.firstChild, node);
    parent.removeChild(node);
    return;
  }
  const role = (el.getAttribute("role") || "").toLowerCase();
  const emitted = node.children.length;
  const tag = el.tagName, type = (el.getAttribute("type") || "").toLowerCase();
  const scrollable = /(auto|scroll)/.test(style.overflowY + style.overflowX) && el.clientHeight > 0 ||
    el === document.scrollingElement && el.scrollHeight > el.clientHeight && style.overflowY !== "hidden";
  let cls = kind(el, style, role);
  if (!cls) cls = scrollable ? "android.widget.ScrollView" : emitted ? "android.view.ViewGroup"
    : norm(el.textContent) ? "android.widget.TextView" : "android.view.View";
  let text = "";
  if (tag === "INPUT" || tag === "TEXTAREA") text = type === "password" ? "\u2022".repeat(el.value.length) : el.value;
  else if (cls === "android.widget.Button" || !emitted) text = el.innerText !== undefined ? el.innerText : el.textContent;
  else text = Array.from(el.childNodes).filter((n) => n.nodeType === 3).map((n) => n.data).join(" ");
  const parentStyle = el.parentElement ? getComputedStyle(el.parentElement) : null;
  const clickable = ["BUTTON", "A", "SELECT", "SUMMARY", "LABEL", "TEXTAREA"].includes(tag) ||
    tag === "INPUT" && type !== "hidden" || CLICK_ROLES.has(role) || el.hasAttribute("onclick") ||
    style.cursor === "pointer" && (!parentStyle || parentStyle.cursor !== "pointer");
  const checked = el.checked === true || el.getAttribute("aria-checked") === "true";
  const attrs = {
    package: pkg, class: cls, text: norm(text),
    "resource-id": norm(el.getAttribute("data-testid") || el.id),
    "content-desc": norm(el.getAttribute("aria-label") || el.getAttribute("alt") || el.getAttribute("title")),
    checkable: String(cls.endsWith("CheckBox") || cls.endsWith("RadioButton")), checked: String(checked),
    clickable: String(clickable), enabled: String(!el.disabled && el.getAttribute("aria-disabled") !== "true"),
    focusable: String(el.tabIndex >= 0), focused: String(el === active && el !== document.body),
    "long-clickable": "false", password: String(tag === "INPUT" && type === "password"),
    scrollable: String(scrollable), selected: String(el.selected === true || el.getAttribute("aria-selected") === "true"),
    bounds: `[${px(box[0])},${px(box[1])}][${px(box[2])},${px(box[3])}]`, displayed: "true",
    hint: norm(el.getAttribute("placeholder")), tag: tag.toLowerCase(),
  };
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
}
visit(document.documentElement, top, [0, 0, vw, vh]);
for (const node of top.getElementsByTagName("node")) {
  node.setAttribute("index", String(Array.prototype.indexOf.call(node.parentNode.children, node)));
}
return new XMLSerializer().serializeToString(out);
"""

# One round trip for a web find: evaluate the XPath in the page, rank each match (0 not rendered,
# 1 rendered but off-screen or covered, 2 what a tap at its centre would hit) and return the best
# (highest rank, then document order) or null. An invalid expression, or one that selects something
# other than elements, comes back as {invalid: message}: the driver's own find says the same with an
# "invalid selector" error. Two requests (find elements, then a ranking script) cost ~25 ms a find on
# Chromium against ~12 ms for this one (request log of a benchmarks/session_bench.py test, docs/latency.md).
PICK_JS = r"""
const rank = (el) => {
  const style = getComputedStyle(el), r = el.getBoundingClientRect();
  if (style.display === "none" || style.visibility === "hidden" || r.width <= 0 || r.height <= 0) return 0;
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  if (x < 0 || y < 0 || x >= window.innerWidth || y >= window.innerHeight) return 1;
  const hit = document.elementFromPoint(x, y);
  return hit && (hit === el || el.contains(hit)) ? 2 : 1;
};
let found;
try {
  found = document.evaluate(arguments[0], document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
} catch (e) {
  return {invalid: String(e && e.message || e)};
}
let best = null, bestRank = 0;
for (let i = 0; i < found.snapshotLength; i++) {
  const node = found.snapshotItem(i);
  if (node.nodeType !== Node.ELEMENT_NODE) {
    return {invalid: "the expression selects a " + node.nodeName + " node, not an element"};
  }
  const r = rank(node);
  if (r > bestRank) { best = node; bestRank = r; if (r === 2) break; }
}
return best;
"""

GEOMETRY_JS = "return [window.innerWidth, window.innerHeight, window.devicePixelRatio || 1];"


def looks_like_html(source: str) -> bool:
    """A web context's page source: HTML, which has no geometry for the oracle to snap to."""
    head = source.lstrip()[:200].lower()
    return head.startswith(("<!doctype html", "<html")) or "<html" in head and "<hierarchy" not in head


def xpath_literal(value: str) -> str:
    """Quote a string for XPath 1.0, which has no escape sequences."""
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    return "concat(" + ", \"'\", ".join(f"'{p}'" for p in value.split("'")) + ")"


def web_locator(kind: str, value: str) -> tuple[str, str]:
    """Translate `text=`/`desc=`/`id=`/`xpath=` into XPath over the DOM (`id` is rejected by the driver).

    text: the innermost element whose whole visible text is `value`, or a field with that
    placeholder/value; desc: aria-label, alt or title; id: data-testid, id or name.
    """
    lit = xpath_literal(value)
    if kind == "text":
        return "xpath", (
            f"//body//*[normalize-space(.)={lit}][not(.//*[normalize-space(.)={lit}])]"
            f" | //input[@placeholder={lit} or @value={lit}] | //textarea[@placeholder={lit}]"
        )
    if kind == "desc":
        return "xpath", f"//*[@aria-label={lit} or @alt={lit} or @title={lit}]"
    if kind == "id":
        return "xpath", f"//*[@data-testid={lit} or @id={lit} or @name={lit}]"
    if kind == "xpath":
        return "xpath", value
    raise ValueError(f"unknown locator kind {kind!r}")


def tree_from_script(result: object, url: str) -> UITree:
    """Parse what TREE_JS returned; say clearly when the context ran no script."""
    if not isinstance(result, str) or not result.startswith("<hierarchy"):
        raise UITreeError(f"the web tree script on {url} returned {str(result)[:80]!r}, not a <hierarchy> document")
    return parse_page_source(result)


def script_tree(driver: Any, url: str) -> UITree:
    """The tree of the page open in `driver`, bounds in screenshot pixels."""
    try:
        result = driver.execute_script(TREE_JS)
    except WebDriverException as exc:
        raise UITreeError(
            f"{url} returned HTML page source and its context runs no script for the tree: "
            f"{(exc.msg or str(exc)).strip()}"
        ) from exc
    return tree_from_script(result, url)


def pick_reachable(driver: Any, xpath: str) -> Any | None:
    """The first match a tap would reach (not under a dialog), else the first rendered one, else None.

    In the DOM a dialog does not remove the rows beneath it, as Android's tree does; without
    this, `tap("Delete")` with the confirm dialog open would hit the first row's button.
    Raises `InvalidSelectorException` for an expression the page cannot evaluate, as the driver's
    own find would.
    """
    picked = driver.execute_script(PICK_JS, xpath)
    if isinstance(picked, dict) and "invalid" in picked:
        raise InvalidSelectorException(f"invalid XPath {xpath!r}: {picked['invalid']}")
    return picked
