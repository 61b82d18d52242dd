"""`Device` (devices/device.py): the README's device API is all there, and each part (observing,
locating, inputs, apps) works on one session against the sim."""

from __future__ import annotations

from appium import webdriver
from appium.options.common import AppiumOptions

from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim import SimServer

# `device.…` as README.md ("Writing tests") lists it, plus what the plugin and the core call.
API = ["tap", "type", "swipe", "back", "home", "pull_to_refresh", "activate_app", "open_url", "find", "exists",
       "screenshot", "ui_tree", "observe", "long_press", "clear", "terminate_app", "mobile", "set_faults",
       "action_log", "ground_truth", "close", "box_of", "page_source", "size", "scale", "platform", "is_web"]


def test_readme_api_works_on_the_sim() -> None:
    missing = [name for name in API if not hasattr(Device, name)]
    assert not missing, missing
    with SimServer() as server:
        caps = {"platformName": "Android", "appium:automationName": "UiAutomator2",
                "appium:appPackage": "com.guistate.feed", "guistate:clock": "frozen"}
        device = Device(webdriver.Remote(server.url, options=AppiumOptions().load_capabilities(caps)),
                        url=server.url, is_sim=True)
        try:
            observation = device.observe()  # observing
            assert observation.frame.size == device.size
            assert observation.package == "com.guistate.feed"
            assert device.exists(desc="Delete post by Carol")  # locating
            before = device.action_count
            device.tap(desc="Delete post by Carol")  # inputs: counted
            assert device.action_count == before + 1
            assert device.exists("Delete post by Carol?")
            assert any(entry for entry in device.action_log())  # apps: the sim's own commands
        finally:
            device.close()
