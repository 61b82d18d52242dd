"""A web view's engine for the simulated phone: a real headless Chromium behind a chromedriver.

The hybrid app's `android.webkit.WebView` (`XCUIElementTypeWebView` on the iOS persona) shows a
real page in a real browser, so a test in the web view context meets real DOM, CSS, timers and
event handling. UiAutomator2 proxies a web view context's commands to a chromedriver attached to
the app's WebView; the sim does the same with a chromedriver session whose window is emulated at
the web view's CSS size and the phone's device pixel ratio, so chromedriver's screenshot is the
web view in the phone's pixels and can be composited into the native frame.

chromedriver is started lazily (the first time the web view's pixels or its context are needed).
A `BrowserPool` owns them: a `SimServer`'s pool hands a browser that a closed session gave back,
reset to a blank page, to the next session whose web view has the same size (a Chromium start
costs a second or two), and stops them all with the server; a phone made without a server has a
pool of its own that stops with the phone. Without Chromium or chromedriver on PATH the error
names what is missing and the command that installs it.
"""

from __future__ import annotations

import atexit
import base64
import http.client
import json
import os
import signal
import subprocess
import threading
import time
from typing import Any

from pytest_guistate.devices.capabilities import CHROME_NAMES, CHROMEDRIVER_NAMES, CHROMIUM_ARGS, find_chromium
from pytest_guistate.devices.driver_ports import free_local_port
from pytest_guistate.devices.sim.model import ProxyReply, SimError

__all__ = ["INSTALL_HINT", "BrowserPool", "WebViewBrowser", "WebViewGone", "locate_chromium"]

INSTALL_HINT = "Debian/Ubuntu: sudo apt-get install chromium chromium-driver"
START_TIMEOUT_S = 20.0  # chromedriver listening and Chromium's session started, on a loaded machine
DEFAULT_COMMAND_TIMEOUT_S = 30.0  # a proxied command gets this long before the sim answers "timeout"


_LIVE: set[WebViewBrowser] = set()  # started browsers: stopped at exit if a phone was never closed


@atexit.register
def _stop_all() -> None:
    """chromedriver and Chromium are child processes that outlive this one unless stopped."""
    for browser in list(_LIVE):
        browser.close()


class WebViewGone(SimError):
    """The web view a command was meant for is no longer on screen (the page navigated to a native
    screen, or the app closed its web view): chromedriver's own wording for a destroyed WebView."""

    def __init__(self, why: str) -> None:
        super().__init__("no such window", f"no such window: target window already closed\n"
                                           f"from unknown error: web view not found ({why})")


def locate_chromium() -> tuple[str, str]:
    """(chromium, chromedriver) on PATH, or a `SimError` naming what is missing and how to install it."""
    browser, driver = find_chromium()
    missing = [f"{what} (looked for {', '.join(names)})"
               for what, found, names in (("Chromium", browser, CHROME_NAMES),
                                          ("chromedriver", driver, CHROMEDRIVER_NAMES)) if found is None]
    if missing or browser is None or driver is None:
        raise SimError("session not created",
                       f"the hybrid app's web view runs in a real headless Chromium, but {' and '.join(missing)} "
                       f"is not on PATH; install them ({INSTALL_HINT})")
    return browser, driver


class WebViewBrowser:
    """One chromedriver process and one Chromium session in it, at `css_width` x `css_height` CSS px
    and `pixel_ratio` device pixels per CSS px. Not thread-safe: the phone's session lock guards it."""

    def __init__(self, css_width: int, css_height: int, pixel_ratio: float) -> None:
        if css_width <= 0 or css_height <= 0 or pixel_ratio <= 0:
            raise ValueError(f"a web view must have a positive size, got {css_width}x{css_height} at {pixel_ratio}")
        self.css_width, self.css_height, self.pixel_ratio = css_width, css_height, pixel_ratio
        self._process: subprocess.Popen[bytes] | None = None
        self._port = 0
        self.session_id: str | None = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        return self.session_id is not None

    def process_group(self) -> int | None:
        """chromedriver's process group (Chromium's processes are in it), None when not running."""
        return None if self._process is None else self._process.pid

    def start(self, url: str) -> None:
        """Start chromedriver and its Chromium session on `url`; a started one just loads `url`."""
        with self._lock:
            if self.session_id is not None:
                self.navigate(url)
                return
            browser, driver = locate_chromium()
            self._port = free_local_port()
            # a process group of its own: Chromium's processes stop with chromedriver (`_stop_process`)
            self._process = subprocess.Popen([driver, f"--port={self._port}", "--log-level=OFF"],
                                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                self._wait_listening()
                reply = self.request("POST", "/session", {"capabilities": {"alwaysMatch": self._capabilities(browser)}},
                                     timeout=START_TIMEOUT_S)
                if reply.status != 200:
                    raise SimError("session not created", f"chromedriver refused the web view's session: {reply.body}")
                self.session_id = str(reply.value["sessionId"])
                _LIVE.add(self)
                self.navigate(url)
            except BaseException:
                self.session_id = None
                _LIVE.discard(self)
                self._stop_process()
                raise

    def _capabilities(self, browser: str) -> dict[str, Any]:
        metrics = {"width": self.css_width, "height": self.css_height, "pixelRatio": self.pixel_ratio,
                   "touch": True, "mobile": True}
        return {"browserName": "chrome", "pageLoadStrategy": "normal",
                "goog:chromeOptions": {"binary": browser, "args": list(CHROMIUM_ARGS),
                                       "mobileEmulation": {"deviceMetrics": metrics}}}

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self._process is not None and self._process.poll() is not None:
                raise SimError("session not created",
                               f"chromedriver exited at start with code {self._process.returncode}")
            try:
                if self.request("GET", "/status", None, timeout=2.0).status == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SimError("session not created", f"chromedriver did not listen within {START_TIMEOUT_S:g} s")
            time.sleep(0.05)

    def request(self, method: str, path: str, body: dict[str, Any] | None, timeout: float) -> ProxyReply:
        """One HTTP request to chromedriver; `OSError` (incl. timeout) when it does not answer."""
        conn = http.client.HTTPConnection("127.0.0.1", self._port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode("utf-8")
            headers = {"Content-Type": "application/json; charset=utf-8"} if data is not None else {}
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        try:
            parsed = json.loads(raw.decode("utf-8")) if raw else {"value": None}
        except ValueError:
            parsed = {"value": {"error": "unknown error", "message": f"chromedriver answered non-JSON: {raw[:200]!r}"}}
        return ProxyReply(response.status, parsed if isinstance(parsed, dict) else {"value": parsed})

    def command(self, method: str, suffix: str, body: dict[str, Any] | None,
                timeout: float = DEFAULT_COMMAND_TIMEOUT_S) -> ProxyReply:
        """A command of the Chromium session: `suffix` is the path after `/session/<id>`."""
        if self.session_id is None:
            raise SimError("unknown error", "the web view's browser is not started")
        try:
            return self.request(method, f"/session/{self.session_id}{suffix}", body, timeout)
        except TimeoutError as exc:
            raise SimError("timeout", f"chromedriver did not answer {method} {suffix} within {timeout:g} s "
                                      "(the web view's browser is hung)") from exc
        except OSError as exc:
            raise SimError("unknown error", f"chromedriver is unreachable for {method} {suffix}: {exc}") from exc

    def value(self, method: str, suffix: str, body: dict[str, Any] | None = None) -> Any:
        """A command's value, or a `SimError` carrying chromedriver's error."""
        reply = self.command(method, suffix, body)
        if reply.status != 200:
            error = reply.value if isinstance(reply.value, dict) else {}
            raise SimError(str(error.get("error", "unknown error")), str(error.get("message", reply.body)))
        return reply.value

    def frame_png(self) -> bytes:
        """The viewport's pixels for the native frame (CSS size times the pixel ratio): DevTools'
        `Page.captureScreenshot` with `optimizeForSpeed` through chromedriver, quicker to make and to
        decode than its W3C screenshot (see `devices/devtools_capture.py`); a client's screenshot in
        the web view context stays the W3C one, proxied."""
        reply = self.value("POST", "/goog/cdp/execute",
                           {"cmd": "Page.captureScreenshot", "params": {"format": "png", "optimizeForSpeed": True}})
        if not isinstance(reply, dict) or not isinstance(reply.get("data"), str):
            raise SimError("unable to capture screen", f"chromedriver's capture of the web view gave {reply!r:.200}")
        return base64.b64decode(reply["data"])

    def tap(self, x_css: float, y_css: float) -> None:
        """A touch at viewport CSS pixels (a native tap that landed on the web view)."""
        self._touch([{"type": "pointerMove", "duration": 0, "x": round(x_css), "y": round(y_css),
                      "origin": "viewport"},
                     {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}])

    def swipe(self, start: tuple[float, float], end: tuple[float, float], duration_ms: int) -> None:
        """A touch drag between viewport CSS points: the page scrolls as under a finger."""
        self._touch([{"type": "pointerMove", "duration": 0, "x": round(start[0]), "y": round(start[1]),
                      "origin": "viewport"},
                     {"type": "pointerDown", "button": 0},
                     {"type": "pointerMove", "duration": max(0, int(duration_ms)), "x": round(end[0]),
                      "y": round(end[1]), "origin": "viewport"},
                     {"type": "pointerUp", "button": 0}])

    def _touch(self, steps: list[dict[str, Any]]) -> None:
        self.value("POST", "/actions", {"actions": [{"type": "pointer", "id": "finger",
                                                     "parameters": {"pointerType": "touch"}, "actions": steps}]})

    def navigate(self, url: str) -> None:
        self.value("POST", "/url", {"url": url})

    def close(self) -> None:
        """End the Chromium session and stop chromedriver; safe to call twice."""
        with self._lock:
            if self.session_id is not None and self._process is not None and self._process.poll() is None:
                try:
                    self.request("DELETE", f"/session/{self.session_id}", None, timeout=10.0)
                except OSError:
                    pass  # chromedriver is stopped below either way
            self.session_id = None
            _LIVE.discard(self)
            self._stop_process()

    def _stop_process(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        self._signal_group(process, signal.SIGTERM)
        try:
            process.wait(5.0)
        except subprocess.TimeoutExpired:
            self._signal_group(process, signal.SIGKILL)
            process.wait(5.0)


    @staticmethod
    def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
        """chromedriver's whole group (the Chromium it started is in it), or just it if the group is gone."""
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            return  # already gone, with its group
        except PermissionError:
            process.send_signal(signum)

class BrowserPool:
    """Web view browsers handed out by size and taken back for the next session (see the module
    docstring). `keep` idle browsers at most; a browser whose reset fails is stopped, never reused."""

    def __init__(self, keep: int = 2) -> None:
        self.keep = keep
        self._idle: list[WebViewBrowser] = []
        self._lock = threading.Lock()
        self.closed = False

    def acquire(self, css_width: int, css_height: int, pixel_ratio: float) -> WebViewBrowser:
        """An idle browser of that size (already started, on a blank page) or a new, unstarted one."""
        with self._lock:
            for browser in self._idle:
                if (browser.css_width, browser.css_height, browser.pixel_ratio) == (css_width, css_height,
                                                                                     pixel_ratio):
                    self._idle.remove(browser)
                    return browser
        return WebViewBrowser(css_width, css_height, pixel_ratio)

    def release(self, browser: WebViewBrowser) -> None:
        """Take a browser back: blank page, no cookies, default timeouts; else stop it."""
        if not browser.started or self.closed or self.keep <= 0:
            browser.close()
            return
        try:
            browser.value("POST", "/url", {"url": "about:blank"})
            browser.value("DELETE", "/cookie")
            browser.value("POST", "/timeouts", {"implicit": 0, "pageLoad": 300_000, "script": 30_000})
        except SimError:
            browser.close()  # an alert, a hung page, a dead chromedriver: not worth keeping
            return
        with self._lock:
            if not self.closed and len(self._idle) < self.keep:
                self._idle.append(browser)
                return
        browser.close()

    def close(self) -> None:
        """Stop every idle browser; later releases stop theirs at once."""
        with self._lock:
            self.closed = True
            idle, self._idle = self._idle, []
        for browser in idle:
            browser.close()
