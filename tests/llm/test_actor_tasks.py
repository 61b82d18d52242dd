"""The actor completes Feed, Login and Shop tasks on the sim through the real SDK and the reference server."""

from __future__ import annotations

from pytest_guistate.llm.actor import run
from pytest_guistate.llm.prompt import ImageScale, element_lines

FEED = "com.guistate.feed"


def test_feed_delete_with_stale_list_deletes_exactly_one_post(sim, llm, server) -> None:
    device = sim(FEED, refresh_delay=1.5)
    client = llm()
    result = run(device.session, device.screen, "Delete the post by Carol", llm=client, max_steps=12)
    assert result.success and result.outcome == "done"
    deletes = device.log("delete_post")
    assert [d["author"] for d in deletes] == ["Carol"]  # never a second, blind delete of the next post
    assert any(t.tool == "refresh" for t in result.turns)  # the stale row was refreshed, not re-tapped
    assert not device.session.state.to_dict()["tracker"]["remaining"]
    totals = client.ledger.totals()
    assert totals["calls"] == len(result.turns)
    assert totals["cache_read_input_tokens"] > 0  # system + tools read from the prompt cache after turn 1
    assert server.requests[0].usage["cache_creation_input_tokens"] > 0


def test_login_task(sim, llm) -> None:
    device = sim(None)
    result = run(device.session, device.screen,
                 "Log in to Settings as qa@example.com with password correct-horse", llm=llm(), max_steps=10)
    assert result.success
    logins = device.log("login")
    assert len(logins) == 1 and logins[0]["success"] is True
    typed = [t for t in result.turns if t.tool == "type_text"]
    assert len(typed) == 2
    assert all("correct-horse" not in step.name for step in device.session.steps)  # passwords shown as bullets


def test_shop_compare_and_buy_in_the_cheaper_shop(sim, llm) -> None:
    device = sim(None)
    result = run(device.session, device.screen,
                 "Compare the price of Phone Case in ShopA and ShopB and buy it in the cheaper shop",
                 llm=llm(), max_steps=20)
    assert result.success
    facts = device.session.state.facts
    prices = {"shopa": float(facts["price_shopa"].value), "shopb": float(facts["price_shopb"].value)}
    assert facts["price_shopa"].app == "com.guistate.shopa" and facts["price_shopb"].app == "com.guistate.shopb"
    cheaper = min(prices, key=prices.__getitem__)
    checkouts = device.log("checkout")
    assert len(checkouts) == 1 and checkouts[0]["shop"].lower() == cheaper
    assert checkouts[0]["total"] == prices[cheaper]


def test_tap_point_in_the_shown_image_maps_back_to_the_element(sim) -> None:
    device = sim(FEED)
    observation = device.screen.observe()
    scale = ImageScale.for_frame(*observation.frame.size, 3)
    row = next(r for r in element_lines(observation.tree, scale) if r.get("text") == "Delete" and "Carol" in r["in"])
    left, top, right, bottom = row["at"]
    x, y = scale.to_device((left + right) // 2, (top + bottom) // 2)
    node = observation.tree.by_index_path(row["id"])
    assert node is not None and node.bounds is not None and node.bounds.contains_point(x, y)
    device.screen.tap(x, y)
    assert device.screen.observe().tree.has_text("Delete post by Carol?")
