"""Issue 33's real shapes on what the simulated phone draws: its Feed app's screen, list and dialog.

tests/core/test_oracle_real_shapes.py draws each pattern on a synthetic 1080x1920 screen; here the
frames and trees are the sim's own (1080x2400, its fonts, its RecyclerView and AlertDialog). What
the sim does not draw is composed over its frame, as a real phone composes it: the dim behind a
dialog window (Android's FLAG_DIM_BEHIND), a dark theme's repaint (here every pixel inverted, with
the tree unchanged), a ripple's fading layer, an edge glow and a scrollbar.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.oracle import Transition, VisualOracle
from tests.core.test_oracle_real_shapes import glow_alpha, layer

oracle = VisualOracle()


@pytest.fixture(scope="module")
def feed() -> tuple[Observation, Observation]:
    """The sim's Feed before and after tapping Carol's Delete (its confirm dialog open)."""
    from pytest_guistate.devices.sim.phone import ManualClock, Phone
    from tests.helpers.direct_screen import DirectScreen

    screen = DirectScreen(Phone(app_package="com.guistate.feed", clock=ManualClock(), seed=3))
    before = screen.observe()
    screen.tap_text("Delete post by Carol")
    return before, screen.observe()


def _compare(before: Observation, after: np.ndarray | Frame, after_obs: Observation) -> Transition:
    frame = after if isinstance(after, Frame) else Frame.from_array(after)
    return oracle.compare(before.frame, frame, after_obs.tree, before_tree=lambda: before.tree)


def _node(obs: Observation, rid: str, desc: str = "") -> Box:
    node = next(n for n in obs.tree.nodes() if n.resource_id.endswith(rid) and (not desc or n.content_desc == desc))
    assert node.bounds is not None
    return node.bounds


def test_sim_dialog_over_a_scrim_is_the_dialogs_box_and_the_scrim_is_never_cropped(feed) -> None:
    before, after = feed
    dialog = _node(after, "android:id/parentPanel")
    pixels = (after.frame.bgr.astype(np.float32) * 0.4).astype(np.uint8)  # the dim behind the dialog
    pixels[:72] = after.frame.bgr[:72]  # the status bar is drawn over it
    pixels[dialog.top:dialog.bottom, dialog.left:dialog.right] = after.frame.bgr[dialog.top:dialog.bottom,
                                                                                 dialog.left:dialog.right]
    result = _compare(before, pixels, after)
    assert result.verdict == "changed"
    first = result.regions[0]
    assert first.box == dialog and first.container is not None and "appeared" in first.container
    assert [r.kind for r in result.regions].count("scrim") <= 1
    width, height = after.frame.size
    assert all(c.box.area < 0.3 * width * height for c in result.crops)


def test_sim_dialog_without_a_scrim_is_the_dialogs_box(feed) -> None:
    """What the sim itself draws (no dim): the dialog window is the change."""
    before, after = feed
    dialog = _node(after, "android:id/parentPanel")
    result = _compare(before, after.frame, after)
    assert result.verdict == "changed"
    union = Box.union_all(r.box for r in result.regions if r.kind == "change")
    assert union is not None and union.contains(dialog) and union.area < 1.5 * dialog.area


def test_sim_theme_switch_is_one_repainted_area(feed) -> None:
    before, _ = feed
    result = _compare(before, 255 - before.frame.bgr, before)
    assert result.verdict == "changed"
    kinds = [r.kind for r in result.regions]
    assert kinds[-1] == "repaint" and "screen" not in kinds and "scrim" not in kinds
    width, height = before.frame.size
    assert result.regions[-1].box.area > 0.6 * width * height


def test_sim_ripple_fading_on_a_button_is_named_and_the_verdict_waits(feed) -> None:
    before, _ = feed
    button = _node(before, ":id/delete", "Delete post by Bob")
    result = _compare(before, layer(before.frame.bgr, button, (0, 0, 0), 0.12), before)
    assert result.verdict == "uncertain" and result.regions == []
    assert [t.kind for t in result.transients] == ["ripple"]


def test_sim_ripple_on_the_button_that_opened_a_dialog_hides_nothing(feed) -> None:
    """The tapped Delete still shows its ripple while the dialog opened: the dialog is the change."""
    before, after = feed
    button = _node(before, ":id/delete", "Delete post by Carol")
    result = _compare(before, layer(after.frame.bgr, button, (0, 0, 0), 0.12), after)
    assert result.verdict == "changed"
    assert any(r.box.contains(_node(after, "android:id/parentPanel")) for r in result.regions)


def test_sim_overscroll_glow_at_the_lists_top_is_named_and_the_verdict_waits(feed) -> None:
    before, _ = feed
    posts = _node(before, ":id/posts")
    band = Box(posts.left, posts.top, posts.right, posts.top + 180)
    glow = glow_alpha(band.height, band.width, 0.3, from_bottom=True)
    result = _compare(before, layer(before.frame.bgr, band, (210, 118, 25), glow), before)
    assert result.verdict == "uncertain" and result.regions == []
    assert [(t.kind, t.where) for t in result.transients] == [("overscroll", "posts")]


def test_sim_scrollbar_fading_in_at_the_lists_edge_is_no_change(feed) -> None:
    before, _ = feed
    posts = _node(before, ":id/posts")
    pixels = before.frame.bgr.copy()
    pixels[posts.top + 40:posts.top + 600, posts.right - 12:posts.right] = (150, 150, 150)
    result = _compare(before, pixels, before)
    assert result.verdict == "no_change" and result.regions == []
    assert [(t.kind, t.where) for t in result.transients] == [("scrollbar", "posts")]
