"""A long cross-app flow (25+ steps): the kind of test where goal drift and progress hallucination
hurt. The plan is declared up front, each milestone carries a check, and when a step fails the
report says which milestone was reached and what the screen did.
"""

import pytest
from sim_apps import SHOPS, dialog_button, result_row, switch_is_on

from pytest_guistate import gone, visible

PHOTOS = ["Mountains", "Beach", "Sunset"]


@pytest.mark.guistate(app="com.guistate.settings", faults={"refresh_delay": 0.8})
def test_morning_routine_across_four_apps(device, guistate):
    guistate.goal(
        "Sign in, turn notifications off, file the travel photos, clear a post, add a cable to the cart",
        plan=[
            ("signed in", "Signed in as"),
            ("notifications off", lambda obs: not switch_is_on("Notifications")(obs).ok),
            ("travel photos filed", visible("Mountains, Beach, Sunset")),
            ("Dave's post deleted", gone("Dave")),
            ("cable in the cart", visible("Cart, 1 items")),
        ],
    )

    # Settings: 5 steps
    guistate.perform("tap the e-mail field", lambda: device.tap(id="username"))
    guistate.perform("type the e-mail", lambda: device.type("qa@example.com", id="username"), idempotent=False)
    guistate.perform("tap the password field", lambda: device.tap(id="password"))
    guistate.perform("type the password", lambda: device.type("correct-horse", id="password"), idempotent=False)
    guistate.perform("log in", lambda: device.tap(id="login"), expect="Signed in as", idempotent=False)
    guistate.milestone("signed in")
    guistate.remember("account", "qa@example.com", source="Settings")
    guistate.perform("notifications off", lambda: device.tap(text="Notifications"),
                     expect=lambda obs: not switch_is_on("Notifications")(obs).ok, idempotent=False)
    guistate.milestone("notifications off")

    # Gallery: select three photos, move them to Travel, look at the album: 8 steps
    guistate.perform("open the Gallery", lambda: device.activate_app("com.guistate.gallery"), expect="All photos")
    for photo in PHOTOS:
        guistate.perform(f"select {photo}", lambda photo=photo: device.tap(desc=photo), idempotent=False)
    assert device.exists(text="3 selected")
    guistate.perform("move to album", lambda: device.tap(id="move"), expect="Move to album")
    guistate.perform("pick Travel", lambda: device.tap(text="Travel (0)"), expect=gone("3 selected"),
                     idempotent=False)
    guistate.perform("open the albums", lambda: device.tap(id="albums"), expect="Mountains, Beach, Sunset")
    guistate.milestone("travel photos filed")
    guistate.perform("back to the photos", device.back, expect="All photos", idempotent=False)

    # Feed: delete Dave's post on a list that redraws late: 3 steps
    guistate.perform("open the Feed", lambda: device.activate_app("com.guistate.feed"), expect="Feed")
    guistate.perform("ask to delete Dave's post", lambda: device.tap(desc="Delete post by Dave"),
                     expect="Delete post by Dave?")
    guistate.perform("confirm", lambda: device.tap(id=dialog_button(device, "Delete")), expect=gone("Dave"), idempotent=False)
    guistate.milestone("Dave's post deleted")

    # ShopB: search, open, add, then read the cart: 5 steps
    guistate.perform("open ShopB", lambda: device.activate_app(SHOPS["ShopB"]), expect="ShopB")
    guistate.perform("tap search", lambda: device.tap(id="search"))
    guistate.perform("type the query", lambda: device.type("USB-C Cable\n", id="search"),
                     expect=visible(id="price"), idempotent=False)
    guistate.perform("open the cable", lambda: device.tap(xpath=result_row(device, "USB-C Cable")), expect="Add to cart")
    guistate.perform("add to cart", lambda: device.tap(id="add_to_cart"), expect=visible("Cart, 1 items"),
                     idempotent=False)
    guistate.milestone("cable in the cart")
    guistate.perform("open the cart", lambda: device.tap(id="cart"), expect="Checkout")
    assert guistate.recall("account") == "qa@example.com"
    guistate.assert_complete()

    assert len(guistate.steps) >= 20
    log = device.action_log()
    assert [e["author"] for e in log if e["action"] == "delete_post"] == ["Dave"]
    assert [e["product"] for e in log if e["action"] == "add_to_cart"] == ["USB-C Cable"]
    assert [e["album"] for e in log if e["action"] == "move_to_album"] == ["Travel"]
