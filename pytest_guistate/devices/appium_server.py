"""`guistate appium doctor|start|stop`: a pip user's real Appium 3 server, without the repo's scripts.

Issue 15: the real-server steps (docs/appium.md) relied on `.ci/appium.sh`, which a pip user does not have.
`doctor` checks what a server needs (Node and npm in Appium 3's supported range, Appium 3 in
`APPIUM_HOME` or `--home`, the drivers, Chromium and chromedriver on PATH for the chromium driver,
a server answering `GET /status`) and prints, for each missing piece, the command that installs it.
`start` runs the installed server on a free loopback port, waits for `/status` and prints the URL;
`stop` ends the server `start` started (its PID is kept in `<home>/guistate-server.json`).
`doctor --url HUB` on a Selenium Grid 4 hub (issue 35) lists its nodes instead: each node's state
(the hub's and the node's own word: a relay node reports DOWN when the Appium behind it stops
answering), its slots and stereotypes, and the driver each relays to; a node not UP fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from pytest_guistate.devices.capabilities import find_chromium
from pytest_guistate.devices.grid import GridStatus, node_health, read_grid_status

__all__ = ["Finding", "appium_main", "doctor", "start", "stop"]

# Appium 3's package.json: "node": "^20.19.0 || ^22.12.0 || >=24.0.0", "npm": ">=10"
NODE_RANGES = (((20, 19), (21, 0)), ((22, 12), (23, 0)), ((24, 0), None))
NPM_MIN = (10, 0)
DRIVER_PACKAGES = {"chromium": "appium-chromium-driver", "uiautomator2": "appium-uiautomator2-driver",
                   "xcuitest": "appium-xcuitest-driver"}
STATE_FILE = "guistate-server.json"
NODE_FIX = "install Node 20.19+, 22.12+ or 24+ with npm 10+ (Debian 13: sudo apt-get install nodejs npm)"


@dataclass
class Finding:
    """One doctor line: what was checked, what was found, and (when not ok) how to fix it."""

    what: str
    ok: bool
    found: str
    fix: str = ""

    def line(self) -> str:
        head = f"{'ok' if self.ok else 'MISSING':<8}{self.what}: {self.found}"
        return head if self.ok else f"{head}\n{'':<8}-> {self.fix}"


def default_home() -> Path:
    """`APPIUM_HOME`, else Appium's own default `~/.appium`."""
    return Path(os.environ.get("APPIUM_HOME") or Path.home() / ".appium").expanduser()


def appium_bin(home: Path) -> Path | None:
    """The `appium` installed into `home` (`npm install --prefix HOME appium@3`), else one on PATH."""
    local = home / "node_modules" / ".bin" / "appium"
    if local.exists():
        return local
    found = shutil.which("appium")
    return Path(found) if found else None


def _version(text: str) -> tuple[int, ...] | None:
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(g or 0) for g in match.groups()) if match else None


def _run(cmd: list[str], home: Path | None = None, timeout: float = 60.0) -> str:
    env = {**os.environ, "APPIUM_HOME": str(home)} if home is not None else None
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"error: {exc}"
    return done.stdout if done.returncode == 0 else f"error: exit {done.returncode}: {done.stderr.strip()[-300:]}"


def _node_ok(version: tuple[int, ...]) -> bool:
    return any(low <= version[:2] and (high is None or version[:2] < high) for low, high in NODE_RANGES)


def _tool(name: str, ok: object, fix: str) -> Finding:
    path = shutil.which(name)
    if path is None:
        return Finding(name, False, "not on PATH", fix)
    version = _version(_run([path, "--version"], timeout=20))
    good = version is not None and bool(ok(version)) if callable(ok) else version is not None
    return Finding(name, good, f"{'.'.join(map(str, version or ()))} ({path})", "" if good else fix)


def installed_drivers(binary: Path, home: Path) -> dict[str, str] | str:
    """name -> version from `appium driver list --installed --json`, or the error text."""
    out = _run([str(binary), "driver", "list", "--installed", "--json"], home)
    if out.startswith("error:"):
        return out
    try:
        listed = json.loads(out[out.index("{"):])
    except ValueError:
        return f"error: unreadable driver list: {out[:200]!r}"
    return {name: str(info.get("version", "?")) for name, info in listed.items() if isinstance(info, dict)}


def server_status(url: str, timeout: float = 3.0) -> tuple[bool, str]:
    """(ready, what `GET URL/status` answered)."""
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/status", timeout=timeout) as response:
            body = json.loads(response.read().decode("utf-8") or "{}")
    except (OSError, ValueError, urllib.error.URLError) as exc:
        return False, f"no answer ({exc})"
    value = body.get("value") or {}
    ready = bool(value.get("ready", True))
    build = (value.get("build") or {}).get("version", "?")
    return ready, f"Appium {build}, ready={ready}"


def doctor(home: Path, url: str | None, drivers: list[str]) -> list[Finding]:
    """Every check, in the order a user installs things."""
    findings = [_tool("node", _node_ok, NODE_FIX), _tool("npm", lambda v: v[:2] >= NPM_MIN, NODE_FIX)]
    binary = appium_bin(home)
    install = f"mkdir -p {home} && npm install --prefix {home} appium@3 && export APPIUM_HOME={home}"
    if binary is None:
        findings.append(Finding("appium", False, f"not in {home}/node_modules nor on PATH", install))
        findings += [Finding(f"driver {name}", False, "not checked: no appium",
                             f"after appium: APPIUM_HOME={home} {home}/node_modules/.bin/appium driver install "
                             f"--source=npm {DRIVER_PACKAGES.get(name, name)}") for name in drivers]
    else:
        version = _version(_run([str(binary), "--version"], home))
        good = version is not None and version[0] == 3
        findings.append(Finding("appium", good, f"{'.'.join(map(str, version or ()))} ({binary})",
                                "" if good else f"Appium 3 is needed: {install}"))
        listed = installed_drivers(binary, home)
        for name in drivers:
            package = DRIVER_PACKAGES.get(name, name)
            fix = f"APPIUM_HOME={home} {binary} driver install --source=npm {package}"
            if isinstance(listed, str):
                findings.append(Finding(f"driver {name}", False, listed, fix))
            else:
                have = listed.get(name)
                findings.append(Finding(f"driver {name}", have is not None,
                                        f"{have} (installed: {', '.join(sorted(listed)) or 'none'})"
                                        if have else f"not installed (installed: {', '.join(sorted(listed)) or 'none'})",
                                        fix))
    if "chromium" in drivers:
        browser, driver = find_chromium()
        findings.append(Finding("chromium", browser is not None, browser or "not on PATH (chromium, "
                                "chromium-browser, google-chrome)", "sudo apt-get install chromium"))
        findings.append(Finding("chromedriver", driver is not None, driver or "not on PATH",
                                "sudo apt-get install chromium-driver (the chromedriver of the same Chromium build)"))
    url = url or _started_url(home)
    if url is None:
        findings.append(Finding("server", False, "none started by `guistate appium start` and no --url given",
                                f"guistate appium start --home {home}"))
    else:
        hub = read_grid_status(url, timeout_s=3.0)
        if hub is not None:
            return findings + grid_findings(hub)
        ready, said = server_status(url)
        findings.append(Finding(f"server {url}", ready, said, f"guistate appium start --home {home}"))
    return findings


def grid_findings(hub: GridStatus) -> list[Finding]:
    """A Grid hub and every node behind it: state, slots, stereotypes, the drivers the relays reach."""
    versions = sorted({node.version.split(" ")[0] for node in hub.nodes if node.version})
    found = [Finding(f"grid hub {hub.url}", hub.ready and bool(hub.nodes),
                     f"Selenium Grid {', '.join(versions) or '?'}, ready={hub.ready}, {len(hub.nodes)} node(s): "
                     f"{hub.message}",
                     "start a node (java -jar selenium-server.jar node --config node.toml) that registers with this hub")]
    for node in hub.nodes:
        own = node_health(node.uri)
        busy = sum(slot.busy for slot in node.slots)
        stereotypes = sorted({json.dumps(slot.stereotype, sort_keys=True) for slot in node.slots})
        drivers = sorted({str(slot.stereotype.get("appium:automationName") or slot.stereotype.get("browserName", "?"))
                          for slot in node.slots})
        says = "UP" if own.up else own.detail
        ok = node.up and own.state != "down"
        found.append(Finding(
            f"grid node {node.uri}", ok,
            f"hub says {node.availability}, node says {says}; {len(node.slots)} slot(s), {busy} busy; "
            f"driver(s) {', '.join(drivers)}; stereotype(s) {'; '.join(stereotypes)}",
            "the Appium server behind this relay node does not answer its status endpoint (or the node is down): "
            "start it at the node's [relay] url, or restart the node",
        ))
    return found


def _state(home: Path) -> dict[str, object] | None:
    try:
        data = json.loads((home / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def _started_url(home: Path) -> str | None:
    state = _state(home)
    if state is None or not _alive(int(str(state.get("pid", 0)))):
        return None
    return str(state.get("url"))


def _free_port(address: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def start(home: Path, *, port: int | None = None, address: str = "127.0.0.1", timeout: float = 60.0) -> str:
    """Start the installed server (or reuse the one already started from `home`); returns its URL."""
    url = _started_url(home)
    if url is not None and server_status(url)[0]:
        return url
    binary = appium_bin(home)
    if binary is None:
        raise RuntimeError(f"Appium is not installed in {home} nor on PATH; run `guistate appium doctor --home {home}`")
    port = port or _free_port(address)
    home.mkdir(parents=True, exist_ok=True)
    log = home / "guistate-server.log"
    with log.open("wb") as out:  # the child keeps its own copy of the handle
        process = subprocess.Popen(
            [str(binary), "server", "--address", address, "--port", str(port), "--log-no-colors"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            env={**os.environ, "APPIUM_HOME": str(home)})
    url = f"http://{address}:{port}"
    (home / STATE_FILE).write_text(json.dumps({"pid": process.pid, "url": url, "log": str(log)}), encoding="utf-8")
    deadline = time.monotonic() + timeout
    while not server_status(url, timeout=1.0)[0]:
        if process.poll() is not None or time.monotonic() > deadline:
            stop(home)
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            why = f"exited with {process.returncode}" if process.returncode is not None else f"no /status in {timeout:g} s"
            raise RuntimeError(f"the Appium server {why}; log {log}:\n{tail}")
        time.sleep(0.2)
    return url


def stop(home: Path, grace: float = 5.0) -> bool:
    """End the server `start` started from `home` (its process group); False if none was running."""
    state = _state(home)
    (home / STATE_FILE).unlink(missing_ok=True)
    if state is None:
        return False
    pid = int(str(state.get("pid", 0)))
    if pid <= 0 or not _alive(pid):
        return False
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except OSError:
            return True
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return True
            except ChildProcessError:  # not our child (started by another `guistate appium start`)
                if not _alive(pid):
                    return True
            time.sleep(0.1)
    return True


def appium_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="guistate appium", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    for verb, text in (("doctor", "check what a real server needs; say what is missing and how to install it"),
                       ("start", "start the installed server on a free loopback port; print its URL"),
                       ("stop", "stop the server `start` started")):
        p = sub.add_parser(verb, help=text, description=text)
        p.add_argument("--home", type=Path, default=None, help="the Appium folder (default: $APPIUM_HOME, ~/.appium)")
        if verb == "doctor":
            p.add_argument("--url", help="check this server's /status (default: the one `start` started)")
            p.add_argument("--driver", action="append", choices=sorted(DRIVER_PACKAGES),
                           help="a driver that must be installed (repeatable; default: chromium)")
        if verb == "start":
            p.add_argument("--port", type=int, default=None, help="default: a free port")
            p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for /status (60)")
    args = parser.parse_args(argv)
    home = (args.home or default_home()).expanduser().resolve()
    if args.verb == "doctor":
        findings = doctor(home, args.url, args.driver or ["chromium"])
        print("\n".join(f.line() for f in findings))
        missing = [f.what for f in findings if not f.ok]
        print(f"\n{'all set' if not missing else 'missing: ' + ', '.join(missing)} (APPIUM_HOME={home})")
        return 1 if missing else 0
    if args.verb == "start":
        try:
            url = start(home, port=args.port, timeout=args.timeout)
        except RuntimeError as exc:
            print(f"guistate appium start: {exc}", file=sys.stderr)
            return 1
        print(f"Appium ready (APPIUM_HOME={home}, log {home / 'guistate-server.log'})", file=sys.stderr)
        print(url)
        return 0
    print("stopped" if stop(home) else f"no server started from {home} is running", file=sys.stderr)
    return 0
