"""Reading values off the screen: `guistate.query` returns typed values (a price, a count, a list, a
record), each part verified against the element it was read from (docs/llm-steps.md, "Reading values").

Like test_llm.py, this replays committed cassettes by default (example_suite/pytest.ini), recorded
against the project's local reference server; CI also runs it from its committed action cache with
`--guistate-llm=cache` (0 tokens, no model), where each query reads today's value from the elements
it was recorded on. Re-record with `python -m pytest_guistate.llm.reference.rerecord
example_suite/test_llm_query.py` (and `--guistate-platform=ios`).
"""

import pytest
from sim_apps import SHOPS

from pytest_guistate import gone, visible


@pytest.mark.guistate(app="com.guistate.shopa")
def test_query_reads_both_prices_and_the_cheaper_shop_is_bought(device, guistate):
    # guistate.query reads typed values off the screen, each verified against the element it was
    # read from; replayed from the action cache it reads today's values at 0 tokens (issue 46).
    guistate.goal("Buy Phone Case in the cheaper of ShopA and ShopB", plan=["both prices read", "bought"])
    prices = {}
    for shop, package in SHOPS.items():
        device.activate_app(package)
        guistate.perform(
            f"search Phone Case in {shop}",
            lambda: device.type("Phone Case\n", id="search"),
            expect=visible(id="price"),
            idempotent=False,
        )
        prices[shop] = guistate.query(f"the price of Phone Case in {shop}", type=float)
    guistate.milestone("both prices read")
    cheaper = min(prices, key=prices.get)
    device.activate_app(SHOPS[cheaper])
    guistate.perform("open Phone Case", lambda: device.tap(id="name"), expect="Add to cart")
    guistate.perform(
        "add to cart", lambda: device.tap(id="add_to_cart"), expect=visible("Cart, 1 items"), idempotent=False
    )
    # the "Added to cart" toast goes first: the screen the query reads is then the same on every run
    guistate.perform("wait for the toast to go", lambda: None, expect=gone("Added to cart"))
    guistate.perform("open the cart", lambda: device.tap(id="cart"), expect="Checkout", idempotent=False)
    assert guistate.query("the total", type=float) == min(prices.values())
    guistate.milestone("bought")
    guistate.assert_complete()
    bought = [entry for entry in device.action_log() if entry["action"] == "add_to_cart"]
    assert [(entry["shop"], entry["product"], entry["price"]) for entry in bought] == [
        (cheaper, "Phone Case", min(prices.values()))
    ]
