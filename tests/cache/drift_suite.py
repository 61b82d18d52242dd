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

__all__ = ["DRIFT_CONFTEST", "DRIFT_TESTS", "FEED", "FEED_RELEASES", "GALLERY", "RELEASE_TESTS", "SETTINGS", "SETTINGS_DRIFTS",
           "SHOP", "TESTS"]

# Releases of Settings (`SETTINGS_RELEASES` in the conftest: its layout, labels, ids, states) and of the Feed
SETTINGS_DRIFTS = ("swapped_switches", "row_above", "label_case", "label_punctuation", "localized", "already_on", "disabled",
                   "confirm_dialog", "duplicate_label", "duplicate_far", "label_to_heading", "renamed_ids", "checkbox",
                   "new_tab")
FEED_RELEASES = ("reordered", "icon_delete", "same_author")
SETTINGS, GALLERY, FEED, SHOP = ("test_turn_on_dark_mode", "test_move_beach_and_mountains", "test_delete_bob",
                                 "test_buy_in_the_cheaper_shop")
DRIFT_TESTS = {"replaced_row": SETTINGS, "lookalike_tiles": GALLERY, "below_the_fold": FEED, "late_redraw": FEED}

DRIFT_CONFTEST = '''
import json
from pathlib import Path

import pytest

from functools import partial

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps import feed, gallery, settings
from pytest_guistate.devices.sim.apps.base import TEXT, TEXT2, WHITE, Style, View
from pytest_guistate.devices.sim.apps.system import alert

TOGGLES = {"wifi": ("Wi-Fi", True), "dark_mode": ("Dark mode", False), "notifications": ("Notifications", True),
           "airplane": ("Airplane mode", False), "kb_dark_mode": ("Dark mode", False), "bluetooth": ("Bluetooth", True),
           "location": ("Location", True), "nfc": ("NFC", False), "hotspot": ("Hotspot", False)}
PLAIN = ["wifi", "dark_mode", "notifications"]
# A Settings release, as its layout: toggle keys and ("heading", text) / ("tabs", {tab: [keys]}) entries.
SETTINGS_RELEASES = {
    "swapped_switches": dict(rows=["dark_mode", "wifi", "notifications"]),
    "row_above": dict(rows=["airplane", "wifi", "dark_mode", "notifications"]),
    "label_case": dict(labels={"dark_mode": "DARK MODE"}),
    "label_punctuation": dict(labels={"dark_mode": "  Dark-mode:  "}),
    "localized": dict(labels={"wifi": "WLAN", "dark_mode": "Dunkelmodus", "notifications": "Mitteilungen"}),
    "already_on": dict(on={"dark_mode": True}),
    "disabled": dict(disabled={"dark_mode"}),
    "confirm_dialog": dict(confirm={"dark_mode"}),
    "duplicate_label": dict(rows=[("heading", "Keyboard"), "kb_dark_mode", ("heading", "Display"), *PLAIN]),
    "duplicate_far": dict(rows=[("heading", "Keyboard"), "kb_dark_mode", ("heading", "Display"), "wifi", "bluetooth",
                                "location", "nfc", "hotspot", "notifications", "dark_mode"]),
    "label_to_heading": dict(headings=True, rows=["airplane", *PLAIN]),
    "renamed_ids": dict(ids={"switch_widget": "toggle", "row": "pref_row", "title": "pref_title"}),
    "checkbox": dict(control="android.widget.CheckBox"),
    "new_tab": dict(tabs={"General": ["wifi", "notifications"], "Display": ["dark_mode"]}),
}


def _settings_release(rows=PLAIN, labels=None, on=None, disabled=(), confirm=(), headings=False, ids=None,
                      control="android.widget.Switch", tabs=None):
    """The Settings screen of another release: the same toggles, laid out, named and behaving otherwise."""
    labels, ids = labels or {}, ids or {}

    def rid(name):
        return "android:id/" + ids.get(name, name)

    def build(self, area):
        px, top = self.m.px, area.top
        views = [self.label_view("settings/account", Box(px(48), top + px(40), px(1032), top + px(120)),
                                 f"Signed in as {self.user}", size=40, color=TEXT2, rid=f"{self.package}:id/account")]
        y = top + px(160)
        shown = rows
        if tabs:
            tab = getattr(self, "tab", next(iter(tabs)))
            for n, name in enumerate(tabs):
                views.append(View(f"settings/tab/{name}", "android.widget.TextView",
                                  Box(px(48 + 300 * n), y, px(48 + 300 * n + 280), y + px(100)), text=name,
                                  rid=f"{self.package}:id/tab", selected=name == tab,
                                  on_tap=partial(setattr, self, "tab", name),
                                  style=Style(kind="text", fg=TEXT, size=px(44), bold=name == tab)))
            y += px(140)
            shown = tabs[tab]
        for entry in shown:
            if isinstance(entry, tuple):
                views.append(self.label_view(f"settings/heading/{entry[1]}", Box(px(48), y + px(20), px(1032),
                                             y + px(90)), entry[1], size=38, color=self.primary, bold=True,
                                             rid=f"{self.package}:id/section"))
                y += px(100)
                continue
            key, label = entry, labels.get(entry, TOGGLES[entry][0])
            state, enabled = self.toggles[key], key not in disabled
            tap = partial(self._toggle, key) if enabled else None
            if headings:  # the label is a heading above its row, not inside it
                views.append(self.label_view(f"settings/heading/{key}", Box(px(48), y + px(10), px(1032),
                                             y + px(80)), label, size=46, color=TEXT, rid=rid("title")))
                y += px(80)
            row = View(f"settings/row/{key}", "android.widget.LinearLayout", Box(0, y, self.m.width, y + px(180)),
                       rid=f"{self.package}:id/" + ids.get("row", "row"), on_tap=tap, style=Style(kind="row", bg=WHITE))
            if not headings:
                row.add(self.label_view(f"settings/row/{key}/title", Box(px(48), y + px(30), px(800), y + px(96)),
                                        label, size=46, color=TEXT, rid=rid("title")))
            row.add(self.label_view(f"settings/row/{key}/summary", Box(px(48), y + px(100), px(800), y + px(156)),
                                    "On" if state else "Off", size=36, color=TEXT2, rid=rid("summary")),
                    View(f"settings/switch/{key}", control, Box(px(872), y + px(58), px(1032), y + px(122)),
                         text="ON" if state else "OFF", rid=rid("switch_widget"), on_tap=tap, clickable=enabled,
                         checkable=True, checked=state, enabled=enabled,
                         style=Style(kind="checkbox" if "CheckBox" in control else "switch", bg=self.primary)))
            views.append(row)
            y += px(180)
        logout = original_settings(self, area)[-1]  # the old release's "Log out", below the rows shown now
        logout.box = Box(0, y + px(40), self.m.width, y + px(200))
        return [*views, logout]

    original_toggle, original_settings = settings.SettingsApp._toggle, settings.SettingsApp._settings

    def toggle(self, key):
        if key in confirm and getattr(self, "asking", None) is None:
            self.asking = key  # a release that asks first
            return
        original_toggle(self, key)

    def answer(self, yes):
        key, self.asking = self.asking, None
        if yes:
            original_toggle(self, key)

    def dialog(self):
        key = getattr(self, "asking", None)
        if key is None:
            return None
        return alert(self.m, "settings/confirm", self.package, f"Turn on {TOGGLES[key][0]}?",
                     "Apps will restart to apply it.", [("settings/confirm/cancel", "android:id/button2", "Cancel",
                                                         partial(answer, self, False)),
                                                        ("settings/confirm/ok", "android:id/button1", "Turn on",
                                                         partial(answer, self, True))], self.primary)

    defaults = [(key, label, (on or {}).get(key, default)) for key, (label, default) in TOGGLES.items()]
    return build, toggle, dialog, defaults


def pytest_addoption(parser):
    parser.addoption("--drift", default="", help="how this release of the app differs")


@pytest.fixture(autouse=True)
def app_drift(request, monkeypatch):
    callspec = getattr(request.node, "callspec", None)  # a test parametrized by `release` runs each drift
    drift = callspec.params.get("release", "") if callspec is not None else request.config.getoption("--drift")
    if drift == "replaced_row":
        monkeypatch.setattr(settings, "_TOGGLES", [("wifi", "Wi-Fi", True), ("battery_saver", "Battery saver", False),
                                                   ("notifications", "Notifications", True)])
    elif drift == "lookalike_tiles":
        monkeypatch.setattr(gallery, "_PHOTOS", [p for p in gallery._PHOTOS if p[0] != "Beach"])
    elif drift in SETTINGS_RELEASES:
        build, toggle, dialog, defaults = _settings_release(**SETTINGS_RELEASES[drift])
        monkeypatch.setattr(settings, "_TOGGLES", defaults)
        monkeypatch.setattr(settings.SettingsApp, "_settings", build)
        monkeypatch.setattr(settings.SettingsApp, "_toggle", toggle)
        monkeypatch.setattr(settings.SettingsApp, "dialog", dialog)
    elif drift == "reordered":  # the newest post first: the list's order reversed
        original = feed.FeedApp.__init__

        def reversed_feed(self, ctx):
            original(self, ctx)
            self.backend.reverse()
            self.shown = list(self.backend)

        monkeypatch.setattr(feed.FeedApp, "__init__", reversed_feed)
    elif drift == "same_author":  # Bob posts again, above his old post: the cached neighbours say which one
        original = feed.FeedApp.__init__

        def twice(self, ctx):
            original(self, ctx)
            self.backend.insert(0, feed.Post("b2", "Bob", "Second post: the ramen place is closed today.",
                                             (171, 71, 188)))
            self.shown = list(self.backend)

        monkeypatch.setattr(feed.FeedApp, "__init__", twice)
    elif drift == "icon_delete":  # each row's Delete is an icon button: its accessibility label only
        row = feed.FeedApp._row

        def icon_row(self, position, post, box):
            built = row(self, position, post, box)
            for child in built.children:
                if child.key.endswith("/delete"):
                    child.cls, child.text, child.rid = "android.widget.ImageButton", "", f"{self.package}:id/trash"
                    child.style = Style(kind="image", bg=(211, 47, 47), fg=WHITE, glyph="X")
            return built

        monkeypatch.setattr(feed.FeedApp, "_row", icon_row)
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

# Every Settings release and Feed drift in one inner session (`release` = the drift; "none" records):
# each parametrized test replays its own copy of the cache the "none" run recorded.
RELEASE_TESTS = '''
import pytest

from pytest_guistate import gone


@pytest.mark.parametrize("release", {settings})
@pytest.mark.guistate(app="com.guistate.settings")
def test_dark_mode(device, guistate, release):
    device.type("qa@example.com", id="username")
    device.type(guistate.secret("correct-horse"), id="password")
    device.tap(id="login")
    result = guistate.run("Turn on Dark mode", max_steps=8)
    assert result.success, result.summary


@pytest.mark.parametrize("release", {feed})
@pytest.mark.guistate(app="com.guistate.feed")
def test_bob(device, guistate, release):
    guistate.goal("Delete the post by Bob", plan=[("Bob's post gone", gone("Bob"))])
    result = guistate.run("Delete the post by Bob", max_steps=12)
    assert result.success, result.summary
'''.format(settings=["none", *SETTINGS_DRIFTS], feed=["none", *FEED_RELEASES])
