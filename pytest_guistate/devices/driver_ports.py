"""A port of its own for each Chromium session's chromedriver on this machine.

Appium's Chromium driver starts chromedriver on `appium:chromedriverPort`, 9515 unless the
capabilities name another (appium-chromium-driver's capability reference). Two sessions at once on
one host, such as xdist workers on one Appium server or two servers on one machine, then meet on
one chromedriver. The second session's start fails ("socket hang up", "ChromeDriver crashed during
startup"), or its commands reach the other session's browser ("invalid session id"). Both were
seen here with two Appium servers on one host.

So a Chromium session on a server at a loopback address gets a port that is free on this host,
unless its capabilities name one. A server elsewhere is left alone, since a port free here says
nothing about that host. There, give each device entry its own port (docs/appium.md, "Driver ports of parallel sessions on one host").
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pytest_guistate.support.loopback import is_loopback_host

__all__ = ["CHROMEDRIVER_PORT", "free_local_port", "with_driver_ports"]

CHROMEDRIVER_PORT = "appium:chromedriverPort"


def with_driver_ports(url: str, caps: Mapping[str, Any]) -> dict[str, Any]:
    """`caps` with a free `appium:chromedriverPort` added for a Chromium session on this machine."""
    out = dict(caps)
    automation = str(out.get("appium:automationName") or out.get("automationName") or "").lower()
    if automation != "chromium" or CHROMEDRIVER_PORT in out or not _is_loopback(url):
        return out
    out[CHROMEDRIVER_PORT] = free_local_port()
    return out


def free_local_port() -> int:
    """A TCP port nothing listens on now (the OS picks it; a later bind of it may still race)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _is_loopback(url: str) -> bool:
    return is_loopback_host(urlsplit(url).hostname or "")
