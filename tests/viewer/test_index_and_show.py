"""The run index and `guistate show`, in headless Chromium, on real runs of the example suites."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.report.html import report_main

ROOT = Path(__file__).resolve().parents[2]
SHOTS_ENV = "GUISTATE_VIEWER_SHOTS"  # CI sets it to a folder under its artifacts dir


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """example_failing at the full tier, as a user runs it: three failures, each with its viewer."""
    base = tmp_path_factory.mktemp("example_failing")
    artifacts, summary = base / "artifacts", base / "run.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "example_failing"), "--guistate=full", "-p", "no:cacheprovider",
         f"--guistate-artifacts={artifacts}", f"--guistate-summary={summary}", "-q"],
        cwd=base, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "3 failed" in proc.stdout
    return artifacts, summary


def test_session_end_writes_an_index_linking_every_failed_test(probe, failing_run) -> None:  # type: ignore[no-untyped-def]
    artifacts, _ = failing_run
    page = probe.page
    page.goto((artifacts / "index.html").as_uri())
    rows = page.locator("tr.test")
    assert rows.count() == 3
    assert page.locator("tr.test .o-failed").count() == 3
    texts = rows.all_inner_texts()
    assert any("progress_hallucination" in t for t in texts) and any("stale_screen_repetition" in t for t in texts)
    long_flow = page.locator("tr.test", has_text="test_long_flow_fails_at_a_late_step")
    assert "4 / 5" in long_flow.inner_text() and "9" in long_flow.locator("td").nth(3).inner_text()
    long_flow.locator("a.viewer").click()
    page.wait_for_selector(".detail.shown")
    assert page.locator(".detail.shown").get_attribute("id") == "step-9"
    assert "onerror=alert(1)" in page.locator(".detail.shown .sname").inner_text()  # text, not an element
    page.set_viewport_size({"width": 1400, "height": 1300})
    shots = Path(os.environ.get(SHOTS_ENV) or (artifacts / "screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / "viewer-example_failing-long_flow.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 50_000  # a rendered page with frames, not a blank one
    page.goto((artifacts / "index.html").as_uri())
    page.screenshot(path=str(shots / "index-example_failing.png"))


def test_report_run_rebuilds_the_index_with_the_tests_that_were_not_kept(probe, failing_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    artifacts, summary = failing_run
    data = json.loads(summary.read_text())
    data["tests"].append({"nodeid": "tests/test_ok.py::test_green", "outcome": "passed", "tier": "light", "steps": 3})
    extended = tmp_path / "run.json"
    extended.write_text(json.dumps(data))
    (artifacts / "index.html").unlink()
    assert report_main(["--run", str(artifacts), "--summary", str(extended)]) == 0
    page = probe.page
    page.goto((artifacts / "index.html").as_uri())
    assert page.locator("tr.test").count() == 4
    green = page.locator("tr.test", has_text="test_green")
    assert "not kept" in green.inner_text() and green.locator("a").count() == 0
    assert page.locator("tr.test a.viewer").count() == 3
    page.locator("#filter").fill("milestone")
    assert page.locator("tr.test:visible").count() == 1
    assert report_main(["--run", str(tmp_path / "missing")]) == 1
    assert report_main(["--run", str(artifacts), "--summary", str(tmp_path / "nope.json")]) == 1


def test_guistate_show_serves_the_artifacts_on_loopback_until_ctrl_c(probe, failing_run) -> None:  # type: ignore[no-untyped-def]
    artifacts, _ = failing_run
    proc = subprocess.Popen([sys.executable, "-m", "pytest_guistate.cli", "show", str(artifacts), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, line + (proc.stderr.read() if proc.poll() is not None else "")
        url = line.split(" at ", 1)[1].split()[0]
        assert url.endswith("/index.html")
        page: Any = probe.page
        page.goto(url)
        page.locator("tr.test a.viewer").first.click()
        page.wait_for_selector(".detail.shown")
        # the frames are served too: every inline <image> of the viewer decoded
        assert page.evaluate("() => document.querySelectorAll('defs image').length") > 0
        assert page.evaluate("() => document.querySelector('.detail.shown svg').getBBox().width") > 0
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "stopped" in out


def test_guistate_show_refuses_a_missing_dir_and_a_bad_port(tmp_path: Path) -> None:
    from pytest_guistate.report.viewer_server import show_main

    assert show_main([str(tmp_path / "missing")]) == 2
    assert show_main([str(tmp_path), "--port", "70000"]) == 2
