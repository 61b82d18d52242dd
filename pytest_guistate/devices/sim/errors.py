"""W3C WebDriver errors as the simulated phone's server sends them.

Every failure leaves the server as `{"value": {"error", "message", "stacktrace"}}` with the HTTP
status the W3C spec assigns to the error code, so the stock Selenium/Appium error handler raises
the same exception class it would against a real Appium server.
"""

from __future__ import annotations

import math
from typing import Any

from pytest_guistate.devices.sim.model import SimError

__all__ = [
    "W3C_STATUS",
    "W3CError",
    "arg_dict",
    "arg_int",
    "arg_number",
    "arg_str",
    "error_body",
    "from_sim_error",
    "invalid_argument",
    "is_number",
]

# W3C WebDriver §6.6 error codes and their HTTP statuses (plus Appium's "unknown method").
W3C_STATUS: dict[str, int] = {
    "element click intercepted": 400,
    "element not interactable": 400,
    "invalid argument": 400,
    "invalid element state": 400,
    "invalid selector": 400,
    "invalid session id": 404,
    "javascript error": 500,
    "move target out of bounds": 500,
    "no such alert": 404,
    "no such element": 404,
    "no such window": 404,
    "no such context": 404,
    "session not created": 500,
    "stale element reference": 404,
    "timeout": 500,
    "unable to capture screen": 500,
    "unknown command": 404,
    "unknown error": 500,
    "unknown method": 405,
    "unsupported operation": 500,
    "payload too large": 413,  # not a W3C code; the client maps it to WebDriverException
}


class W3CError(Exception):
    """A request the server refuses; `error` is the W3C code, the status follows from it."""

    def __init__(self, error: str, message: str, status: int | None = None, stacktrace: str = "") -> None:
        super().__init__(f"{error}: {message}")
        self.error = error
        self.message = message
        self.status = status if status is not None else W3C_STATUS.get(error, 500)
        self.stacktrace = stacktrace  # details where a client matches the message exactly

    def body(self) -> dict[str, Any]:
        return error_body(self.error, self.message, self.stacktrace)


def error_body(error: str, message: str, stacktrace: str = "") -> dict[str, Any]:
    return {"value": {"error": error, "message": message, "stacktrace": stacktrace}}


def from_sim_error(exc: SimError) -> W3CError:
    """A phone refusal keeps its W3C code; an unknown code becomes "unknown error" (HTTP 500)."""
    code = exc.w3c_error if exc.w3c_error in W3C_STATUS else "unknown error"
    message = exc.message if code == exc.w3c_error else f"{exc.w3c_error}: {exc.message}"
    return W3CError(code, message)


def invalid_argument(message: str) -> W3CError:
    return W3CError("invalid argument", message)


_MISSING = object()


def _arg(body: dict[str, Any], name: str, default: Any) -> Any:
    value = body.get(name, _MISSING)
    if value is _MISSING or value is None:
        if default is _MISSING:
            raise invalid_argument(f"missing required field {name!r}")
        return default
    return value


def arg_str(body: dict[str, Any], name: str, default: Any = _MISSING) -> Any:
    """`body[name]` as a string; missing -> `default` or invalid argument naming the field."""
    value = _arg(body, name, default)
    if value is not default and not isinstance(value, str):
        raise invalid_argument(f"field {name!r} must be a string, got {type(value).__name__}")
    return value


def is_number(value: Any, limit: float = 1e9) -> bool:
    """A JSON number usable as a coordinate or duration: not a bool, not NaN/inf, not absurdly large."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return abs(value) <= limit and (isinstance(value, int) or math.isfinite(value))


def arg_number(body: dict[str, Any], name: str, default: Any = _MISSING) -> Any:
    """A finite int or float (never a bool: JSON `true` is not a coordinate)."""
    value = _arg(body, name, default)
    if value is default:
        return value
    if not is_number(value):
        raise invalid_argument(f"field {name!r} must be a finite number, got {value!r}")
    return value


def arg_int(body: dict[str, Any], name: str, default: Any = _MISSING) -> Any:
    value = arg_number(body, name, default)
    return value if value is default else round(value)


def arg_dict(body: dict[str, Any], name: str, default: Any = _MISSING) -> Any:
    value = _arg(body, name, default)
    if value is not default and not isinstance(value, dict):
        raise invalid_argument(f"field {name!r} must be a JSON object, got {type(value).__name__}")
    return value
