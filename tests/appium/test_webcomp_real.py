"""Apps on real UI component libraries through real Appium 3 + Chromium (issue 34).

Ionic (`@ionic/core`: shadow roots, Stencil's scoped inputs, ion-alert), Framework7 (a confirm dialog
fading in over a dimmed backdrop, no `role="dialog"`), Onsen UI (custom elements around native
controls, CSS upper-casing its buttons), Shoelace (Lit components defined lazily by its autoloader, a
dialog animating in its shadow root, a toast), Material Web (ES modules through an import map, a
touch target over each button's label, fields drawn by nested components, a native <dialog> in the
top layer), Bootstrap 5 (plain DOM, a modal and a toast fading with CSS transitions, a separate
.modal-backdrop, a form switch) and UI5 Web Components (`@ui5/webcomponents`: deep shadow roots, a
switch with no native checkbox, list items drawing their `text=` attribute, a popup opening faint under a timer's class, a
toast), at the versions pinned in `.ci/webapps/package.json`,
installed by `bash .ci/webapps.sh` and served on loopback. Each app is driven by an inner pytest run
written the way a user writes it (README words only): the locators wait for the app to hydrate, type
into components, tap a button whose label lives in a shadow root, delete exactly once under a late
redraw, flip a toggle; the dialog's crop is the dialog; the password is in no saved file.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.appium.conftest import LIBRARIES, WEBAPPS

PASSWORD = "hunter2-Secret"


def test_the_libraries_are_pinned_and_locked() -> None:
    """Exact versions in package.json, the same in the committed lock file; nothing vendored."""
    wanted = json.loads((WEBAPPS / "package.json").read_text())["dependencies"]
    assert set(wanted) == set(LIBRARIES.values())
    lock = json.loads((WEBAPPS / "package-lock.json").read_text())["packages"]
    for name, version in wanted.items():
        assert version[0].isdigit() and all(part.isdigit() for part in version.split(".")), (name, version)
        assert lock[f"node_modules/{name}"]["version"] == version, name
    assert lock[""]["dependencies"] == wanted


INNER = """
import pytest
from pytest_guistate import gone

PAGE = {page!r}
PASSWORD = {password!r}


def test_notes(device, guistate):
    device.open_url(PAGE)
    assert not device.exists(id="email")  # the form is not drawn yet: the app is still hydrating
    device.type("qa@example.com", id="email")  # waits for it (README: locators wait)
    device.type(PASSWORD, id="password")
    guistate.goal("Delete Bob's note", plan=["signed in", "dialog open", ("note gone", gone("note by Bob"))])
    with guistate.step("sign in", expect="Signed in as qa@example.com"):
        device.tap("Sign in")
    guistate.milestone("signed in")

    with guistate.step("notifications on"):
        device.tap(id="notifications")
    assert device.ground_truth()["notifications"] is True

    with guistate.step("open the delete dialog", expect="Delete note by Bob?") as opened:
        device.tap(desc="Delete note by Bob")
    guistate.milestone("dialog open")
    width, height = device.screenshot().size
    crops = opened.transition.crops if opened.transition else []
    t = opened.transition
    assert crops and all(c.box.area < 0.6 * width * height for c in crops), (
        [c.box for c in crops], t and (t.verdict, t.regions, t.notes), [(a.stage, a.polls) for a in opened.record.attempts])

    with guistate.step("confirm", expect=gone("note by Bob"), idempotent=False):
        device.tap("Delete")  # the dialog's button: the rows' buttons are under its backdrop
    guistate.milestone("note gone")
    guistate.assert_complete()
    deletes = [e["author"] for e in device.action_log() if e["action"] == "delete_note"]
    assert deletes == ["Bob"], deletes
    toggles = [e for e in device.action_log() if e["action"] == "toggle_notifications"]
    assert len(toggles) == 1, toggles
"""


@pytest.mark.appium
@pytest.mark.parametrize("app", list(LIBRARIES))
def test_a_component_library_app_end_to_end(
    app: str, webapps: str, pytester: pytest.Pytester, inner_device: Callable[[int], tuple[str, ...]],
) -> None:
    device_options = inner_device(150)
    pytester.makepyfile(INNER.format(page=f"{webapps}{app}.html?redraw=700&hydrate=900", password=PASSWORD))
    artifacts = pytester.path / "artifacts"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--guistate=full", *device_options, "--guistate-retain=on",
        f"--guistate-artifacts={artifacts}",
    )
    result.assert_outcomes(passed=1)
    saved = [p for p in artifacts.rglob("*") if p.is_file()]
    assert saved, "the run saved nothing"
    leaks = [p for p in saved if PASSWORD.encode() in p.read_bytes()]
    assert not leaks, leaks
