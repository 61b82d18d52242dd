"""The home screen: one icon per installed app; tapping an icon opens (or resumes) that app.

An app `mobile: removeApp` took off the phone has no icon until it is installed again.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps.base import WHITE, App, AppContext, Style, View

__all__ = ["LAUNCHER", "LauncherApp"]

LAUNCHER = "com.android.launcher3"


class LauncherApp(App):
    package = LAUNCHER
    label = "Home"
    primary = (48, 63, 159)

    def __init__(self, ctx: AppContext, apps: list[tuple[str, str, tuple[int, int, int]]],
                 installed: Callable[[str], bool] = lambda package: True) -> None:
        super().__init__(ctx)
        self.apps = apps  # (package, label, colour) in icon order
        self.installed = installed

    def screen_id(self) -> str:
        return "home"

    def build(self) -> View:
        m, px = self.m, self.m.px
        window = View(f"{LAUNCHER}/window", "android.widget.FrameLayout", Box(0, m.status_h, m.width, m.height),
                      rid=f"{LAUNCHER}:id/workspace", package=LAUNCHER, style=Style(bg=(40, 53, 147)))
        cols, cell_w, cell_h = 4, m.width // 4, px(300)
        top0 = m.status_h + px(160)
        for i, (package, label, color) in enumerate(a for a in self.apps if self.installed(a[0])):
            left, top = (i % cols) * cell_w, top0 + (i // cols) * cell_h
            key = f"launcher/app/{package}"
            cell = View(key, "android.view.ViewGroup", Box(left, top, left + cell_w, top + cell_h), desc=label,
                        rid=f"{LAUNCHER}:id/icon", on_tap=partial(self.ctx.launch, package), focusable=True)
            c = left + cell_w // 2
            cell.add(View(f"{key}/icon", "android.widget.ImageView", Box(c - px(80), top + px(30), c + px(80),
                                                                          top + px(190)),
                          desc=f"{label} icon", style=Style(kind="avatar", bg=color, fg=WHITE, size=px(64),
                                                            glyph=label[0])))
            cell.add(self.label_view(f"{key}/label", Box(left + px(8), top + px(206), left + cell_w - px(8),
                                                         top + px(266)), label, size=34, color=WHITE, align="center"))
            window.add(cell)
        return window

    def build_content(self, area: Box) -> list[View]:
        return []
