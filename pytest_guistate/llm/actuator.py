"""`Actuator`: the few device verbs the actor needs, over either the Appium `Device` or the
in-process `DirectScreen`. Both are wrapped so the actor code has one shape to call; every call is
made inside `TaskSession.perform`, never on its own. `platform` (android, ios) decides which tools
the actor is offered (`tools.actor_tools`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pytest_guistate.core.observation import Observation

if TYPE_CHECKING:
    from pytest_guistate.devices.device import Device
    from pytest_guistate.devices.sim.model import PhoneModel

__all__ = ["Actuator", "as_actuator"]


@runtime_checkable
class Actuator(Protocol):
    platform: str

    def observe(self) -> Observation: ...

    def pull_to_refresh(self) -> bool: ...

    def tap_point(self, x: int, y: int) -> None: ...

    def type_focused(self, text: str) -> None: ...

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> None: ...

    def back(self) -> None: ...

    def home(self) -> None: ...


class _Screen(Protocol):
    """What `_PhoneActuator` uses of an in-process screen over a `PhoneModel` (the tests' `DirectScreen`)."""

    phone: PhoneModel
    action_count: int

    def observe(self) -> Observation: ...

    def pull_to_refresh(self) -> object: ...

    def tap(self, x: int, y: int) -> object: ...

    def back(self) -> object: ...

    def home(self) -> object: ...


class _DeviceActuator:
    """Over `pytest_guistate.devices.device.Device` (W3C actions, active element)."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.platform = str(device.platform)

    def observe(self) -> Observation:
        return self.device.observe()

    def pull_to_refresh(self) -> bool:
        return bool(self.device.pull_to_refresh())

    def tap_point(self, x: int, y: int) -> None:
        self.device.tap(x=x, y=y)

    def type_focused(self, text: str) -> None:
        self.device.type(text)

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> None:
        self.device.swipe(x1, y1, x2, y2)

    def back(self) -> None:
        self.device.back()

    def home(self) -> None:
        self.device.home()


class _PhoneActuator:
    """Over `DirectScreen` (a `PhoneModel` in process): typing goes to the focused node's key."""

    def __init__(self, screen: _Screen) -> None:
        self.screen = screen
        self.phone = screen.phone
        self.platform = str(getattr(screen.phone, "platform", "android"))

    def observe(self) -> Observation:
        return self.screen.observe()

    def pull_to_refresh(self) -> bool:
        return bool(self.screen.pull_to_refresh())

    def tap_point(self, x: int, y: int) -> None:
        self.screen.tap(x, y)

    def type_focused(self, text: str) -> None:
        focused = next((node for node in self.phone.root().walk() if node.focused), None)
        if focused is None:
            raise LookupError("no focused field to type into: tap an editable element first")
        self.screen.action_count += 1
        self.phone.type_text(focused.key, text)

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> None:
        self.screen.action_count += 1
        self.phone.swipe(x1, y1, x2, y2, getattr(self.screen, "swipe_ms", 300))

    def back(self) -> None:
        self.screen.back()

    def home(self) -> None:
        self.screen.home()


def as_actuator(target: Any) -> Actuator:
    """Wrap a `Device`, a `DirectScreen`, or pass through anything that already is an `Actuator`."""
    if isinstance(target, Actuator):
        return target
    if hasattr(target, "driver") and hasattr(target, "tap"):
        return _DeviceActuator(target)
    if hasattr(target, "phone") and hasattr(target, "tap"):
        return _PhoneActuator(target)
    raise TypeError(f"{type(target).__name__} is neither a Device, a DirectScreen nor an Actuator "
                    "(platform; observe, pull_to_refresh, tap_point, type_focused, swipe, back, home)")
