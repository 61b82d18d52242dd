"""Every refusal of the sim's WebDriver server: W3C body, HTTP status, and the client's exception."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from appium import webdriver
from appium.options.android import UiAutomator2Options
from appium.webdriver.common.appiumby import AppiumBy
from selenium.common.exceptions import (
    InvalidArgumentException,
    InvalidElementStateException,
    InvalidSelectorException,
    InvalidSessionIdException,
    MoveTargetOutOfBoundsException,
    NoSuchElementException,
    SessionNotCreatedException,
    StaleElementReferenceException,
    UnknownMethodException,
    WebDriverException,
)

from pytest_guistate.devices.sim import SimServer
from tests.devices.sim.sim_server_helpers import TinyPhone
from tests.devices.sim.test_server import get, post, request


class ExplodingPhone(TinyPhone):
    def back(self) -> None:
        raise RuntimeError("the phone's back stack is corrupt")


@pytest.fixture
def server() -> Iterator[SimServer]:
    with SimServer(phone_factory=ExplodingPhone.from_capabilities) as srv:
        yield srv


@pytest.fixture
def driver(server: SimServer) -> Iterator[webdriver.Remote]:
    drv = webdriver.Remote(server.url, options=UiAutomator2Options())
    yield drv
    drv.quit()


def w3c(response: tuple[int, Any], status: int, error: str) -> str:
    got_status, body = response
    assert (got_status, body["value"]["error"]) == (status, error), body
    assert set(body["value"]) == {"error", "message", "stacktrace"}
    return str(body["value"]["message"])


def test_client_exceptions(driver: webdriver.Remote) -> None:
    with pytest.raises(NoSuchElementException, match="no element found with id='missing'"):
        driver.find_element(AppiumBy.ID, "missing")
    with pytest.raises(InvalidSelectorException):
        driver.find_element(AppiumBy.XPATH, "//*[")
    with pytest.raises(InvalidSelectorException):
        driver.find_element("css selector", "div")
    with pytest.raises(InvalidArgumentException, match="'x' must be a finite number"):
        driver.execute_script("mobile: clickGesture", {"x": "left", "y": 3})
    with pytest.raises(MoveTargetOutOfBoundsException):
        driver.execute_script("mobile: clickGesture", {"x": 5000, "y": 3})
    with pytest.raises(InvalidElementStateException, match="not editable"):
        driver.find_element(AppiumBy.ID, "title").send_keys("x")
    with pytest.raises(UnknownMethodException, match="unknown mobile command 'teleport'"):
        driver.execute_script("mobile: teleport", {})
    with pytest.raises(UnknownMethodException, match="NATIVE_APP"):
        driver.execute_script("return document.title")
    with pytest.raises(UnknownMethodException, match="adb"):
        driver.execute_script("mobile: shell", {"command": "ls"})
    with pytest.raises(WebDriverException, match="RuntimeError: the phone's back stack is corrupt"):
        driver.back()
    assert driver.find_element(AppiumBy.ID, "title").text == "Notes"  # the server survived it


def test_stale_element_and_invalid_session(server: SimServer) -> None:
    drv = webdriver.Remote(server.url, options=UiAutomator2Options())
    label = drv.find_element(AppiumBy.XPATH, "//*[@text='alpha']")
    drv.find_element(AppiumBy.ACCESSIBILITY_ID, "delete alpha").click()
    with pytest.raises(StaleElementReferenceException, match="no longer on the screen"):
        label.click()
    session_id = drv.session_id
    drv.quit()
    drv.session_id = session_id  # keep using the quit session, as a buggy test would
    with pytest.raises(InvalidSessionIdException):
        drv.find_element(AppiumBy.ID, "title")


def test_unknown_command_through_the_client(driver: webdriver.Remote) -> None:
    driver.command_executor.add_command("teleport", "POST", "/session/$sessionId/teleport")
    with pytest.raises(WebDriverException, match="no command at POST /session/.*/teleport"):
        driver.execute("teleport", {})


def test_session_not_created(server: SimServer) -> None:
    options = UiAutomator2Options()
    options.set_capability("guistate:screen", {"width": 10, "height": 10})
    with pytest.raises(SessionNotCreatedException, match="refused the capabilities"):
        webdriver.Remote(server.url, options=options)
    body = {"capabilities": {"alwaysMatch": {"platformName": "Windows"}}}
    assert "Android/UiAutomator2 or iOS/XCUITest" in w3c(post(server, "/session", body), 500, "session not created")
    contradiction = {"capabilities": {"alwaysMatch": {"platformName": "iOS", "appium:automationName": "UiAutomator2"}}}
    assert "platformName='iOS'" in w3c(post(server, "/session", contradiction), 500, "session not created")
    clash = {"capabilities": {"alwaysMatch": {"a": 1}, "firstMatch": [{"a": 2}]}}
    assert "repeats" in w3c(post(server, "/session", clash), 400, "invalid argument")
    assert server.session_ids() == []


def test_raw_http_errors(server: SimServer, driver: webdriver.Remote) -> None:
    sid = driver.session_id
    json_headers = {"Content-Type": "application/json"}
    assert "malformed JSON" in w3c(
        request(server, "POST", "/session", b"{not json", json_headers), 400, "invalid argument"
    )
    assert "JSON object" in w3c(
        request(server, "POST", f"/session/{sid}/element", b"[1, 2]", json_headers), 400, "invalid argument"
    )
    assert "malformed JSON" in w3c(
        request(server, "POST", "/session", b"\xff\xfe", json_headers), 400, "invalid argument"
    )
    assert "missing required field 'using'" in w3c(
        post(server, f"/session/{sid}/element", {"value": "x"}), 400, "invalid argument"
    )
    assert "must be a string" in w3c(
        post(server, f"/session/{sid}/element", {"using": 3, "value": "x"}), 400, "invalid argument"
    )
    assert "implicit" in w3c(post(server, f"/session/{sid}/timeouts", {"implicit": -1}), 400, "invalid argument")
    w3c(post(server, f"/session/{sid}/actions", {"actions": "tap"}), 400, "invalid argument")
    for x in (10**400, float("inf"), True):
        move = {"type": "pointerMove", "x": x, "y": 5}
        chain = {"actions": [{"type": "pointer", "id": "f", "actions": [move]}]}
        w3c(post(server, f"/session/{sid}/actions", chain), 400, "invalid argument")
        w3c(
            post(
                server, f"/session/{sid}/execute/sync", {"script": "mobile: clickGesture", "args": [{"x": x, "y": 5}]}
            ),
            400,
            "invalid argument",
        )
    unbalanced = [{"type": "pointerMove", "x": 5, "y": 5}, {"type": "pointerDown", "button": 0}]
    assert "missing pointerUp" in w3c(
        post(server, f"/session/{sid}/actions", {"actions": [{"type": "pointer", "id": "f", "actions": unbalanced}]}),
        400,
        "invalid argument",
    )
    w3c(get(server, "/session/nope/screenshot"), 404, "invalid session id")
    w3c(request(server, "DELETE", "/session/nope"), 404, "invalid session id")
    w3c(get(server, f"/session/{sid}/element/deadbeef/text"), 404, "no such element")
    w3c(get(server, "/no/such/route"), 404, "unknown command")
    assert "use POST" in w3c(get(server, f"/session/{sid}/element"), 405, "unknown method")
    w3c(request(server, "PUT", "/status", b"{}"), 405, "unknown method")
    w3c(post(server, f"/session/{sid}/context", {"name": "WEBVIEW_1"}), 404, "no such context")
    assert post(server, f"/session/{sid}/guistate/faults", {"faults": ["x"]})[0] == 400


def test_oversize_and_broken_bodies_close_the_connection(server: SimServer) -> None:
    big = b"{" + b" " * (server.max_body_bytes + 1) + b"}"
    w3c(request(server, "POST", "/session", big, {"Content-Type": "application/json"}), 413, "payload too large")
    w3c(request(server, "POST", "/session", b"{}", {"Content-Length": "abc"}), 400, "invalid argument")
    raw = raw_exchange(server, b"POST /session HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 411") and b'"invalid argument"' in raw
    raw = raw_exchange(server, b"GARBAGE\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 400") and b'"invalid argument"' in raw and b"<html" not in raw.lower()
    raw = raw_exchange(server, b"POST /session HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{}")
    assert raw.startswith(b"HTTP/1.1 400") and b"ended after 2 of 50 bytes" in raw
    assert get(server, "/status")[0] == 200  # the server is still healthy


def raw_exchange(server: SimServer, payload: bytes) -> bytes:
    """Send raw bytes, half-close, and read everything until the server closes."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_error_log_is_kept_in_memory(server: SimServer) -> None:
    get(server, "/no/such/route")
    last = server.request_log()[-1]
    assert (last.method, last.path, last.status, last.error) == ("GET", "/no/such/route", 404, "unknown command")


def test_multi_touch_is_refused(driver: webdriver.Remote) -> None:
    with pytest.raises(UnknownMethodException, match="multi-touch"):
        driver.tap([(10, 200), (100, 200)])


def test_keep_alive_survives_errors(server: SimServer) -> None:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        for body in (b"{oops", json.dumps({"capabilities": {"alwaysMatch": {}}}).encode()):
            conn.request("POST", "/session", body=body, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
        assert response.status == 200  # same connection: the bad request left no residue
    finally:
        conn.close()


def test_session_limit() -> None:
    with SimServer(phone_factory=TinyPhone.from_capabilities, max_sessions=1) as srv:
        first = webdriver.Remote(srv.url, options=UiAutomator2Options())
        with pytest.raises(SessionNotCreatedException, match="too many open sessions"):
            webdriver.Remote(srv.url, options=UiAutomator2Options())
        first.quit()
        webdriver.Remote(srv.url, options=UiAutomator2Options()).quit()
