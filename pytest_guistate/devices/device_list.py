"""The devices of `--guistate-device` (issue 6): URLs, or a JSON file with per-device capabilities.

`sim` → no pool (the embedded phone). `URL[,URL...]` → a pool in order. `@FILE.json` → a JSON list
of URL strings or `{"url", "capabilities", "name"}` objects; capabilities (`appium:udid`, vendor
options of a grid or device farm) go to that device's sessions untouched. An entry listed n times
is n concurrent sessions on it (a grid hub). Stdlib only: parsed at configure time.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = [
    "SIM", "DeviceListError", "DeviceSpec", "JsonFileError", "parse_device_option", "probe_status", "read_json_file",
    "server_request",
]

SIM = "sim"
PROBE_TIMEOUT_S = 5.0
_ENTRY_KEYS = ("url", "capabilities", "name")


class DeviceListError(ValueError):
    """`--guistate-device` (or its file) is malformed; the message names the entry."""


class JsonFileError(ValueError):
    """A JSON file named by an option is missing, unreadable or not JSON; the message names it."""


@dataclass(frozen=True)
class DeviceSpec:
    """One device of the pool: a server URL and the capabilities that select the phone behind it."""

    url: str
    capabilities: dict[str, Any] = field(default_factory=dict, hash=False)
    name: str = ""
    slot: int = 0  # the same device listed n times: n concurrent sessions (a grid, a farm hub)

    @property
    def display_url(self) -> str:
        """The URL without credentials (device farms put `user:key@` in it), for messages and reports."""
        parts = urlsplit(self.url)
        if parts.username is None and parts.password is None:
            return self.url
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, f"***@{host}", parts.path, parts.query, parts.fragment))

    @property
    def label(self) -> str:
        if self.name:
            text = f"{self.name} ({self.display_url})"
        else:
            udid = self.capabilities.get("appium:udid") or self.capabilities.get("udid")
            text = f"{self.display_url} [udid {udid}]" if udid else self.display_url
        return f"{text} (session slot {self.slot + 1})" if self.slot else text

    @property
    def key(self) -> str:
        """Identity of the device across processes and runs (one server may serve several udids);
        every slot of a device shares it, so a dead device takes all its slots out."""
        text = json.dumps([self.url, self.capabilities], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _check_url(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.startswith(("http://", "https://")) or not urlsplit(value).hostname:
        raise DeviceListError(f"{where}{value!r} is neither 'sim' nor an http(s):// Appium server URL")
    return value


def _entry(raw: object, where: str) -> DeviceSpec:
    if isinstance(raw, str):
        if raw.strip() == SIM:
            raise DeviceListError(f"{where}'sim' cannot be mixed with server URLs")
        return DeviceSpec(_check_url(raw.strip(), where))
    if not isinstance(raw, dict):
        raise DeviceListError(f"{where}must be a URL string or an object with 'url' (got {type(raw).__name__})")
    unknown = sorted(set(raw) - set(_ENTRY_KEYS))
    if unknown:
        raise DeviceListError(
            f"{where}unknown key(s) {', '.join(map(repr, unknown))} (allowed: {', '.join(_ENTRY_KEYS)}; "
            "put udid and vendor options under 'capabilities')"
        )
    if "url" not in raw:
        raise DeviceListError(f"{where}has no 'url'")
    caps = raw.get("capabilities", {})
    if not isinstance(caps, dict):
        raise DeviceListError(f"{where}'capabilities' must be a JSON object")
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise DeviceListError(f"{where}'name' must be a string")
    return DeviceSpec(_check_url(raw["url"], where), dict(caps), name)


def read_json_file(path_text: str, rootdir: Path, what: str = "file") -> Any:
    """The JSON of a file an option names: as given, else under `rootdir` (where the ini lives).
    Every way it can fail is a `JsonFileError` naming the file, never a bare traceback."""
    path = Path(path_text)
    if not path.is_absolute() and not path.exists():
        path = rootdir / path
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JsonFileError(f"no such {what} {path_text!r}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise JsonFileError(f"cannot read the {what} {path_text}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise JsonFileError(f"{path_text} is not valid JSON ({exc})") from None


def _from_file(path_text: str, rootdir: Path) -> list[DeviceSpec]:
    try:
        data = read_json_file(path_text, rootdir, "device file")
    except JsonFileError as exc:
        raise DeviceListError(str(exc)) from None
    if not isinstance(data, list) or not data:
        raise DeviceListError(f"{path_text} must hold a non-empty JSON list of devices")
    return [_entry(raw, f"{path_text} entry {i}: ") for i, raw in enumerate(data)]


def parse_device_option(value: str, rootdir: Path) -> tuple[DeviceSpec, ...]:
    """`sim` → `()`; `URL[,URL...]` or `@FILE.json` → the pool's devices, in order."""
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items or items == [SIM]:
        return ()
    if any(item.startswith("@") for item in items):
        if len(items) > 1:
            raise DeviceListError("@FILE must be the only value (list every device in the file)")
        specs = _from_file(items[0][1:], rootdir)
    else:
        if SIM in items:
            raise DeviceListError("'sim' cannot be mixed with server URLs")
        for item in items:
            _check_url(item, "")
        specs = [DeviceSpec(item) for item in items]
    slots: dict[str, int] = {}
    numbered = []
    for spec in specs:  # a repeated entry is one more concurrent session on the same server
        slot = slots.get(spec.key, 0)
        slots[spec.key] = slot + 1
        numbered.append(replace(spec, slot=slot))
    return tuple(numbered)


def server_request(url: str, path: str) -> urllib.request.Request:
    """A GET of `path` under a server URL; `user:key@` in the URL becomes Basic auth (device farms)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    request = urllib.request.Request(urlunsplit((parts.scheme, host, parts.path.rstrip("/") + path, "", "")),
                                     method="GET")
    if parts.username is not None:
        token = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        request.add_header("Authorization", "Basic " + base64.b64encode(token).decode())
    return request


def probe_status(spec: DeviceSpec, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """None when a server answers `GET {url}/status` (any HTTP status: a grid may want auth there),
    else why not — the reason a device is taken out of the pool."""
    request = server_request(spec.url, "/status")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            response.read(65536)
    except urllib.error.HTTPError as exc:
        exc.close()  # an error status is still an answer
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        detail = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        return f"no Appium server answers at {spec.display_url}: {detail}"
    return None
