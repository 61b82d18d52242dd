"""Work whose result is thrown away is not done (issue 42, item 4): under `--guistate-retain=failure`
a passing test's folder is deleted at its end, so the recorder journals each step that passed at
once but encodes its crops and frames only when the test's outcome keeps the folder; a kept folder
then gets exactly the files and journal an undeferred run writes (`files` lines complete the
steps), and a long test holds a bounded amount of screenshots meanwhile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.core import frame as core_frame
from pytest_guistate.core.errors import StepFailed
from pytest_guistate.report import frame_store, recorder
from pytest_guistate.report.finish import finalize
from pytest_guistate.report.html import report_model
from pytest_guistate.report.journal import read_journal
from tests.helpers.scenario import CREDENTIALS, PASSWORD, Run, login_and_fail, start

ROWS = ("wifi", "dark_mode", "notifications")


def _toggle(run: Run, steps: int) -> None:
    s, phone = run.session, run.phone
    s.goal("flip settings", plan=[])
    s.perform("tap the email field", lambda: phone.tap(*phone.find_key("settings/username").bounds.center))
    s.perform("type the email", lambda: phone.type_text("settings/username", CREDENTIALS[0]))
    s.perform("tap the password field", lambda: phone.tap(*phone.find_key("settings/password").bounds.center))
    s.perform("type the password", lambda: phone.type_text("settings/password", PASSWORD), idempotent=False)
    s.perform("log in", lambda: phone.tap(*phone.find_key("settings/login").bounds.center), expect="Wi-Fi")
    for n in range(steps):
        key = ROWS[n % len(ROWS)]
        s.perform(f"toggle {key}", lambda key=key: phone.tap(*phone.find_key(f"settings/row/{key}").bounds.center))


@pytest.fixture
def encodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every crop, before-crop and frame encode of the recorder."""
    seen: list[str] = []

    def counting(name: str, original: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            seen.append(name)
            return original(*args, **kwargs)

        return run

    monkeypatch.setattr(recorder, "encode_crop", counting("crop", recorder.encode_crop))
    monkeypatch.setattr(frame_store, "encode_crop", counting("before-crop", frame_store.encode_crop))
    monkeypatch.setattr(frame_store, "encode_pixels", counting("frame", frame_store.encode_pixels))
    return seen


def test_a_passing_test_whose_folder_is_deleted_encodes_no_image(tmp_path: Path, encodes: list[str]) -> None:
    run = start(tmp_path, "full", background=True, defer=True)
    _toggle(run, 6)
    run.recorder.drain()
    assert len(run.recorder.deferred_steps) == 11  # journaled, images waiting
    steps = [
        json.loads(line)
        for line in (run.recorder.folder / "journal.jsonl").read_text("utf-8").splitlines()
        if '"type":"step"' in line
    ]
    assert len(steps) == 11 and all(s["files"].get("deferred") for s in steps)
    run.session.finish("passed")
    done = finalize(run.recorder, outcome="passed", retain="failure", root=tmp_path, timeline=False)
    assert done.folder is None
    assert encodes == []


def test_a_passing_test_whose_folder_is_deleted_decodes_no_whole_frame(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nor does it decode a frame in full to cut a crop it will not write: the oracle's half-size copies
    are all a passing step needs (a full decode of a 1080x2400 frame costs the writer ~20 ms a step)."""
    decoded: list[int] = []

    def counting(png: bytes) -> Any:
        decoded.append(len(png))
        return original(png)

    original = core_frame._imdecode
    monkeypatch.setattr(core_frame, "_imdecode", counting)
    run = start(tmp_path, "standard", background=True, defer=True)
    _toggle(run, 3)
    run.recorder.drain()
    assert run.recorder.deferred_steps  # journaled, images waiting
    finalize(run.recorder, outcome="passed", retain="failure", root=tmp_path, timeline=False)
    assert decoded == []


def test_the_undeferred_run_encodes_them(tmp_path: Path, encodes: list[str]) -> None:
    """The control: the same passing test with its images written as it goes (retain on)."""
    run = start(tmp_path, "full", background=True)
    _toggle(run, 6)
    run.session.finish("passed")
    finalize(run.recorder, outcome="passed", retain="failure", root=tmp_path, timeline=False)
    assert encodes.count("frame") >= 11 and encodes.count("crop") >= 6


def _failing(root: Path, *, defer: bool) -> Path:
    run = start(root, "full", background=True, defer=defer)
    with pytest.raises(StepFailed):
        login_and_fail(run)
    run.session.finish("failed")
    done = finalize(run.recorder, outcome="failed", error="StepFailed", retain="failure", root=root)
    assert done.folder is not None
    return done.folder


def test_a_failed_test_gets_every_step_s_images_as_an_undeferred_run_writes_them(tmp_path: Path) -> None:
    deferred, written = _failing(tmp_path / "d", defer=True), _failing(tmp_path / "w", defer=False)
    files = {p.relative_to(deferred).as_posix() for p in deferred.rglob("*") if p.is_file()} - {"report.html"}
    assert files == {p.relative_to(written).as_posix() for p in written.rglob("*") if p.is_file()} - {"report.html"}
    later, now = read_journal(deferred), read_journal(written)

    def without_flag(files: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in files.items() if k != "deferred"}

    assert [without_flag(e["files"]) for e in later.steps] == [e["files"] for e in now.steps]
    assert [e["record"]["crops"] for e in later.steps] == [e["record"]["crops"] for e in now.steps]
    assert [e["files"] for e in later.anchors] == [e["files"] for e in now.anchors]
    assert [{**a, "timestamp": 0} for a in later.anchor_dicts()] == [{**a, "timestamp": 0} for a in now.anchor_dicts()]
    assert report_model(later)["missing_files"] == []
    raw = [json.loads(line)["type"] for line in (deferred / "journal.jsonl").read_text("utf-8").splitlines()]
    assert raw.count("files") >= 5 and raw.index("files") > max(i for i, t in enumerate(raw) if t == "step")


def test_waiting_images_are_bounded_on_a_long_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "DEFER_BUDGET", 1)  # any screenshot is over: the oldest waiting step is written
    run = start(tmp_path, "full", background=True, defer=True)
    _toggle(run, 6)
    run.recorder.drain()
    assert len(run.recorder.deferred_steps) == 1
    raw = [json.loads(line) for line in (run.recorder.folder / "journal.jsonl").read_text("utf-8").splitlines()]
    written = [e for e in raw if e["type"] == "files"]
    assert [e["step"] for e in written] == list(range(1, 11)) and all(e["files"]["frames"] for e in written)
