"""Run metadata for the viewer's header (issue 23: device, platform, capabilities without secrets,
start time, plugin version), taken once when the test's recorder is made."""

from __future__ import annotations

import functools
import re
from importlib import metadata
from typing import Any

__all__ = ["plugin_version", "public_capabilities", "run_metadata"]

# capability names whose values are credentials (Sauce/BrowserStack keys, tokens, app passwords)
_SECRET_NAME = re.compile(r"pass(word)?|secret|token|key|auth|credential|cookie|session", re.IGNORECASE)
_HIDDEN = "[hidden]"


@functools.cache
def plugin_version() -> str:
    """The installed version, looked up once a process: the lookup reads the package metadata from disk
    (~6 ms, every test's setup paid it)."""
    try:
        return metadata.version("pytest-guistate")
    except metadata.PackageNotFoundError:
        return "unknown"


def public_capabilities(caps: Any) -> dict[str, Any]:
    """`caps` with the value of every credential-looking name replaced, nested dicts too."""
    if not isinstance(caps, dict):
        return {}
    clean: dict[str, Any] = {}
    for name, value in caps.items():
        if _SECRET_NAME.search(str(name)) and not isinstance(value, (dict, bool)):
            clean[str(name)] = _HIDDEN
        elif isinstance(value, dict):
            clean[str(name)] = public_capabilities(value)
        else:
            clean[str(name)] = value
    return clean


def run_metadata(device: Any) -> dict[str, Any]:
    """What the viewer's header shows about the run: the device, platform and capabilities
    (credentials hidden) and the plugin's version; the journal's meta line adds the start time."""
    driver = getattr(device, "driver", None)
    platform = ""
    try:
        platform = str(getattr(device, "platform", "") or "")
    except Exception:  # noqa: BLE001 - a device that cannot tell its platform still gets a report
        platform = ""
    return {"platform": platform, "capabilities": public_capabilities(getattr(driver, "capabilities", None)),
            "plugin_version": plugin_version()}
