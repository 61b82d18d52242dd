"""Redaction boxes belong to the screen they were read on (issue 23).

`example_suite/test_login.py::test_log_in_and_turn_on_dark_mode` at full tier: after signing in,
the Wi-Fi and Dark-mode row crops were 63% solid fill (the login screen's password box leaked onto
the next screens' crops). A crop is filled only where its own screen has a secure field, and the
password still reaches no saved file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.report.recorder import ArtifactRecorder
from tests.helpers.inner_run import run_inprocess

EXAMPLE = Path(__file__).resolve().parents[2] / "example_suite"
SECRET = b"correct-horse"
FILL = np.array([40, 40, 40])  # report/redact.py's fill colour


def _fill_share(path: Path) -> float:
    pixels = cv2.imdecode(np.frombuffer(path.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    return float(np.all(np.abs(pixels.astype(int) - FILL) <= 2, axis=2).mean())




def test_crops_are_filled_only_where_their_own_screen_has_a_secure_field(pytester: pytest.Pytester) -> None:
    for name in ("test_login.py", "sim_apps.py"):
        pytester.makepyfile(**{name[:-3]: (EXAMPLE / name).read_text(encoding="utf-8")})
    result = run_inprocess(pytester, "-p", "no:cacheprovider", "--guistate=full", "--guistate-retain=on",
                           "--guistate-artifacts=art", "test_login.py::test_log_in_and_turn_on_dark_mode")
    result.assert_outcomes(passed=1)
    [folder] = [p for p in (pytester.path / "art").iterdir() if p.is_dir()]
    steps = [json.loads(line) for line in (folder / "journal.jsonl").read_text(encoding="utf-8").splitlines()]
    steps = [e for e in steps if e["type"] == "step"]
    assert [s["record"]["name"] for s in steps][2:] == ["tap Log in", "switch dark mode on"]
    signed_in = [rel for s in steps[2:] for rel in s["files"]["crops"]]  # after-crops of screens with no secure field
    assert len(signed_in) >= 2, "the steps after signing in keep their crops: they must exist to be checked"
    shares = {rel: _fill_share(folder / rel) for rel in signed_in}
    assert all(share < 0.01 for share in shares.values()), f"a login screen's box leaked onto later crops: {shares}"
    # the dark-mode evidence crop of the last step, before and after, is readable
    last = steps[-1]["files"]
    assert all(_fill_share(folder / rel) < 0.01 for rel in [*last["crops"], *last.get("crops_before", [])])
    # the password field itself is still filled where it shows: the crop of typing it
    typed = steps[1]["files"]["crops"][0]
    assert _fill_share(folder / typed) > 0.5
    leaks = [str(p) for p in folder.rglob("*") if p.is_file() and SECRET in p.read_bytes()]
    assert leaks == []


def _screen(colour: tuple[int, int, int], xml: str, fetches: list[str], *, eager: bool) -> Observation:
    pixels = np.zeros((200, 100, 3), np.uint8)
    pixels[:] = colour
    ok, png = cv2.imencode(".png", pixels)
    assert ok
    tree = parse_page_source(xml)
    if eager:
        return Observation(Frame(png.tobytes()), tree)

    def fetch() -> Any:
        fetches.append(xml)
        return tree

    return Observation(Frame(png.tobytes()), fetch_tree=fetch, tree_current=lambda: True)


LOGIN = ('<hierarchy><android.widget.FrameLayout bounds="[0,0][100,200]"><android.widget.EditText password="true" '
         'bounds="[10,50][90,80]"/></android.widget.FrameLayout></hierarchy>')
HOME = '<hierarchy><android.widget.FrameLayout bounds="[0,0][100,200]"/></hierarchy>'


def test_at_light_the_screen_after_a_secure_field_has_its_tree_read_at_once(tmp_path: Path) -> None:
    """Issue 23: where a screen's tree would be read only on demand (light) and the screen before it
    had a secure field, its tree is read when it is observed: its own boxes are known later, so its
    frame is neither guessed whole-filled nor left with the login screen's box."""
    recorder = ArtifactRecorder(tmp_path, nodeid="t.py::test_x", tier="light")
    fetches: list[str] = []
    recorder.on_observation(_screen((0, 0, 200), LOGIN, fetches, eager=True))  # the login screen
    home = _screen((0, 200, 0), HOME, fetches, eager=False)
    recorder.on_observation(home)
    assert fetches == [HOME], "the screen after the login screen was not read at once"
    later = _screen((200, 0, 0), HOME, fetches, eager=False)
    recorder.on_observation(later)
    assert fetches == [HOME], "a screen after one without a secure field waits for its tree (light)"
    recorder.put("home.png", home.frame.png)
    [written] = recorder.flush_extra()
    pixels = cv2.imdecode(np.frombuffer((tmp_path / written).read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    assert (pixels == (0, 200, 0)).all(), "the home screen has no secure field: nothing of it is filled"
    recorder.close_writer()
