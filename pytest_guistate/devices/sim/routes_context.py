"""Contexts of a hybrid app, and the web view context's commands proxied to its chromedriver.

As UiAutomator2 lists them, `GET /contexts` is `NATIVE_APP` plus `WEBVIEW_<package>` while a web
view is on screen; the iOS persona names it `WEBVIEW_<app id>.<page id>` as the XCUITest driver
does (a web view shown anew is a new page, so a new name). `POST /context` with a name not listed
is the drivers' `no such context` ("No such context found."). In a web view context every command
but the driver's own (contexts, `/appium/...`, orientation, `mobile:` scripts, and the screenshot
with `appium:nativeWebScreenshot` or on iOS, whose default `webScreenshotMode` is `native`) goes
to the web view's chromedriver and its answer comes back unchanged. A web view context whose web
view has gone (the page linked to a native screen, the app closed it or left the screen) answers
chromedriver's `no such window` at once, never a hang.

Importing this module registers its routes in `routes.ROUTES`; `server.py` calls `proxied` first.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

from pytest_guistate.devices.sim.errors import W3CError, arg_str, from_sim_error, invalid_argument
from pytest_guistate.devices.sim.model import SimError
from pytest_guistate.devices.sim.routes import Request, route
from pytest_guistate.devices.sim.webdriver_session import SessionStore, SimSession
from pytest_guistate.devices.sim.webview import DEFAULT_COMMAND_TIMEOUT_S, WebViewGone

__all__ = ["NATIVE_APP", "proxied", "web_contexts"]

NATIVE_APP = "NATIVE_APP"
TIMEOUT_CAP = "guistate:webviewCommandTimeout"  # seconds a proxied command may take (default 30)
_SESSION_PATH = re.compile(r"^/session/(?P<sid>[^/]+)(?P<suffix>/.+?)/?$")
# the driver's own commands in a web view context (UiAutomator2's CHROME_NO_PROXY list, in spirit)
_NOT_PROXIED = re.compile(r"^/(context|contexts|appium(/.*)?|orientation)$")


def web_contexts(phone: Any) -> dict[str, int]:
    """The web view contexts on screen now, name -> which web view (its generation)."""
    state_of = getattr(phone, "web_view_state", None)
    state = state_of() if callable(state_of) else None
    if state is None:
        return {}
    if getattr(phone, "platform", "android") == "ios":
        app_id = 10_000 + zlib.crc32(state.package.encode()) % 90_000  # stands for the app's process id
        return {f"WEBVIEW_{app_id}.{state.generation}": state.generation}
    return {f"WEBVIEW_{state.package}": state.generation}


@route("GET", "/session/{sid}/contexts")
def _contexts(req: Request) -> Any:
    return [NATIVE_APP, *web_contexts(req.sess.phone)]


@route("GET", "/session/{sid}/context")
def _context(req: Request) -> Any:
    return req.sess.context


@route("POST", "/session/{sid}/context")
def _switch_context(req: Request) -> Any:
    """Switch; a web view's chromedriver starts here the first time (as UiAutomator2 starts it)."""
    name = arg_str(req.body, "name")
    session = req.sess
    if name == NATIVE_APP:
        session.context, session.web_generation = NATIVE_APP, 0
        return None
    contexts = web_contexts(session.phone)
    if name not in contexts:
        # the exact message the Appium client maps to NoSuchContextException; the details go in the trace
        raise W3CError("no such context", "No such context found.",
                       stacktrace=f"{name!r} is not one of the contexts {[NATIVE_APP, *contexts]}")
    session.phone.web_browser(contexts[name])
    session.context, session.web_generation = name, contexts[name]
    return None


def _native_here(session: SimSession, method: str, suffix: str, body: dict[str, Any]) -> bool:
    """The commands the driver answers itself even in a web view context."""
    if _NOT_PROXIED.match(suffix):
        return True
    if method == "POST" and suffix in ("/execute/sync", "/execute") and \
            str(body.get("script", "")).lstrip().startswith("mobile:"):
        return True
    if method == "GET" and suffix == "/screenshot":
        ios = getattr(session.phone, "platform", "android") == "ios"
        return ios or session.capabilities.get("nativeWebScreenshot") is True
    return False


def _timeout_s(session: SimSession) -> float:
    value = session.capabilities.get(TIMEOUT_CAP, DEFAULT_COMMAND_TIMEOUT_S)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 3600:
        raise invalid_argument(f"capability {TIMEOUT_CAP} must be seconds in (0, 3600], got {value!r}")
    return float(value)


def proxied(store: SessionStore, method: str, path: str, body: dict[str, Any]) -> tuple[bool, Any]:
    """`(True, value)` when the request belongs to a web view context and was answered by its
    chromedriver (its error raised as the same W3C error), else `(False, None)`."""
    found = _SESSION_PATH.match(path)
    if found is None:
        return False, None
    session = store.get(found["sid"])
    suffix = found["suffix"]
    with session.lock:
        if session.closed or session.context == NATIVE_APP or _native_here(session, method, suffix, body):
            return False, None
        try:
            browser = session.phone.web_browser(session.web_generation)
            if method == "GET" and suffix == "/screenshot":
                _screenshot_fault(store, session)
            reply = browser.command(method, suffix, body if method == "POST" else None, timeout=_timeout_s(session))
        except SimError as exc:
            raise from_sim_error(exc) from exc
    if reply.status != 200:
        error = reply.value if isinstance(reply.value, dict) else {}
        raise W3CError(str(error.get("error", "unknown error")),
                       str(error.get("message", f"chromedriver answered HTTP {reply.status}")), reply.status)
    return True, reply.value


def _screenshot_fault(store: SessionStore, session: SimSession) -> None:
    """The `webview_screenshot_hang` fault: chromedriver's screenshot of the web view hangs that long;
    past the command deadline the sim answers `timeout` at the deadline (as a proxy that gives up)."""
    faults = getattr(session.phone, "faults", None)
    hang = float(getattr(faults, "webview_screenshot_hang", 0.0) or 0.0)
    if hang <= 0:
        return
    deadline = _timeout_s(session)
    if store.stopping.wait(min(hang, deadline)):
        raise WebViewGone("the simulated phone's server is stopping")
    if hang >= deadline:
        raise SimError("timeout", f"the web view's screenshot (proxied to chromedriver) did not answer within "
                                  f"{deadline:g} s ({TIMEOUT_CAP}); the webview_screenshot_hang fault holds it")
