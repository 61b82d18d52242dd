"""Expected failures: what a guistate failure report looks like. Every test here FAILS on purpose.

Run them to see the reports (they are not part of the main job, which must stay green):

    pytest example_failing --guistate=full                    # report.html per test in guistate-artifacts/
    pytest example_failing --guistate=full --alluredir=DIR     # plus Allure steps, crops and attachments

`.ci/allure.sh` runs them together with `example_suite`, checks that exactly these tests fail, and
checks the Allure 3 report built from the results: steps, before/after crops, timeline SVG, report.html.

- `test_dropped_tap_cannot_be_confirmed`: the phone loses every tap. The confirm step is
  non-idempotent, so after settling and refreshing the plugin does NOT tap again; it fails
  with `StepFailed` saying the effect could not be confirmed (the stale-screen case).
- `test_milestone_the_screen_contradicts`: the test claims "Carol's post gone" although the
  delete was cancelled: progress hallucination. The screen wins: `MilestoneNotVisible`.
- `test_long_flow_fails_at_a_late_step`: a ten-step flow through the Feed (whose first screen
  shows the hostile post text `<img src=x onerror=alert(1)>`, which the report must show as text)
  that fails at its last step, expecting an "Undo" snackbar the app never shows. The anchor timeline shows
  which milestones were reached before it.
"""

import pytest

from pytest_guistate import gone

FEED = "com.guistate.feed"


@pytest.mark.guistate(app=FEED, faults={"drop_tap_rate": 1.0})
def test_dropped_tap_cannot_be_confirmed(device, guistate):
    guistate.goal("Delete Carol's post", plan=[("Carol's post gone", gone("Carol"))])
    # The touchscreen drops the tap: nothing happens. A delete must never be repeated blindly, so the
    # plugin settles and pulls to refresh, then fails instead of tapping a second time.
    guistate.perform("delete Carol's post", lambda: device.tap(desc="Delete post by Carol"),
                     expect=gone("Carol"), idempotent=False)
    guistate.milestone("Carol's post gone")


@pytest.mark.guistate(app=FEED)
def test_milestone_the_screen_contradicts(device, guistate):
    guistate.goal("Delete Carol's post", plan=[("dialog open", "Delete post by Carol?"),
                                               ("Carol's post gone", gone("Carol"))])
    with guistate.step("open the delete dialog on Carol's post", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    guistate.milestone("dialog open")
    with guistate.step("cancel (by mistake)", expect=gone("Delete post by Carol?")):
        device.tap(id="android:id/button2")
    guistate.milestone("Carol's post gone")  # a claim the screen contradicts: Carol is still there


@pytest.mark.guistate(app=FEED)
def test_long_flow_fails_at_a_late_step(device, guistate):
    authors = ["Alice", "Bob", "Frank"]
    guistate.goal(
        "Look at three posts without deleting them, then delete Erin's post and undo it",
        plan=[*(f"{author} kept" for author in authors), ("Erin's post gone", gone("Erin")), "delete undone"],
    )
    for author in authors:
        guistate.perform(f"ask to delete {author}'s post", lambda a=author: device.tap(desc=f"Delete post by {a}"),
                         expect=f"Delete post by {author}?")
        guistate.perform("cancel", lambda: device.tap(id="android:id/button2"),
                         expect=gone(f"Delete post by {author}?"))
        guistate.milestone(f"{author} kept")
    guistate.perform("ask to delete Erin's post", lambda: device.tap(desc="Delete post by Erin"),
                     expect="Delete post by Erin?")
    guistate.perform("confirm", lambda: device.tap(id="android:id/button1"), expect=gone("Erin"), idempotent=False)
    guistate.milestone("Erin's post gone")
    # The Feed offers no Undo after a delete: this last step cannot be confirmed and fails.
    guistate.perform("wait for the Undo snackbar", lambda: None, expect="Undo")
    guistate.milestone("delete undone")
