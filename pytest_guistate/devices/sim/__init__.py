"""The simulated phone: a WebDriver server (`SimServer`) in front of phone models (`phone.py`)."""

from pytest_guistate.devices.sim.server import SimServer

__all__ = ["SimServer"]
