"""The simulated phone's WebDriver server, driven by the stock Appium-Python-Client."""

from __future__ import annotations

import base64
import socket
import threading
from collections.abc import Iterator
from typing import Any

import cv2
import numpy as np
import pytest
from appium import webdriver
from appium.options.android import UiAutomator2Options
from appium.webdriver.common.appiumby import AppiumBy
from selenium.common.exceptions import InvalidSelectorException, NoSuchElementException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput

from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.devices.sim import SimServer
from pytest_guistate.devices.sim.model import AppState
from tests.devices.sim.sim_server_helpers import PKG, TinyPhone, wait_until


class Factory:
    """Phone factory that remembers the phones it made, so tests can look inside."""

    def __init__(self) -> None:
        self.phones: list[TinyPhone] = []

    def __call__(self, caps: dict[str, Any]) -> TinyPhone:
        phone = TinyPhone.from_capabilities(caps)
        self.phones.append(phone)
        return phone


@pytest.fixture
def factory() -> Factory:
    return Factory()


@pytest.fixture
def server(factory: Factory) -> Iterator[SimServer]:
    with SimServer(phone_factory=factory) as srv:
        yield srv


def connect(server: SimServer, **caps: Any) -> webdriver.Remote:
    options = UiAutomator2Options()
    for name, value in caps.items():
        options.set_capability(name, value)
    return webdriver.Remote(server.url, options=options)


@pytest.fixture
def driver(server: SimServer) -> Iterator[webdriver.Remote]:
    drv = connect(server)
    yield drv
    drv.quit()


def decode(png: bytes) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    return image


def touch_chain(drv: webdriver.Remote, duration: int | None = None) -> ActionChains:
    chain = ActionChains(drv)
    touch = PointerInput(interaction.POINTER_TOUCH, "finger")
    chain.w3c_actions = ActionBuilder(drv, mouse=touch, duration=duration or 250)
    return chain


def test_session_create_and_quit(server: SimServer, factory: Factory) -> None:
    drv = connect(server, **{"guistate:screen": {"width": 400, "height": 640}})
    assert drv.caps["platformName"] == "Android"
    assert drv.caps["automationName"] == "UiAutomator2"
    assert drv.caps["deviceScreenSize"] == "400x640"
    assert server.session_ids() == [drv.session_id]
    drv.quit()
    assert server.session_ids() == []
    assert factory.phones[0].closed


def test_sessions_are_independent(server: SimServer, factory: Factory) -> None:
    first, second = connect(server), connect(server)
    try:
        first.find_element(AppiumBy.ACCESSIBILITY_ID, "add note").click()
        assert len(first.find_elements(AppiumBy.ID, "label")) == 4
        assert len(second.find_elements(AppiumBy.ID, "label")) == 3
        assert len(factory.phones) == 2
    finally:
        first.quit()
        second.quit()


def test_screenshot_decodes_to_configured_size(server: SimServer) -> None:
    drv = connect(server, **{"guistate:screen": {"width": 320, "height": 480}})
    try:
        assert decode(drv.get_screenshot_as_png()).shape == (480, 320, 3)
        assert drv.get_window_size() == {"width": 320, "height": 480}
        assert drv.get_window_rect() == {"x": 0, "y": 0, "width": 320, "height": 480}
    finally:
        drv.quit()


def test_source_parses(driver: webdriver.Remote) -> None:
    tree = parse_page_source(driver.page_source)
    assert [node.text for node in tree.nodes() if node.cls == "android.widget.TextView"] == [
        "Notes",
        "alpha",
        "beta",
        "gamma",
    ]


def test_find_strategies(driver: webdriver.Remote) -> None:
    add = driver.find_element(AppiumBy.ID, f"{PKG}:id/add")
    assert add.text == "Add"
    assert driver.find_element(AppiumBy.ID, "add").id == add.id  # same node, same element id
    assert driver.find_element(AppiumBy.ACCESSIBILITY_ID, "add note").id == add.id
    assert driver.find_element(AppiumBy.XPATH, "//*[@text='Add']").id == add.id
    assert (
        driver.find_element(AppiumBy.XPATH, "/hierarchy/android.widget.FrameLayout/android.widget.Button").id == add.id
    )
    assert len(driver.find_elements(AppiumBy.CLASS_NAME, "android.widget.LinearLayout")) == 3
    selector = 'new UiSelector().className("android.widget.TextView").textStartsWith("g")'
    assert driver.find_element(AppiumBy.ANDROID_UIAUTOMATOR, selector).text == "gamma"
    row = driver.find_element(AppiumBy.XPATH, "//android.widget.LinearLayout[2]")
    assert row.find_element(AppiumBy.ID, "label").text == "beta"
    assert row.find_element(AppiumBy.XPATH, "./*[@resource-id='com.example.notes:id/label']").text == "beta"
    with pytest.raises(InvalidSelectorException, match='Cannot evaluate results for XPath expression "./@text": '):
        row.find_element(AppiumBy.XPATH, "./@text")  # scoped XPath: the same helper, the same wording
    assert [el.text for el in row.find_elements(AppiumBy.CLASS_NAME, "android.widget.TextView")] == ["beta"]
    assert driver.find_elements(AppiumBy.ID, "nothing-here") == []


def test_element_properties(driver: webdriver.Remote) -> None:
    delete = driver.find_element(AppiumBy.ACCESSIBILITY_ID, "delete beta")
    assert delete.rect == {"x": 260, "y": 280, "width": 100, "height": 120}
    assert delete.tag_name == "android.widget.ImageButton"
    assert delete.get_attribute("clickable") == "true"
    assert delete.get_attribute("bounds") == "[260,280][360,400]"
    assert delete.get_attribute("no-such-attribute") is None
    assert delete.is_displayed() and delete.is_enabled() and not delete.is_selected()
    assert decode(delete.screenshot_as_png).shape == (120, 100, 3)


def test_click_changes_source_and_pixels(driver: webdriver.Remote) -> None:
    before_png, before_source = driver.get_screenshot_as_png(), driver.page_source
    driver.find_element(AppiumBy.ACCESSIBILITY_ID, "delete alpha").click()
    after_png, after_source = driver.get_screenshot_as_png(), driver.page_source
    assert 'text="alpha"' in before_source and 'text="alpha"' not in after_source
    changed = np.argwhere(cv2.absdiff(decode(before_png), decode(after_png)).max(axis=2) > 0)
    assert changed.size, "the click changed the tree but not the pixels"
    # every changed pixel lies in the list area (rows start at y=160), none in the title bar
    assert changed[:, 0].min() >= 160
    with pytest.raises(NoSuchElementException):
        driver.find_element(AppiumBy.ACCESSIBILITY_ID, "delete alpha")


def test_w3c_tap_long_press_and_swipe(driver: webdriver.Remote, factory: Factory) -> None:
    chain = touch_chain(driver)
    chain.w3c_actions.pointer_action.move_to_location(300, 40).pointer_down().pause(0.05).release()
    chain.perform()
    assert len(driver.find_elements(AppiumBy.ID, "label")) == 4  # tap on "Add"

    chain = touch_chain(driver)
    label = driver.find_element(AppiumBy.ID, "label")
    chain.w3c_actions.pointer_action.move_to(label).pointer_down().pause(0.8).release()
    chain.perform()
    assert factory.phones[0].log[-1] == {"action": "long_press", "x": 130, "y": 220, "ms": 800}

    chain = touch_chain(driver, duration=300)
    chain.w3c_actions.pointer_action.move_to_location(180, 600).pointer_down()
    chain.w3c_actions.pointer_action.move_to_location(180, 300).move_to_location(180, 200).release()
    chain.perform()
    assert factory.phones[0].log[-1] == {"action": "swipe", "from": [180, 600], "to": [180, 200], "ms": 600}

    driver.swipe(10, 500, 300, 500, 400)  # the client's own helper
    assert factory.phones[0].log[-1] == {"action": "swipe", "from": [10, 500], "to": [300, 500], "ms": 400}


def test_mobile_gestures(driver: webdriver.Remote, factory: Factory) -> None:
    delete = driver.find_element(AppiumBy.ACCESSIBILITY_ID, "delete gamma")
    driver.execute_script("mobile: clickGesture", {"elementId": delete.id})
    assert factory.phones[0].rows == ["alpha", "beta"]
    driver.execute_script("mobile: clickGesture", {"x": 300, "y": 40})
    assert factory.phones[0].rows == ["alpha", "beta", "note2"]
    driver.execute_script("mobile: longClickGesture", {"x": 50, "y": 200, "duration": 700})
    assert factory.phones[0].log[-1] == {"action": "long_press", "x": 50, "y": 200, "ms": 700}
    area = {"left": 0, "top": 160, "width": 360, "height": 400}
    driver.execute_script("mobile: swipeGesture", {**area, "direction": "up", "percent": 0.5, "speed": 1000})
    assert factory.phones[0].log[-1] == {"action": "swipe", "from": [180, 460], "to": [180, 260], "ms": 200}
    moved = driver.execute_script("mobile: scrollGesture", {**area, "direction": "down", "percent": 0.5})
    assert factory.phones[0].log[-1]["to"] == [180, 260]  # scrolling down drags the finger up
    assert moved is False  # the tiny phone does not scroll: nothing changed on screen


def test_typing_and_active_element(driver: webdriver.Remote) -> None:
    field = driver.find_element(AppiumBy.CLASS_NAME, "android.widget.EditText")
    field.click()
    assert driver.switch_to.active_element.id == field.id
    field.send_keys("milk")
    ActionChains(driver).send_keys(" 2").perform()  # W3C key actions type into the focused field
    assert field.text == "milk 2"
    field.clear()
    assert field.text == ""


def test_implicit_wait_polls_until_the_element_appears(
    server: SimServer, driver: webdriver.Remote, factory: Factory
) -> None:
    driver.implicitly_wait(5)
    assert driver.timeouts.implicit_wait == 5
    session = server.store.get(str(driver.session_id))
    phone = factory.phones[0]
    looked = phone.root_calls

    def add_row_later() -> None:
        # only after the find has looked once and missed: the row is found by polling, on any machine
        wait_until(lambda: phone.root_calls > looked, "the find has looked at the tree")
        with session.lock:
            phone.rows.append("late")

    adder = threading.Thread(target=add_row_later)
    adder.start()
    assert driver.find_element(AppiumBy.XPATH, "//*[@text='late']").text == "late"
    adder.join(5)


def test_app_management_both_forms(server: SimServer, driver: webdriver.Remote) -> None:
    assert driver.query_app_state(PKG) == AppState.RUNNING_IN_FOREGROUND  # mobile: queryAppState
    assert driver.terminate_app(PKG) is True
    assert driver.query_app_state(PKG) == AppState.NOT_RUNNING
    driver.activate_app(PKG)
    assert driver.query_app_state("com.not.installed") == AppState.NOT_INSTALLED
    base = f"/session/{driver.session_id}/appium/device"
    assert post(server, f"{base}/terminate_app", {"appId": PKG}) == (200, {"value": True})
    assert post(server, f"{base}/app_state", {"appId": PKG}) == (200, {"value": AppState.NOT_RUNNING})
    assert post(server, f"{base}/activate_app", {"appId": PKG}) == (200, {"value": None})
    assert driver.current_package == PKG


def test_back_and_press_keycode(driver: webdriver.Remote, factory: Factory) -> None:
    driver.back()
    driver.press_keycode(4)
    assert factory.phones[0].log == [{"action": "back"}, {"action": "back"}]


def test_sim_only_endpoints(server: SimServer, driver: webdriver.Remote, factory: Factory) -> None:
    driver.execute_script("mobile: guistateFaults", {"faults": {"refresh_delay": 1.5}})
    assert factory.phones[0].faults == {"refresh_delay": 1.5}
    driver.find_element(AppiumBy.ID, "add").click()
    assert driver.execute_script("mobile: guistateActionLog") == [{"action": "add", "row": "note3"}]
    truth = driver.execute_script("mobile: guistateGroundTruth")
    assert truth["changed"] == [{"left": 0, "top": 0, "right": 1, "bottom": 1}]
    base = f"/session/{driver.session_id}/guistate"
    assert post(server, f"{base}/faults", {"drop_tap_rate": 0.5})[0] == 200
    assert factory.phones[0].faults == {"refresh_delay": 1.5, "drop_tap_rate": 0.5}
    assert get(server, f"{base}/action_log") == (200, {"value": [{"action": "add", "row": "note3"}]})
    assert get(server, f"{base}/ground_truth")[1]["value"]["faults"]["drop_tap_rate"] == 0.5


def test_two_servers_side_by_side(factory: Factory) -> None:
    with SimServer(phone_factory=factory) as one, SimServer(phone_factory=factory) as two:
        assert one.port != two.port
        d1, d2 = connect(one), connect(two)
        d1.find_element(AppiumBy.ID, "add").click()
        assert len(d1.find_elements(AppiumBy.ID, "label")) == 4
        assert len(d2.find_elements(AppiumBy.ID, "label")) == 3
        assert one.session_ids() == [d1.session_id] and two.session_ids() == [d2.session_id]
        port_one = one.port
        one.stop()  # the other server keeps serving its session
        assert len(d2.find_elements(AppiumBy.ID, "label")) == 3
        d2.quit()
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port_one), timeout=1)


def test_stop_is_clean_with_open_connections(factory: Factory) -> None:
    server = SimServer(phone_factory=factory).start()
    port = server.port
    drv = connect(server)  # keeps a pooled keep-alive connection open
    drv.implicitly_wait(30)
    phone = factory.phones[0]
    looked = phone.root_calls
    waiting = threading.Thread(target=_find_missing, args=(drv,))
    waiting.start()
    wait_until(lambda: phone.root_calls >= looked + 2, "the find is polling inside the server")
    server.stop()
    waiting.join(5)
    assert not waiting.is_alive(), "stop() did not end a pending implicit wait"
    assert factory.phones[0].closed
    assert not [t.name for t in threading.enumerate() if t.name.startswith(f"guistate-sim-{port}")]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1)
    server.stop()  # a second stop is harmless


def _find_missing(drv: webdriver.Remote) -> None:
    try:
        drv.find_element(AppiumBy.ID, "never")
    except Exception:  # noqa: BLE001 - the server went away mid-wait: any client error ends the thread, as intended
        return


# --- raw HTTP helpers (shared with test_server_errors.py through this module) -------------------


def request(
    server: SimServer, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    import http.client
    import json

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        assert response.getheader("Content-Type", "").startswith("application/json")
        return response.status, json.loads(data) if data else None
    finally:
        conn.close()


def post(server: SimServer, path: str, body: Any) -> tuple[int, Any]:
    import json

    return request(server, "POST", path, json.dumps(body).encode(), {"Content-Type": "application/json"})


def get(server: SimServer, path: str) -> tuple[int, Any]:
    return request(server, "GET", path)


def test_base64_screenshot_over_raw_http(server: SimServer, driver: webdriver.Remote) -> None:
    status, body = get(server, f"/session/{driver.session_id}/screenshot")
    assert status == 200
    assert decode(base64.b64decode(body["value"])).shape == (640, 360, 3)
    assert get(server, "/status")[1]["value"]["ready"] is True


def test_a_waiting_find_blocks_neither_its_server_nor_other_sessions(server: SimServer, factory: Factory) -> None:
    waiting, other = connect(server), connect(server)
    phone = factory.phones[0]
    try:
        waiting.implicitly_wait(30)  # ended below by quitting its session, never by running out
        looked = phone.root_calls
        thread = threading.Thread(target=_find_missing, args=(waiting,))
        thread.start()
        wait_until(lambda: phone.root_calls >= looked + 2, "the find is polling inside the server")
        assert other.find_element(AppiumBy.ID, "add").text == "Add"
        assert thread.is_alive(), "the other session had to wait for the polling find"
    finally:
        waiting.quit()  # the polling find sees its session closed and ends
        other.quit()
    thread.join(5)
    assert not thread.is_alive(), "quitting the session did not end its polling find"
