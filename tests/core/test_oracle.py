"""Verdicts of the visual oracle on synthetic phone screens (AGMem, seed 001, §3.2)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import OracleConfig, VisualOracle
from pytest_guistate.core.uitree import UITree, parse_page_source

W, H = 1080, 2400
BAR = 72  # status bar height
BUTTON = Box(390, 2100, 690, 2220)
FIELD = Box(60, 300, 1020, 420)


def base_screen(width: int = W, height: int = H) -> np.ndarray:
    """A light app screen: status bar with a clock, toolbar, a text field, list rows, a button."""
    img = np.full((height, width, 3), 250, np.uint8)
    cv2.rectangle(img, (0, 0), (width, BAR), (40, 40, 40), -1)
    cv2.putText(img, "12:00", (30, 52), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (255, 255, 255), 2, cv2.LINE_AA)
    cv2.rectangle(img, (0, BAR), (width, 220), (180, 110, 30), -1)
    cv2.putText(img, "Inbox", (40, 170), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (255, 255, 255), 3, cv2.LINE_AA)
    if height >= 2400:
        cv2.rectangle(img, FIELD.to_xywh()[:2], (FIELD.right, FIELD.bottom), (120, 120, 120), 2)
        cv2.putText(img, "hello", (90, 380), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (30, 30, 30), 2, cv2.LINE_AA)
        draw_rows(img, [f"Message number {i}" for i in range(8)])
        draw_button(img, (200, 120, 20))
    return img


def row_box(i: int) -> Box:
    return Box(0, 500 + i * 180, W, 500 + (i + 1) * 180)


def draw_rows(img: np.ndarray, labels: list[str]) -> None:
    img[500 : 500 + 8 * 180] = 250
    for i, label in enumerate(labels):
        box = row_box(i)
        cv2.circle(img, (110, box.top + 90), 50, (60 + 20 * i, 140, 200), -1)
        cv2.putText(img, label, (200, box.top + 105), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (20, 20, 20), 2, cv2.LINE_AA)
        cv2.line(img, (0, box.bottom - 1), (W, box.bottom - 1), (220, 220, 220), 2)


def draw_button(img: np.ndarray, colour: tuple[int, int, int]) -> None:
    cv2.rectangle(img, (BUTTON.left, BUTTON.top), (BUTTON.right - 1, BUTTON.bottom - 1), colour, -1)
    cv2.putText(img, "SEND", (470, 2180), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (255, 255, 255), 3, cv2.LINE_AA)


def changed_pixels(before: np.ndarray, after: np.ndarray) -> Box:
    """Ground truth: the bounding box of every pixel that differs."""
    ys, xs = np.nonzero(np.any(before != after, axis=2))
    return Box(int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)


def frame(img: np.ndarray, source: str) -> Frame:
    return Frame.from_array(np.ascontiguousarray(img), source=source)


def tree(*, focused_field: bool = False) -> UITree:
    rows = "".join(
        f'<android.widget.LinearLayout resource-id="app:id/row" bounds="{row_box(i).to_bounds()}">'
        f'<android.widget.TextView text="Message number {i}" bounds="[200,{row_box(i).top + 60}][900,{row_box(i).top + 120}]"/>'
        "</android.widget.LinearLayout>"
        for i in range(8)
    )
    return parse_page_source(
        f'<hierarchy width="{W}" height="{H}">'
        f'<android.widget.FrameLayout package="app" bounds="[0,0][{W},{H}]">'
        f'<android.view.View resource-id="com.android.systemui:id/status_bar" package="com.android.systemui" '
        f'bounds="[0,0][{W},{BAR}]"/>'
        f'<android.widget.EditText resource-id="app:id/field" focused="{str(focused_field).lower()}" '
        f'bounds="{FIELD.to_bounds()}" text="hello"/>'
        f'<androidx.recyclerview.widget.RecyclerView resource-id="app:id/list" bounds="[0,500][{W},1940]">{rows}'
        "</androidx.recyclerview.widget.RecyclerView>"
        f'<android.widget.Button text="SEND" clickable="true" bounds="{BUTTON.to_bounds()}"/>'
        "</android.widget.FrameLayout></hierarchy>"
    )


@pytest.fixture(scope="module")
def before() -> np.ndarray:
    return base_screen()


oracle = VisualOracle()


def test_button_colour_change_is_one_region_covering_the_button(before: np.ndarray) -> None:
    after = before.copy()
    draw_button(after, (40, 160, 40))
    result = oracle.compare(frame(before, "before"), frame(after, "after"))
    assert result.verdict == "changed" and result.changed
    assert len(result.regions) == 1
    region = result.regions[0]
    assert region.raw.iou(BUTTON) >= 0.8, region.raw
    assert region.container is None and region.box == region.raw  # no tree: nothing to snap to
    assert 0.5 < region.changed_fraction <= 1.0
    assert 0 < result.diff_ratio < 0.05


def test_list_row_removed_covers_the_shifted_rows_and_snaps_to_the_list(before: np.ndarray) -> None:
    after = before.copy()
    labels = [f"Message number {i}" for i in range(8) if i != 2]
    draw_rows(after, labels)  # rows 3..7 move up one slot, the last slot is empty
    shifted = changed_pixels(before, after)
    assert shifted.top >= row_box(2).top and shifted.bottom <= row_box(7).bottom
    plain = oracle.compare(frame(before, "before"), frame(after, "after"))
    assert plain.verdict == "changed"
    union = Box.union_all(r.raw for r in plain.regions)
    assert union is not None and union.iou(shifted) >= 0.8, union
    snapped = oracle.compare(frame(before, "before"), frame(after, "after"), tree())
    assert {r.container for r in snapped.regions} == {"list"}
    assert all(r.box == Box(0, 500, W, 1940) for r in snapped.regions)


def test_dialog_appearing_snaps_to_the_dialog_node(before: np.ndarray) -> None:
    dialog = Box(90, 900, 990, 1500)
    after = before.copy()
    cv2.rectangle(after, (dialog.left, dialog.top), (dialog.right - 1, dialog.bottom - 1), (255, 255, 255), -1)
    cv2.rectangle(after, (dialog.left, dialog.top), (dialog.right - 1, dialog.bottom - 1), (90, 90, 90), 3)
    cv2.putText(after, "Delete message?", (150, 1050), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(after, "CANCEL      OK", (450, 1420), cv2.FONT_HERSHEY_SIMPLEX, 1.3, (180, 110, 30), 3)
    xml = (
        f'<hierarchy width="{W}" height="{H}"><android.widget.FrameLayout bounds="[0,0][{W},{H}]">'
        f'<android.widget.FrameLayout resource-id="android:id/parentPanel" bounds="{dialog.to_bounds()}">'
        '<android.widget.TextView text="Delete message?" bounds="[150,1000][900,1070]"/>'
        '<android.widget.Button text="OK" bounds="[800,1360][960,1460]"/>'
        "</android.widget.FrameLayout></android.widget.FrameLayout></hierarchy>"
    )
    result = oracle.compare(frame(before, "before"), frame(after, "after"), parse_page_source(xml))
    assert result.verdict == "changed"
    assert [r.box for r in result.regions] == [dialog]
    assert result.regions[0].container == "parentPanel"
    assert result.regions[0].raw.iou(dialog) >= 0.8


def test_status_bar_clock_change_only_is_no_change(before: np.ndarray) -> None:
    after = before.copy()
    cv2.rectangle(after, (0, 0), (300, BAR - 1), (40, 40, 40), -1)
    cv2.putText(after, "12:01", (30, 52), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (255, 255, 255), 2, cv2.LINE_AA)
    without_tree = oracle.compare(frame(before, "b"), frame(after, "a"))
    with_tree = oracle.compare(frame(before, "b"), frame(after, "a"), tree())
    for result in (without_tree, with_tree):
        assert result.verdict == "no_change" and result.regions == []
        assert result.diff_ratio == 0.0
    assert with_tree.ignored == [Box(0, 0, W, BAR)]  # from the tree's status_bar node
    assert without_tree.ignored == [Box(0, 0, W, 72)]  # top 3% of 2400
    unignored = VisualOracle(OracleConfig(ignore_status_bar=False)).compare(frame(before, "b"), frame(after, "a"))
    assert unignored.verdict == "changed"  # the clock change is really there


def _with_cursor(img: np.ndarray) -> np.ndarray:
    out = img.copy()
    cv2.rectangle(out, (200, 320), (203, 400), (0, 0, 0), -1)  # 4 px wide, blinking "on"
    return out


def test_blinking_cursor_in_focused_edit_text_is_no_change(before: np.ndarray) -> None:
    after = _with_cursor(before)
    result = oracle.compare(frame(before, "b"), frame(after, "a"), tree(focused_field=True))
    assert result.verdict == "no_change"
    assert result.regions == []
    assert len(result.unstable) == 1 and Box(200, 320, 204, 401).iou(result.unstable[0]) > 0.6
    # the same bar without a focused field is a real change the oracle must not hide
    unfocused = oracle.compare(frame(before, "b"), frame(after, "a"), tree(focused_field=False))
    assert unfocused.verdict == "changed"


SPINNER = Box(852, 112, 948, 208)


def _draw_spinner(img: np.ndarray, angle: int) -> np.ndarray:
    out = img.copy()
    cv2.ellipse(out, (900, 160), (40, 40), angle, 0, 120, (255, 255, 255), 8)
    return out


def _spinner_tree() -> UITree:
    return parse_page_source(
        f'<hierarchy width="{W}" height="{H}"><android.widget.FrameLayout bounds="[0,0][{W},{H}]">'
        f'<android.widget.ProgressBar bounds="{SPINNER.to_bounds()}"/></android.widget.FrameLayout></hierarchy>'
    )


def test_spinner_region_passed_as_unstable_is_no_change(before: np.ndarray) -> None:
    a, b = frame(_draw_spinner(before, 0), "probe 1"), frame(_draw_spinner(before, 180), "probe 2")
    probe = oracle.unstable_regions(a, b)
    assert len(probe) == 1 and probe[0].contains(changed_pixels(a.bgr, b.bgr))
    after = frame(_draw_spinner(before, 90), "after")
    result = oracle.compare(b, after, unstable=probe)
    assert result.verdict == "no_change" and result.unstable == probe
    assert oracle.compare(b, after).verdict == "changed"  # without the probe it is a change


def test_probe_grows_to_the_spinner_node(before: np.ndarray) -> None:
    """Two probe frames show only part of the arc moving; the ProgressBar node is what flickers."""
    a, b = frame(_draw_spinner(before, 0), "probe 1"), frame(_draw_spinner(before, 60), "probe 2")
    bare = oracle.unstable_regions(a, b)
    assert bare and not any(box.contains(SPINNER) for box in bare)  # the two ends of the arc
    grown = oracle.unstable_regions(a, b, _spinner_tree())
    assert grown == [SPINNER.expand(4)]
    after = frame(_draw_spinner(before, 200), "after")
    assert oracle.compare(b, after, _spinner_tree(), unstable=grown).verdict == "no_change"


def test_real_change_beside_a_spinner_is_still_changed(before: np.ndarray) -> None:
    b = _draw_spinner(before, 0)
    after = _draw_spinner(before, 90)
    draw_button(after, (40, 160, 40))
    probe = [SPINNER]
    result = oracle.compare(frame(b, "b"), frame(after, "a"), unstable=probe)
    assert result.verdict == "changed"
    assert [r.raw.iou(BUTTON) >= 0.8 for r in result.regions] == [True]


def test_change_slightly_beyond_an_unstable_region_is_uncertain(before: np.ndarray) -> None:
    after = before.copy()
    cv2.rectangle(after, (400, 1000), (600, 1200), (0, 0, 255), -1)
    unstable = [Box(400, 1000, 590, 1201)]  # 10 px of the 200-px change fall outside
    result = oracle.compare(frame(before, "b"), frame(after, "a"), unstable=unstable)
    assert result.verdict == "uncertain" and not result.changed
    assert len(result.regions) == 1 and result.crops[0].region_index == 0
    half = oracle.compare(frame(before, "b"), frame(after, "a"), unstable=[Box(400, 1000, 500, 1201)])
    assert half.verdict == "changed"


def test_unstable_box_too_big_to_trust_gives_uncertain(before: np.ndarray) -> None:
    after = before.copy()
    draw_button(after, (40, 160, 40))
    result = oracle.compare(frame(before, "b"), frame(after, "a"), unstable=[Box(0, 0, W, H)])
    assert result.verdict == "uncertain"


def test_identical_bytes_decode_nothing(before: np.ndarray) -> None:
    png = cv2.imencode(".png", before)[1].tobytes()
    b, a = Frame(png=png, source="b"), Frame(png=png, source="a")
    result = oracle.compare(b, a)
    assert result.verdict == "no_change" and result.identical_bytes
    assert b._bgr is None and a._bgr is None  # nothing decoded
    assert [c.box for c in result.crops] == [Box(0, 0, W, H)]
    assert result.crops[0].png == png and a._bgr is None
    assert result.ignored == [Box(0, 0, W, 72)]
    assert oracle.unstable_regions(b, a) == []


def test_same_pixels_other_bytes_is_no_change_with_full_screen_crop(before: np.ndarray) -> None:
    b = Frame(png=cv2.imencode(".png", before, [cv2.IMWRITE_PNG_COMPRESSION, 1])[1].tobytes(), source="b")
    a = Frame(png=cv2.imencode(".png", before, [cv2.IMWRITE_PNG_COMPRESSION, 9])[1].tobytes(), source="a")
    assert not b.same_bytes(a)
    result = oracle.compare(b, a)
    assert result.verdict == "no_change" and not result.identical_bytes
    assert [c.box for c in result.crops] == [Box(0, 0, W, H)]
    no_fallback = VisualOracle(OracleConfig(full_screen_fallback_crop=False)).compare(b, a)
    assert no_fallback.crops == []


def test_checkbox_tick_counts_as_a_change(before: np.ndarray) -> None:
    after = before.copy()
    tick = np.array([[904, 2040], [912, 2050], [928, 2030]], np.int32)
    cv2.polylines(after, [tick], False, (30, 30, 30), 3)
    result = oracle.compare(frame(before, "b"), frame(after, "a"))
    assert result.verdict == "changed"
    assert result.regions[0].raw.contains(Box(906, 2032, 926, 2048))


@pytest.mark.parametrize("divisor", [1, 2, 4])
def test_boxes_agree_across_scales(before: np.ndarray, divisor: int) -> None:
    after = before.copy()
    draw_button(after, (40, 160, 40))
    result = VisualOracle(OracleConfig(scale_divisor=divisor)).compare(frame(before, "b"), frame(after, "a"))
    raw = result.regions[0].raw
    assert max(abs(x - y) for x, y in zip(raw.as_list(), BUTTON.as_list(), strict=True)) <= 2 * divisor


def test_to_dict_is_json_safe(before: np.ndarray) -> None:
    after = before.copy()
    draw_button(after, (40, 160, 40))
    result = oracle.compare(frame(before, "b"), frame(after, "a"), tree())
    data = json.loads(json.dumps(result.to_dict()))
    assert data["verdict"] == "changed" and data["changed"] is True
    assert data["regions"][0]["raw"] == result.regions[0].raw.as_list()
    assert data["regions"][0]["element"] == BUTTON.as_list()  # the Button node the change is in
    assert data["crops"] == [{"box": result.crops[0].box.as_list(), "region_index": 0}]  # no PNG bytes


def test_config_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="loose_threshold <= strict_threshold"):
        OracleConfig(loose_threshold=50, strict_threshold=20)
    with pytest.raises(ValueError, match="scale_divisor"):
        OracleConfig(scale_divisor=0)
