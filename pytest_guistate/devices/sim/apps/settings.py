"""Settings (`com.guistate.settings`): a login form and a list of toggles.

Valid credentials: username ``qa@example.com``, password ``correct-horse`` (the `CREDENTIALS`
constant). Anything else shows "Invalid credentials". The password EditText reports bullets as
its text, like Android, and its clear text is never drawn, logged or put in the page source.
"""

from __future__ import annotations

from functools import partial

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps.base import (
    TEXT,
    TEXT2,
    WHITE,
    App,
    AppContext,
    Style,
    View,
)

__all__ = ["CREDENTIALS", "SettingsApp"]

CREDENTIALS = ("qa@example.com", "correct-horse")
_TOGGLES = [("wifi", "Wi-Fi", True), ("dark_mode", "Dark mode", False), ("notifications", "Notifications", True)]


class SettingsApp(App):
    package = "com.guistate.settings"
    label = "Settings"
    primary = (69, 90, 100)

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx)
        self.user: str | None = None
        self.error = False
        self.toggles = {key: default for key, _, default in _TOGGLES}

    def screen_id(self) -> str:
        return "settings" if self.user else "login"

    def _login(self) -> None:
        user = self.texts.get("settings/username", "").strip()
        ok = (user, self.texts.get("settings/password", "")) == CREDENTIALS
        self.ctx.log("login", user=user, success=ok)
        if ok:
            self.user, self.error, self.focused = user, False, None
            self.texts["settings/password"] = ""
        else:
            self.error = True

    def _logout(self) -> None:
        self.ctx.log("logout", user=self.user)
        self.user, self.texts, self.focused = None, {}, None

    def _toggle(self, key: str) -> None:
        self.toggles[key] = not self.toggles[key]
        self.ctx.log("toggle", setting=key, value=self.toggles[key])

    def on_enter(self, key: str) -> None:
        if key == "settings/password":
            self._login()

    def build_content(self, area: Box) -> list[View]:
        return self._settings(area) if self.user else self._login_form(area)

    def _login_form(self, area: Box) -> list[View]:
        px, top = self.m.px, area.top
        views = [
            self.label_view("settings/heading", Box(px(48), top + px(60), px(1032), top + px(140)),
                            "Sign in to sync your settings", size=48, bold=True, rid=f"{self.package}:id/heading"),
            self.edit("settings/username", Box(px(48), top + px(200), px(1032), top + px(336)), "Email"),
            self.edit("settings/password", Box(px(48), top + px(376), px(1032), top + px(512)), "Password",
                      password=True),
        ]
        if self.error:
            views.append(self.label_view("settings/error", Box(px(48), top + px(536), px(1032), top + px(600)),
                                         "Invalid credentials", size=38, color=(211, 47, 47),
                                         rid=f"{self.package}:id/error"))
        views.append(self.button("settings/login", Box(px(48), top + px(640), px(1032), top + px(776)), "Log in",
                                 self._login, rid=f"{self.package}:id/login"))
        return views

    def _settings(self, area: Box) -> list[View]:
        px, top = self.m.px, area.top
        views = [self.label_view("settings/account", Box(px(48), top + px(40), px(1032), top + px(120)),
                                 f"Signed in as {self.user}", size=40, color=TEXT2, rid=f"{self.package}:id/account")]
        y = top + px(160)
        for key, label, _ in _TOGGLES:
            on = self.toggles[key]
            row = View(f"settings/row/{key}", "android.widget.LinearLayout", Box(0, y, self.m.width, y + px(180)),
                       rid=f"{self.package}:id/row", on_tap=partial(self._toggle, key),
                       style=Style(kind="row", bg=WHITE))
            row.add(self.label_view(f"settings/row/{key}/title", Box(px(48), y + px(30), px(800), y + px(96)), label,
                                    size=46, color=TEXT, rid="android:id/title"),
                    self.label_view(f"settings/row/{key}/summary", Box(px(48), y + px(100), px(800), y + px(156)),
                                    "On" if on else "Off", size=36, color=TEXT2, rid="android:id/summary"),
                    View(f"settings/switch/{key}", "android.widget.Switch", Box(px(872), y + px(58), px(1032),
                                                                                 y + px(122)),
                         text="ON" if on else "OFF", rid="android:id/switch_widget", on_tap=partial(self._toggle, key),
                         checkable=True, checked=on, style=Style(kind="switch", bg=self.primary)))
            views.append(row)
            y += px(180)
        views.append(View("settings/logout", "android.widget.TextView", Box(0, y + px(40), self.m.width, y + px(200)),
                          text="Log out", rid=f"{self.package}:id/logout", on_tap=self._logout,
                          style=Style(kind="text", fg=(211, 47, 47), size=px(46), bold=True, align="center")))
        return views
