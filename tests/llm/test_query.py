"""`guistate.query` (issue 46): typed values read off the sim's screens through the real SDK and the
reference server, each checked against the phone's own ground truth (the seed's prices, the apps'
state), never against the plugin's report; evidence that does not hold is `QueryUnverified`; the
action cache reads today's value at 0 tokens and misses by name."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest

from pytest_guistate import QueryFailed, QueryUnverified, visible
from pytest_guistate.core.settle import VirtualClock
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.uitree import UITree, parse_page_source
from pytest_guistate.core.values import shape_of
from pytest_guistate.devices.sim.apps.shop import PRODUCTS, shop_prices
from pytest_guistate.devices.sim.phone import Phone
from pytest_guistate.llm.cache.query_cache import QueryMiss, read_again, read_prints
from pytest_guistate.llm.cache.replay import CacheMiss
from pytest_guistate.llm.client import LLMSettings, Mode
from pytest_guistate.llm.facade import open_llm
from pytest_guistate.llm.query import query, verify
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.helpers.direct_screen import DirectScreen
from tests.llm.conftest import FAKE_KEY

SHOPA, SHOPB, SETTINGS, FEED, GALLERY = (
    "com.guistate.shopa",
    "com.guistate.shopb",
    "com.guistate.settings",
    "com.guistate.feed",
    "com.guistate.gallery",
)


class Item(TypedDict):
    name: str
    price: float


@dataclasses.dataclass
class Row:
    name: str
    price: float


class Phoned:
    """A sim phone on a virtual clock with a task session over it (as `tests/llm/conftest.Sim`, any seed)."""

    def __init__(self, package: str, seed: int = 1) -> None:
        self.clock = VirtualClock()
        self.phone = Phone(app_package=package, seed=seed, clock=self.clock)
        self.screen = DirectScreen(self.phone)
        self.session = TaskSession(self.screen, name="query-test", clock=self.clock)

    def search(self, text: str = "") -> Phoned:
        """A shop's results for `text` (all products for ''), settled."""
        if text:
            self.phone.type_text("shop/search", text)
        self.screen.tap_text("Search")
        self.session.observe(settled=True)
        return self

    def sign_in(self, user: str = "qa@example.com", password: str = "correct-horse") -> Phoned:
        self.phone.type_text("settings/username", user)
        self.phone.type_text("settings/password", password)
        self.screen.tap_text("Log in")
        self.session.observe(settled=True)
        return self


@pytest.fixture
def phones() -> Iterator[Any]:
    made: list[Phoned] = []

    def make(package: str, seed: int = 1) -> Phoned:
        made.append(Phoned(package, seed))
        return made[-1]

    yield make
    for item in made:
        item.phone.close()


@pytest.fixture(scope="module")
def screens() -> Iterator[Any]:
    """Phones shared by this module's tests that only read (a query observes, never taps): one per app,
    seed and search, made once (a phone's first screens are most of a read-only test's time)."""
    made: dict[tuple[str, int, str | None], Phoned] = {}

    def make(package: str, seed: int = 1, search: str | None = None) -> Phoned:
        key = (package, seed, search)
        if key not in made:
            made[key] = Phoned(package, seed)
            if search is not None:
                made[key].search(search)
        return made[key]

    yield make
    for item in made.values():
        item.phone.close()


def ask(sim: Phoned, llm: Any, question: str, tp: Any, **kwargs: Any) -> Any:
    return query(sim.session, question, shape_of(tp), llm=llm, **kwargs).value


@pytest.mark.parametrize("seed", [1, 5])
def test_prices_read_right_under_several_seeds(screens, llm, seed: int) -> None:
    client = llm()
    for package, index in ((SHOPA, 0), (SHOPB, 1)):
        sim = screens(package, seed, "")
        truth = shop_prices(seed)
        assert ask(sim, client, "What is the price of Phone Case?", float) == truth["Phone Case"][index]
        assert ask(sim, client, "the price of Smart Watch", str) == f"${truth['Smart Watch'][index]:.2f}"
        rows = ask(sim, client, "the name and price of each product", list[Item])
        assert rows == [{"name": name, "price": truth[name][index]} for name, _, _ in PRODUCTS]


def test_records_as_dataclasses_and_a_single_record(screens, llm) -> None:
    sim = screens(SHOPB, 3, "")
    client = llm()
    truth = shop_prices(3)
    rows = ask(sim, client, "the name and price of every product", list[Row])
    assert rows == [Row(name, truth[name][1]) for name, _, _ in PRODUCTS]
    assert ask(sim, client, "the name and price of the product", Row) == Row(
        "Wireless Earbuds", truth["Wireless Earbuds"][1]
    )


def test_counts_lists_and_the_total(phones, screens, llm) -> None:
    client = llm()
    gallery = phones(GALLERY)
    photos = [n for n in gallery.session.observe().tree.nodes() if n.resource_id.endswith(":id/photo")]
    assert ask(gallery, client, "How many photos are there?", int) == len(photos) == 12
    feed = screens(FEED)
    shown = [n.text for n in feed.session.observe().tree.nodes() if n.resource_id.endswith(":id/author")]
    assert ask(feed, client, "the names of the authors", list[str]) == shown and "Erin" in shown
    shop = phones(SHOPA, 4).search("Cable")
    shop.screen.tap_text("USB-C Cable")
    shop.screen.tap_text("Add to cart")
    shop.screen.tap(*shop.screen.find("Cart, 1 items").bounds.center)
    shop.session.observe(settled=True)
    assert ask(shop, client, "how many items are in the cart", int) == 1
    assert ask(shop, client, "the total", float) == shop_prices(4)["USB-C Cable"][0]


def test_switch_states_read_right_both_ways(phones, llm) -> None:
    client = llm()
    sim = phones(SETTINGS).sign_in()
    app = sim.phone._apps[SETTINGS]
    assert ask(sim, client, "Is Wi-Fi on?", bool) is app.toggles["wifi"] is True
    assert ask(sim, client, "whether Dark mode is on", bool) is app.toggles["dark_mode"] is False
    assert ask(sim, client, "is Dark mode off", bool) is True
    switches = [n for n in sim.session.observe().tree.nodes() if n.checkable]
    assert [n.checked for n in switches] == [app.toggles[k] for k in ("wifi", "dark_mode", "notifications")]
    sim.screen.tap(*switches[1].bounds.center)
    sim.session.observe(settled=True)
    assert ask(sim, client, "whether Dark mode is on", bool) is app.toggles["dark_mode"] is True


def test_a_value_the_screen_does_not_hold_is_unverified(screens, llm, server: ReferenceServer) -> None:
    sim = screens(SHOPA, 1, "")
    client = llm()
    for question, tp in (
        ("the names of the products", list[str]),
        ("the name and price of each product", list[Item]),
        ("how many items are in the cart", int),
    ):
        server.script("hallucinate")  # the same evidence, an item more / a count one more
        with pytest.raises(QueryUnverified) as info:
            ask(sim, client, question, tp)
        assert info.value.problems and info.value.question == question
    server.script("hallucinate")
    with pytest.raises(
        QueryUnverified,
        match=r"answered 16\.99, but the value: 16\.99 is not what the cited "
        r"element\(s\) show \('\$15\.99'\)",
    ):
        ask(sim, client, "the price of Phone Case", float)


def _page(nodes: list[str]) -> UITree:
    """An Android page source: `nodes` in one full-screen FrameLayout."""
    return parse_page_source(
        '<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0" width="1080" height="2400">'
        '<node index="0" class="android.widget.FrameLayout" bounds="[0,0][1080,2400]">' + "".join(nodes) + "</node>"
        "</hierarchy>"
    )


def _screen(*rows: tuple[str, ...]) -> UITree:
    """A list screen without resource ids: a title, then one row per tuple, each a TextView per text."""
    nodes = ['<node index="0" class="android.widget.TextView" text="Name: Carol" bounds="[0,0][1080,100]"/>']
    for n, texts in enumerate(rows, start=1):
        top = 100 * n + 100
        cells = "".join(
            f'<node index="{i}" class="android.widget.TextView" text="{t}" bounds="[{i * 500},{top}][{i * 500 + 480},'
            f'{top + 90}]"/>'
            for i, t in enumerate(texts)
        )
        nodes.append(
            f'<node index="{n}" class="android.widget.LinearLayout" bounds="[0,{top}][1080,{top + 90}]">{cells}</node>'
        )
    return _page(nodes)


def _cite(tree: UITree, *texts: str, paths: tuple[str, ...] = ()) -> list[dict[str, str]]:
    found = [next(n for n in tree.nodes() if n.text == t) for t in texts]
    return [{"path": paths[i] if paths else "", "element_id": n.index_path, "quote": ""} for i, n in enumerate(found)]


def test_a_string_holds_only_as_the_whole_text_or_a_whole_segment_of_it() -> None:
    """A part of a text is no value read from it: not "Phone" from "Phone Case", nor "Car" from "Carol"; a
    label's value after its colon is."""
    tree = _screen(("Phone Case", "$15.99"), ("Carol", "Phone Case, $9.99"))
    text = shape_of(str)
    for value, element, holds in (
        ("Carol", "Name: Carol", True),
        ("Name: Carol", "Name: Carol", True),
        ("Phone Case", "Phone Case", True),
        ("phone  case", "Phone Case", True),
        ("Phone Case", "Phone Case, $9.99", True),
        ("$9.99", "Phone Case, $9.99", True),
        ("Phone", "Phone Case", False),
        ("Case", "Phone Case", False),
        ("Car", "Carol", False),
        ("Car", "Name: Carol", False),
        ("Phone", "Phone Case, $9.99", False),
        ("$15", "$15.99", False),
        ("Case, $9", "Phone Case, $9.99", False),
    ):
        problems, _ = verify(text, value, _cite(tree, element), tree)
        assert (problems == []) is holds, (value, element, problems)
    names = _cite(tree, "Phone Case", "Carol", paths=("0", "1"))
    assert verify(shape_of(list[str]), ["Phone Case", "Carol"], names, tree)[0] == []
    assert verify(shape_of(list[str]), ["Phone", "Carol"], names, tree)[0] == [
        "'0': 'Phone' is not what the cited element(s) show ('Phone Case')"
    ]
    row = _cite(tree, "Phone Case", "$15.99", paths=("name", "price"))
    assert verify(shape_of(Item), {"name": "Phone Case", "price": 15.99}, row, tree)[0] == []
    assert verify(shape_of(Item), {"name": "Phone", "price": 15.99}, row, tree)[0] == [
        "'name': 'Phone' is not what the cited element(s) show ('Phone Case')"
    ]


def test_a_count_of_cited_elements_must_cite_every_one_like_them() -> None:
    """Rows without resource ids: a count citing 2 of 3 alike rows (or one row twice) is unverified;
    all 3 rows, or all 3 names (the same field of every row), hold."""
    tree = _screen(("Phone Case", "$15.99"), ("Carol", "$9.99"), ("Erin", "$4.00"))
    count = shape_of(int)
    rows = [n for n in tree.nodes() if n.kind == "LinearLayout" or n.cls.endswith("LinearLayout")]
    assert len(rows) == 3
    every = [{"path": "", "element_id": n.index_path, "quote": ""} for n in rows]
    assert verify(count, 3, every, tree)[0] == []
    assert verify(count, 3, _cite(tree, "Phone Case", "Carol", "Erin"), tree)[0] == []
    [short] = verify(count, 2, every[:2], tree)[0]
    assert short.startswith("the value: 2 is not what the cited element(s) show") and "1 more like them" in short
    [names] = verify(count, 2, _cite(tree, "Carol", "Erin"), tree)[0]
    assert "1 more like them, not cited ('Phone Case')" in names
    [twice] = verify(count, 2, every[:1] * 2, tree)[0]
    assert "2 citations of 1 elements" in twice


def test_a_string_cut_short_or_a_count_short_is_unverified_on_the_sims_apps(screens, llm, server) -> None:
    """The reference server fed the `partial` fault: the same evidence, a part of what it read
    ("Phone" for "Phone Case", "Car" for "Carol") or a count of cited elements one short."""
    client = llm()
    shop = screens(SHOPA, 2, "")
    feed = screens(FEED)
    for sim, question, tp in (
        (shop, "the names of the products", list[str]),
        (shop, "the name and price of each product", list[Item]),
        (shop, "the name and price of the product", Row),
        (shop, "the price of Smart Watch", str),
        (feed, "the names of the authors", list[str]),
        (feed, "How many authors are there?", int),
    ):
        right = ask(sim, client, question, tp)
        server.script("partial")
        with pytest.raises(QueryUnverified) as info:
            ask(sim, client, question, tp)
        assert info.value.value != right and info.value.problems, question
        assert info.value.evidence and all(e["box"] for e in info.value.evidence)  # what was cited, for the record


def test_no_answer_and_a_wrong_shape_are_query_failed(screens, llm, server: ReferenceServer) -> None:
    sim = screens(SHOPA, 1, "")
    client = llm()
    with pytest.raises(QueryFailed, match="cannot read the question 'Who designed this app") as info:
        ask(sim, client, "Who designed this app?", str)
    assert "pattern matching" in info.value.said
    with pytest.raises(QueryFailed, match="the screen is 'com.guistate.shopa', not 'ShopB'"):
        ask(sim, client, "the price of Phone Case in ShopB", float)
    with pytest.raises(QueryFailed, match=r"not a bool: value must be true or false, got float 15\.99"):
        ask(sim, client, "the price of Phone Case", bool)
    server.script("malformed")
    with pytest.raises(QueryFailed, match="report_answer input is missing the required field"):
        ask(sim, client, "the price of Phone Case", float)


def test_a_password_field_and_a_secret_are_never_read(phones) -> None:
    sim = phones(SETTINGS)
    sim.phone.type_text("settings/username", "qa@example.com")
    sim.phone.type_text("settings/password", "correct-horse")
    tree = sim.session.observe().tree
    password = next(n for n in tree.nodes() if n.password)
    user = next(n for n in tree.nodes() if n.resource_id.endswith(":id/username"))
    cite = [{"path": "", "element_id": password.index_path, "quote": ""}]
    problems, _ = verify(shape_of(str), password.text or "•", cite, tree)
    why = f"cited element {password.index_path!r} is a password field; values are never read from one"
    assert problems == [f"the value: {why}"]
    cite = [{"path": "", "element_id": user.index_path, "quote": "qa@example.com"}]
    assert verify(shape_of(str), "qa@example.com", cite, tree)[0] == []  # the same read, no secret: it holds
    problems, _ = verify(shape_of(str), "qa@example.com", cite, tree, secrets=["qa@example.com"])
    assert any("registered secret" in p for p in problems)


def _llm_for(sim: Phoned, mode: Mode, tmp_path: Path, url: str | None, monkeypatch: pytest.MonkeyPatch) -> Any:
    if url is not None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    return open_llm(
        LLMSettings(mode=mode, timeout_s=10.0, updater="off"),
        sim.session,
        sim.screen,
        test_file=tmp_path / "test_shop.py",
        test_name="test_prices",
    )


def test_strict_replay_reads_todays_price_at_zero_tokens_and_misses_by_name(
    phones, server: ReferenceServer, tmp_path: Path, monkeypatch
) -> None:
    recorded = phones(SHOPA, 1).search()
    live = _llm_for(recorded, Mode.ANTHROPIC, tmp_path, server.url, monkeypatch)
    price, names = shape_of(float), shape_of(list[str])
    rows, switch = shape_of(list[Item]), shape_of(int)
    assert live.query("the price of Phone Case", price).value == shop_prices(1)["Phone Case"][0]
    assert live.query("the names of the products", names).value[0] == "Wireless Earbuds"
    assert len(live.query("the name and price of each product", rows).value) == len(PRODUCTS)
    assert live.query("how many items are in the cart", switch).value == 0
    live.close(passed=True)
    served = len(server.requests)
    assert served == 4

    drifted = phones(SHOPA, 2).search()  # another seed: every price moved
    cached = _llm_for(drifted, Mode.CACHE, tmp_path, None, monkeypatch)
    assert cached.client is None  # no model at all
    today = shop_prices(2)
    assert today["Phone Case"][0] != shop_prices(1)["Phone Case"][0]
    assert cached.query("the price of Phone Case", price).value == today["Phone Case"][0]
    assert cached.query("the names of the products", names).value == [name for name, _, _ in PRODUCTS]
    assert cached.query("the name and price of each product", rows).value == [
        {"name": name, "price": today[name][0]} for name, _, _ in PRODUCTS
    ]
    assert cached.query("how many items are in the cart", switch).value == 0
    assert len(server.requests) == served
    report = cached.report()
    assert report["cache"]["hits"] == 4 and report["cache"]["tokens_used"] == 0
    assert [q["source"] for q in report["queries"]] == ["cache"] * 4

    gone = phones(SHOPA, 2).search("Cable")  # Phone Case is not in the results
    strict = _llm_for(gone, Mode.CACHE, tmp_path, None, monkeypatch)
    with pytest.raises(
        CacheMiss,
        match=r"cache miss at query 'the price of Phone Case': renamed or moved: no "
        r"TextView \(id 'price', '\$#'\) in a row 'case phone'",
    ):
        strict.query("the price of Phone Case", price)
    assert strict.cache is not None and strict.cache.misses


def test_the_fallback_asks_the_model_at_a_miss(phones, server: ReferenceServer, tmp_path: Path, monkeypatch) -> None:
    first = phones(SHOPB, 1).search()
    live = _llm_for(first, Mode.ANTHROPIC, tmp_path, server.url, monkeypatch)
    live.query("the price of Power Bank", shape_of(float))
    live.close(passed=True)
    elsewhere = phones(SHOPB, 3).search("Power")
    fallback = _llm_for(elsewhere, Mode.CACHE_FALLBACK, tmp_path, server.url, monkeypatch)
    before = len(server.requests)
    assert fallback.query("the price of Power Bank", shape_of(float)).value == shop_prices(3)["Power Bank"][1]
    assert len(server.requests) == before  # the same row is on screen: a hit, no call
    elsewhere.screen.tap_text("Power Bank")
    elsewhere.session.observe(settled=True)  # the product page: another screen, so the model is asked
    assert fallback.cache is not None
    fallback.cache.query_index = 0
    assert fallback.query("the price of Power Bank", shape_of(float)).value == shop_prices(3)["Power Bank"][1]
    assert len(server.requests) == before + 1
    assert [s.status for s in fallback.cache.statuses] == ["hit", "miss", "live"]
    assert fallback.client is not None and [c.purpose for c in fallback.client.ledger.calls] == ["query"]


def _list_screen(rows: list[tuple[str, str]], *, user: str = "qa@example.com", password: bool = False) -> UITree:
    """A shop list (name and price per row, by resource id) under an account field that a release may
    turn into a password field."""
    app = "com.example.shop"
    account = (
        f'<node index="0" class="android.widget.EditText" resource-id="{app}:id/account" text="{user}" '
        f'password="{str(password).lower()}" bounds="[48,100][1032,200]"/>'
    )
    nodes = [account]
    for n, (name, price) in enumerate(rows, start=1):
        top = 180 * n + 100
        nodes.append(
            f'<node index="{n}" class="android.widget.LinearLayout" resource-id="{app}:id/row" '
            f'bounds="[0,{top}][1080,{top + 160}]">'
            f'<node index="0" class="android.widget.TextView" resource-id="{app}:id/name" text="{name}" '
            f'bounds="[48,{top + 30}][700,{top + 130}]"/>'
            f'<node index="1" class="android.widget.TextView" resource-id="{app}:id/price" text="{price}" '
            f'bounds="[760,{top + 30}][1032,{top + 130}]"/></node>'
        )
    return _page(nodes)


def _recorded(shape: Any, value: Any, tree: UITree, text: str) -> list[dict[str, Any]]:
    """What the cache keeps for a verified read of `value` from the element showing `text`."""
    node = next(n for n in tree.nodes() if n.text == text)
    problems, cited = verify(shape, value, [{"path": "", "element_id": node.index_path, "quote": text}], tree)
    assert problems == []
    return read_prints(shape, value, cited, tree)


def test_replay_misses_by_name_when_the_cached_element_has_a_twin() -> None:
    """The cached price's row is on screen twice today: `ambiguous` wherever the twin is (above the
    neighbour it was read beside or below it), and no value comes back; one row again is a read."""
    rows = [("Wireless Earbuds", "$59.99"), ("Phone Case", "$15.99"), ("Smart Watch", "$176.99")]
    price = shape_of(float)
    reads = _recorded(price, 15.99, _list_screen(rows), "$15.99")
    twin = ("Phone Case", "$12.49")
    for today in ([rows[0], rows[1], twin, rows[2]], [rows[0], twin, rows[2], rows[1]]):
        with pytest.raises(QueryMiss, match=r"^ambiguous: 2 elements like the cached TextView \(id 'price', '\$#'\)"):
            read_again(price, reads, _list_screen(today))
    assert read_again(price, reads, _list_screen([rows[0], ("Phone Case", "$12.49"), rows[2]]))[0] == 12.49
    # Read where both were: their neighbours told them apart then, and tell them apart today.
    both = [rows[1], rows[2], ("Phone Case", "$9.99")]
    reads = _recorded(price, 15.99, _list_screen(both), "$15.99")
    assert reads[0]["twins"] is True
    assert (
        read_again(price, reads, _list_screen([("Phone Case", "$14.99"), rows[2], ("Phone Case", "$9.49")]))[0] == 14.99
    )


def test_replay_never_reads_a_password_field_or_a_secret() -> None:
    """The cached read of the account field: today it is a password field (a named miss, `gone`), or its
    text is a registered secret (a named miss); nothing is returned either way."""
    rows = [("Phone Case", "$15.99")]
    name = shape_of(str)
    reads = _recorded(name, "qa@example.com", _list_screen(rows), "qa@example.com")
    assert read_again(name, reads, _list_screen(rows, user="ops@example.com"))[0] == "ops@example.com"
    with pytest.raises(QueryMiss, match=r"^gone: no element like the cached EditText \(id 'account', '\*'\)"):
        read_again(name, reads, _list_screen(rows, password=True))
    with pytest.raises(QueryMiss, match=r"shows a registered secret; it is never read$"):
        read_again(name, reads, _list_screen(rows, user="ops@example.com"), secrets=["ops@example.com"])


IOS = {"platformName": "iOS", "appium:automationName": "XCUITest", "guistate:clock": "frozen"}


@pytest.fixture
def ios() -> Iterator[Any]:
    """The sim's iOS persona (XCUITest page source, navigation bars) over HTTP, through the Appium client."""
    from appium import webdriver
    from appium.options.common import AppiumOptions

    from pytest_guistate.devices.device import Device
    from pytest_guistate.devices.sim import SimServer

    made: list[Any] = []

    def make(bundle: str, seed: int) -> tuple[Any, TaskSession]:
        options = AppiumOptions().load_capabilities({**IOS, "appium:bundleId": bundle, "guistate:seed": seed})
        device = Device(webdriver.Remote(server.url, options=options), url=server.url, is_sim=True)
        made.append(device)
        return device, TaskSession(device, name="query-ios")

    with SimServer() as server:
        yield make
        for device in made:
            device.close()


def test_the_ios_persona_reads_prices_records_counts_and_switches(ios, llm, server: ReferenceServer) -> None:
    client = llm()
    device, session = ios(SHOPB, 8)
    session.perform("search", lambda: device.tap(id="search_button"), expect=visible(id="price"))
    truth = shop_prices(8)
    price = query(session, "the price of Phone Case", shape_of(float), llm=client)
    assert price.value == truth["Phone Case"][1]
    # The cached read finds the same element on another seed's screen (iOS cites the row's Cell, whose
    # label holds the name and the price) and reads today's price.
    reads = read_prints(shape_of(float), price.value, price.evidence, price.tree)
    other, other_session = ios(SHOPB, 9)
    other_session.perform("search", lambda: other.tap(id="search_button"), expect=visible(id="price"))
    tree = other_session.observe(settled=True).tree
    assert read_again(shape_of(float), reads, tree)[0] == shop_prices(9)["Phone Case"][1] != price.value
    rows = query(session, "the name and price of each product", shape_of(list[Row]), llm=client).value
    assert rows == [Row(name, truth[name][1]) for name, _, _ in PRODUCTS][: len(rows)] and len(rows) >= 5
    server.script("partial")  # "Phone" for "Phone Case": a part of the row's label is not a value read from it
    with pytest.raises(QueryUnverified, match=r"'1\.name': 'Phone' is not what the cited element"):
        query(session, "the name and price of each product", shape_of(list[Row]), llm=client)
    assert query(session, "how many items are in the cart", shape_of(int), llm=client).value == 0
    settings, session = ios(SETTINGS, 1)
    settings.type("qa@example.com", id="username")
    settings.type("correct-horse\n", id="password")
    session.observe(settled=True)
    assert query(session, "Is Wi-Fi on?", shape_of(bool), llm=client).value is True
    assert query(session, "whether Dark mode is on", shape_of(bool), llm=client).value is False


def test_cache_show_lists_the_committed_queries() -> None:
    """`guistate cache show` prints each cached query: its question, type, value when recorded and what it reads."""
    import io

    from pytest_guistate.llm.cache.cli import cache_main

    path = Path(__file__).parents[2] / "example_suite" / "cassettes" / "test_llm_query"
    out = io.StringIO()
    assert (
        cache_main(
            ["show", str(path / "test_query_reads_both_prices_and_the_cheaper_shop_is_bought.actions.json")], out
        )
        == 0
    )
    shown = shop_prices(0)["Phone Case"]  # the example suite's sim runs seed 0
    assert (
        f"query: 'the price of Phone Case in ShopA' (float; {shown[0]} when recorded, today's read from "
        "TextView '$#' on 'shopa: ShopA')"
    ) in out.getvalue()
    assert "query: 'the total' (float;" in out.getvalue()
