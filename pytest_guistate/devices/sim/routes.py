"""The W3C/Appium endpoint table of the simulated phone, and the session and screen endpoints.

Handlers are plain functions of a `Request`; they run with the session's lock held unless the
route says otherwise (find, which must release it between implicit-wait polls). Anything they
raise is turned into a W3C error body by the server. Element endpoints live in
`routes_element.py`, input and app endpoints in `routes_input.py`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_guistate.devices.sim.errors import W3CError, invalid_argument
from pytest_guistate.devices.sim.webdriver_session import SessionStore, SimSession

__all__ = ["ROUTES", "Request", "Route", "match_route", "route"]


@dataclass
class Request:
    store: SessionStore
    params: dict[str, str]
    body: dict[str, Any]
    session: SimSession | None = None

    @property
    def sess(self) -> SimSession:
        assert self.session is not None, "route declared without {sid}"
        return self.session


Handler = Callable[[Request], Any]


@dataclass(frozen=True)
class Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler
    locked: bool = True  # hold the session lock around the handler
    template: str = field(default="", compare=False)


ROUTES: list[Route] = []


def route(method: str, template: str, *, locked: bool = True) -> Callable[[Handler], Handler]:
    regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template)

    def register(handler: Handler) -> Handler:
        ROUTES.append(Route(method, re.compile(f"^{regex}/?$"), handler, locked, template))
        return handler

    return register


def match_route(method: str, path: str) -> tuple[Route, dict[str, str]]:
    """The route for a request; unknown path -> "unknown command", wrong verb -> "unknown method"."""
    allowed = []
    for route in ROUTES:
        found = route.pattern.match(path)
        if found is None:
            continue
        if route.method == method:
            return route, found.groupdict()
        allowed.append(route.method)
    if allowed:
        raise W3CError("unknown method", f"{method} is not allowed on {path}; use {', '.join(sorted(set(allowed)))}")
    raise W3CError("unknown command", f"no command at {method} {path}")


# --- server and sessions -------------------------------------------------------------------


@route("GET", "/status")
def _status(req: Request) -> Any:
    return {"ready": True, "message": "pytest-guistate simulated phone", "build": {"version": "guistate-sim"}}


@route("GET", "/sessions")
def _sessions(req: Request) -> Any:
    return [{"id": s.session_id, "capabilities": s.capabilities} for s in req.store.sessions()]


@route("POST", "/session")
def _new_session(req: Request) -> Any:
    session = req.store.create(req.body)
    return {"sessionId": session.session_id, "capabilities": session.capabilities}


@route("GET", "/session/{sid}")
def _get_session(req: Request) -> Any:
    return req.sess.capabilities


@route("DELETE", "/session/{sid}", locked=False)
def _delete_session(req: Request) -> Any:
    req.store.delete(req.params["sid"])
    return None


@route("GET", "/session/{sid}/timeouts")
def _get_timeouts(req: Request) -> Any:
    return req.sess.timeouts()


@route("POST", "/session/{sid}/timeouts")
def _set_timeouts(req: Request) -> Any:
    req.sess.set_timeouts(req.body)
    return None


# --- screen ----------------------------------------------------------------------------------


@route("GET", "/session/{sid}/screenshot")
def _screenshot(req: Request) -> Any:
    return base64.b64encode(req.sess.phone.screenshot_png()).decode("ascii")


@route("GET", "/session/{sid}/source")
def _source(req: Request) -> Any:
    return req.sess.phone.page_source()


@route("GET", "/session/{sid}/window/rect")
def _window_rect(req: Request) -> Any:
    return {"x": 0, "y": 0, "width": req.sess.phone.width, "height": req.sess.phone.height}


@route("GET", "/session/{sid}/window/current/size")
@route("GET", "/session/{sid}/window/{handle}/size")
def _window_size(req: Request) -> Any:
    return {"width": req.sess.phone.width, "height": req.sess.phone.height}


@route("GET", "/session/{sid}/window")
def _window_handle(req: Request) -> Any:
    return "NATIVE_APP"


@route("GET", "/session/{sid}/window/handles")
def _window_handles(req: Request) -> Any:
    return ["NATIVE_APP"]


@route("GET", "/session/{sid}/orientation")
def _orientation(req: Request) -> Any:
    return "PORTRAIT"


@route("GET", "/session/{sid}/appium/settings")
def _get_settings(req: Request) -> Any:
    return req.sess.settings


@route("POST", "/session/{sid}/appium/settings")
def _update_settings(req: Request) -> Any:
    settings = req.body.get("settings")
    if not isinstance(settings, dict):
        raise invalid_argument("'settings' must be a JSON object")
    req.sess.settings.update(settings)
    return None
