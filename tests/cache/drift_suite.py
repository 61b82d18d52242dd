"""An inner suite whose apps drift the way a user's app does: monkeypatched from its own conftest
(`--drift=NAME`), not by the package's `guistate:appVersion` drifts. Shared by the drift tests
(`test_cache_drifts.py`) and `benchmarks/cache_bench.py`.

Drifts (`--drift`):

* `replaced_row`: Settings' "Dark mode" row becomes a "Battery saver" switch in the same place;
* `lookalike_tiles`: the Gallery's Beach photo is gone (every tile shares the id `photo`);
* `below_the_fold`: ten posts come before Bob's in the Feed, so his post is below the first screen;
* `late_redraw`: the Feed redraws 1.5 s after a delete (`device.set_faults(refresh_delay=1.5)`).

A price drift needs no conftest: `guistate:seed` (`--guistate-caps`) sets which shop is cheaper, and
the Shop test asserts the purchase in the shop its seed makes cheaper. Every inner test writes the
phone's ground truth (`device.action_log()`) to `logs/<test>.json`."""

from __future__ import annotations

__all__ = ["DRIFT_CONFTEST", "DRIFT_TESTS", "FEED", "GALLERY", "SETTINGS", "SHOP", "TESTS"]

SETTINGS, GALLERY, FEED, SHOP = ("test_turn_on_dark_mode", "test_move_beach_and_mountains", "test_delete_bob",
                                 "test_buy_in_the_cheaper_shop")
DRIFT_TESTS = {"replaced_row": SETTINGS, "lookalike_tiles": GALLERY, "below_the_fold": FEED, "late_redraw": FEED}

DRIFT_CONFTEST = '''
import json
from pathlib import Path

import pytest

from pytest_guistate.devices.sim.apps import feed, gallery, settings


def pytest_addoption(parser):
    parser.addoption("--drift", default="", help="how this release of the app differs")


@pytest.fixture(autouse=True)
def app_drift(request, monkeypatch):
    drift = request.config.getoption("--drift")
    if drift == "replaced_row":
        monkeypatch.setattr(settings, "_TOGGLES", [("wifi", "Wi-Fi", True), ("battery_saver", "Battery saver", False),
                                                   ("notifications", "Notifications", True)])
    elif drift == "lookalike_tiles":
        monkeypatch.setattr(gallery, "_PHOTOS", [p for p in gallery._PHOTOS if p[0] != "Beach"])
    elif drift == "below_the_fold":
        original = feed.FeedApp.__init__

        def pushed(self, ctx):
            original(self, ctx)
            self.backend[1:1] = [feed.Post(f"n{i}", "Team", f"Announcement {i} of the new season.", (0, 137, 123))
                                 for i in range(10)]
            self.shown = list(self.backend)

        monkeypatch.setattr(feed.FeedApp, "__init__", pushed)
    return drift


@pytest.fixture(autouse=True)
def ground_truth(request, app_drift, device):
    if app_drift == "late_redraw":
        device.set_faults(refresh_delay=1.5)
    yield
    Path("logs").mkdir(exist_ok=True)
    Path("logs", request.node.name + ".json").write_text(json.dumps(device.action_log()))
'''

TESTS = '''
import pytest

from pytest_guistate import gone
from pytest_guistate.devices.sim.apps.shop import shop_prices


@pytest.mark.guistate(app="com.guistate.settings")
def test_turn_on_dark_mode(device, guistate):
    device.type("qa@example.com", id="username")
    device.type(guistate.secret("correct-horse"), id="password")
    device.tap(id="login")
    result = guistate.run("Turn on Dark mode", max_steps=8)
    assert result.success, result.summary


@pytest.mark.guistate(app="com.guistate.gallery")
def test_move_beach_and_mountains(device, guistate):
    result = guistate.run("Move Beach and Mountains to the Travel album", max_steps=12)
    assert result.success, result.summary


@pytest.mark.guistate(app="com.guistate.feed")
def test_delete_bob(device, guistate):
    guistate.goal("Delete the post by Bob", plan=[("Bob's post gone", gone("Bob"))])
    result = guistate.run("Delete the post by Bob", max_steps=12)
    assert result.success, result.summary


@pytest.mark.guistate(app="com.guistate.shopa")
def test_buy_in_the_cheaper_shop(device, guistate):
    result = guistate.run("Compare the price of Phone Case in ShopA and ShopB and buy it in the cheaper shop",
                          max_steps=25)
    assert result.success, result.summary
    a, b = shop_prices(device.driver.capabilities.get("guistate:seed", 0))["Phone Case"]
    bought = [(e["shop"], e["product"]) for e in device.action_log() if e["action"] == "add_to_cart"]
    assert bought == [("ShopA" if a < b else "ShopB", "Phone Case")]
'''
