"""What `Device` does on a UiAutomator2 (Android) session where it is more than one driver call,
the counterpart of `ios.py` (issue 11).

* Home is the HOME key: `mobile: pressKey` with `keycode` 3 (Android's `KEYCODE_HOME`), which
  UiAutomator2 and the simulated phone both serve; the app left behind keeps its screen.
"""

from __future__ import annotations

from typing import Any

__all__ = ["HOME", "KEYCODE_HOME"]

KEYCODE_HOME = 3  # android.view.KeyEvent.KEYCODE_HOME
HOME: tuple[str, dict[str, Any]] = ("pressKey", {"keycode": KEYCODE_HOME})
