"""Each distinct image is stored once per test folder (issue 44, item 5): `example_failing`'s 9-step
full-tier failing test, kept with `--guistate-retain=on`, writes at most 120 KB a step counting every
file of its folder, no two of its files hold the same bytes, and report.html names the stored files
instead of carrying the images again. Before: the same crop bytes were saved under seven names
(hard links: seven files) and report.html carried 179 KB of crops as data URIs, 196 KB a step."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from lxml import html as lxml_html

from pytest_guistate.report.images import decode, encode_crop
from pytest_guistate.report.journal import read_journal

ROOT = Path(__file__).resolve().parents[2]
LONG_FLOW = "example_failing/test_expected_failures.py::test_long_flow_fails_at_a_late_step"
STEP_BUDGET = 120 * 1024


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("evidence")
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        LONG_FLOW,
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "--guistate=full",
        "--guistate-retain=on",
        f"--guistate-artifacts={out / 'art'}",
        f"--guistate-memory={out / 'memory.sqlite'}",
    ]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    [test] = [p for p in (out / "art").iterdir() if p.is_dir()]
    return test


def test_every_file_is_distinct_and_a_step_costs_at_most_120_kb(folder: Path) -> None:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    by_content: dict[str, list[str]] = {}
    for path in files:
        by_content.setdefault(hashlib.sha1(path.read_bytes()).hexdigest(), []).append(
            path.relative_to(folder).as_posix()
        )
    assert [names for names in by_content.values() if len(names) > 1] == []
    steps = read_journal(folder).steps
    assert len(steps) == 9
    total = sum(p.stat().st_size for p in files)
    assert total / len(steps) <= STEP_BUDGET, f"{total / len(steps) / 1024:.0f} KB a step"


def test_the_report_names_the_stored_files_and_carries_no_image(folder: Path) -> None:
    text = (folder / "report.html").read_text(encoding="utf-8")
    carried = set(re.findall(r"data:image/[a-z+]+;base64,[A-Za-z0-9+/=]+", text))
    assert all(len(uri) < 100 for uri in carried), "an image is carried in the page"  # the 1-px placeholder
    page = lxml_html.fromstring(text)
    [data] = page.xpath("//script[@id='image-data']/text()")
    shown = set(json.loads(data).values())
    journal = read_journal(folder)
    crops = {c for e in journal.steps for key in ("crops", "crops_before") for c in (e["files"].get(key) or []) if c}
    assert crops and shown == crops  # every crop drawn from its own file, each once
    thumbs = page.xpath("//*[local-name()='image' and @class='thumb']/@href")
    assert thumbs and set(thumbs) <= crops  # the timeline's thumbnails are crop files drawn small


def test_a_crop_repeated_across_steps_is_one_file_named_by_its_content(folder: Path) -> None:
    journal = read_journal(folder)
    named = [c for e in journal.steps for key in ("crops", "crops_before") for c in (e["files"].get(key) or []) if c]
    assert len(set(named)) < len(named), "the flow opens and cancels one dialog: its crops repeat"
    for rel in set(named):
        data = (folder / rel).read_bytes()
        assert rel == f"crops/{hashlib.sha1(data).hexdigest()[:16]}.webp"


def test_a_stored_crop_is_lossless() -> None:
    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, size=(61, 47, 3), dtype=np.uint8)
    pixels[10:30, 5:40] = (12, 200, 90)  # flat colour beside noise, as on a screen
    assert np.array_equal(decode(encode_crop(pixels)), pixels)
    assert np.array_equal(cv2.imdecode(np.frombuffer(encode_crop(pixels), np.uint8), cv2.IMREAD_COLOR), pixels)
