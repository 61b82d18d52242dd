"""What a shadow root changes for the tree and the locators, on real Chromium (issue 34): a page of
hand-written custom elements (open and closed shadow roots, a label moved into the shadow root,
CSS upper-casing, a disabled and a covered button, a component with two inputs)."""

from __future__ import annotations

import base64

import pytest

from pytest_guistate.core.checks import visible
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle_dim import floating_window
from pytest_guistate.devices.device import Device, DeviceError, ElementNotFound, ElementNotReady

pytestmark = pytest.mark.appium

PAGE = """<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { font: 18px sans-serif; margin: 16px } .up { text-transform: uppercase } x-pair { display: block }</style>
</head><body>
<x-button id="save" aria-label="Save the draft">Save</x-button>
<x-field id="email" label="Email"></x-field>
<x-pair id="pair"></x-pair>
<p class="up" id="shout">Delete   note</p>
<x-closed id="vault"></x-closed>
<button id="off" disabled>Archive</button>
<div style="position: relative"><button id="under">Hidden under</button>
  <div style="position: absolute; inset: 0; background: #fff"></div></div>
<script>
customElements.define("x-button", class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({mode: "open"});
    root.innerHTML = '<button part="native"><slot></slot></button>';
    root.querySelector("button").setAttribute("aria-label", this.getAttribute("aria-label"));
    this.removeAttribute("aria-label");  // moved into the shadow root, as Ionic does
    root.querySelector("button").addEventListener("click", () => { window.saved = (window.saved || 0) + 1; });
  }
});
customElements.define("x-field", class extends HTMLElement {
  connectedCallback() {
    this.attachShadow({mode: "open"}).innerHTML =
      '<label>' + this.getAttribute("label") + ' <input placeholder="you@example.com"></label>';
  }
});
customElements.define("x-pair", class extends HTMLElement {
  connectedCallback() { this.attachShadow({mode: "open"}).innerHTML = "<input id=a> <input id=b>"; }
});
customElements.define("x-closed", class extends HTMLElement {
  connectedCallback() { this.attachShadow({mode: "closed"}).innerHTML = "<button>Open the vault</button>"; }
});
</script></body></html>"""


@pytest.fixture
def page(device: Device) -> Device:
    device.open_url("data:text/html;base64," + base64.b64encode(PAGE.encode()).decode())
    return device


def test_a_component_wrapping_one_control_is_one_node_with_the_label_that_moved_inside(page: Device) -> None:
    tree = page.ui_tree()
    [save] = tree.by_id("save")
    assert (save.kind, save.text, save.content_desc, save.is_tappable) == ("Button", "Save", "Save the draft", True)
    [email] = tree.by_id("email")
    assert (email.kind, email.content_desc, email.attrs["hint"]) == ("EditText", "Email", "you@example.com")
    assert not tree.by_id("pair") or tree.by_id("pair")[0].kind != "EditText"  # two inputs: not one field
    page.tap(desc="Save the draft")  # the aria-label lives on the shadow root's button
    page.tap("Save")
    assert page.driver.execute_script("return window.saved") == 2


def test_text_matches_as_shown_or_as_written_whitespace_normalised(page: Device) -> None:
    [shout] = page.ui_tree().by_id("shout")
    assert (shout.text, shout.attrs["source-text"]) == ("DELETE NOTE", "Delete note")
    for wanted in ("Delete note", "DELETE NOTE", "Delete  note"):
        assert page.find(wanted, timeout=0).get_attribute("id") == "shout"
        assert visible(wanted, exact=True)(page.observe()).ok, wanted
    assert not page.exists("delete note")  # neither shown nor written so: case is not ignored


def test_typing_goes_into_a_components_one_input_or_fails_naming_why(page: Device) -> None:
    page.type("qa@example.com", id="email")
    value = page.driver.execute_script("return document.getElementById('email').shadowRoot.querySelector('input').value")
    assert value == "qa@example.com"
    with pytest.raises(DeviceError, match=r"type into id='pair'.*holds 2 editable elements"):
        page.type("x", id="pair")


def test_what_the_locators_cannot_see_is_said(page: Device) -> None:
    with pytest.raises(ElementNotFound, match=r"no open shadow root: x-closed; a closed shadow root is invisible"):
        page.find("Open the vault", timeout=0)
    with pytest.raises(ElementNotFound, match="XPath does not enter shadow roots"):
        page.find(xpath="//button[@aria-label='Save the draft']", timeout=0)
    with pytest.raises(ElementNotReady, match="Archive.*disabled"):
        page.tap("Archive", timeout=0.3)
    with pytest.raises(ElementNotReady, match="Hidden under.*covered by <div>"):
        page.tap("Hidden under", timeout=0.3)


# What Material Web and Shoelace drew that the page above did not (docs/web-components.md): a touch
# target over a button's own label, a field wrapper drawn inside another component's shadow root, a
# form-associated switch named by its <label>, a panel that animates in its shadow root, a short page.
LIBRARY_PAGE = """<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { font: 18px sans-serif; margin: 16px }</style></head><body>
<x-touch id="publish">Publish</x-touch>
<x-textfield id="city"></x-textfield>
<label>Alerts <x-toggle id="alerts"></x-toggle></label>
<x-sheet id="sheet"><button id="inside" onclick="window.insideTaps = 1">Inside</button></x-sheet>
<script>
customElements.define("x-touch", class extends HTMLElement {
  connectedCallback() {
    this.attachShadow({mode: "open"}).innerHTML = '<button style="position: relative; padding: 8px">' +
      '<span style="position: absolute; inset: -8px 0"></span><span class="label"><slot></slot></span></button>';
    this.shadowRoot.querySelector("button").addEventListener("click", () => { window.published = (window.published || 0) + 1; });
  }
});
customElements.define("x-field", class extends HTMLElement {
  connectedCallback() { this.attachShadow({mode: "open"}).innerHTML = '<div style="padding: 4px; border: 1px solid"><slot></slot></div>'; }
});
customElements.define("x-textfield", class extends HTMLElement {
  connectedCallback() { this.attachShadow({mode: "open"}).innerHTML = '<x-field><input placeholder="Paris"></x-field>'; }
});
customElements.define("x-toggle", class extends HTMLElement {
  static formAssociated = true;
  constructor() { super(); this.internals = this.attachInternals(); }
  get labels() { return this.internals.labels; }
  connectedCallback() { this.attachShadow({mode: "open"}).innerHTML = '<input type="checkbox" role="switch">'; }
});
customElements.define("x-sheet", class extends HTMLElement {
  connectedCallback() { this.attachShadow({mode: "open"}).innerHTML = '<div part="panel"><slot></slot></div>'; }
  slide() { this.shadowRoot.querySelector("div").animate([{transform: "translateY(40px)"}, {transform: "none"}], 4000); }
});
</script></body></html>"""


@pytest.fixture
def library_page(device: Device) -> Device:
    device.open_url("data:text/html;base64," + base64.b64encode(LIBRARY_PAGE.encode()).decode())
    return device


def test_a_touch_target_inside_the_same_button_does_not_cover_its_label(library_page: Device) -> None:
    """Material's buttons draw a <span class="touch"> over their label inside the <button>: a tap at the
    label's centre still reaches that button, so the label is ready and the button gets the click."""
    library_page.tap("Publish", timeout=0.5)
    assert library_page.driver.execute_script("return window.published") == 1


def test_a_wrapper_in_a_components_shadow_root_folds_into_it_and_a_host_label_names_it(library_page: Device) -> None:
    tree = library_page.ui_tree()
    [city] = tree.by_id("city")  # x-field wraps the input, but x-textfield drew both: the page wrote x-textfield
    assert (city.kind, city.attrs["hint"]) == ("EditText", "Paris")
    [alerts] = tree.by_id("alerts")  # a form-associated component: its <label> names it
    assert (alerts.kind, alerts.content_desc) == ("Switch", "Alerts")


def test_an_animation_in_a_shadow_root_is_motion_and_moves_what_is_slotted_there(library_page: Device) -> None:
    assert library_page.in_motion() is False
    library_page.driver.execute_script("document.getElementById('sheet').slide()")
    assert library_page.in_motion() is True  # document.getAnimations() alone does not list it
    with pytest.raises(ElementNotReady, match="Inside.*moving"):
        library_page.tap("Inside", timeout=0.3)  # the button is slotted into the moving panel
    assert library_page.driver.execute_script("return window.insideTaps") is None  # never tapped mid-motion


def test_the_document_element_of_a_short_page_is_the_whole_screen(library_page: Device) -> None:
    """The root element's background fills the screen however short the page is: its node is the window,
    never a floating dialog window over nothing."""
    tree = library_page.ui_tree()
    [html] = [n for n in tree.nodes() if n.attrs.get("tag") == "html"]
    width, height = library_page.screenshot().size
    assert html.bounds == Box(0, 0, width, height)
    assert floating_window(tree, Box(0, 0, width, height)) is None
