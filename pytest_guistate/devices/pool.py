"""Device pools (issue 6): several Appium servers or phones, one per test process at a time.

`--guistate-device` takes a comma list of URLs or `@devices.json` (URLs with per-device
capabilities such as `appium:udid`). Each test process (xdist worker) leases one device for its
lifetime with an `flock` on a per-device lock file: the OS drops the lock when the process ends,
even on a crash, so no stale lease outlives a worker. Locks are keyed by the device itself (URL +
capabilities) in one directory per user on this host, so two runs, or two lists sharing a
device, never drive one phone at once. A device that stops answering is recorded dead for the
run (a marker file every worker reads) and the worker moves on to a free one.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from pytest_guistate.devices.errors import DeviceError

try:  # POSIX; without it (Windows) leases are per process only, with a warning
    import fcntl
except ImportError:  # pragma: no cover - exercised on Windows only
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "SIM",
    "DeviceListError",
    "DevicePool",
    "DevicePoolWarning",
    "DeviceSpec",
    "parse_device_option",
    "probe_status",
]

SIM = "sim"
PROBE_TIMEOUT_S = 5.0
_STALE_RUN_S = 24 * 3600.0  # run folders of dead-device markers older than this are removed
_ENTRY_KEYS = ("url", "capabilities", "name")


class DeviceListError(ValueError):
    """`--guistate-device` (or its file) is malformed; the message names the entry."""


class DevicePoolWarning(UserWarning):
    """A device was taken out of the pool; the run goes on without it."""


@dataclass(frozen=True)
class DeviceSpec:
    """One device of the pool: a server URL and the capabilities that select the phone behind it."""

    url: str
    capabilities: dict[str, Any] = field(default_factory=dict, hash=False)
    name: str = ""

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
            return f"{self.name} ({self.display_url})"
        udid = self.capabilities.get("appium:udid") or self.capabilities.get("udid")
        return f"{self.display_url} [udid {udid}]" if udid else self.display_url

    @property
    def key(self) -> str:
        """Identity of the device across processes and runs (one server may serve several udids)."""
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


def _from_file(path_text: str, rootdir: Path) -> list[DeviceSpec]:
    path = Path(path_text)
    if not path.is_absolute() and not path.exists():
        path = rootdir / path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DeviceListError(f"no such device file {path_text!r}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DeviceListError(f"cannot read the device file {path_text}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DeviceListError(f"{path_text} is not valid JSON ({exc})") from None
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
    seen: set[str] = set()
    for spec in specs:
        if spec.key in seen:
            raise DeviceListError(f"{spec.label} is listed twice with the same capabilities")
        seen.add(spec.key)
    return tuple(specs)


def probe_status(spec: DeviceSpec, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """None when a server answers `GET {url}/status` (any HTTP status: a grid may want auth there),
    else why not — the reason a device is taken out of the pool."""
    parts = urlsplit(spec.url)
    host = parts.netloc.rpartition("@")[2]
    status_url = urlunsplit((parts.scheme, host, parts.path.rstrip("/") + "/status", "", ""))
    request = urllib.request.Request(status_url, method="GET")
    if parts.username is not None:
        token = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        request.add_header("Authorization", "Basic " + base64.b64encode(token).decode())
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            response.read(65536)
    except urllib.error.HTTPError as exc:
        exc.close()  # an error status is still an answer
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        detail = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        return f"no Appium server answers at {spec.display_url}: {detail}"
    return None


def default_lock_dir() -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"guistate-devices-{uid}"


class DevicePool:
    """This process's view of the pool: leases one device at a time, records dead ones for the run."""

    def __init__(
        self,
        specs: Sequence[DeviceSpec],
        *,
        run_id: str,
        worker: str | None = None,
        lock_dir: Path | None = None,
        wait_s: float = 0.0,
        probe_timeout_s: float = PROBE_TIMEOUT_S,
    ) -> None:
        if not specs:
            raise ValueError("a device pool needs at least one device")
        self.specs = tuple(specs)
        self.worker = worker
        self.wait_s = wait_s
        self.probe_timeout_s = probe_timeout_s
        self.lock_dir = lock_dir or default_lock_dir()
        self.run_dir = self.lock_dir / ("run-" + "".join(c for c in run_id if c.isalnum() or c in "-_"))
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._held: tuple[DeviceSpec, int] | None = None
        self._warned: set[str] = set()
        _prune_stale_runs(self.lock_dir, keep=self.run_dir)

    @property
    def current(self) -> DeviceSpec | None:
        return self._held[0] if self._held else None

    def acquire(self) -> DeviceSpec:
        """The device this process holds, else the first free live one (from this worker's offset)."""
        if self._held is not None:
            return self._held[0]
        deadline = time.monotonic() + self.wait_s
        while True:
            busy = self._try_lease()
            if self._held is not None:
                return self._held[0]
            if not busy or time.monotonic() >= deadline:
                raise DeviceError(self._no_device_message(busy))
            time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))

    def probe(self, spec: DeviceSpec) -> str | None:
        return probe_status(spec, self.probe_timeout_s)

    def mark_dead(self, spec: DeviceSpec, reason: str) -> None:
        """Take a device out of the pool for the rest of the run (every worker skips it)."""
        marker = self.run_dir / f"dead-{spec.key}.json"
        tmp = marker.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"device": spec.label, "reason": reason, "by": self._holder()}), encoding="utf-8")
        os.replace(tmp, marker)
        if self._held is not None and self._held[0] == spec:
            self.release()
        if spec.key not in self._warned:
            self._warned.add(spec.key)
            warnings.warn(DevicePoolWarning(f"guistate: device {spec.label} is taken out of the pool: {reason}"),
                          stacklevel=2)

    def dead(self) -> dict[str, str]:
        """Device key → why it was taken out, as recorded by any process of this run."""
        found: dict[str, str] = {}
        for marker in self.run_dir.glob("dead-*.json"):
            try:
                found[marker.stem[len("dead-"):]] = str(json.loads(marker.read_text(encoding="utf-8"))["reason"])
            except (OSError, ValueError, KeyError) as exc:
                found[marker.stem[len("dead-"):]] = f"(unreadable dead-device marker {marker}: {exc})"
        return found

    def release(self) -> None:
        if self._held is not None:
            os.close(self._held[1])  # closing the descriptor drops the flock
            self._held = None

    def close(self) -> None:
        """Release the lease; a process without xdist also removes its run's markers."""
        self.release()
        if self.worker is None:
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def _order(self) -> list[DeviceSpec]:
        digits = "".join(c for c in (self.worker or "") if c.isdigit())
        start = int(digits) % len(self.specs) if digits else 0  # gw0 → device 0, gw1 → device 1, ...
        return [*self.specs[start:], *self.specs[:start]]

    def _holder(self) -> str:
        return f"{self.worker or 'pytest'} pid {os.getpid()}"

    def _try_lease(self) -> list[tuple[DeviceSpec, str]]:
        """Lease the first free live device; return the ones other processes hold."""
        busy: list[tuple[DeviceSpec, str]] = []
        dead = self.dead()
        for spec in self._order():
            if spec.key in dead:
                continue
            path = self.lock_dir / f"lease-{spec.key}.lock"
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            if not _try_lock(fd):
                os.lseek(fd, 0, os.SEEK_SET)
                holder = os.read(fd, 200).decode(errors="replace").strip() or "another process"
                os.close(fd)
                busy.append((spec, holder))
                continue
            reason = self.probe(spec)  # under the lock: one process probes a device at a time
            if reason is not None:
                os.close(fd)
                self.mark_dead(spec, reason)
                dead[spec.key] = reason
                continue
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, self._holder().encode())
            self._held = (spec, fd)
            return busy
        return busy

    def _no_device_message(self, busy: list[tuple[DeviceSpec, str]]) -> str:
        dead = self.dead()
        if len(self.specs) == 1 and dead:
            return next(iter(dead.values()))  # "no Appium server answers at URL: ..." says it all
        labels = {spec.key: spec.label for spec in self.specs}
        parts = []
        if busy:
            held = ", ".join(f"{spec.label} [{holder}]" for spec, holder in busy)
            parts.append(f"{len(busy)} leased by other test processes ({held})")
        if dead:
            gone = "; ".join(f"{labels.get(key, key)}: {reason}" for key, reason in dead.items())
            parts.append(f"{len(dead)} taken out ({gone})")
        message = f"no free device for {self.worker or 'this run'} among {len(self.specs)}: " + ", ".join(parts)
        if busy:
            message += (" — each test process holds one device for its lifetime: run at most as many "
                        "xdist workers as devices, or set guistate_device_wait to wait for one")
        return message


def _try_lock(fd: int) -> bool:
    if fcntl is None:  # pragma: no cover - Windows
        warnings.warn(DevicePoolWarning("guistate: no fcntl on this platform; device leases are not "
                                        "shared between test processes"), stacklevel=3)
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _prune_stale_runs(lock_dir: Path, keep: Path) -> None:
    """Dead-device markers matter for one run; drop folders of runs that ended long ago."""
    cutoff = time.time() - _STALE_RUN_S
    for folder in lock_dir.glob("run-*"):
        try:
            if folder != keep and folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue  # another process removed it first
