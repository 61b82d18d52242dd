"""Delete a post on a list that redraws late: the stale-screen case of the TSR paper.

The Feed deletes on the server at once but redraws the list only after `refresh_delay`
seconds (or a pull-to-refresh). Tapping Delete again on the stale row would delete the *next*
post. The plugin settles and pulls to refresh instead of repeating a non-idempotent step.
"""

import pytest
from sim_apps import dialog_button

from pytest_guistate import gone


@pytest.mark.guistate(app="com.guistate.feed", faults={"refresh_delay": 1.5})
def test_delete_a_post_exactly_once_on_a_stale_list(device, guistate):
    guistate.goal(
        "Delete Carol's post and nothing else",
        plan=[("confirm dialog open", "Delete post by Carol?"), ("Carol's post gone", gone("Carol"))],
    )

    with guistate.step("open the delete dialog on Carol's post", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    guistate.milestone("confirm dialog open")

    with guistate.step("confirm the delete", expect=gone("Carol"), idempotent=False) as confirm:
        device.tap(id=dialog_button(device, "Delete"))
    guistate.milestone("Carol's post gone")
    guistate.assert_complete()

    # The list had not redrawn: the plugin waited or refreshed, and never tapped twice.
    assert confirm.outcome in ("settled", "refreshed")
    deleted = [entry["author"] for entry in device.action_log() if entry["action"] == "delete_post"]
    assert deleted == ["Carol"]


@pytest.mark.guistate(app="com.guistate.feed")
def test_cancel_keeps_the_post(device, guistate):
    guistate.goal("Open the delete dialog and cancel it", plan=["dialog open", "dialog closed"])
    with guistate.step("open the delete dialog on Bob's post", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob")
    guistate.milestone("dialog open")
    with guistate.step("cancel", expect=gone("Delete post by Bob?")):
        device.tap(id=dialog_button(device, "Cancel"))
    guistate.milestone("dialog closed")
    assert device.exists(text="Bob")
    assert not [entry for entry in device.action_log() if entry["action"] == "delete_post"]
