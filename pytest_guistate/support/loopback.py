"""Whether a host name is this machine's loopback: the one test in one place.

The test servers (the sim, the LLM reference server) bind loopback only, and a Chromium session's
chromedriver gets a locally free port only when its Appium server runs on this machine.
"""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback_host"]


def is_loopback_host(host: str) -> bool:
    """`localhost`, or an IPv4/IPv6 loopback address (`127.0.0.0/8`, `::1`)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
