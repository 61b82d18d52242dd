"""The apps of the simulated phone, in launcher order.

All but Hybrid come preinstalled. Hybrid is installed by the session that opens it
(`appium:appPackage` / `appium:bundleId`, as `appium:app` installs the app under test) or by
`mobile: installApp`, so every other session's home screen stays the one recorded tests know.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pytest_guistate.devices.sim.apps.base import RGB, App, AppContext
from pytest_guistate.devices.sim.apps.feed import FeedApp
from pytest_guistate.devices.sim.apps.gallery import GalleryApp
from pytest_guistate.devices.sim.apps.hybrid import HybridApp
from pytest_guistate.devices.sim.apps.launcher import LAUNCHER, LauncherApp
from pytest_guistate.devices.sim.apps.settings import SettingsApp
from pytest_guistate.devices.sim.apps.shop import ShopApp

__all__ = ["INSTALLED", "LAUNCHER", "App", "AppContext", "InstalledApp", "LauncherApp"]


@dataclass(frozen=True)
class InstalledApp:
    package: str
    label: str
    color: RGB
    factory: Callable[[AppContext], App]
    preinstalled: bool = True  # False: on the phone only once a session opens or installs it


def _shop(letter: str) -> InstalledApp:
    return InstalledApp(f"com.guistate.shop{letter.lower()}", f"Shop{letter}",
                        (230, 81, 0) if letter == "A" else (106, 27, 154), lambda ctx: ShopApp(ctx, letter))


INSTALLED: dict[str, InstalledApp] = {
    app.package: app
    for app in [
        InstalledApp(FeedApp.package, FeedApp.label, FeedApp.primary, FeedApp),
        InstalledApp(GalleryApp.package, GalleryApp.label, GalleryApp.primary, GalleryApp),
        _shop("A"),
        _shop("B"),
        InstalledApp(SettingsApp.package, SettingsApp.label, SettingsApp.primary, SettingsApp),
        InstalledApp(HybridApp.package, HybridApp.label, HybridApp.primary, HybridApp, preinstalled=False),
    ]
}
