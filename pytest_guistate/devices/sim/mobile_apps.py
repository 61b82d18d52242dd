"""`mobile:` commands for the keyboard, deep links, app removal and the current activity (issue 25),
on both personas, with each driver's own argument names.

UiAutomator2 (its `executeMethodMap`): `isKeyboardShown`, `hideKeyboard` (no arguments; True when a
keyboard was hidden, False when none was up), `getCurrentActivity`, `deepLink {url, package,
waitForLaunch?}`, `removeApp {appId}`, `installApp {appPath}`, `isAppInstalled {appId}`; an app is
named by `appId` only (`{"bundleId": ...}` is refused as Appium refuses a missing required
parameter). XCUITest: `isKeyboardShown`, `hideKeyboard {keys?}` (the driver adds the key name
`done`; WebDriverAgent taps each key of those names until the keyboard is gone, and a keyboard without
such a key is an error), `clearApp
{bundleId}` (simulators), `deepLink {url, bundleId?}`, `removeApp {bundleId}`, `installApp {app}`,
`isAppInstalled {bundleId}`.

A deep link opens its app on its first screen: the sim's apps route no paths, and a URL's scheme
names the app when no package is given (`shopa://...` is `com.guistate.shopa`). Installing takes
only the sim's own apps, named by package.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pytest_guistate.devices.sim import mobile_reset  # noqa: F401  (clearApp first, wrapped below)
from pytest_guistate.devices.sim.apps import INSTALLED
from pytest_guistate.devices.sim.errors import W3CError, arg_str, invalid_argument
from pytest_guistate.devices.sim.ios.mobile import IOS_MOBILE_COMMANDS
from pytest_guistate.devices.sim.ios.translate import IosNode
from pytest_guistate.devices.sim.keyboard import KEYBOARD_PACKAGE
from pytest_guistate.devices.sim.mobile import MOBILE_COMMANDS
from pytest_guistate.devices.sim.model import AppState
from pytest_guistate.devices.sim.webdriver_session import SimSession

__all__ = ["required"]


def required(params: dict[str, Any], *names: str) -> list[str]:
    """The string arguments `names`, all required; refused with Appium's BadParametersError text."""
    values = [params.get(name) for name in names]
    if not all(isinstance(value, str) and value for value in values):
        wanted = '{"required":[' + ",".join(f'"{n}"' for n in names) + "]}"
        raise invalid_argument(f"Parameters were incorrect. We wanted {wanted} and you sent {sorted(params)}")
    return [str(value) for value in values]


def _url(params: dict[str, Any]) -> str:
    url: str = arg_str(params, "url")
    if not urlsplit(url).scheme:
        raise invalid_argument(f"'url' must be a URL with a scheme (myapp://path), got {url!r}")
    return url


def _app_of_scheme(url: str) -> str:
    scheme = urlsplit(url).scheme.lower()
    package = next((p for p in INSTALLED if p.rpartition(".")[2] == scheme), None)
    if package is None:
        schemes = sorted(f"{p.rpartition('.')[2]}://" for p in INSTALLED)
        raise invalid_argument(f"no app handles {url!r}; the simulated apps' schemes are {schemes}")
    return package


def _open_link(session: SimSession, package: str) -> None:
    if session.phone.app_state(package) == AppState.NOT_INSTALLED:
        raise invalid_argument(f"cannot open the deep link: {package!r} is not installed")
    session.phone.activate_app(package)


# -- UiAutomator2 ----------------------------------------------------------------------------------

def _android_keyboard_shown(session: SimSession, params: dict[str, Any]) -> bool:
    return session.phone.keyboard_field() is not None


def _android_hide_keyboard(session: SimSession, params: dict[str, Any]) -> bool:
    return session.phone.hide_keyboard()


def _current_activity(session: SimSession, params: dict[str, Any]) -> str:
    return session.phone.current_activity()


def _android_deep_link(session: SimSession, params: dict[str, Any]) -> None:
    url, package = required(params, "url", "package")
    _url({"url": url})
    _open_link(session, package)


def _android_remove(session: SimSession, params: dict[str, Any]) -> bool:
    (package,) = required(params, "appId")
    return session.phone.remove_app(package)


def _android_install(session: SimSession, params: dict[str, Any]) -> None:
    (package,) = required(params, "appPath")
    session.phone.install_app(package)


def _android_installed(session: SimSession, params: dict[str, Any]) -> bool:
    (package,) = required(params, "appId")
    return session.phone.app_state(package) != AppState.NOT_INSTALLED


def _android_app(command: str) -> Any:
    """activateApp / terminateApp / queryAppState / clearApp: `appId` required, as the driver's map says."""
    handler = MOBILE_COMMANDS[command]

    def checked(session: SimSession, params: dict[str, Any]) -> Any:
        required(params, "appId")
        return handler(session, params)

    return checked


# -- XCUITest -------------------------------------------------------------------------------------

def _ios_keyboard_shown(session: SimSession, params: dict[str, Any]) -> bool:
    return session.phone.keyboard_field() is not None


def _ios_hide_keyboard(session: SimSession, params: dict[str, Any]) -> None:
    """The driver sends `keys` + "done" to WDA, which taps the first keyboard key of one of those names."""
    keys = params.get("keys", [])
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise invalid_argument("'keys' must be a list of key names")
    names = keys if "done" in keys else [*keys, "done"]
    phone = session.phone
    if phone.keyboard_field() is None:
        return  # no keyboard: nothing to dismiss
    matched = [n for n in phone.root().walk() if isinstance(n, IosNode) and n.package == KEYBOARD_PACKAGE
               and n.cls in ("XCUIElementTypeKey", "XCUIElementTypeButton")
               and any(name in (n.name, n.label) for name in names)]
    if not matched:
        raise W3CError("unknown error", "Did not know how to dismiss the keyboard. Try to dismiss it in the way "
                                        "supported by your application under test.")
    for key in matched:  # WDA taps each matching key until the keyboard is gone
        phone.tap(*key.bounds.center)
        if phone.keyboard_field() is None:
            return
    raise W3CError("unknown error", f"The keyboard was not dismissed by the keys {names}")


def _ios_clear(session: SimSession, params: dict[str, Any]) -> bool:
    (bundle,) = required(params, "bundleId")
    if session.phone.app_state(bundle) == AppState.NOT_INSTALLED:
        raise invalid_argument(f"clearApp: {bundle!r} is not installed")
    session.phone.terminate_app(bundle)  # the sim keeps an app's data in its running instance
    return True


def _ios_deep_link(session: SimSession, params: dict[str, Any]) -> None:
    url = _url(params)
    bundle = params.get("bundleId")
    if bundle is not None and not isinstance(bundle, str):
        raise invalid_argument("'bundleId' must be a string")
    _open_link(session, bundle or _app_of_scheme(url))


def _ios_remove(session: SimSession, params: dict[str, Any]) -> bool:
    (bundle,) = required(params, "bundleId")
    return session.phone.remove_app(bundle)


def _ios_install(session: SimSession, params: dict[str, Any]) -> None:
    (app,) = required(params, "app")
    session.phone.install_app(app)


def _ios_installed(session: SimSession, params: dict[str, Any]) -> bool:
    (bundle,) = required(params, "bundleId")
    return session.phone.app_state(bundle) != AppState.NOT_INSTALLED


for _name in ("activateApp", "terminateApp", "queryAppState", "clearApp"):
    MOBILE_COMMANDS[_name] = _android_app(_name)
MOBILE_COMMANDS.update({
    "isKeyboardShown": _android_keyboard_shown, "hideKeyboard": _android_hide_keyboard,
    "getCurrentActivity": _current_activity, "deepLink": _android_deep_link, "removeApp": _android_remove,
    "installApp": _android_install, "isAppInstalled": _android_installed,
})
IOS_MOBILE_COMMANDS.update({
    "isKeyboardShown": _ios_keyboard_shown, "hideKeyboard": _ios_hide_keyboard, "clearApp": _ios_clear,
    "deepLink": _ios_deep_link, "removeApp": _ios_remove, "installApp": _ios_install,
    "isAppInstalled": _ios_installed,
})
