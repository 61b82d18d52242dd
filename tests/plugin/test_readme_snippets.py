"""The documentation's Python snippets, extracted from README.md and docs/*.md and run verbatim on the sim.

A new user copies them as they are; a copy kept in a test would pass after the page drifted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(page: Path | None = None) -> list[str]:
    """The ```python blocks of one page, or of README.md and every docs page."""
    return [b for p in ([page] if page else PAGES) for b in FENCE.findall(p.read_text(encoding="utf-8"))]


def block_with(marker: str, page: Path) -> str:
    found = [b for b in python_blocks(page) if marker in b]
    where = page.relative_to(ROOT)
    assert len(found) == 1, f"{where} should have one ```python block containing {marker!r}, found {len(found)}"
    return found[0]


def test_every_python_block_of_the_docs_is_covered_here() -> None:
    """A new block (README.md or docs/*.md) gets a test here (by a marker line below) or this fails."""
    covered = ("def test_delete_a_post", "# conftest.py", "def test_delete_a_note",
               "from pytest_guistate import DeviceError, ElementNotReady, WebViewGone",
               # run elsewhere, verbatim: tests/plugin/test_query_plugin.py (docs/llm-steps.md's query example) and
               # tests/cache/test_export.py (docs/export.md's generated file is what export-test writes, then run)
               "def read_price(device, guistate, shop)", '"""Exported by `guistate export-test` from a verified LLM run.')
    blocks = python_blocks()
    assert blocks, "no ```python block found in README.md or docs/"
    uncovered = [b.splitlines()[0] for b in blocks if not any(c in b for c in covered)]
    assert not uncovered, f"```python blocks not run by tests/plugin/test_readme_snippets.py: {uncovered}"


def test_the_errors_block_of_writing_tests_imports_the_device_errors() -> None:
    """docs/writing-tests.md's errors block, as printed, in a fresh interpreter: the names are the device's own."""
    import subprocess
    import sys

    block = block_with("from pytest_guistate import DeviceError", ROOT / "docs" / "writing-tests.md")
    check = "from pytest_guistate.devices import errors\nassert (DeviceError, ElementNotReady, WebViewGone) == " \
            "(errors.DeviceError, errors.ElementNotReady, errors.WebViewGone)\n"
    done = subprocess.run([sys.executable, "-c", block + check], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_first_readme_example_passes_verbatim(pytester: pytest.Pytester) -> None:
    """Android locators (`android:id/button1`): it is the UiAutomator2 persona's example."""
    pytester.makepyfile(test_readme=block_with("def test_delete_a_post", ROOT / "README.md"))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)


def test_the_hybrid_app_example_passes_verbatim_with_no_password_saved(pytester: pytest.Pytester) -> None:
    """docs/hybrid-apps.md's example on the sim's Hybrid app (a real headless Chromium behind its web view)."""
    pytester.makepyfile(test_hybrid_doc=block_with("def test_delete_a_note", ROOT / "docs" / "hybrid-apps.md"))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--guistate=full",
                                          "--guistate-artifacts=art", "--guistate-retain=on")
    result.assert_outcomes(passed=1)
    saved = [f for f in (pytester.path / "art").rglob("*") if f.is_file()]
    assert saved, "--guistate-retain=on keeps the passing test's folder"
    assert not [f for f in saved if b"correct-horse" in f.read_bytes()], "the password is in a saved file"


def test_the_hooks_conftest_of_writing_tests_loads_and_redacts(pytester: pytest.Pytester) -> None:
    """The hooks block (docs/writing-tests.md) is a conftest as printed: it must load, and its card pattern must
    scrub the journal."""
    pytester.makeconftest(block_with("# conftest.py", ROOT / "docs" / "writing-tests.md"))
    pytester.makepyfile(test_card="""
        import pytest

        @pytest.mark.guistate(app="com.guistate.settings", tier="standard")
        def test_card(device, guistate):
            guistate.goal("card 4111 1111 1111 1111")
            with guistate.step("look"):
                device.swipe(500, 1500, 500, 1400)
            assert False, "fail to keep the folder"
    """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--guistate-artifacts=art")
    result.assert_outcomes(failed=1)
    journals = list((pytester.path / "art").rglob("journal.jsonl"))
    assert journals, "the failed test's folder should be kept"
    text = journals[0].read_text(encoding="utf-8")
    assert "4111 1111 1111 1111" not in text and "[redacted]" in text


def test_set_faults_takes_keywords_as_the_docs_show(pytester: pytest.Pytester) -> None:
    """docs/simulated-phone.md: `device.set_faults(refresh_delay=60.0)` changes a fault at run time."""
    pytester.makepyfile(test_readme_set_faults="""
        import pytest

        @pytest.mark.guistate(app="com.guistate.feed")
        def test_faults(device, guistate):
            device.set_faults(refresh_delay=60.0)
            device.tap(desc="Delete post by Carol")
            device.tap(id="android:id/button1")
            assert device.exists(text="Carol"), "the list should redraw late under refresh_delay=60.0"

        @pytest.mark.guistate(app="com.guistate.feed")
        def test_a_dict_is_refused_with_the_keyword_form(device):
            with pytest.raises(TypeError, match=r"set_faults takes keywords.*device.set_faults[(][*][*]faults[)]"):
                device.set_faults({"refresh_delay": 0.5})
    """)
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q").assert_outcomes(passed=2)
