"""The live progress display: on a TTY only, never in captured/CI output."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_guistate.progress import TerminalProgress


class _Capture:
    @contextmanager
    def global_and_fixture_disabled(self) -> Iterator[None]:
        yield


def test_status_is_written_after_pytests_text_and_erased_without_a_trace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    writer = SimpleNamespace(width_of_current_line=30, fullwidth=120)
    progress_view = SimpleNamespace(completed=["signed in"], total=3, current="dark mode on")
    session = SimpleNamespace(progress=progress_view)
    live = TerminalProgress(SimpleNamespace(_tw=writer), _Capture(), "tests/test_x.py::test_login", session)
    live.on_step(SimpleNamespace(index=4, outcome="settled"))
    shown = out.getvalue()
    assert shown == " [guistate test_login: step 4 settled, milestones 1/3, now: dark mode on]"
    live.clear()
    erased = out.getvalue()[len(shown):]
    assert erased == "\b" * len(shown) + " " * len(shown) + "\b" * len(shown)
    live.clear()  # nothing left to erase: writes nothing
    assert out.getvalue() == shown + erased


def test_status_never_overflows_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    writer = SimpleNamespace(width_of_current_line=70, fullwidth=80)
    session: Any = SimpleNamespace(progress=SimpleNamespace(completed=[], total=0, current=None))
    live = TerminalProgress(SimpleNamespace(_tw=writer), _Capture(), "t.py::test_a_very_long_name", session)
    live.on_step(SimpleNamespace(index=1, outcome="ok"))
    assert len(out.getvalue()) == 80 - 70 - 2


def test_no_live_display_when_output_is_not_a_terminal(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.guistate(app="com.guistate.settings")
        def test_typing(device, guistate):
            guistate.perform("type", lambda: device.type("qa@example.com", id="username"), idempotent=False)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "[guistate" not in result.stdout.str()
