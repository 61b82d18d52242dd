"""Device pools (issue 6): several Appium servers or phones, one per test process at a time.

Each test process (xdist worker) leases one device of `--guistate-device` (see `device_list.py`)
for its lifetime with an `flock` on a per-device lock file: the OS drops the lock when the process
ends, even on a crash, so no stale lease outlives a worker. Locks are keyed by the device itself
(URL + capabilities) in one directory per user on this host, so two runs, or two lists sharing a
device, never drive one phone at once. A device that stops answering is recorded dead for the
run (a marker file every worker reads) and the worker moves on to a free one.

A Selenium Grid hub listed once is a pool of its own (issue 35, `devices/grid.py`): it gets one
lease per matching slot its `/status` states (at least one per test process: the hub queues the
rest), and a node behind it that fails is recorded against the node (`node_failed`), not the hub.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

from pytest_guistate.devices.device_list import PROBE_TIMEOUT_S, DeviceSpec, probe_status
from pytest_guistate.devices.errors import DeviceError
from pytest_guistate.devices.grid import GridStatus, hub_pool
from pytest_guistate.devices.timeouts import take_suspect
from pytest_guistate.support.filelock import LOCKS_AVAILABLE, open_lock_file, try_lock

__all__ = ["DevicePool", "DevicePoolWarning", "default_lock_dir"]

_STALE_RUN_S = 24 * 3600.0  # run folders of dead-device markers older than this are removed


class DevicePoolWarning(UserWarning):
    """A device was taken out of the pool; the run goes on without it."""


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
        capabilities: dict[str, object] | None = None,
        workers: int = 1,
    ) -> None:
        if not specs:
            raise ValueError("a device pool needs at least one device")
        # a hub listed once: one lease per matching slot of its /status, at least one per worker
        self.specs, self.grids = hub_pool(specs, dict(capabilities or {}), workers, probe_timeout_s)
        self.worker = worker
        self.wait_s = wait_s
        self.probe_timeout_s = probe_timeout_s
        self.lock_dir = lock_dir or default_lock_dir()
        self.run_dir = self.lock_dir / ("run-" + "".join(c for c in run_id if c.isalnum() or c in "-_"))
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._held: tuple[DeviceSpec, int] | None = None
        self._warned: set[str] = set()
        self._waited_out = False
        _prune_stale_runs(self.lock_dir, keep=self.run_dir)

    @property
    def current(self) -> DeviceSpec | None:
        return self._held[0] if self._held else None

    def acquire(self) -> DeviceSpec:
        """The device this process holds, else the first free live one (from this worker's offset)."""
        if self._held is not None and not self._suspect_gone(self._held[0]):
            return self._held[0]
        deadline = time.monotonic() + (0.0 if self._waited_out else self.wait_s)
        while True:
            busy = self._try_lease()
            if self._held is not None:
                return self._held[0]
            if not busy or time.monotonic() >= deadline:
                self._waited_out = True  # wait once per process, not once per remaining test
                raise DeviceError(self._no_device_message(busy))
            time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))

    def _suspect_gone(self, spec: DeviceSpec) -> bool:
        """A call on this device hung (devices/timeouts.py): probe /status before it gets the next test."""
        hung = take_suspect(spec.url)
        reason = self.probe(spec) if hung is not None else None
        if reason is not None:
            self.mark_dead(spec, f"{hung}; then /status: {reason}")
        return reason is not None

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

    def grid(self, spec: DeviceSpec) -> GridStatus | None:
        """The hub's status as read when the pool was made, when `spec` is a Selenium Grid hub."""
        return self.grids.get(spec.key)

    def node_failed(self, spec: DeviceSpec, node: str, reason: str) -> dict[str, str]:
        """Record that `node` (a relay's service URL, or a node URI) behind hub `spec` failed, for every
        worker of the run; return every node failure recorded against that hub (node → why)."""
        name = hashlib.sha256(node.encode()).hexdigest()[:12]
        marker = self.run_dir / f"node-{spec.key}-{name}.json"
        tmp = marker.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"node": node, "reason": reason, "by": self._holder()}), encoding="utf-8")
        os.replace(tmp, marker)
        return self.node_failures(spec)

    def node_failures(self, spec: DeviceSpec) -> dict[str, str]:
        found: dict[str, str] = {}
        for marker in self.run_dir.glob(f"node-{spec.key}-*.json"):
            try:
                data = json.loads(marker.read_text(encoding="utf-8"))
                found[str(data["node"])] = str(data["reason"])
            except (OSError, ValueError, KeyError) as exc:
                found[marker.name] = f"(unreadable node marker {marker}: {exc})"
        return found

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
            path = self.lock_dir / f"lease-{spec.key}-{spec.slot}.lock"
            fd = open_lock_file(path)
            if not _try_lock(fd):
                os.lseek(fd, 0, os.SEEK_SET)
                holder = os.read(fd, 200).decode(errors="replace").strip() or "another process"
                os.close(fd)
                busy.append((spec, holder))
                continue
            # the holder's name first: a process that finds the lock taken while this one probes reads
            # it, not the name of an earlier holder that has ended
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, self._holder().encode())
            reason = self.probe(spec)  # under the lock: one process probes a device at a time
            if reason is not None:
                os.close(fd)
                self.mark_dead(spec, reason)
                dead[spec.key] = reason
                continue
            self._held = (spec, fd)
            return busy
        return busy

    def _no_device_message(self, busy: list[tuple[DeviceSpec, str]]) -> str:
        dead = self.dead()
        labels = {spec.key: spec.label for spec in self.specs if spec.slot == 0}
        if len(labels) == 1 and dead and not busy:
            return next(iter(dead.values()))  # "no Appium server answers at URL: ..." says it all
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
    if not LOCKS_AVAILABLE:  # pragma: no cover - Windows: leases are per process only, with a warning
        warnings.warn(DevicePoolWarning("guistate: no fcntl on this platform; device leases are not "
                                        "shared between test processes"), stacklevel=3)
        return True
    return try_lock(fd)


def _prune_stale_runs(lock_dir: Path, keep: Path) -> None:
    """Dead-device markers matter for one run; drop folders of runs that ended long ago."""
    cutoff = time.time() - _STALE_RUN_S
    for folder in lock_dir.glob("run-*"):
        try:
            if folder != keep and folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue  # another process removed it first
