"""Log in and change a setting. The password is registered as a secret: it is typed into a
field marked `password`, so it is filled in every saved frame and scrubbed from every record."""

import pytest
from sim_apps import switch_is_on


@pytest.mark.guistate(app="com.guistate.settings")
def test_log_in_and_turn_on_dark_mode(device, guistate):
    guistate.goal(
        "Sign in as the QA account and turn dark mode on",
        plan=[("signed in", "Signed in as qa@example.com"), "dark mode on"],
    )
    guistate.perform("type the e-mail", lambda: device.type("qa@example.com", id="username"), idempotent=False)
    guistate.perform("type the password", lambda: device.type("correct-horse", id="password"), idempotent=False)
    guistate.perform("tap Log in", lambda: device.tap(id="login"), expect="Signed in as", idempotent=False)
    guistate.milestone("signed in")

    # A toggle is not idempotent (a second tap switches it back), so it is never repeated blindly.
    guistate.perform("switch dark mode on", lambda: device.tap(text="Dark mode"),
                     expect=switch_is_on("Dark mode"), idempotent=False)
    guistate.milestone("dark mode on")
    guistate.assert_complete()


@pytest.mark.guistate(app="com.guistate.settings")
def test_wrong_password_is_refused(device, guistate):
    guistate.goal("A wrong password shows an error and does not sign in", plan=["error shown"])
    device.type("qa@example.com", id="username")
    device.type(guistate.secret("not-the-password"), id="password")
    with guistate.step("tap Log in", expect="Invalid credentials", idempotent=False):
        device.tap(id="login")
    guistate.milestone("error shown")
    assert not device.exists(text="Log out")
