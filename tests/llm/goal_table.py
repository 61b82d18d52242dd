"""Issue 28's goal table: goals people write for the sim's apps, on both personas, each with what the
device's own action log (`device.action_log()`, the ground truth the policy never sees) must show.

Shared by tests/llm/test_policy_goals.py (a test each) and benchmarks/policy_bench.py (a row each);
`PARAPHRASES` (issue 32) by tests/llm/test_policy_paraphrases.py.
Each case runs `actor.run` through the real Appium client against the sim over HTTP and the real
`anthropic` SDK against the reference server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from appium import webdriver
from appium.options.common import AppiumOptions

from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim.apps.shop import shop_prices
from pytest_guistate.llm.actor import RunResult, run
from pytest_guistate.llm.client import LLMClient, LLMSettings, Mode, make_client

Log = list[dict[str, Any]]
FEED, GALLERY, SETTINGS = "com.guistate.feed", "com.guistate.gallery", "com.guistate.settings"
SHOPA, SHOPB = "com.guistate.shopa", "com.guistate.shopb"
USER, PASSWORD = "qa@example.com", "correct-horse"
# the things a goal may change: any entry of these kinds not asked for is a wrong action
EFFECTS = ("type", "login", "logout", "toggle", "delete_post", "add_to_cart", "checkout", "move_to_album", "notify_me",
           "select_photo", "open_dialog", "dismiss_dialog", "search")


def entries(log: Log, action: str) -> Log:
    return [e for e in log if e.get("action") == action]


def effects(log: Log) -> list[tuple[str, ...]]:
    """The log's effects in order, short: ('toggle', 'dark_mode', 'True'), ('delete_post', 'Carol') ..."""
    keys = {"type": ("target", "text"), "login": ("success",), "toggle": ("setting", "value"), "delete_post": ("author",),
            "add_to_cart": ("shop", "product"), "checkout": ("shop", "items"), "move_to_album": ("album", "labels"),
            "select_photo": ("label", "selected"), "open_dialog": ("dialog", "author"), "dismiss_dialog": ("dialog",),
            "search": ("shop", "query"), "notify_me": ("product",)}
    return [(e["action"], *(str(e.get(k)) for k in keys.get(e["action"], ()))) for e in log
            if e.get("action") in EFFECTS]


@dataclass(frozen=True)
class GoalCase:
    """One goal: where it starts, what it must do (`effects`, exactly and in order) and how it ends."""

    id: str
    platform: str  # android (UiAutomator2 persona) | ios (XCUITest persona)
    app: str | None  # the app in front at the start; None = the home screen
    goal: str
    effects: Callable[[Log], list[tuple[str, ...]]] | list[tuple[str, ...]]
    success: bool = True
    reason: str = ""  # for a give-up: a fragment the summary must hold
    sim: dict[str, Any] = field(default_factory=dict)  # extra capabilities (faults, appVersion)
    max_steps: int = 20
    swipes: bool = False  # the goal needs scrolling: at least one swipe in the log

    def expected(self, log: Log) -> list[tuple[str, ...]]:
        return self.effects(log) if callable(self.effects) else list(self.effects)


def _cheaper(item: str) -> tuple[str, float]:
    a, b = shop_prices(1)[item]  # ground truth for the assertion only; the policy reads prices on screen
    return ("ShopA", a) if a < b else ("ShopB", b)


def _compare_buy(item: str) -> Callable[[Log], list[tuple[str, ...]]]:
    def expected(log: Log) -> list[tuple[str, ...]]:
        shop, _ = _cheaper(item)
        return [*searched("ShopA", item), *searched("ShopB", item), ("add_to_cart", shop, item),
                ("checkout", shop, str([item]))]
    return expected


SIGNED_IN = ("login", "True")
TYPED_USER, TYPED_PASSWORD = ("type", "settings/username", USER), ("type", "settings/password", "None")  # never logged


def searched(shop: str, item: str) -> list[tuple[str, ...]]:
    return [("type", "shop/search", item), ("search", shop, item)]

CASES: list[GoalCase] = [
    # Settings: sign in in any phrasing, then switches (the log shows the switch really changed, once)
    GoalCase("signin-email", "android", SETTINGS,
             "Sign in with the e-mail qa@example.com and the password correct-horse", [TYPED_USER, TYPED_PASSWORD, SIGNED_IN]),
    GoalCase("signin-any-order", "ios", SETTINGS, "Log in with password correct-horse as qa@example.com",
             [TYPED_USER, TYPED_PASSWORD, SIGNED_IN]),
    GoalCase("signin-then-dark-mode", "android", SETTINGS,
             "Sign in as qa@example.com with password correct-horse, then turn on dark mode",
             [TYPED_USER, TYPED_PASSWORD, SIGNED_IN, ("toggle", "dark_mode", "True")]),
    GoalCase("signin-and-wifi-off", "ios", None,
             "Log in to Settings as qa@example.com with the password correct-horse and turn off Wi-Fi",
             [TYPED_USER, TYPED_PASSWORD, SIGNED_IN, ("toggle", "wifi", "False")]),
    GoalCase("already-on-is-not-toggled", "android", SETTINGS,
             "Sign in as qa@example.com with password correct-horse, then make sure Notifications is on",
             [TYPED_USER, TYPED_PASSWORD, SIGNED_IN]),
    GoalCase("switch-behind-sign-in", "ios", SETTINGS, "Turn on dark mode", [], success=False,
             reason="sign-in form"),
    # Feed: delete exactly one post (stale list: refresh, never a second delete), cancel a dialog, scroll
    GoalCase("delete-by-author", "android", FEED, "Delete the post by Bob",
             [("open_dialog", "confirm_delete", "Bob"), ("delete_post", "Bob")]),
    GoalCase("delete-stale-list", "ios", FEED, "Delete Carol's post",
             [("open_dialog", "confirm_delete", "Carol"), ("delete_post", "Carol")], sim={"refresh_delay": 1.5}),
    GoalCase("dialog-cancel-keeps", "android", FEED,
             "Open the delete dialog of Dave's post and cancel it, keeping the post",
             [("open_dialog", "confirm_delete", "Dave"), ("dismiss_dialog", "confirm_delete")]),
    GoalCase("dialog-cancel-keeps-ios", "ios", FEED, "Open the delete dialog of Erin's post, then cancel it",
             [("open_dialog", "confirm_delete", "Erin"), ("dismiss_dialog", "confirm_delete")]),
    GoalCase("scroll-to-find", "android", FEED, "Scroll to find the post by Judy", [], swipes=True),
    GoalCase("scroll-and-delete", "ios", FEED, "Delete the post by Judy",
             [("open_dialog", "confirm_delete", "Judy"), ("delete_post", "Judy")], swipes=True),
    GoalCase("renamed-button-v2", "ios", FEED, "Delete the post by Bob",
             [("open_dialog", "confirm_delete", "Bob"), ("delete_post", "Bob")], sim={"appVersion": 2}),
    GoalCase("pinned-post-v2", "android", FEED, "Delete the post by Alice", [], success=False,
             reason="Alice", sim={"appVersion": 2}),
    # Shops: search and open, add to cart, check out; never a purchase that was not asked for
    GoalCase("add-to-cart", "android", SHOPA, "Add a Phone Case to the cart",
             [*searched("ShopA", "Phone Case"), ("add_to_cart", "ShopA", "Phone Case")]),
    GoalCase("search-and-open", "ios", SHOPB, "Search for Smart Watch and open it",
             [*searched("ShopB", "Smart Watch")]),
    GoalCase("buy-from-home", "android", None, "Buy a Power Bank in ShopB",
             [*searched("ShopB", "Power Bank"), ("add_to_cart", "ShopB", "Power Bank"),
              ("checkout", "ShopB", "['Power Bank']")]),
    GoalCase("add-and-check-out", "ios", SHOPA, "Add a USB-C Cable to the cart and check out",
             [*searched("ShopA", "USB-C Cable"), ("add_to_cart", "ShopA", "USB-C Cable"),
              ("checkout", "ShopA", "['USB-C Cable']")]),
    GoalCase("restyled-shop-v2", "android", SHOPB, "Add a Phone Case to the cart and check out",
             [*searched("ShopB", "Phone Case"), ("add_to_cart", "ShopB", "Phone Case"),
              ("checkout", "ShopB", "['Phone Case']")], sim={"appVersion": 2}),
    GoalCase("empty-cart-checkout", "android", SHOPA, "Check out", [], success=False, reason="cart is empty"),
    GoalCase("sold-out-v2", "ios", SHOPA, "Add a Smart Watch to the cart", [*searched("ShopA", "Smart Watch")],
             success=False, reason="Notify me", sim={"appVersion": 2}),
    GoalCase("type-into-field", "android", SHOPB, "Type 'Laptop' into the search field",
             [("type", "shop/search", "Laptop")]),
    GoalCase("fill-named-field", "android", SETTINGS, "Fill the Email field with qa@example.com", [TYPED_USER]),
    # Gallery: select exactly the photos named, move them to the album named
    GoalCase("move-two-photos", "android", GALLERY, "Move Beach and Sunset to the Travel album",
             [("select_photo", "Beach", "True"), ("select_photo", "Sunset", "True"),
              ("open_dialog", "album_picker", "None"), ("move_to_album", "Travel", "['Beach', 'Sunset']")]),
    GoalCase("move-one-photo", "ios", GALLERY, "Move the Dog photo to the Pets album",
             [("select_photo", "Dog", "True"), ("open_dialog", "album_picker", "None"),
              ("move_to_album", "Pets", "['Dog']")]),
    # Across apps: go home / switch apps; compare values and act on the result
    GoalCase("home-then-search-other-app", "android", SHOPA, "Go home, then open ShopB and search for Laptop Stand",
             [*searched("ShopB", "Laptop Stand")]),
    GoalCase("home-and-open", "ios", FEED, "Go home and open Gallery", []),
    GoalCase("compare-and-buy-cheaper", "android", SHOPA,
             "Compare the price of Phone Case in ShopA and ShopB and buy it in the cheaper shop",
             _compare_buy("Phone Case"), max_steps=25),
    GoalCase("compare-only", "ios", None, "Compare the price of USB-C Cable in ShopA and ShopB",
             [*searched("ShopA", "USB-C Cable"), *searched("ShopB", "USB-C Cable")]),
    # Outside the grammar: refused with the reason, nothing done
    GoalCase("outside-grammar", "android", FEED, "Book a flight to Paris", [], success=False, reason="cannot read"),
    GoalCase("partly-outside-grammar", "ios", SETTINGS, "Turn on dark mode and order a pizza", [], success=False,
             reason="'order a pizza'"),
]

# Issue 32, item 7: everyday phrasings of the same intents (credentials in brackets, with a slash or a colon;
# "remove X's post from the feed"; "switch X off"; "make sure ..."; politeness), and goals that must be refused
# before any action because reading them would be a guess (a bare "the post", an article read as an author).
SIGNED = [TYPED_USER, TYPED_PASSWORD, SIGNED_IN]
DARK_ON, WIFI_OFF, NOTIFICATIONS_OFF = ("toggle", "dark_mode", "True"), ("toggle", "wifi", "False"), \
    ("toggle", "notifications", "False")


def deleted(author: str) -> list[tuple[str, ...]]:
    return [("open_dialog", "confirm_delete", author), ("delete_post", author)]


PARAPHRASES: list[GoalCase] = [
    GoalCase("brackets-password", "android", SETTINGS,
             "Log in as qa@example.com (password correct-horse) and turn on dark mode", [*SIGNED, DARK_ON]),
    GoalCase("slash-credentials", "ios", SETTINGS, "Sign in with qa@example.com / correct-horse, then switch Wi-Fi off",
             [*SIGNED, WIFI_OFF]),
    GoalCase("slash-in-brackets", "android", SETTINGS,
             "Sign in (qa@example.com / correct-horse) and turn off notifications", [*SIGNED, NOTIFICATIONS_OFF]),
    GoalCase("colon-credentials-from-home", "ios", None, "Sign into Settings with qa@example.com:correct-horse",
             SIGNED),
    GoalCase("square-brackets", "android", SETTINGS, "Log in as qa@example.com [password: correct-horse]", SIGNED),
    GoalCase("user-and-password-in-brackets", "ios", SETTINGS,
             "Log in (user qa@example.com, password correct-horse), then switch dark mode on", [*SIGNED, DARK_ON]),
    GoalCase("make-sure-enabled", "android", SETTINGS,
             "Sign in with qa@example.com / correct-horse and make sure dark mode is enabled", [*SIGNED, DARK_ON]),
    GoalCase("make-sure-turned-off", "ios", SETTINGS,
             "Log in as qa@example.com (password correct-horse), then make sure Wi-Fi is turned off",
             [*SIGNED, WIFI_OFF]),
    GoalCase("make-sure-already-on", "android", SETTINGS,
             "Log in as qa@example.com (password correct-horse), then make sure that notifications are on", SIGNED),
    GoalCase("polite", "ios", SETTINGS,
             "Please sign in as qa@example.com with password correct-horse, then turn dark mode on, please",
             [*SIGNED, DARK_ON]),
    GoalCase("ensure-off-after-semicolon", "android", SETTINGS,
             "Sign in with username qa@example.com and password correct-horse; ensure Notifications is off",
             [*SIGNED, NOTIFICATIONS_OFF]),
    GoalCase("set-to-off", "ios", SETTINGS, "Sign in with qa@example.com / correct-horse and set Wi-Fi to off",
             [*SIGNED, WIFI_OFF]),
    GoalCase("remove-from-the-feed", "android", FEED, "Remove Erin's post from the feed", deleted("Erin")),
    GoalCase("remove-by-from-the-feed", "ios", FEED, "Remove the post by Erin from the feed", deleted("Erin")),
    GoalCase("post-from-author", "ios", FEED, "Remove the post from Bob", deleted("Bob")),
    GoalCase("get-rid-of", "android", FEED, "Get rid of Carol's post", deleted("Carol")),
    GoalCase("delete-from-the-feed-scrolled", "ios", FEED, "Please delete Judy's post from the feed.", deleted("Judy"),
             swipes=True),
    GoalCase("put-in-cart-and-check-out", "android", SHOPA, "Put the USB-C Cable in the cart and check out",
             [*searched("ShopA", "USB-C Cable"), ("add_to_cart", "ShopA", "USB-C Cable"),
              ("checkout", "ShopA", "['USB-C Cable']")]),
    GoalCase("polite-add-to-bag", "ios", SHOPB, "Could you add a Phone Case to my bag, please",
             [*searched("ShopB", "Phone Case"), ("add_to_cart", "ShopB", "Phone Case")]),
    GoalCase("polite-move", "android", GALLERY, "Please move the Dog photo to the Pets album",
             [("select_photo", "Dog", "True"), ("open_dialog", "album_picker", "None"),
              ("move_to_album", "Pets", "['Dog']")]),
    # refused before any action: each would be a guess
    GoalCase("bare-post-refused", "ios", FEED, "Remove the post", [], success=False, reason="which one?"),
    GoalCase("article-as-author-refused", "android", FEED, "Delete the post by the", [], success=False,
             reason="which one?"),
    GoalCase("empty-password-refused", "ios", SETTINGS, "Log in as qa@example.com (password)", [], success=False,
             reason="needs both"),
]


def capabilities(case: GoalCase) -> dict[str, Any]:
    extra = {"guistate:faults": {k: v for k, v in case.sim.items() if k != "appVersion"}} if case.sim else {}
    if "appVersion" in case.sim:
        extra["guistate:appVersion"] = case.sim["appVersion"]
    app_key = "appium:bundleId" if case.platform == "ios" else "appium:appPackage"
    persona = ({"platformName": "iOS", "appium:automationName": "XCUITest"} if case.platform == "ios"
               else {"platformName": "Android", "appium:automationName": "UiAutomator2"})
    return {**persona, "guistate:clock": "frozen", **({app_key: case.app} if case.app else {}), **extra}


@dataclass
class Outcome:
    case: GoalCase
    result: RunResult
    log: Log
    steps: int
    tokens: int
    actions: list[str]

    @property
    def problems(self) -> list[str]:
        """What the ground truth says went wrong (empty = the goal did what it should, nothing more)."""
        found: list[str] = []
        if self.result.success != self.case.success:
            found.append(f"success={self.result.success} ({self.result.outcome}: {self.result.summary})")
        if self.case.reason and self.case.reason not in self.result.summary:
            found.append(f"summary lacks {self.case.reason!r}: {self.result.summary!r}")
        if effects(self.log) != self.case.expected(self.log):
            found.append(f"effects {effects(self.log)} != expected {self.case.expected(self.log)}")
        if self.case.swipes and not entries(self.log, "swipe"):
            found.append("no swipe, but the goal needed scrolling")
        return found


@contextmanager
def llm_client(url: str) -> Iterator[LLMClient]:
    client = make_client(LLMSettings(mode=Mode.ANTHROPIC, timeout_s=10.0),
                         env={"ANTHROPIC_API_KEY": "sk-ant-goal-table-not-a-key", "ANTHROPIC_BASE_URL": url})
    assert client is not None
    try:
        yield client
    finally:
        client.finish()


def run_case(case: GoalCase, sim_url: str, llm_url: str) -> Outcome:
    """Run one goal on a fresh session of the sim at `sim_url` with the reference server at `llm_url`."""
    options = AppiumOptions().load_capabilities(capabilities(case))
    device = Device(webdriver.Remote(sim_url, options=options), url=sim_url, is_sim=True)
    try:
        with llm_client(llm_url) as client:
            session = TaskSession(device, name=case.id)
            result = run(session, device, case.goal, llm=client, max_steps=case.max_steps, raise_on_failure=False)
            totals = client.ledger.totals()
        log = device.action_log()
        tokens = sum(int(totals[k]) for k in ("input_tokens", "cache_creation_input_tokens",
                                              "cache_read_input_tokens", "output_tokens"))
        return Outcome(case, result, log, len(session.steps), tokens, [t.tool for t in result.turns])
    finally:
        device.close()
