"""The sim's Hybrid app over HTTP with the stock Appium client: contexts, the web view context proxied
to a real chromedriver + headless Chromium, composited screenshots and the drivers' faults (issue 37).

These tests need Chromium and chromedriver on PATH (this machine and CI have them); without them
they fail naming the command that installs them, never skip.
"""

from __future__ import annotations

import contextlib
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from typing import Any

import cv2
import numpy as np
import pytest
from appium import webdriver
from appium.options.common import AppiumOptions
from appium.webdriver.common.appiumby import AppiumBy
from selenium.common.exceptions import (
    InvalidSessionIdException,
    NoSuchWindowException,
    TimeoutException,
    WebDriverException,
)

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim import SimServer
from pytest_guistate.devices.sim.apps.hybrid_page import NOTES
from pytest_guistate.devices.sim.model import SimError
from pytest_guistate.devices.sim.webview import locate_chromium
from tests.devices.sim.sim_server_helpers import wait_until
from tests.devices.sim.simhelpers import diff_box

HYBRID = "com.guistate.hybrid"
ANDROID_WEBVIEW = f"WEBVIEW_{HYBRID}"
IOS = {"platformName": "iOS", "appium:automationName": "XCUITest"}


@pytest.fixture(scope="module", autouse=True)
def chromium_installed() -> None:
    """Fail (never skip) where Chromium is missing: the error names the install command."""
    try:
        locate_chromium()
    except SimError as exc:
        pytest.fail(f"the Hybrid app's tests need Chromium: {exc.message}")


@pytest.fixture
def open_driver(server: SimServer) -> Iterator[Callable[..., webdriver.Remote]]:
    """`open_driver(**caps)`: a session on the Hybrid app (frozen clock); all are quit after the test."""
    opened: list[webdriver.Remote] = []

    def make(**caps: Any) -> webdriver.Remote:
        base = {"guistate:clock": "frozen", "appium:appPackage": HYBRID}
        if caps.get("platformName") == "iOS":
            base = {"guistate:clock": "frozen", "appium:bundleId": HYBRID}
        opened.append(webdriver.Remote(server.url, options=AppiumOptions().load_capabilities({**base, **caps})))
        return opened[-1]

    yield make
    for driver in opened:
        with contextlib.suppress(InvalidSessionIdException):  # a test may have quit it already
            driver.quit()


def image(png: bytes) -> np.ndarray:
    decoded = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert decoded is not None
    return decoded


def native_web_view(driver: webdriver.Remote) -> ET.Element:
    """The web view's node in the native page source (UiAutomator2 or XCUITest shape)."""
    root = ET.fromstring(driver.page_source.encode("utf-8"))
    found = [e for e in root.iter() if e.tag in ("android.webkit.WebView", "XCUIElementTypeWebView")]
    assert len(found) == 1, [e.tag for e in root.iter()]
    return found[0]


def web_view_box(driver: webdriver.Remote) -> Box:
    """The Android web view's bounds in screen pixels, from the native page source."""
    return Box.from_bounds(native_web_view(driver).attrib["bounds"])


def sign_in(driver: webdriver.Remote) -> None:
    """Through the proxy: a CSS find, an XPath find, typing and a click; the notes appear."""
    driver.implicitly_wait(5)
    driver.find_element(AppiumBy.CSS_SELECTOR, "#email").send_keys("qa@example.com")
    driver.find_element(AppiumBy.XPATH, "//input[@type='password']").send_keys("correct-horse")
    driver.find_element(AppiumBy.CSS_SELECTOR, "[data-testid=signin_button]").click()
    assert len(driver.find_elements(AppiumBy.CSS_SELECTOR, "[data-testid=note]")) == len(NOTES)


def toggles(driver: webdriver.Remote) -> list[bool]:
    """The toggle's values the page's backend logged, in order."""
    log = driver.execute_script("mobile: guistateActionLog", {})
    return [entry["value"] for entry in log if entry["action"] == "toggle" and entry["setting"] == "sync_wifi_only"]


def test_android_lists_and_switches_contexts_and_the_web_context_is_the_page(open_driver: Any) -> None:
    driver = open_driver()
    assert driver.contexts == ["NATIVE_APP", ANDROID_WEBVIEW]
    assert driver.current_context == "NATIVE_APP"
    assert native_web_view(driver).attrib["resource-id"] == f"{HYBRID}:id/webview"
    driver.switch_to.context(ANDROID_WEBVIEW)
    assert driver.current_context == ANDROID_WEBVIEW
    assert "Sign in to your notes" in driver.page_source and driver.page_source.lstrip().startswith("<html")
    assert driver.execute_script("return [innerWidth, devicePixelRatio]") == [360, 3]
    sign_in(driver)
    assert driver.find_element(AppiumBy.CSS_SELECTOR, "#account").text == "Signed in as qa@example.com"
    log = driver.execute_script("mobile: guistateActionLog", {})  # a `mobile:` script stays the sim's own
    login = [entry for entry in log if entry["action"] == "login"]
    assert login[-1]["success"] is True and "correct-horse" not in repr(log)
    driver.switch_to.context("NATIVE_APP")
    assert driver.current_context == "NATIVE_APP"
    assert driver.find_element(AppiumBy.ID, f"{HYBRID}:id/help").text == "Help"  # the native toolbar


def test_an_unknown_context_is_the_drivers_no_such_context(open_driver: Any, server: SimServer) -> None:
    driver = open_driver()
    with pytest.raises(WebDriverException, match="No such context found") as raised:
        driver.switch_to.context("WEBVIEW_com.example.other")
    assert "NoSuchContext" in type(raised.value).__name__
    assert driver.current_context == "NATIVE_APP"
    launcher = webdriver.Remote(server.url, options=AppiumOptions().load_capabilities({"guistate:clock": "frozen"}))
    try:
        assert launcher.contexts == ["NATIVE_APP"]  # no web view on the home screen
        with pytest.raises(WebDriverException, match="No such context found"):
            launcher.switch_to.context(ANDROID_WEBVIEW)
    finally:
        launcher.quit()


def test_a_click_through_the_proxy_shows_in_the_native_frame_at_the_web_views_bounds(open_driver: Any) -> None:
    driver = open_driver()
    box = web_view_box(driver)
    driver.switch_to.context(ANDROID_WEBVIEW)
    sign_in(driver)
    toggle = driver.find_element(AppiumBy.CSS_SELECTOR, "[data-testid=sync_toggle]")
    rect = toggle.rect  # CSS pixels of the web view's viewport
    web_before = image(driver.get_screenshot_as_png())
    assert web_before.shape[:2] == (box.height, box.width)  # chromedriver's: the web view only
    driver.switch_to.context("NATIVE_APP")
    before = image(driver.get_screenshot_as_png())
    assert before.shape[:2] == (2400, 1080)
    inside = before[box.top:box.bottom, box.left:box.right].astype(int)
    assert np.abs(inside - web_before.astype(int)).mean() < 1.0  # the native frame holds the page's pixels
    driver.switch_to.context(ANDROID_WEBVIEW)
    toggle.click()
    assert toggle.is_selected()
    driver.switch_to.context("NATIVE_APP")
    after = image(driver.get_screenshot_as_png())
    changed = diff_box(before, after)
    assert changed is not None
    ratio = 3
    expected = Box(box.left + int(rect["x"] * ratio), box.top + int(rect["y"] * ratio),
                   box.left + int((rect["x"] + rect["width"]) * ratio) + 1,
                   box.top + int((rect["y"] + rect["height"]) * ratio) + 1)
    grown = Box(expected.left - 6, expected.top - 6, expected.right + 6, expected.bottom + 6)
    assert grown.contains(changed), (changed, expected)  # the change lies where the page shows it
    wait_until(lambda: toggles(driver) == [True], "the page sent the toggle to its backend")  # (a fetch)


def test_a_native_tap_on_the_web_view_reaches_the_page_at_its_point(open_driver: Any) -> None:
    driver = open_driver()
    box = web_view_box(driver)
    driver.switch_to.context(ANDROID_WEBVIEW)
    sign_in(driver)
    rect = driver.find_element(AppiumBy.CSS_SELECTOR, "[data-testid=sync_toggle]").rect
    driver.switch_to.context("NATIVE_APP")
    x = box.left + round((rect["x"] + rect["width"] / 2) * 3)
    y = box.top + round((rect["y"] + rect["height"] / 2) * 3)
    driver.tap([(x, y)])
    wait_until(lambda: toggles(driver) == [True], "the page sent the toggle to its backend")  # (a fetch)


def test_a_native_swipe_on_the_web_view_scrolls_the_page(open_driver: Any) -> None:
    driver = open_driver()
    box = web_view_box(driver)
    driver.switch_to.context(ANDROID_WEBVIEW)
    sign_in(driver)  # the notes are longer than the web view: the page scrolls
    driver.switch_to.context("NATIVE_APP")
    before = image(driver.get_screenshot_as_png())
    x = box.left + box.width // 2
    driver.swipe(x, box.bottom - 300, x, box.top + 300, 400)
    driver.switch_to.context(ANDROID_WEBVIEW)
    wait_until(lambda: driver.execute_script("return scrollY") > 100, "the page scrolled under the drag")
    driver.switch_to.context("NATIVE_APP")
    changed = diff_box(before, image(driver.get_screenshot_as_png()))
    assert changed is not None and box.contains(changed)  # the page moved, the toolbar did not


def test_native_web_screenshot_decides_what_a_web_context_screenshot_is(open_driver: Any) -> None:
    proxied = open_driver()
    proxied.switch_to.context(ANDROID_WEBVIEW)
    box = web_view_box_in_native(proxied)
    assert image(proxied.get_screenshot_as_png()).shape[:2] == (box.height, box.width)
    proxied.quit()  # (its browser goes back to the server's pool for the next session)
    native = open_driver(**{"appium:nativeWebScreenshot": True})
    native.switch_to.context(ANDROID_WEBVIEW)
    assert image(native.get_screenshot_as_png()).shape[:2] == (2400, 1080)
    ios = open_driver(**IOS)
    ios.switch_to.context(ios.contexts[1])
    assert image(ios.get_screenshot_as_png()).shape[:2] == (2556, 1179)  # XCUITest's native route


def web_view_box_in_native(driver: webdriver.Remote) -> Box:
    current = driver.current_context
    driver.switch_to.context("NATIVE_APP")
    try:
        return web_view_box(driver)
    finally:
        driver.switch_to.context(current)


def test_ios_names_the_web_view_by_page_and_its_source_has_a_web_view(open_driver: Any) -> None:
    driver = open_driver(**IOS)
    contexts = driver.contexts
    assert contexts[0] == "NATIVE_APP" and len(contexts) == 2
    app_id, page = contexts[1].removeprefix("WEBVIEW_").split(".")
    assert app_id.isdigit() and page == "1"
    node = native_web_view(driver)
    assert (int(node.attrib["width"]), int(node.attrib["height"])) == (393, 766)  # points
    driver.switch_to.context(contexts[1])
    sign_in(driver)
    driver.find_element(AppiumBy.CSS_SELECTOR, "#open-settings").click()  # the page links to a native screen
    wait_until(lambda: any(e["action"] == "open_native" for e in driver.execute_script("mobile: guistateActionLog", {})),
               "the page followed the link")
    with pytest.raises(NoSuchWindowException, match="web view not found"):
        driver.find_element(AppiumBy.CSS_SELECTOR, "#account")
    driver.switch_to.context("NATIVE_APP")
    wait_until(lambda: driver.contexts == ["NATIVE_APP"], "the web view context is gone")
    driver.back()  # the navigation bar's back button: a new web view, a new page
    fresh = driver.contexts
    assert len(fresh) == 2 and fresh[1] == f"WEBVIEW_{app_id}.2"
    with pytest.raises(WebDriverException, match="No such context found"):
        driver.switch_to.context(contexts[1])
    driver.switch_to.context(fresh[1])
    assert driver.find_element(AppiumBy.CSS_SELECTOR, "#account").text == "Signed in as qa@example.com"


def test_a_closed_web_view_fails_its_contexts_commands_with_the_drivers_error(open_driver: Any) -> None:
    driver = open_driver()
    driver.switch_to.context(ANDROID_WEBVIEW)
    driver.find_element(AppiumBy.CSS_SELECTOR, "#email")
    driver.switch_to.context("NATIVE_APP")
    driver.find_element(AppiumBy.ID, f"{HYBRID}:id/close").click()  # the app closes its web view
    assert driver.contexts == ["NATIVE_APP"]
    with pytest.raises(WebDriverException, match="No such context found"):
        driver.switch_to.context(ANDROID_WEBVIEW)
    driver.find_element(AppiumBy.ID, f"{HYBRID}:id/reopen").click()
    driver.switch_to.context(ANDROID_WEBVIEW)
    driver.execute_script("mobile: pressKey", {"keycode": 3})  # HOME: the web view leaves the screen
    with pytest.raises(NoSuchWindowException, match="web view not found"):
        driver.find_element(AppiumBy.CSS_SELECTOR, "#email")
    assert driver.current_context == ANDROID_WEBVIEW  # as the drivers do: the name stays until a switch


def test_a_hung_web_view_screenshot_answers_at_the_deadline(open_driver: Any) -> None:
    driver = open_driver(**{"guistate:faults": {"webview_screenshot_hang": 30.0},
                            "guistate:webviewCommandTimeout": 0.5})
    driver.switch_to.context(ANDROID_WEBVIEW)
    with pytest.raises(TimeoutException, match="did not answer within 0.5 s"):
        driver.get_screenshot_as_png()
    driver.execute_script("mobile: guistateFaults", {"webview_screenshot_hang": 0.1})
    assert image(driver.get_screenshot_as_png()).shape[:2] == (2160, 1080)  # a short hang still answers


def test_without_chromium_the_hybrid_app_names_the_install_command(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Any) -> None:
    with SimServer() as srv:  # a server of its own: no browser started in its pool yet
        options = AppiumOptions().load_capabilities({"appium:appPackage": HYBRID, "guistate:clock": "frozen"})
        driver = webdriver.Remote(srv.url, options=options)
        monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH: no Chromium, no chromedriver
        with pytest.raises(WebDriverException, match="sudo apt-get install chromium chromium-driver"):
            driver.switch_to.context(ANDROID_WEBVIEW)
        with pytest.raises(WebDriverException, match="Chromium .*chromedriver .*is not on PATH"):
            driver.get_screenshot_as_png()  # the native frame needs the web view's pixels too
        assert driver.current_context == "NATIVE_APP"
        assert driver.find_element(AppiumBy.ID, f"{HYBRID}:id/help").text == "Help"  # the native side works
        driver.quit()


def notes_shown(driver: webdriver.Remote) -> list[str]:
    return [e.text for e in driver.find_elements(AppiumBy.CSS_SELECTOR, "[data-testid=note_title]")]


def deleted_notes(driver: webdriver.Remote) -> list[str]:
    log = driver.execute_script("mobile: guistateActionLog", {})
    return [entry["title"] for entry in log if entry["action"] == "delete_note"]


def test_a_delete_in_the_page_redraws_late_and_a_stale_tap_deletes_the_next_note(open_driver: Any) -> None:
    driver = open_driver(**{"guistate:faults": {"refresh_delay": 600.0}})
    driver.switch_to.context(ANDROID_WEBVIEW)
    sign_in(driver)
    first = notes_shown(driver)[0]
    driver.find_elements(AppiumBy.CSS_SELECTOR, "[data-testid=delete]")[0].click()
    wait_until(lambda: deleted_notes(driver) == [first], "the backend deleted the first note")
    assert notes_shown(driver)[0] == first  # the list has not redrawn: the deleted row is still drawn
    driver.find_elements(AppiumBy.CSS_SELECTOR, "[data-testid=delete]")[0].click()  # a blind re-tap
    wait_until(lambda: len(deleted_notes(driver)) == 2, "the stale row's delete reached the backend")
    assert deleted_notes(driver) == [first, "Call the plumber"]  # it deleted the NEXT note
    driver.execute_script("mobile: guistateFaults", {"refresh_delay": 0.0})
    driver.refresh()  # a reload draws the backend's list
    wait_until(lambda: len(notes_shown(driver)) == len(NOTES) - 2, "the reloaded page lists the notes left")


def test_a_toast_over_the_web_view_stays_on_top_in_the_native_frame(open_driver: Any) -> None:
    driver = open_driver()
    box = web_view_box(driver)
    driver.switch_to.context(ANDROID_WEBVIEW)
    page = image(driver.get_screenshot_as_png())
    driver.switch_to.context("NATIVE_APP")
    driver.find_element(AppiumBy.ID, f"{HYBRID}:id/help").click()
    toast = Box.from_bounds(driver.find_element(AppiumBy.CLASS_NAME, "android.widget.Toast").get_attribute("bounds"))
    assert box.contains(toast)
    frame = image(driver.get_screenshot_as_png())
    inside = frame[box.top:box.bottom, box.left:box.right].astype(int) - page.astype(int)
    local = Box(toast.left - box.left, toast.top - box.top, toast.right - box.left, toast.bottom - box.top)
    assert np.abs(inside[local.top:local.bottom, local.left:local.right]).mean() > 20  # the toast, not the page
    inside[local.top:local.bottom, local.left:local.right] = 0
    assert np.abs(inside).mean() < 1.0  # the page around it


def test_the_sims_reset_between_tests_starts_native_with_a_fresh_page(open_driver: Any) -> None:
    driver = open_driver()
    driver.switch_to.context(ANDROID_WEBVIEW)
    sign_in(driver)
    driver.execute_script("mobile: guistateReset", {})  # what session reuse runs between two tests
    assert driver.current_context == "NATIVE_APP"
    driver.switch_to.context(ANDROID_WEBVIEW)
    assert driver.find_element(AppiumBy.CSS_SELECTOR, "#email").is_displayed()  # signed out: a new app
    assert notes_shown(driver) == []


def test_the_server_reuses_a_closed_sessions_browser_clean_and_stops_them_all() -> None:
    with SimServer() as srv:
        options = AppiumOptions().load_capabilities({"appium:appPackage": HYBRID, "guistate:clock": "frozen"})
        first = webdriver.Remote(srv.url, options=options)
        first.switch_to.context(ANDROID_WEBVIEW)
        sign_in(first)  # leaves an implicit wait of 5 s in chromedriver
        browser = srv.store.get(first.session_id).phone.web_browser()
        first.quit()
        assert browser.started and srv.browsers.acquire(360, 720, 3.0) is browser  # given back, kept
        srv.browsers.release(browser)
        second = webdriver.Remote(srv.url, options=options)
        second.switch_to.context(ANDROID_WEBVIEW)
        assert srv.store.get(second.session_id).phone.web_browser() is browser  # no second Chromium start
        group = browser.process_group()
        assert group is not None
        assert second.find_element(AppiumBy.CSS_SELECTOR, "#email").is_displayed()  # the new app's page
        assert second.timeouts.implicit_wait == 0  # nothing of the last session's left in chromedriver
        second.quit()
    assert not browser.started  # stopped with the server, chromedriver and the Chromium it started
    wait_until(lambda: not group_alive(group), "chromedriver's process group is gone (zombies reaped)")


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def test_hybrid_is_installed_by_the_session_that_opens_it(server: SimServer, open_driver: Any) -> None:
    other = webdriver.Remote(server.url, options=AppiumOptions().load_capabilities({"guistate:clock": "frozen"}))
    try:
        assert other.query_app_state(HYBRID) == 0  # not on this phone: the home screen tests know is unchanged
        assert not other.find_elements(AppiumBy.ACCESSIBILITY_ID, "Hybrid")
        other.execute_script("mobile: installApp", {"appPath": HYBRID})
        assert other.find_element(AppiumBy.ACCESSIBILITY_ID, "Hybrid").get_attribute("clickable") == "true"
        other.find_element(AppiumBy.ACCESSIBILITY_ID, "Hybrid").click()
        assert other.current_package == HYBRID and other.contexts == ["NATIVE_APP", ANDROID_WEBVIEW]
    finally:
        other.quit()
    assert open_driver().query_app_state(HYBRID) == 4  # `appium:appPackage` installs and opens it
