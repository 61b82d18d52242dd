"""report.html: escaped, self-contained, with the timeline picture and the step details."""

from __future__ import annotations

import re
import shutil
import subprocess
from itertools import pairwise
from pathlib import Path

import pytest
from lxml import etree
from lxml import html as lxml_html

from tests.helpers.scenario import XSS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _page(done) -> lxml_html.HtmlElement:  # type: ignore[no-untyped-def]
    return lxml_html.fromstring(done.report.read_text(encoding="utf-8"))


def test_app_and_test_text_is_escaped_never_markup(failed_run) -> None:  # type: ignore[no-untyped-def]
    _, done, _ = failed_run
    page = _page(done)
    assert page.xpath("//img[@onerror]") == [] and page.xpath("//*[@onerror]") == []
    assert all(img.get("src", "").startswith("data:image/") for img in page.xpath("//img"))
    goal = page.get_element_by_id("goal").text_content()
    assert XSS in goal  # shown as text
    step_names = [span.text_content() for span in page.xpath("//div[contains(@class,'detail')]//span[@class='sname']")]
    assert any(XSS in name for name in step_names)
    svg_titles = " ".join(t.text_content() for t in page.xpath("//*[local-name()='title']"))
    assert XSS in svg_titles


def test_nothing_is_loaded_from_the_network(failed_run) -> None:  # type: ignore[no-untyped-def]
    _, done, _ = failed_run
    text = done.report.read_text(encoding="utf-8")
    page = _page(done)
    refs = page.xpath("//@src | //@href | //*[local-name()='image']/@href | //*[local-name()='use']/@href")
    for ref in refs:
        assert ref.startswith(("data:", "#", "frames/", "crops/")), ref
    assert not re.search(r"(?:src|href)=\"(?:https?:)?//", text)
    assert "Content-Security-Policy" in text and "default-src 'none'" in text


def test_timeline_has_anchors_by_type_links_and_crop_thumbnails(failed_run) -> None:  # type: ignore[no-untyped-def]
    run, done, _ = failed_run
    page = _page(done)
    svg = page.xpath("//*[local-name()='svg' and contains(@class, 'timeline')]")[0]
    anchors = svg.xpath(".//*[local-name()='g' and contains(@class, 'anchor ')]")
    graph = run.session.anchors.to_dict()
    assert [a.get("data-anchor") for a in anchors] == [a["id"] for a in graph["anchors"]]
    types = {a.get("class").split()[1] for a in anchors}
    assert {"anchor-SUBGOAL", "anchor-STATE_CHANGE", "anchor-CONTEXT_INFO", "anchor-EXCEPTION",
            "anchor-FINISH"} <= types
    thumbs = svg.xpath(".//*[local-name()='image' and @class='thumb']")
    # issue 44: a thumbnail is the anchor's crop file, drawn small (the page carries no copy)
    assert len(thumbs) >= 2 and all(t.get("href").startswith("crops/") for t in thumbs)
    assert all((done.folder / t.get("href")).is_file() for t in thumbs)
    # issue 23: thumbnails never cover one another (the step's two EXCEPTIONs, 43 px apart, share one crop:
    # one thumbnail is drawn)
    spans = sorted((float(t.get("y")), float(t.get("x")), float(t.get("x")) + float(t.get("width"))) for t in thumbs)
    assert all(a[0] != b[0] or b[1] >= a[2] for a, b in pairwise(spans)), spans
    links = svg.xpath(".//*[local-name()='path' and contains(@class, 'link ')]")
    assert len(links) == len(graph["links"]) > 0
    steps = svg.xpath(".//*[local-name()='g' and @class='step-mark']")
    assert [s.get("data-step") for s in steps] == [str(i) for i in range(1, len(run.session.steps) + 1)]


def test_step_details_have_frames_regions_crops_and_state(failed_run) -> None:  # type: ignore[no-untyped-def]
    run, done, _ = failed_run
    page = _page(done)
    detail = page.get_element_by_id("step-5")  # "tap Log in": the login form -> settings list
    roles = [c.text_content() for c in detail.xpath(".//div[@class='frames']//figcaption")]
    assert roles == ["before", "after"]
    assert detail.xpath(".//*[local-name()='use']")
    regions = detail.xpath(".//*[local-name()='rect' and @class='region']")
    assert len(regions) == 2 * len(run.session.steps[4].regions) > 0
    assert detail.xpath(".//img[@class='crop-before']") and detail.xpath(".//img[@class='crop']")
    state = detail.xpath(".//details/pre")[0].text_content()
    assert '"signed in"' in state  # full tier: the state after this step
    assert page.get_element_by_id("triage").text_content().count("stale_screen_repetition") == 1
    tracker = [li.get("class") for li in page.xpath("//ol[@class='tracker']/li")]
    assert tracker == ["done", "done", "current"]


def test_report_size_stays_in_check(failed_run) -> None:  # type: ignore[no-untyped-def]
    _, done, _ = failed_run
    size = done.report.stat().st_size
    frames = sum(p.stat().st_size for p in (done.folder / "frames").iterdir())
    crops = sum(p.stat().st_size for p in (done.folder / "crops").iterdir())
    # base64 costs 4/3; each frame and crop is embedded at most once, plus small thumbnails
    assert size < (frames + crops) * 4 / 3 + 200_000


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)")
def test_headless_chromium_renders_the_timeline_and_reveals_the_failed_step(failed_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, done, _ = failed_run
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=2000", "--dump-dom",
           done.report.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = lxml_html.fromstring(proc.stdout)
    assert dom.xpath("//*[local-name()='image' and @class='thumb']")
    assert dom.xpath("//*[@onerror]") == []
    shown = dom.xpath("//div[contains(@class, 'detail') and contains(@class, 'shown')]")
    assert [d.get("id") for d in shown] == ["step-7"]  # the script opened the failed step
    shot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
                    "--window-size=1400,1800", done.report.as_uri()], capture_output=True, timeout=90, check=True)
    assert shot.stat().st_size > 20_000


def test_timeline_svg_file_is_well_formed_standalone(failed_run) -> None:  # type: ignore[no-untyped-def]
    _, done, _ = failed_run
    root = etree.fromstring((done.folder / "timeline.svg").read_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
