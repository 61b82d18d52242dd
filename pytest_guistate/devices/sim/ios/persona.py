"""Which driver the simulated phone imitates for a session: UiAutomator2 (Android) or XCUITest (iOS).

The choice is made once per session from its capabilities (issue 11): `guistate:platform`
(`android` | `ios`) if given, else `platformName` (`iOS`) or `appium:automationName`
(`XCUITest`). A contradiction (e.g. `platformName=iOS` with `automationName=UiAutomator2`) is
refused the way Appium refuses it: no driver matches that pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_guistate.devices.sim.model import SimError

__all__ = ["ANDROID", "IOS", "IosScreen", "match_platform", "platform_of"]

ANDROID = "android"
IOS = "ios"
_DRIVERS = {ANDROID: "uiautomator2", IOS: "xcuitest"}
_PLATFORM_NAMES = {ANDROID: "android", IOS: "ios"}


def match_platform(caps: dict[str, Any]) -> tuple[str | None, str]:
    """`(platform, "")` for a capability set the sim can serve, else `(None, why not)`."""
    explicit = caps.get("guistate:platform")
    if explicit is not None and str(explicit).lower() not in _DRIVERS:
        return None, f"guistate:platform={explicit!r} (expected 'android' or 'ios')"
    name = str(caps.get("platformName", "")).lower() or None
    driver = str(caps.get("appium:automationName", "")).lower() or None
    wanted = str(explicit).lower() if explicit is not None else None
    for platform in (wanted,) if wanted else (IOS, ANDROID):
        if name not in (None, _PLATFORM_NAMES[platform]) or driver not in (None, _DRIVERS[platform]):
            continue
        if wanted is None and platform == IOS and name is None and driver is None:
            continue  # nothing says iOS: the default persona is Android, as before issue 11
        return platform, ""
    shown = ", ".join(f"{k}={caps[k]!r}" for k in ("guistate:platform", "platformName", "appium:automationName")
                      if k in caps)
    return None, shown or "no platform"


def platform_of(caps: dict[str, Any]) -> str:
    """The persona for an already matched capability set (`SimError` for an impossible one)."""
    platform, why = match_platform(caps)
    if platform is None:
        raise SimError("session not created", f"no simulated driver for {why}")
    return platform


@dataclass(frozen=True)
class IosScreen:
    """An iPhone's screen: size in points and pixels per point (default an iPhone 15: 393x852 at 3x)."""

    width_pt: int = 393
    height_pt: int = 852
    scale: int = 3

    @property
    def width_px(self) -> int:
        return self.width_pt * self.scale

    @property
    def height_px(self) -> int:
        return self.height_pt * self.scale

    @classmethod
    def from_capabilities(cls, caps: dict[str, Any]) -> IosScreen:
        """`guistate:screen` is `{"width": pt, "height": pt, "scale": 2|3}` on the iOS persona."""
        screen = caps.get("guistate:screen")
        if screen is None:
            return cls()
        if not isinstance(screen, dict) or set(screen) - {"width", "height", "scale"}:
            raise SimError("invalid argument",
                           f"guistate:screen on iOS must be {{'width': pt, 'height': pt, 'scale': 1-3}}, got {screen!r}")
        values = {"width": screen.get("width", cls.width_pt), "height": screen.get("height", cls.height_pt),
                  "scale": screen.get("scale", 3)}
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int):
                raise SimError("invalid argument", f"guistate:screen {key} must be an integer, got {value!r}")
        if values["scale"] not in (1, 2, 3):
            raise SimError("invalid argument", f"guistate:screen scale must be 1, 2 or 3, got {values['scale']!r}")
        return cls(values["width"], values["height"], values["scale"])
