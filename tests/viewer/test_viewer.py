"""report.html as a trace viewer, driven in headless Chromium: filmstrip, keys, deep links, tree search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.report.finish import FinishedTest
from tests.helpers.scenario import Run, run_failing
from tests.viewer.viewer_scenarios import HOSTILE, hostile_run


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, FinishedTest]:
    return run_failing(tmp_path_factory.mktemp("viewer"))


def _url(done: FinishedTest, fragment: str = "") -> str:
    assert done.report is not None
    return done.report.as_uri() + fragment


def _shown(page: Any) -> list[str]:
    return page.eval_on_selector_all(".detail.shown", "els => els.map(e => e.id)")


def test_opens_on_the_failed_step_with_its_reason_frames_and_anchors(probe, failing) -> None:  # type: ignore[no-untyped-def]
    run, done = failing
    page = probe.page
    page.goto(_url(done))
    assert _shown(page) == ["step-7"]  # "wait for sync", the step the test died on
    detail = page.locator("#step-7")
    assert "Synced just now" in detail.locator(".reason").inner_text()
    assert detail.locator(".pill").inner_text().lower() == "failed"
    stages = detail.locator("table.attempts td:first-child").all_inner_texts()
    assert stages[:2] == ["initial", "settle"]
    assert detail.locator(".anchor-list li.t-EXCEPTION").count() >= 1
    assert page.locator(".film").count() == len(run.session.steps) == 7
    assert page.locator(".film.current").get_attribute("data-step") == "7"
    # the frames are really drawn: the <image> defs decode (a broken data URI has no size)
    width = page.evaluate("() => document.querySelector('#frame-0').getBBox().width")
    assert width == 1
    assert page.locator("#failure .headline").inner_text().startswith("\u2717 Failed at step 7 of 7")


def test_filmstrip_click_and_arrow_keys_move_through_the_steps(probe, failing) -> None:  # type: ignore[no-untyped-def]
    _, done = failing
    page = probe.page
    page.goto(_url(done))
    page.locator(".film[data-step='2']").click()
    assert _shown(page) == ["step-2"]
    assert page.evaluate("() => location.hash") == "#step-2"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert _shown(page) == ["step-4"]
    page.keyboard.press("ArrowLeft")
    assert _shown(page) == ["step-3"] and page.evaluate("() => location.hash") == "#step-3"
    for _ in range(10):  # clamps at the first step
        page.keyboard.press("ArrowLeft")
    assert _shown(page) == ["step-1"]
    page.locator("#tree-search").focus()
    page.keyboard.press("ArrowRight")  # typing in the search box never changes the step
    assert _shown(page) == ["step-1"]


def test_deep_link_opens_that_step_and_anchor_links_jump(probe, failing) -> None:  # type: ignore[no-untyped-def]
    _, done = failing
    page = probe.page
    page.goto(_url(done, "#step-5"))
    assert _shown(page) == ["step-5"]
    assert page.locator("#step-5 .sname").inner_text() == "tap Log in"
    # an anchor of step 5 is linked to anchors of other steps; following a link opens that step
    link = page.locator("#step-5 .alinks a").first
    target = link.get_attribute("href")
    assert target is not None and target.startswith("#step-")
    link.click()
    page.wait_for_function(f"() => location.hash === '{target}'")
    assert _shown(page) == [target[1:]]
    page.evaluate("() => { location.hash = '#step-99'; }")  # no such step: the view stays
    assert _shown(page) == [target[1:]]
    page.goto("about:blank")
    page.goto(_url(done, "#step-99"))  # opened at no such step: the failed step, not a blank page
    assert _shown(page) == ["step-7"]


def test_tree_outline_highlights_the_changed_node_and_search_finds_nodes(probe, failing) -> None:  # type: ignore[no-untyped-def]
    _, done = failing
    page = probe.page
    page.goto(_url(done, "#step-6"))  # toggle dark mode: the Dark mode row changed
    highlighted = page.locator("#tree-host .node.hl")
    assert highlighted.count() == 1
    row_text = page.evaluate("() => document.querySelector('#tree-host .node.hl').parentElement.textContent")
    assert "Dark mode" in row_text
    assert page.locator("#tree-step").inner_text() == "after step 6"
    page.locator("#tree-search").fill("switch_widget")
    assert page.locator("#tree-count").inner_text() == "3 matches"
    assert page.locator("#tree-host .node.match").count() == 3
    page.locator("#tree-search").fill("no such node anywhere")
    assert page.locator("#tree-count").inner_text() == "0 matches"
    # collapsing works and a search opens the collapsed group again
    page.locator("#tree-search").fill("")
    page.evaluate("() => document.querySelectorAll('#tree-host details').forEach(d => d.open = false)")
    page.locator("#tree-search").fill("Notifications")
    assert page.locator("#tree-host .node.match").first.is_visible()
    # the password field's text never reaches the tree, though its node is there
    page.goto(_url(done, "#step-4"))
    tree_text = page.locator("#tree-host").inner_text()
    assert "password" in tree_text and "correct-horse" not in tree_text


def test_hostile_app_text_stays_text(probe, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, done = hostile_run(tmp_path)
    page = probe.page
    page.goto(_url(done, "#step-2"))
    assert page.evaluate("() => document.querySelectorAll('[onerror]').length") == 0
    # an image is the page's placeholder or a file of the test's folder (issue 44: crops are drawn from their files)
    folder = done.report.parent.as_uri() + "/"
    sources = page.evaluate("() => Array.from(document.images).map(i => i.src)")
    allowed = ("data:image/gif;base64,", folder + "crops/", folder + "frames/")
    assert sources and all(s.startswith(allowed) for s in sources), sources
    assert HOSTILE in page.locator("#step-2 .sname").inner_text()
    assert HOSTILE in page.locator("#goal").inner_text()
    page.locator("#tree-search").fill("{{7*7}}")  # the typed text, in the email field's node
    assert page.locator("#tree-host .node.match").count() >= 1
    assert HOSTILE in page.locator("#tree-host .node.match").first.inner_text()
    body = page.locator("body").inner_text()
    assert "{{7*7}}" in body and "Welcome 49" not in body
    page.goto(_url(done, "#step-3"))
    assert "Welcome {{7*7}}" in page.locator("#step-3 .reason").inner_text()
    # the probe fixture asserts no alert() ran and no script error happened
