"""The README's Python snippets, extracted from README.md and run verbatim on the sim.

A new user copies them as they are; a copy kept in a test would pass after the README drifted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks() -> list[str]:
    return FENCE.findall(README.read_text(encoding="utf-8"))


def block_with(marker: str) -> str:
    found = [b for b in python_blocks() if marker in b]
    assert len(found) == 1, f"README.md should have one ```python block containing {marker!r}, found {len(found)}"
    return found[0]


def test_every_python_block_of_the_readme_is_covered_here() -> None:
    """A new block gets a test here (by a marker line below) or this fails."""
    covered = ("def test_delete_a_post", "# conftest.py")
    blocks = python_blocks()
    assert blocks, "no ```python block found in README.md"
    uncovered = [b.splitlines()[0] for b in blocks if not any(c in b for c in covered)]
    assert not uncovered, f"README ```python blocks not run by tests/plugin/test_readme_snippets.py: {uncovered}"


def test_the_first_readme_example_passes_verbatim(pytester: pytest.Pytester) -> None:
    """Android locators (`android:id/button1`): it is the UiAutomator2 persona's example."""
    pytester.makepyfile(test_readme=block_with("def test_delete_a_post"))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)


def test_the_readme_hooks_conftest_loads_and_redacts(pytester: pytest.Pytester) -> None:
    """The hooks block is a conftest as printed: it must load, and its card pattern must scrub the journal."""
    pytester.makeconftest(block_with("# conftest.py"))
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


def test_set_faults_takes_keywords_as_the_readme_shows(pytester: pytest.Pytester) -> None:
    """README: `device.set_faults(refresh_delay=60.0)` changes a fault at run time."""
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
