"""The apps part of `Device`: app lifecycle, `mobile:` commands, the home screen, and the sim's
own commands (fault injection, the action log, ground truth).

A browser session has no apps: there `activate_app` opens an http(s) URL and the rest say so
(`CapabilityUnavailable`); the sim-only commands name the device they are not available on.
"""

from __future__ import annotations

from typing import Any

from pytest_guistate.devices import android, ios
from pytest_guistate.devices.errors import CapabilityUnavailable
from pytest_guistate.devices.protocols import CanDrive

__all__ = ["AppsMixin"]


class AppsMixin(CanDrive):
    """Apps, `mobile:` commands and the sim's commands of one session."""

    def open_url(self, url: str) -> None:
        """Load a page in a web session (a browser has no apps to activate)."""
        if not self.is_web:
            raise CapabilityUnavailable(f"open_url() needs a browser session; {self.url} runs a native app")
        self._act(f"open {url}", lambda: self.driver.get(url))

    def activate_app(self, package: str) -> None:
        """Bring an app to the front; in a browser session an http(s) URL is opened instead."""
        if self.is_web:
            if package.startswith(("http://", "https://")):
                self.open_url(package)
                return
            raise CapabilityUnavailable(
                f"activate_app({package!r}): {self.url} is a browser session with no apps; pass a page URL"
            )
        self._act(f"activate {package}", lambda: self.driver.activate_app(package))

    def terminate_app(self, package: str) -> bool:
        if self.is_web:
            raise CapabilityUnavailable(f"terminate_app({package!r}): {self.url} is a browser session with no apps")
        return bool(self._act(f"terminate {package}", lambda: self.driver.terminate_app(package)))

    def mobile(self, command: str, params: dict[str, Any] | None = None) -> Any:
        """Run `mobile: <command>`; `CapabilityUnavailable` when this driver has no such command."""
        if self.is_web:
            raise CapabilityUnavailable(
                f"'mobile: {command}' is not available on {self.url}: this is a browser session, whose "
                "driver runs execute_script as page JavaScript"
            )
        return self._act(f"mobile: {command}", lambda: self.driver.execute_script(f"mobile: {command}", params or {}))

    def home(self) -> None:
        """The home screen, where app icons are: the HOME key on Android (`mobile: pressKey` 3), the
        home button on iOS (`mobile: pressButton` home); the app left keeps its screen."""
        if self.is_web:
            raise CapabilityUnavailable(f"home() on {self.url}: a browser session has no home screen")
        command, params = ios.HOME if self.platform == "ios" else android.HOME
        self.mobile(command, params)

    # -- sim-only ------------------------------------------------------------------------
    def set_faults(self, *mapping: Any, **faults: Any) -> None:
        """Change the simulated phone's fault injection: `set_faults(refresh_delay=2.0, ...)`."""
        if mapping:
            raise TypeError("set_faults takes keywords, e.g. device.set_faults(refresh_delay=2.0); "
                            "for a dict, unpack it: device.set_faults(**faults)")
        self._require_sim("set_faults")
        self._act("set faults", lambda: self.driver.execute_script("mobile: guistateFaults", faults))

    def action_log(self) -> list[dict[str, Any]]:
        """What really happened (effective actions only): the sim's log, or a test page's
        `window.__guistateActionLog` (the web Feed keeps one in the same shape)."""
        if self.is_web:
            return list(self._page_hook("action_log", "return window.__guistateActionLog"))
        self._require_sim("action_log")
        return list(self._call("action log", lambda: self.driver.execute_script("mobile: guistateActionLog", {})))

    def ground_truth(self) -> dict[str, Any]:
        if self.is_web:
            script = "return window.__guistateGroundTruth ? window.__guistateGroundTruth() : null"
            return dict(self._page_hook("ground_truth", script))
        self._require_sim("ground_truth")
        return dict(self._call("ground truth", lambda: self.driver.execute_script("mobile: guistateGroundTruth", {})))

    def _page_hook(self, what: str, script: str) -> Any:
        value = self._call(what, lambda: self.driver.execute_script(script))
        if value is None:
            raise CapabilityUnavailable(
                f"{what}(): the page open on {self.url} exposes no window.__guistate* hook "
                "(only the sim and test pages such as the web Feed do)"
            )
        return value

    def _require_sim(self, what: str) -> None:
        if not self.is_sim:
            raise CapabilityUnavailable(f"{what}() exists only on the simulated phone; this device is {self.url}")
