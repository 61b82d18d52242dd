"""Expected failures: what a guistate failure report looks like. Every test here FAILS on purpose.

Run them to see the reports (they are not part of the main job, which must stay green):

    pytest example_failing --guistate=full                    # report.html per test in guistate-artifacts/
    pytest example_failing --guistate=full --alluredir=DIR     # plus Allure steps, crops and attachments

`.ci/allure.sh` runs them together with `example_suite`, checks that exactly these tests fail, and
checks the Allure 3 report built from the results: steps, before/after crops, timeline SVG, report.html.

- `test_dropped_tap_cannot_be_confirmed`: the touchscreen drops the tap on "Delete" in the
  confirm dialog (sim fault `drop_tap_rate=1.0`). The step is non-idempotent, so after settling
  and refreshing the plugin does NOT tap again; it fails with `StepFailed` and the evidence of
  each stage (the stale-screen case).
- `test_milestone_the_screen_contradicts`: the test claims "Carol's post gone" although the
  delete was cancelled: progress hallucination. The screen wins: `MilestoneNotVisible`.
- `test_long_flow_fails_at_a_late_step`: a nine-step flow through the Feed that fails at its
  last step, "report the post <img src=x onerror=alert(1)> as spam", which the app does not
  offer. The post text is hostile app data: it reaches the failure message, report.html, the
  timeline and the Allure report, and must be shown as text everywhere. The anchor timeline
  shows which milestones were reached before the failure.
"""

import pytest

from pytest_guistate import gone

FEED = "com.guistate.feed"
ODD_POST = "//*[contains(@resource-id, ':id/text') and contains(@text, 'onerror')]"


@pytest.mark.guistate(app=FEED)
def test_dropped_tap_cannot_be_confirmed(device, guistate):
    guistate.goal("Delete Carol's post", plan=[("dialog open", "Delete post by Carol?"),
                                               ("Carol's post gone", gone("Carol"))])
    guistate.perform("ask to delete Carol's post", lambda: device.tap(desc="Delete post by Carol"),
                     expect="Delete post by Carol?")
    guistate.milestone("dialog open")
    # From here on the touchscreen loses every tap: the confirm has no visible effect. A delete must
    # never be repeated blindly (on a stale list it would delete the next post), so the plugin
    # settles and pulls to refresh, then fails with the evidence instead of tapping again.
    device.set_faults(drop_tap_rate=1.0)
    guistate.perform("confirm the delete", lambda: device.tap(id="android:id/button1"),
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
        "Look at three posts without deleting them, delete Erin's post, then report the odd post as spam",
        plan=[*(f"{author} kept" for author in authors), ("Erin's post gone", gone("Erin")), "odd post reported"],
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

    # The post text is app data, i.e. untrusted: it reaches the step name, the failure message,
    # report.html, the timeline and the Allure report, and must stay text everywhere.
    odd = device.find(xpath=ODD_POST).text
    guistate.remember("odd post", odd, source="Feed post text")
    # The Feed has no "report as spam" on a tap of the text: this late step fails (and, being
    # non-idempotent, is not tapped a second time).
    guistate.perform(f"report the post {guistate.recall('odd post')} as spam", lambda: device.tap(xpath=ODD_POST),
                     expect="Reported as spam", idempotent=False)
    guistate.milestone("odd post reported")
