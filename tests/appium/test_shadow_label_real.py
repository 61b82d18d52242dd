"""A control tapped by its own visible label when the label sits in the control's shadow root (issue 44),
through real Appium 3 + Chromium on real component libraries: Ionic's `<ion-toggle>Dark mode</ion-toggle>`
inside an `<ion-item>`, Shoelace's `<sl-switch>` / `<sl-checkbox>` and a hand-written component whose
label and button live in its shadow root. The document's hit test at the label's centre reports the
shadow host (or the host's host), not the element the locator found, so WebDriver's element click
refuses it as "intercepted"; the tap acts once on that control, at the point the hit test was judged.
An overlay that really covers the control (a scrim, a toast) still waits and is named.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.devices.device import Device, ElementNotReady
from pytest_guistate.support.httpserver import LoopbackHTTPServer, ServedThread

pytestmark = pytest.mark.appium

WEBAPPS = Path(__file__).resolve().parents[2] / ".ci" / "webapps"
HEAD = '<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'

PAGES = {
    "ionic": HEAD
    + """
<link rel="stylesheet" href="/node_modules/@ionic/core/css/ionic.bundle.css">
<script type="module" src="/node_modules/@ionic/core/dist/ionic/ionic.esm.js"></script></head>
<body><ion-app><ion-content><ion-list>
  <ion-item><ion-toggle id="dark">Dark mode</ion-toggle></ion-item>
  <ion-item><ion-checkbox id="terms">Accept the terms</ion-checkbox></ion-item>
</ion-list>
<div id="scrim" style="display: none; position: fixed; inset: 0; background: rgba(0, 0, 0, .4); z-index: 99999"></div>
</ion-content></ion-app></body></html>""",
    "shoelace": HEAD
    + """
<link rel="stylesheet" href="/node_modules/@shoelace-style/shoelace/cdn/themes/light.css">
<script type="module" src="/node_modules/@shoelace-style/shoelace/cdn/shoelace-autoloader.js"
  data-shoelace="/node_modules/@shoelace-style/shoelace/cdn"></script>
<style>body { font: 18px sans-serif; margin: 16px } div { margin: 16px 0 }</style></head>
<body><div><sl-switch id="wifi">Wi-Fi only</sl-switch></div>
<div><sl-checkbox id="news">Send me news</sl-checkbox></div>
<sl-radio-group id="ship" label="Shipping" name="ship" value="fast">
  <sl-radio value="fast">Fast shipping</sl-radio><sl-radio value="slow">Slow shipping</sl-radio></sl-radio-group>
<div id="toast" style="display: none; position: fixed; left: 0; right: 0; top: 0; height: 200px;
  background: #333; color: #fff; z-index: 10">Saved</div></body></html>""",
    # UI5 draws a check box's and a radio button's `text=` as a ui5-label inside their shadow root: the
    # document's hit test at the label reports the check box (the host's host of the text)
    "ui5": HEAD
    + """
<script type="importmap">{"imports": {
  "@ui5/webcomponents/dist/": "/node_modules/@ui5/webcomponents/dist/",
  "@ui5/webcomponents-base/jsx-runtime": "/node_modules/@ui5/webcomponents-base/dist/jsx-runtime.js",
  "@ui5/webcomponents-base/dist/": "/node_modules/@ui5/webcomponents-base/dist/",
  "@ui5/webcomponents-base/": "/node_modules/@ui5/webcomponents-base/dist/",
  "@ui5/webcomponents-icons/dist/": "/node_modules/@ui5/webcomponents-icons/dist/",
  "@ui5/webcomponents-localization/dist/": "/node_modules/@ui5/webcomponents-localization/dist/",
  "@ui5/webcomponents-theming/dist/": "/node_modules/@ui5/webcomponents-theming/dist/"},
 "scopes": {"/node_modules/@ui5/webcomponents-base/": {
  "lit-html": "/node_modules/@ui5/webcomponents-base/node_modules/lit-html/lit-html.js",
  "lit-html/": "/node_modules/@ui5/webcomponents-base/node_modules/lit-html/"}}}</script>
<script type="module">
import "@ui5/webcomponents/dist/CheckBox.js";
import "@ui5/webcomponents/dist/RadioButton.js";
</script><style>body { font-family: Arial, sans-serif; margin: 16px } ui5-checkbox, ui5-radio-button { display: flex }</style></head>
<body><ui5-checkbox id="remember" text="Remember me"></ui5-checkbox>
<ui5-radio-button id="express" name="ship" text="Express delivery"></ui5-radio-button>
<ui5-radio-button id="standard" name="ship" text="Standard delivery"></ui5-radio-button>
<div id="banner" style="display: none; position: fixed; left: 0; right: 0; top: 0; height: 300px;
  background: #fff; z-index: 10">Offline</div></body></html>""",
    # Material Web draws a text field's label in md-outlined-field's shadow root, inside the text field's,
    # over the input it names (at rest): a tap on the label reaches that input
    "material": HEAD
    + """
<script type="importmap">{"imports": {"@material/web/": "/node_modules/@material/web/",
  "lit": "/node_modules/lit/index.js", "lit/": "/node_modules/lit/", "lit-html": "/node_modules/lit-html/lit-html.js",
  "lit-html/": "/node_modules/lit-html/", "lit-element/": "/node_modules/lit-element/",
  "@lit/reactive-element": "/node_modules/@lit/reactive-element/reactive-element.js",
  "@lit/reactive-element/": "/node_modules/@lit/reactive-element/", "@lit/context": "/node_modules/@lit/context/index.js",
  "tslib": "/node_modules/tslib/tslib.es6.mjs"}}</script>
<script type="module">
import "@material/web/textfield/outlined-text-field.js";
import "@material/web/chips/chip-set.js";
import "@material/web/chips/filter-chip.js";
</script><style>body { font-family: Roboto, sans-serif; margin: 16px } md-outlined-text-field { display: block; margin: 16px 0 }</style></head>
<body><md-outlined-text-field id="city" label="City"></md-outlined-text-field>
<md-outlined-text-field id="zip" label="Postcode"></md-outlined-text-field>
<md-chip-set><md-filter-chip id="vegan" label="Vegan"></md-filter-chip><md-filter-chip id="spicy" label="Spicy"></md-filter-chip></md-chip-set>
<div id="sheet" style="display: none; position: fixed; inset: 0; background: rgba(0, 0, 0, .3)"></div></body></html>""",
    # a component of no library: its own label and button in its shadow root, inside another component
    "nested": HEAD
    + """<style>body { font: 18px sans-serif; margin: 16px }</style></head>
<body><x-card><x-labelled id="mute" label="Mute calls"></x-labelled></x-card>
<script>
customElements.define("x-labelled", class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({mode: "open"});
    root.innerHTML = '<div role="switch" aria-checked="false" style="padding: 12px; border: 1px solid">' +
      '<span class="label">' + this.getAttribute("label") + '</span></div>';
    root.firstChild.addEventListener("click", () => { window.muted = (window.muted || 0) + 1; });
  }
});
customElements.define("x-card", class extends HTMLElement {
  connectedCallback() { this.attachShadow({mode: "open"}).innerHTML = '<section style="padding: 8px"><slot></slot></section>'; }
});
</script></body></html>""",
}


class _Pages(SimpleHTTPRequestHandler):
    """The test pages by name, and the libraries from `.ci/webapps/node_modules`."""

    def do_GET(self) -> None:
        name = self.path.strip("/").removesuffix(".html")
        if name in PAGES:
            body = PAGES[name].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: a test server's request log is noise in pytest's output."""


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """The pages on a loopback port; fails (never skips) naming the install command."""
    for package in ("@ionic/core", "@shoelace-style/shoelace", "@ui5/webcomponents", "@material/web"):
        if not (WEBAPPS / "node_modules" / package / "package.json").is_file():
            pytest.fail(f"{package} is not installed in {WEBAPPS / 'node_modules'}: run `bash .ci/webapps.sh`")
    handler = functools.partial(_Pages, directory=str(WEBAPPS))
    served = ServedThread(lambda address: LoopbackHTTPServer(address, handler), host="127.0.0.1", port=0,
                          name="shadow-pages", what="the shadow-label pages' server")
    served.start()
    try:
        yield f"{served.url}/"
    finally:
        served.stop()


def _defined(device: Device, *tags: str) -> None:
    """Wait until the lazily loaded components are defined (an autoloader defines them after the first paint)."""
    device.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "Promise.all(arguments[0].map((t) => customElements.whenDefined(t))).then(() => setTimeout(done, 300));",
        list(tags),
    )


def _checked(device: Device, element_id: str) -> Any:
    return device.driver.execute_script(f"return document.getElementById('{element_id}').checked")


def test_an_ionic_toggle_tapped_by_its_own_label_flips_once(device: Device, site: str) -> None:
    device.open_url(site + "ionic.html")
    assert _checked(device, "dark") in (False, None)
    device.tap(text="Dark mode")  # the label is slotted into ion-toggle's shadow root, inside ion-item
    assert _checked(device, "dark") is True
    device.tap(text="Accept the terms")
    assert _checked(device, "terms") is True
    device.tap(text="Dark mode")
    assert _checked(device, "dark") is False  # one tap, one flip: never twice


def test_an_ionic_label_under_a_scrim_waits_and_names_it(device: Device, site: str) -> None:
    device.open_url(site + "ionic.html")
    device.find(text="Dark mode")  # hydrated
    device.driver.execute_script("document.getElementById('scrim').style.display = 'block'")
    with pytest.raises(ElementNotReady, match=r"covered by <div#scrim>"):
        device.tap(text="Dark mode", timeout=0.5)
    assert _checked(device, "dark") is False  # the covered control was never tapped


def test_shoelace_switch_and_checkbox_tapped_by_their_labels(device: Device, site: str) -> None:
    device.open_url(site + "shoelace.html")
    # the autoloader defines the components after the first paint: a label tapped before sl-switch is
    # defined is plain text that nothing listens to (no custom-element rule can tell: Angular's hosts stay
    # undefined for good), so the test waits as a page's own script would (it failed 1 run in 4-5 without)
    _defined(device, "sl-switch", "sl-checkbox")
    device.tap(text="Wi-Fi only")
    assert _checked(device, "wifi") is True
    device.tap(text="Send me news")
    assert _checked(device, "news") is True
    assert _checked(device, "wifi") is True  # the second tap did not reach the first control


def test_a_shoelace_radio_tapped_by_its_label_is_that_radio(device: Device, site: str) -> None:
    """Each radio's label is slotted through the group's shadow root: the group's wrapper holds both labels,
    so it is not what `text=` names; the tap selects the radio it names, not whichever is at the group's
    centre."""
    device.open_url(site + "shoelace.html")
    _defined(device, "sl-radio-group", "sl-radio")
    device.tap(text="Slow shipping")
    assert device.driver.execute_script("return document.getElementById('ship').value") == "slow"
    device.tap(text="Fast shipping")
    assert device.driver.execute_script("return document.getElementById('ship').value") == "fast"


def test_a_shoelace_label_under_a_toast_waits_and_names_it(device: Device, site: str) -> None:
    device.open_url(site + "shoelace.html")
    device.find(text="Wi-Fi only")
    device.driver.execute_script("document.getElementById('toast').style.display = 'block'")
    with pytest.raises(ElementNotReady, match=r"covered by <div#toast> \"Saved\""):
        device.tap(text="Wi-Fi only", timeout=0.5)
    assert _checked(device, "wifi") is False


def test_ui5_check_box_and_radio_buttons_tapped_by_their_text(device: Device, site: str) -> None:
    device.open_url(site + "ui5.html")
    device.tap(text="Remember me")
    assert _checked(device, "remember") is True
    device.tap(text="Express delivery")
    assert (_checked(device, "express"), _checked(device, "standard")) == (True, False)
    device.tap(text="Standard delivery")
    assert (_checked(device, "express"), _checked(device, "standard")) == (False, True)
    assert _checked(device, "remember") is True  # each tap reached its own control, once


def test_a_ui5_label_under_a_banner_waits_and_names_it(device: Device, site: str) -> None:
    device.open_url(site + "ui5.html")
    device.find(text="Remember me")
    device.driver.execute_script("document.getElementById('banner').style.display = 'block'")
    with pytest.raises(ElementNotReady, match=r"covered by <div#banner> \"Offline\""):
        device.tap(text="Remember me", timeout=0.5)
    assert _checked(device, "remember") is False


def _value(device: Device, element_id: str) -> Any:
    return device.driver.execute_script(f"return document.getElementById('{element_id}').value")


def test_material_text_fields_tapped_and_typed_by_their_labels(device: Device, site: str) -> None:
    device.open_url(site + "material.html")
    device.tap(text="Postcode")  # the label at rest lies over the field's input: the tap focuses that input
    focused = device.driver.execute_script(
        "let a = document.activeElement; while (a && a.shadowRoot && a.shadowRoot.activeElement) "
        "a = a.shadowRoot.activeElement; return [document.activeElement.id, a.tagName]"
    )
    assert focused == ["zip", "INPUT"]
    device.type("Lyon", into="City")
    assert (_value(device, "city"), _value(device, "zip")) == ("Lyon", "")
    device.tap(text="Spicy")  # a chip's label, drawn in its shadow root
    selected = "return [document.getElementById('vegan').selected, document.getElementById('spicy').selected]"
    assert device.driver.execute_script(selected) == [False, True]


def test_a_material_label_under_a_sheet_waits_and_names_it(device: Device, site: str) -> None:
    device.open_url(site + "material.html")
    device.find(text="City")
    device.driver.execute_script("document.getElementById('sheet').style.display = 'block'")
    with pytest.raises(ElementNotReady, match=r"covered by <div#sheet>"):
        device.type("Lyon", into="City", timeout=0.5)
    assert _value(device, "city") == ""


def test_a_label_two_shadow_roots_deep_is_tapped_once(device: Device, site: str) -> None:
    """The document's hit test reports x-card (the host's host) at the label's centre."""
    device.open_url(site + "nested.html")
    element = device.find(text="Mute calls")  # ready: the composed tree's hit is the control
    assert element is not None
    device.tap(text="Mute calls")
    assert device.driver.execute_script("return window.muted") == 1
