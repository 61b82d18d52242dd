"""The LLM exchange of a step in the viewer, from a real replayed run of the example suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST = "example_suite/test_llm.py::test_actor_deletes_one_post_and_an_ai_check_confirms_it"


def test_llm_step_shows_prompt_answer_tokens_cost_and_thumbnails(probe, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    artifacts = tmp_path / "artifacts"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", TEST, "--guistate=full", "--guistate-retain=on", "-p", "no:cacheprovider",
         f"--guistate-artifacts={artifacts}", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    [report] = artifacts.glob("*/report.html")
    page = probe.page
    page.goto(report.as_uri() + "#step-1")
    llm = page.locator("#step-1 details.llm").first
    summary = llm.locator("summary").first.inner_text()
    assert summary.startswith("actor") and "tokens" in summary and "$" in summary
    assert llm.locator(".llm-answer").inner_text().startswith("tap(")
    assert page.evaluate("() => Array.from(document.querySelectorAll('#step-1 .llm img')).map(i => i.naturalWidth)") \
        and page.evaluate("() => document.querySelector('#step-1 .llm img').naturalWidth") > 0
    llm.locator("details summary", has_text="prompt").click()
    assert len(llm.locator(".llm-prompt").inner_text()) > 200
    assert "LLM" in page.locator("header").inner_text()  # the test's total tokens and cost
    # the actor's final `done` came after the last step: listed, not dropped
    assert "done(" in (page.locator("#llm-other").text_content() or "")
