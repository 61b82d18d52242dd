"""`Device` is assembled from typed mixins (devices/observing, locating, inputs, apps) over the
`Protocol`s of devices/protocols.py: no protocol's empty body may stand in for an implementation,
and the README's device API is all there, on one session against the sim."""

from __future__ import annotations

import inspect
from typing import Protocol

from appium import webdriver
from appium.options.common import AppiumOptions

from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim import SimServer

# `device.…` as README.md ("Writing tests") lists it, plus what the plugin and the core call.
API = ["tap", "type", "swipe", "back", "home", "pull_to_refresh", "activate_app", "open_url", "find", "exists",
       "screenshot", "ui_tree", "observe", "long_press", "clear", "terminate_app", "mobile", "set_faults",
       "action_log", "ground_truth", "close", "box_of", "page_source", "size", "scale", "platform", "is_web"]


def _owner(name: str) -> type:
    return next(klass for klass in Device.__mro__ if name in vars(klass))


def test_every_member_resolves_to_an_implementation_not_a_protocol_stub() -> None:
    protocols = [klass for klass in Device.__mro__ if Protocol in klass.__bases__]
    assert protocols, "the mixins are typed against protocols"
    stubs = {name for klass in protocols for name, value in vars(klass).items()
             if not name.startswith("__") and (callable(value) or isinstance(value, property))}
    shadowed = {name: _owner(name).__name__ for name in stubs if _owner(name) in protocols}
    assert not shadowed, f"protocol stubs resolve before an implementation: {shadowed}"
    assert not inspect.isabstract(Device)


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
