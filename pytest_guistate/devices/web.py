"""Web contexts (the chromium driver, a phone's browser or webview) seen as a UiAutomator2 screen.

A web session's page source is HTML without geometry, and the chromium driver rejects the `id`
and `accessibility id` strategies (issue 6). So in a web context `Device` builds its tree with a
small script that walks the rendered DOM and returns UiAutomator2-shaped XML whose bounds are in
*screenshot* pixels (`PageZoom`: CSS px x devicePixelRatio x the page's zoom, less the pinch-zoom
offset, clipped to what the screen shows and to scrolling ancestors), and locators are answered by a script over the same DOM. The core then sees the same
`UITree` it sees for the sim: buttons, text views, scroll views, dialogs.

Both walk the composed tree (issue 34): open shadow roots and slots are entered, a custom element
wrapping one native control is one node, and text is compared as the user sees it (CSS case) or as
the page wrote it, whitespace normalised (docs/web-components.md).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from selenium.common.exceptions import InvalidSelectorException, WebDriverException

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree import UITree, UITreeError, parse_page_source

__all__ = [
    "CLOSED_JS",
    "COMPOSED_JS",
    "EDITABLE_JS",
    "GEOMETRY_JS",
    "LOCATE_JS",
    "MOTION_JS",
    "MOVING_JS",
    "RECT_JS",
    "TREE_JS",
    "ZOOM_JS",
    "Located",
    "PageZoom",
    "closed_components",
    "editable_inside",
    "locate",
    "looks_like_html",
    "motion_answer",
    "quiet_answer",
    "script_tree",
    "tree_from_script",
    "tree_moving",
    "tree_quiet",
    "tree_zoom",
    "viewport_rect",
    "zoom_from_script",
]

# The page's motion, as the step loop asks it (`Device.in_motion`): a finite animation or transition
# running or about to start (an endless spinner never stops, so it is no motion to wait for), in the
# document or in any open shadow root: `document.getAnimations()` leaves out what runs in shadow trees
# (Shoelace's sl-dialog scales its panel in its shadow root), each root answers for its own.
# `true` while one runs; else how many ms ago the last one still listed ended (an animation that
# fills forwards stays listed once finished: Ionic's overlays fill "both"), or `false` when none is:
# the question is asked after the screenshot, and a fade that ended in between left that frame half
# drawn (`Device.in_motion` compares the two times).
# A dialog drawn translucent (its own opacity times its composed-tree ancestors' between 0 and 1) is
# motion too: UI5 Web Components' popups open at opacity 0.1 under a class a timer drops, so no
# animation is listed while the screen shows a faint dialog (opacity 0 is not drawn at all: not motion).
MOVING_JS = r"""
// the DOM's own parent accessor: a library emulating slots may patch `parentNode` on its elements
const PARENT = Object.getOwnPropertyDescriptor(Node.prototype, "parentNode").get;
// the DOM parent, crossing a shadow root to its host (who owns a control)
const hostParent = (n) => {
  const p = PARENT.call(n);
  return p instanceof ShadowRoot ? p.host : p instanceof Element ? p : null;
};
// the rendered parent: a slotted element's slot first
const flatParent = (n) => n.assignedSlot || hostParent(n);
const faintDialog = (roots) => {
  for (const root of roots) {
    for (const el of root.querySelectorAll("[role=dialog], [role=alertdialog], dialog[open]")) {
      const r = el.getBoundingClientRect();  // a closed dialog left translucent but hidden is not drawn
      if (r.width <= 0 || r.height <= 0 || (el.checkVisibility && !el.checkVisibility({visibilityProperty: true}))) continue;
      let alpha = 1;
      for (let n = el; n; n = flatParent(n)) alpha *= parseFloat(getComputedStyle(n).opacity);
      if (alpha > 0 && alpha < 1) return true;
    }
  }
  return false;
};
// the document and every open shadow root in it
const pageRoots = () => {
  const roots = [document];
  for (let i = 0; i < roots.length; i++) {
    for (const el of roots[i].querySelectorAll("*")) if (el.shadowRoot) roots.push(el.shadowRoot);
  }
  return roots;
};
// How many ms the page has gone without a change a screenshot asked for earlier could have missed: a DOM
// mutation in a root it watches, a scroll, a focus move, an image's load, a resize - or the start of its
// watch over a root (what came before there is unknown). -1 when it cannot tell: something draws without
// any of those (a visible canvas, video, frame or plug-in), or an image or a font is still loading.
const pageQuiet = (roots) => {
  const now = performance.now();
  let w = window.__guistateQuiet;
  if (!w) {
    w = window.__guistateQuiet = {last: now, seen: new WeakSet()};
    const mark = () => { w.last = performance.now(); };
    w.mark = mark;
    w.obs = new MutationObserver(mark);
    for (const kind of ["scroll", "resize", "focusin"]) window.addEventListener(kind, mark, {capture: true, passive: true});
    if (window.visualViewport) for (const kind of ["scroll", "resize"]) window.visualViewport.addEventListener(kind, mark);
  }
  for (const root of roots) {
    if (w.seen.has(root)) continue;
    w.seen.add(root);
    w.obs.observe(root, {subtree: true, childList: true, attributes: true, characterData: true});
    // a load or a scroll inside a shadow root does not leave it
    for (const kind of ["load", "scroll"]) root.addEventListener(kind, w.mark, {capture: true, passive: true});
    w.last = now;
  }
  if (w.obs.takeRecords().length) w.last = now;
  if (document.fonts && document.fonts.status === "loading") return -1;
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
  };
  for (const root of roots) {
    for (const el of root.querySelectorAll("*")) {
      const tag = el.localName;
      // a custom element with no open shadow root may draw from a closed one, which no watch sees
      const unseen = tag.includes("-") && !el.shadowRoot && customElements.get(tag) !== undefined;
      const drawing = unseen || ["canvas", "video", "iframe", "embed", "object"].includes(tag) ||
                      (tag === "img" && !el.complete);
      if (drawing && shown(el)) return -1;
    }
  }
  return Math.max(0, now - w.last);
};
const pageMoving = (roots = pageRoots()) => {
  const now = document.timeline ? document.timeline.currentTime : null;
  let still = false;
  for (const root of roots) {
    for (const a of root.getAnimations()) {
      if (!a.effect) continue;
      const end = a.effect.getComputedTiming().endTime;
      if (end === Infinity) continue;
      if (a.pending || a.playState === "running") return true;
      if (a.playState !== "finished" || a.startTime === null || now === null || !(a.playbackRate > 0)) continue;
      const ago = Math.max(0, now - (a.startTime + end / a.playbackRate));
      if (still === false || ago < still) still = ago;
    }
  }
  return faintDialog(roots) || still;
};
"""

# How the page maps to the screenshot, asked by every script that measures boxes (the tree walk, the
# locator, the rect and geometry scripts), so a box and the tap aimed at it use the factor of the page
# as it was then (`PageZoom`). A page with no <meta name="viewport"> is laid out ~980 CSS px wide and
# shown zoomed out (visualViewport.scale 0.42 on a 412 px wide phone): devicePixelRatio alone would put
# its boxes 2.4 times too far. `view` is the visual viewport in layout-viewport (client) CSS px.
ZOOM_JS = r"""
const zoomOf = () => {
  const v = window.visualViewport;
  return v ? [(window.devicePixelRatio || 1) * v.scale, v.offsetLeft, v.offsetTop]
           : [window.devicePixelRatio || 1, 0, 0];
};
const viewOf = () => {
  const v = window.visualViewport;
  return v ? [v.offsetLeft, v.offsetTop, v.offsetLeft + v.width, v.offsetTop + v.height]
           : [0, 0, window.innerWidth, window.innerHeight];
};
"""

# What the tree walk and the locators share (issue 34): the composed tree (a shadow host's rendered
# children are its open shadow root's, a slot's are what is assigned to it), text as the user sees it
# (CSS text-transform applied) and as the page wrote it, and which custom element wraps one native
# control. Closed shadow roots are invisible to page scripts: nothing inside them is seen.
COMPOSED_JS = MOVING_JS + ZOOM_JS + r"""
const SKIP = new Set(["SCRIPT", "STYLE", "HEAD", "META", "LINK", "TEMPLATE", "NOSCRIPT", "TITLE", "IFRAME"]);
const BAD = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const norm = (s) => (s || "").replace(/\s+/g, " ").trim().replace(BAD, "?");
const isCustom = (el) => el.tagName.includes("-");
const CONTROLS = 'input:not([type="hidden"]), textarea, select, button, [contenteditable=""], ' +
  '[contenteditable="true"], [role="button"], [role="switch"], [role="checkbox"], [role="radio"], [role="textbox"]';
// the DOM's own accessors: a library emulating slots without shadow DOM (Stencil's scoped components,
// Ionic's ion-input) patches `children`/`childNodes` on its elements to hide what it renders itself
const CHILDREN = Object.getOwnPropertyDescriptor(Element.prototype, "children").get;
const CHILD_NODES = Object.getOwnPropertyDescriptor(Node.prototype, "childNodes").get;
const elementsOf = (n) => Array.from(n instanceof Element ? CHILDREN.call(n) : n.children);
const nodesOf = (n) => Array.from(CHILD_NODES.call(n));
const kids = (el) => {
  if (el.tagName === "SLOT") {
    const assigned = el.assignedNodes({flatten: true});
    return assigned.length ? assigned.filter((n) => n.nodeType === 1) : elementsOf(el);
  }
  return elementsOf(el.shadowRoot || el);
};
const kidNodes = (el) => {
  if (el.tagName === "SLOT") {
    const assigned = el.assignedNodes({flatten: true});
    return assigned.length ? assigned : nodesOf(el);
  }
  return nodesOf(el.shadowRoot || el);
};
const CASE = {uppercase: (s) => s.toUpperCase(), lowercase: (s) => s.toLowerCase(),
              capitalize: (s) => s.replace(/(^|\s)(\S)/g, (m, a, b) => a + b.toUpperCase())};
const textMemo = new Map();
// [shown, source]: an element's text through shadow roots and slots, with and without text-transform
function texts(el) {
  let got = textMemo.get(el);
  if (got) return got;
  got = ["", ""];
  const style = getComputedStyle(el);
  if (!SKIP.has(el.tagName) && style.display !== "none" && !["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName)) {
    const change = CASE[style.textTransform];
    let shown = "", source = "";
    for (const n of kidNodes(el)) {
      if (n.nodeType === 3) { source += n.data; shown += change ? change(n.data) : n.data; }
      else if (n.nodeType === 1) {
        const [s, o] = texts(n), gap = getComputedStyle(n).display === "inline" ? "" : " ";
        shown += gap + s + gap; source += gap + o + gap;
      }
    }
    got = [norm(shown), norm(source)];
  }
  textMemo.set(el, got);
  return got;
}
function shadowRoots() {
  const roots = [document];
  for (let i = 0; i < roots.length; i++) {
    for (const el of roots[i].querySelectorAll("*")) if (el.shadowRoot) roots.push(el.shadowRoot);
  }
  return roots;
}
// custom element -> the one native control it wraps (in its shadow root, or a wrapper hardly bigger than it)
function wrappedControls() {
  const owned = new Map();
  for (const root of shadowRoots()) {
    for (const control of root.querySelectorAll(CONTROLS)) {
      if (isCustom(control)) continue;  // a component with a role is its own node
      let owner = hostParent(control), viaShadow = control.getRootNode() !== document;
      while (owner && !isCustom(owner)) owner = hostParent(owner);
      if (!owner) continue;
      viaShadow = owner.shadowRoot !== null && control.getRootNode() === owner.shadowRoot;
      const a = owner.getBoundingClientRect(), b = control.getBoundingClientRect();
      // a hidden native control (a form proxy, as Onsen's <button hidden>) marks a control-sized component
      const wrapper = viaShadow || (b.height > 0 ? a.height <= 3 * b.height && a.width <= 3 * b.width
                                                 : a.height > 0 && a.height <= 120);
      owned.set(owner, owned.has(owner) || !wrapper ? null : control);
    }
  }
  for (const [owner, control] of owned) if (!control) owned.delete(owner);
  // a wrapper drawn inside another component's shadow root around that component's own control is a
  // part of it (Material's md-outlined-text-field renders md-outlined-field around its <input>): the
  // node is the component the page wrote, with its id, when it is hardly bigger and holds no other control
  for (const [part, control] of Array.from(owned)) {
    let owner = part;
    for (let root = owner.getRootNode(); root instanceof ShadowRoot && isCustom(root.host); root = owner.getRootNode()) {
      const host = root.host, a = host.getBoundingClientRect(), b = owner.getBoundingClientRect();
      if (owned.has(host) || root.querySelectorAll(CONTROLS).length > 1 ||
          !(a.height <= 3 * b.height && a.width <= 3 * b.width)) break;
      owner = host;
    }
    if (owner !== part) { owned.delete(part); owned.set(owner, control); }
  }
  return owned;
}
"""

# Returns the tree as XML text. The XML is built with DOM APIs and XMLSerializer, never by string
# concatenation, so hostile page text (`<img src=x onerror=...>`) arrives escaped. The walk follows
# the composed tree (COMPOSED_JS); a custom element wrapping one native control is one node with the
# host's label and id and the control's kind, the control's own node folded into it.
TREE_JS = COMPOSED_JS + r"""
const [zoom, zoomLeft, zoomTop] = zoomOf(), view = viewOf();
const CLICK_ROLES = new Set(["button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "option"]);
const TEXT_INPUTS = new Set(["text", "search", "email", "url", "tel", "number", "password", ""]);
const out = document.implementation.createDocument(null, "hierarchy", null);
const top = out.documentElement;
const pkg = location.origin && location.origin !== "null" ? location.origin : location.href;
let active = document.activeElement;
while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
// client CSS px -> screenshot px, as PageZoom.box maps a locator's rect
const px = (v, offset) => String(Math.round((v - offset) * zoom));
const owners = wrappedControls();
const folded = new Set(owners.values());
for (const [k, v] of [["index", "0"], ["class", "hierarchy"], ["rotation", "0"],
                      ["width", px(view[2], view[0])], ["height", px(view[3], view[1])],
                      ["zoom", String(zoom)], ["zoom-left", String(zoomLeft)], ["zoom-top", String(zoomTop)]]) {
  top.setAttribute(k, v);
}

function kind(el, role) {
  const tag = el.tagName, type = (el.getAttribute("type") || "").toLowerCase();
  if (role === "dialog" || role === "alertdialog" || tag === "DIALOG") return "android.app.Dialog";
  if (role === "progressbar" || tag === "PROGRESS") return "android.widget.ProgressBar";
  if (role === "switch") return "android.widget.Switch";
  if (tag === "INPUT" && type === "checkbox" || role === "checkbox") return "android.widget.CheckBox";
  if (tag === "INPUT" && type === "radio" || role === "radio") return "android.widget.RadioButton";
  if (tag === "TEXTAREA" || el.isContentEditable || role === "textbox" || tag === "INPUT" && TEXT_INPUTS.has(type))
    return "android.widget.EditText";
  if (tag === "BUTTON" || tag === "A" || tag === "SUMMARY" || role === "button" || role === "link" ||
      tag === "INPUT" && ["button", "submit", "reset"].includes(type)) return "android.widget.Button";
  if (tag === "IMG" || tag === "SVG" || tag === "CANVAS" || tag === "VIDEO" || role === "img")
    return "android.widget.ImageView";
  return "";
}

// a wrapped field's visible label: its aria-labelledby element or its <label>, in its own root
const labelledBy = (n) => (n.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean)
  .map((id) => n.getRootNode().getElementById ? n.getRootNode().getElementById(id) : null).filter(Boolean)
  .map((l) => texts(l)[1]).join(" ");
const fieldLabel = (n) => Array.from(n.labels || []).map((l) => texts(l)[1]).join(" ");
const disabled = (el) => el.disabled === true || el.getAttribute("aria-disabled") === "true";

function visit(el, parent, clip) {
  if (SKIP.has(el.tagName)) return;
  const style = getComputedStyle(el);
  if (style.display === "none") return;
  const r = el.getBoundingClientRect();
  const base = style.position === "fixed" ? view : clip;
  // the document element is the window: its background fills the screen however short the page is (a
  // page shorter than the screen is not a floating window over nothing)
  const box = el === document.documentElement ? view.slice()
    : [Math.max(r.left, base[0]), Math.max(r.top, base[1]), Math.min(r.right, base[2]), Math.min(r.bottom, base[3])];
  // an ancestor at opacity 0 (a dialog before its fade-in) hides it too
  const see = el.checkVisibility ? el.checkVisibility({opacityProperty: true, visibilityProperty: true}) : true;
  const shown = box[2] > box[0] && box[3] > box[1] && style.visibility !== "hidden" && parseFloat(style.opacity) > 0 &&
    see;
  const clipsKids = style.overflowX !== "visible" || style.overflowY !== "visible";
  const node = parent.appendChild(out.createElement("node"));
  for (const child of kids(el)) visit(child, node, clipsKids ? box : base);
  if (!shown || folded.has(el)) {  // an unrendered wrapper, or a control its component stands for
    while (node.firstChild) parent.insertBefore(node.firstChild, node);
    parent.removeChild(node);
    return;
  }
  const control = owners.get(el) || el;  // a component wrapping one control: the control's kind and state
  const role = (control.getAttribute("role") || el.getAttribute("role") || "").toLowerCase();
  const emitted = node.children.length;
  const tag = control.tagName, type = (control.getAttribute("type") || "").toLowerCase();
  const scrollable = /(auto|scroll)/.test(style.overflowY + style.overflowX) && el.clientHeight > 0 ||
    el === document.scrollingElement && el.scrollHeight > el.clientHeight && style.overflowY !== "hidden";
  let cls = kind(control, role) || (control !== el ? kind(el, (el.getAttribute("role") || "").toLowerCase()) : "");
  if (cls === "android.widget.CheckBox" && control !== el && /switch|toggle/i.test(el.tagName)) {
    cls = "android.widget.Switch";  // <x-switch> around a checkbox
  }
  if (!cls) cls = scrollable ? "android.widget.ScrollView" : emitted ? "android.view.ViewGroup"
    : texts(el)[0] ? "android.widget.TextView" : "android.view.View";
  let text = "", source = "";
  if (cls === "android.widget.EditText" && (tag === "INPUT" || tag === "TEXTAREA")) {
    text = type === "password" ? "\u2022".repeat(control.value.length) : control.value;
    source = text;
  } else if (cls === "android.widget.Button" || control !== el || !emitted) [text, source] = texts(el);
  else text = source = kidNodes(el).filter((n) => n.nodeType === 3).map((n) => n.data).join(" ");
  const up = hostParent(el), parentStyle = up ? getComputedStyle(up) : null;
  const clickable = control !== el || ["BUTTON", "A", "SELECT", "SUMMARY", "LABEL", "TEXTAREA"].includes(tag) ||
    tag === "INPUT" && type !== "hidden" || CLICK_ROLES.has(role) || el.hasAttribute("onclick") ||
    style.cursor === "pointer" && (!parentStyle || parentStyle.cursor !== "pointer");
  const checked = control.checked === true || control.getAttribute("aria-checked") === "true" ||
    el.getAttribute("aria-checked") === "true";
  const label = (n) => n.getAttribute("aria-label") || n.getAttribute("alt") || n.getAttribute("title") ||
    labelledBy(n) || (control !== el ? fieldLabel(n) : "");  // a form-associated host has labels too
  const attrs = {
    package: pkg, class: cls, text: norm(text),
    "resource-id": norm(el.getAttribute("data-testid") || el.id || control.getAttribute("data-testid")),
    "content-desc": norm(label(el) || (control !== el ? label(control) : "")),
    checkable: String(/CheckBox|RadioButton|Switch/.test(cls)), checked: String(checked),
    clickable: String(clickable), enabled: String(!disabled(el) && !disabled(control)),
    focusable: String(control.tabIndex >= 0 || el.tabIndex >= 0),
    focused: String((el === active || control === active) && el !== document.body),
    "long-clickable": "false", password: String(tag === "INPUT" && type === "password"),
    scrollable: String(scrollable),
    selected: String(el.selected === true || el.getAttribute("aria-selected") === "true"),
    bounds: `[${px(box[0], zoomLeft)},${px(box[1], zoomTop)}][${px(box[2], zoomLeft)},${px(box[3], zoomTop)}]`,
    displayed: "true",
    hint: norm(control.getAttribute("placeholder")), tag: el.tagName.toLowerCase(),
  };
  if (norm(source) !== attrs.text) attrs["source-text"] = norm(source);  // CSS changed its case
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
}
visit(document.documentElement, top, view);
for (const node of top.getElementsByTagName("node")) {
  node.setAttribute("index", String(Array.prototype.indexOf.call(node.parentNode.children, node)));
}
const roots = pageRoots();
top.setAttribute("moving", String(pageMoving(roots)));
top.setAttribute("quiet", String(pageQuiet(roots)));
return new XMLSerializer().serializeToString(out);
"""

# One round trip for a web find (issue 34): the elements a locator names, searched through open shadow
# roots, each ranked (0 not rendered, 1 off-screen or covered, 2 what a tap at its centre would hit)
# and judged ready (rendered, enabled, not moving) or not, and why. The best comes back as
# {el, rank, why} (why "" = ready), or null when nothing matches. `text=`: the innermost rendered
# element whose text as shown (CSS case) or as written is the value, whitespace normalised, or a
# field with that placeholder/value; `desc=`: aria-label, alt or title; `id=`: data-testid, id or name;
# `xpath=`: evaluated on the document (XPath does not enter shadow roots). An invalid expression, or
# one that selects something other than elements, comes back as {invalid: message}. One script costs
# ~12 ms a find on Chromium against ~25 ms for a find request plus a ranking script (docs/latency.md).
LOCATE_JS = COMPOSED_JS + r"""
const [how, value] = arguments;
const wanted = norm(value);
const view = viewOf();
let matches = [];
if (how === "xpath") {
  let found;
  try {
    found = document.evaluate(value, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
  } catch (e) {
    return {invalid: String(e && e.message || e)};
  }
  for (let i = 0; i < found.snapshotLength; i++) {
    const node = found.snapshotItem(i);
    if (node.nodeType !== Node.ELEMENT_NODE) {
      return {invalid: "the expression selects a " + node.nodeName + " node, not an element"};
    }
    matches.push(node);
  }
} else {
  const all = [];
  const walk = (el) => {
    if (SKIP.has(el.tagName)) return;
    all.push(el);
    if (el.shadowRoot) for (const c of elementsOf(el.shadowRoot)) walk(c);
    for (const c of elementsOf(el)) walk(c);
  };
  walk(document.body || document.documentElement);
  const attr = (el, name) => norm(el.getAttribute(name));
  const rendered = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  if (how === "id") matches = all.filter((el) => [attr(el, "data-testid"), el.id, attr(el, "name")].includes(wanted));
  else if (how === "desc") matches = all.filter((el) => [attr(el, "aria-label"), attr(el, "alt"), attr(el, "title")]
                                                 .includes(wanted));
  else if (how === "text") {
    const field = (el) => (el.tagName === "INPUT" || el.tagName === "TEXTAREA") &&
      (attr(el, "placeholder") === wanted || el.tagName === "INPUT" && norm(el.value) === wanted);
    const hits = all.filter((el) => field(el) || rendered(el) && texts(el).includes(wanted));
    const outer = new Set();  // a match with a matching element inside is not the innermost
    for (const el of hits) {
      for (let p = hostParent(el); p; p = hostParent(p)) outer.add(p);
      // nor one drawing it through a slot: a radio group's wrapper holds every slotted radio's label
      for (let p = flatParent(el); p; p = flatParent(p)) outer.add(p);
    }
    matches = hits.filter((el) => !outer.has(el));
  } else return {invalid: "unknown locator kind " + how};
}
const deepHit = (x, y) => {
  let hit = document.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  return hit;
};
// the innermost native control or role'd element holding n (n itself included), through shadow hosts
const controlOf = (n) => {
  for (let p = n; p; p = hostParent(p)) if (p.matches(CONTROLS)) return p;
  return null;
};
// what a tap at the point reaches for el: el itself when the hit is el or inside it, the hit when it
// is an ancestor el lets the tap through to (a label that ignores pointer events, text slotted into a
// component: the component gets the click), the control both sit in when the hit is a sibling of el
// inside the same control (Material's <button> draws a touch-target <span> over its own label: the
// button gets the click), else null (something else covers it)
// A text= match drawn over the control it names (Material's text fields draw their label in a shadow root
// over the input whose aria-label it is): a tap on the label reaches that control.
const reaches = (el, hit) => {
  for (let n = hit; n; n = flatParent(n)) if (n === el) return el;
  for (let n = hit; n; n = hostParent(n)) if (n === el) return el;
  for (let n = el; n; n = hostParent(n)) if (n === hit) return hit;
  const control = controlOf(el), target = controlOf(hit);
  if (control && target === control) return control;
  return how === "text" && target && namedBy(target) ? target : null;
};
const namedBy = (control) => {
  const names = [norm(control.getAttribute("aria-label"))];
  for (const label of control.labels || []) names.push(norm(label.textContent));
  return names.includes(wanted);
};
const describe = (el) => {
  const t = texts(el)[0];
  return "<" + el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + ">" + (t ? " " + JSON.stringify(t.slice(0, 40)) : "");
};
const judge = (el) => {
  const style = getComputedStyle(el), r = el.getBoundingClientRect();
  const visible = el.checkVisibility ? el.checkVisibility({opacityProperty: true, visibilityProperty: true})
    : style.display !== "none" && style.visibility !== "hidden";
  if (!visible || r.width <= 0 || r.height <= 0) return [0, "not visible"];
  for (let n = el; n; n = hostParent(n)) {
    if (n.disabled === true || n.getAttribute("aria-disabled") === "true" || n.inert) return [1, "disabled"];
  }
  // what moves it is what it is drawn in: a slotted button moves with the shadow panel its slot sits in
  for (let n = el; n; n = flatParent(n)) {
    if (n.getAnimations && n.getAnimations().some((a) => a.playState === "running" &&
        a.effect && a.effect.getComputedTiming().endTime !== Infinity)) return [1, "moving (an animation runs)"];
  }
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  if (x < view[0] || y < view[1] || x >= view[2] || y >= view[3]) return [1, ""];  // off screen: a click scrolls it into view
  const hit = deepHit(x, y), target = hit && reaches(el, hit);
  return target ? [2, "", target, [x, y]] : [1, "covered by " + (hit ? describe(hit) : "nothing hit-testable")];
};
let best = null;
for (const el of matches) {
  const [rank, why, target, at] = judge(el);
  const score = (why ? 0 : 10) + rank;
  if (rank > 0 && (!best || score > best.score)) best = {el: target || el, rank, why, score, at};
  if (best && best.score === 12) break;
}
// WebDriver's element click hit-tests from the document, which sees a shadow root's content as its host:
// a target inside a shadow root whose host (or the host's host) the document reports at the point is
// reached by a tap at that point (the composed tree's hit above is the target), not by an element click
if (best && best.at) {
  const seen = document.elementFromPoint(best.at[0], best.at[1]);
  if (seen && seen !== best.el && !best.el.contains(seen)) best.point = best.at;
}
if (best) delete best.at;
if (!best && matches.length) best = {el: matches[0], rank: 0, why: "not visible", score: 0};
if (best) {
  const q = best.el.getBoundingClientRect();
  best.rect = [q.left, q.top, q.width, q.height];
  best.zoom = zoomOf();
}
return best;
"""

# An element's box as the screenshot shows it: CSS px relative to the viewport, with the page's zoom.
# The W3C element rect is relative to the document, so on a scrolled page it is off by the scroll offset.
RECT_JS = ZOOM_JS + "const r = arguments[0].getBoundingClientRect(); return [[r.left, r.top, r.width, r.height], zoomOf()];"

# Typing into a component (issue 34): the element itself when it is editable, else the one editable
# element inside it (through open shadow roots), else null (the caller taps and types into what
# takes focus, or fails naming why).
EDITABLE_JS = r"""
const el = arguments[0];
const editable = (n) => n.isContentEditable || n.tagName === "TEXTAREA" ||
  n.tagName === "INPUT" && !["hidden", "checkbox", "radio", "button", "submit", "reset", "file", "image", "range",
                             "color"].includes((n.getAttribute("type") || "").toLowerCase());
if (editable(el)) return el;
const found = [];
const walk = (root) => {
  for (const n of root.querySelectorAll("*")) {
    if (editable(n)) found.push(n);
    if (n.shadowRoot) walk(n.shadowRoot);
  }
};
if (el.shadowRoot) walk(el.shadowRoot);
walk(el);
return found.length === 1 ? found[0] : {count: found.length};
"""

# Pages whose custom elements may hide their insides in closed shadow roots: rendered, defined,
# with no open shadow root and nothing inside. Said in a miss's message (the locators cannot see in).
CLOSED_JS = r"""
const CHILD_NODES = Object.getOwnPropertyDescriptor(Node.prototype, "childNodes").get;
const out = [];
for (const el of document.querySelectorAll("*")) {
  if (!el.tagName.includes("-") || el.shadowRoot || CHILD_NODES.call(el).length || !customElements.get(el.localName)) {
    continue;
  }
  const r = el.getBoundingClientRect();
  if (r.width > 0 && r.height > 0) out.push(el.localName);
}
return Array.from(new Set(out)).slice(0, 5);
"""

# Whether the page is animating right now: a running animation or transition of finite length (an
# endless spinner never stops, so it is not motion to wait for). Animations in shadow trees count.
# The tree walk and the check's find answer it too (`moving` on the tree's root, beside the match), so
# a step whose expectation held asks no question of its own (issue 34).
MOTION_JS = MOVING_JS + "const roots = pageRoots();\nreturn {moving: pageMoving(roots), quiet: pageQuiet(roots)};"

# the page's zoom alone: for a tap by point on a page no script has measured since the last input
GEOMETRY_JS = ZOOM_JS + "return zoomOf();"


@dataclass(frozen=True)
class PageZoom:
    """How a browser page's CSS px map to screenshot px, as `ZOOM_JS` measured it.

    `factor` is screenshot px per CSS px: devicePixelRatio x `visualViewport.scale` (a page without
    <meta name="viewport"> is shown zoomed out: 2.625 x 0.42 = 1.10 on a Pixel 7, not 2.625).
    (`left`, `top`) is where the visual viewport sits in the layout viewport (pinch zoom), in CSS px:
    `getBoundingClientRect` is relative to the layout viewport, the screenshot and the driver's pointer
    to the visual one (measured on Chromium pinch-zoomed 2x with the visual viewport at (150, 250): a
    tap sent at (200, 450) arrives at clientX/Y (350, 700)). The one mapping both ways, so a box and
    a tap agree.
    """

    factor: float
    left: float = 0.0
    top: float = 0.0

    def __post_init__(self) -> None:
        if not self.factor > 0:
            raise ValueError(f"the page reports {self.factor} screenshot px per CSS px: nothing to map")

    def box(self, rect: tuple[float, float, float, float]) -> Box:
        """(left, top, width, height) in client CSS px as a box in screenshot px."""
        x, y, w, h = rect
        left, top = (x - self.left) * self.factor, (y - self.top) * self.factor
        return Box(round(left), round(top), round(left + w * self.factor), round(top + h * self.factor))

    def to_page(self, x: float, y: float) -> tuple[int, int]:
        """A screenshot point as the driver's pointer takes it: CSS px from the visual viewport's corner
        (the browser adds the pinch offset itself)."""
        return round(x / self.factor), round(y / self.factor)


def zoom_from_script(value: object) -> PageZoom:
    """`zoomOf()`'s [factor, offsetLeft, offsetTop] from a script; a clear error for anything else
    (a page that replaced `visualViewport` may send anything)."""
    if not isinstance(value, list) or len(value) != 3 or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        raise WebDriverException(f"the page's zoom script returned {str(value)[:80]!r}, not [factor, left, top]")
    try:
        return PageZoom(float(value[0]), float(value[1]), float(value[2]))
    except ValueError as exc:
        raise WebDriverException(str(exc)) from None


def looks_like_html(source: str) -> bool:
    """A web context's page source: HTML, which has no geometry for the oracle to snap to."""
    head = source.lstrip()[:200].lower()
    return head.startswith(("<!doctype html", "<html")) or "<html" in head and "<hierarchy" not in head


def tree_from_script(result: object, url: str) -> UITree:
    """Parse what TREE_JS returned; say clearly when the context ran no script."""
    if not isinstance(result, str) or not result.startswith("<hierarchy"):
        raise UITreeError(f"the web tree script on {url} returned {str(result)[:80]!r}, not a <hierarchy> document")
    return parse_page_source(result)


def motion_answer(value: object) -> bool | float | None:
    """What `pageMoving()` said: True (an animation runs), the ms since the last listed one ended,
    False (none listed); None when the value is not such an answer (not the script's)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


def _root_says(result: str, name: str) -> str | None:
    """The value TREE_JS set on its root element as `name` (only the root's own tag is read), None if unset."""
    head = result[: result.find(">") + 1]
    found = re.search(f' {name}="([^"]*)"', head)
    return None if found is None else found.group(1)


def tree_moving(result: str) -> bool | float | None:
    """What TREE_JS said of the page's motion (`moving` on its root: `motion_answer`), None if it did not say."""
    text = _root_says(result, "moving")
    if text is None:
        return None
    if text in ("true", "false"):
        return text == "true"
    try:
        return motion_answer(float(text))
    except ValueError:
        return None


def quiet_answer(value: object) -> float | None:
    """What `pageQuiet()` said: the ms the page has gone without a change a screenshot could miss,
    None when it cannot tell (-1: something draws unwatched) or the value is not its answer."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def tree_quiet(result: str) -> float | None:
    """What TREE_JS said of the page's quiet (`quiet` on its root: `quiet_answer`), None if it did not say."""
    text = _root_says(result, "quiet")
    try:
        return quiet_answer(float(text)) if text is not None else None
    except ValueError:
        return None


def tree_zoom(tree: UITree) -> PageZoom | None:
    """The zoom TREE_JS mapped the tree's bounds with (on its root), None if it did not say."""
    attrs = tree.root.attrs
    try:
        return PageZoom(float(attrs["zoom"]), float(attrs.get("zoom-left", 0)), float(attrs.get("zoom-top", 0)))
    except (KeyError, ValueError):
        return None


def script_tree(driver: Any, url: str) -> tuple[UITree, bool | float | None, PageZoom | None, float | None]:
    """The tree of the page open in `driver`, bounds in screenshot pixels, whether the page was
    animating as it was walked (`tree_moving`), the zoom its bounds were mapped with (`tree_zoom`) and
    how long it had been quiet (`tree_quiet`)."""
    try:
        result = driver.execute_script(TREE_JS)
    except WebDriverException as exc:
        raise UITreeError(
            f"{url} returned HTML page source and its context runs no script for the tree: "
            f"{(exc.msg or str(exc)).strip()}"
        ) from exc
    tree = tree_from_script(result, url)
    return tree, tree_moving(result), tree_zoom(tree), tree_quiet(result)


@dataclass(frozen=True)
class Located:
    """What a web locator found: the element, how reachable it is (2: a tap at its centre hits it;
    1: off screen or covered; 0: not rendered) and why it is not ready ("" when it is)."""

    element: Any
    rank: int
    why: str
    # (left, top, width, height) in CSS px relative to the viewport when found, and the page's zoom then:
    # its place in a screenshot taken just before, with no request of its own (the cross-run memory
    # learns from it)
    rect: tuple[float, float, float, float] | None = None
    zoom: PageZoom | None = None
    # where to tap it (CSS px relative to the viewport) when an element click cannot: the document's hit
    # test there reports the target's shadow host, the composed tree's reports the target (issue 44)
    point: tuple[float, float] | None = None

    @property
    def box(self) -> Box | None:
        """Where the screenshot shows the element when it was found, None if the script did not say."""
        return None if self.rect is None or self.zoom is None else self.zoom.box(self.rect)

    @property
    def ready(self) -> bool:
        return not self.why


def locate(driver: Any, kind: str, value: str) -> Located | None:
    """The best element `kind=value` names on the page (ready and reachable first), or None.

    Raises `InvalidSelectorException` for an XPath the page cannot evaluate, as the driver's own
    find would.
    """
    if kind not in ("text", "desc", "id", "xpath"):
        raise ValueError(f"unknown locator kind {kind!r}")
    found = driver.execute_script(LOCATE_JS, kind, value)
    if found is None:
        return None
    if not isinstance(found, dict) or ("invalid" not in found and "el" not in found):
        raise WebDriverException(f"the locator script returned {str(found)[:80]!r}")
    if "invalid" in found:
        raise InvalidSelectorException(f"invalid {kind} {value!r}: {found['invalid']}")
    zoom = zoom_from_script(found["zoom"]) if "zoom" in found else None
    point = found.get("point")
    at = (float(point[0]), float(point[1])) if isinstance(point, list) and len(point) == 2 else None
    return Located(found["el"], int(found.get("rank", 0)), str(found.get("why", "")), _rect(found.get("rect")), zoom,
                   at)


def _rect(value: Any) -> tuple[float, float, float, float] | None:
    """Four numbers from a script, or None (a page that changed `Element.prototype` may send anything)."""
    if not isinstance(value, list) or len(value) != 4 or not all(isinstance(v, int | float) for v in value):
        return None
    left, top, width, height = (float(v) for v in value)
    return left, top, width, height


def viewport_rect(driver: Any, element: Any) -> tuple[tuple[float, float, float, float], PageZoom]:
    """`element`'s (left, top, width, height) in CSS px relative to the viewport, and the page's zoom:
    one script."""
    answer = driver.execute_script(RECT_JS, element)
    rect = _rect(answer[0]) if isinstance(answer, list) and len(answer) == 2 else None
    if rect is None:
        raise WebDriverException(f"the element's getBoundingClientRect gave no four numbers: {str(answer)[:80]!r}")
    return rect, zoom_from_script(answer[1])


def editable_inside(driver: Any, element: Any) -> tuple[Any | None, int]:
    """The element to type into for `element`: itself when editable, else the one editable element
    inside it (through open shadow roots). (None, n) when it holds n editable elements, n != 1."""
    found = driver.execute_script(EDITABLE_JS, element)
    if isinstance(found, dict):
        return None, int(found.get("count", 0))
    return found, 1


def closed_components(driver: Any) -> list[str]:
    """Rendered custom elements with no open shadow root and nothing inside: their content may sit in
    closed shadow roots, which no page script (and so no locator or tree) can enter."""
    try:
        found = driver.execute_script(CLOSED_JS)
    except WebDriverException:
        return []
    return [str(name) for name in found] if isinstance(found, list) else []
