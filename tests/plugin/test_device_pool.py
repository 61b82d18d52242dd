"""Device pools (issue 6): parsing, leasing across processes, dead devices, per-device capabilities.

The "devices" are embedded simulated phones started by the outer test; a dead device is a
loopback port nobody listens on, or a sim the outer test stops while an inner test uses it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_guistate.config import CONFIG_KEY
from pytest_guistate.devices import pool as pool_module
from pytest_guistate.devices.device_list import DeviceListError, DeviceSpec, parse_device_option
from pytest_guistate.devices.errors import DeviceError
from pytest_guistate.devices.pool import DevicePool, DevicePoolWarning
from pytest_guistate.devices.sim.server import SimServer


class VirtualClock:
    """Stands in for the pool's `time` module: sleeping advances the clock at once."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def time(self) -> float:
        return time.time() + self.now


def closed_url() -> str:
    """A loopback URL that was just free: nothing listens there."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def sims() -> Iterator[tuple[SimServer, SimServer]]:
    with SimServer() as a, SimServer() as b:
        yield a, b


# --- the option ---------------------------------------------------------------------------------


def test_a_comma_list_is_a_pool_in_order(tmp_path: Path) -> None:
    specs = parse_device_option("http://a:4723, https://b:443/wd/hub", tmp_path)
    assert [s.url for s in specs] == ["http://a:4723", "https://b:443/wd/hub"]
    assert parse_device_option("sim", tmp_path) == ()


def test_a_device_file_gives_per_device_capabilities_and_hides_credentials(tmp_path: Path) -> None:
    (tmp_path / "devices.json").write_text(json.dumps([
        "http://a:4723",
        {"url": "http://a:4723", "capabilities": {"appium:udid": "emulator-5556"}},
        {"url": "https://user:secret@hub.example:443/wd/hub", "name": "farm",
         "capabilities": {"vendor:options": {"build": "7"}}},
    ]))
    plain, udid, farm = parse_device_option("@devices.json", tmp_path)
    assert plain.capabilities == {} and udid.capabilities == {"appium:udid": "emulator-5556"}
    assert plain.key != udid.key, "one server with two phones is two devices"
    assert udid.label == "http://a:4723 [udid emulator-5556]"
    assert farm.url == "https://user:secret@hub.example:443/wd/hub"
    assert farm.label == "farm (https://***@hub.example:443/wd/hub)"
    assert "secret" not in farm.display_url


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"url": "http://a:4723"}, "devices.json must hold a non-empty JSON list of devices"),
        ([], "devices.json must hold a non-empty JSON list of devices"),
        (["http://a:4723", {"url": "http://b:1", "udid": "x"}], "devices.json entry 1: unknown key(s) 'udid'"),
        ([{"capabilities": {}}], "devices.json entry 0: has no 'url'"),
        ([{"url": "http://a:1", "capabilities": ["x"]}], "devices.json entry 0: 'capabilities' must be a JSON object"),
        (["http://a:1", "ftp://b"], "devices.json entry 1: 'ftp://b' is neither 'sim' nor an http(s)://"),
        (["sim"], "devices.json entry 0: 'sim' cannot be mixed with server URLs"),
    ],
)
def test_a_bad_device_file_names_the_file_and_the_entry(tmp_path: Path, content: object, message: str) -> None:
    (tmp_path / "devices.json").write_text(json.dumps(content))
    with pytest.raises(DeviceListError) as info:
        parse_device_option("@devices.json", tmp_path)
    assert message in str(info.value)


def test_a_repeated_entry_is_one_more_session_slot_on_the_same_device(
    tmp_path: Path, sims: tuple[SimServer, SimServer]
) -> None:
    grid = sims[0].url
    first, second = parse_device_option(f"{grid},{grid}", tmp_path)
    assert (first.slot, second.slot) == (0, 1) and first.key == second.key
    assert second.label == f"{grid} (session slot 2)"
    gw0, gw1 = (DevicePool([first, second], run_id="r0", worker=f"gw{i}", lock_dir=tmp_path) for i in range(2))
    assert {gw0.acquire().slot, gw1.acquire().slot} == {0, 1}, "two workers share a grid URL, one slot each"
    with pytest.warns(DevicePoolWarning):
        gw0.mark_dead(gw0.acquire(), "the grid is gone")
    gw1.release()
    with pytest.raises(DeviceError, match="^the grid is gone$"):
        gw1.acquire()  # one device behind both slots: dead for both
    gw0.close()
    gw1.close()


def test_bad_device_lists_are_usage_errors(pytester: pytest.Pytester) -> None:
    (pytester.path / "devices.json").write_text(json.dumps([{"url": "http://a:1", "udid": "x"}]))
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest("--guistate-device=@devices.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--guistate-device: devices.json entry 0: unknown key(s) 'udid'*"])
    mixed = pytester.runpytest("--guistate-device=@devices.json,http://b:1")
    mixed.stderr.fnmatch_lines(["*@FILE must be the only value*"])


def test_the_config_keeps_the_pool(pytester: pytest.Pytester) -> None:
    settings = pytester.parseconfigure("--guistate-device=http://a:1,http://b:2").stash[CONFIG_KEY]
    assert settings.devices == ("http://a:1", "http://b:2")
    assert [s.url for s in settings.pool] == ["http://a:1", "http://b:2"]
    assert not settings.uses_sim


# --- leasing ------------------------------------------------------------------------------------


def test_workers_lease_different_devices_and_an_extra_worker_gets_a_clear_error(
    tmp_path: Path, sims: tuple[SimServer, SimServer]
) -> None:
    specs = [DeviceSpec(s.url) for s in sims]
    gw0, gw1, gw2 = (DevicePool(specs, run_id="r1", worker=f"gw{i}", lock_dir=tmp_path) for i in range(3))
    assert {gw0.acquire().url, gw1.acquire().url} == {sims[0].url, sims[1].url}
    assert gw0.acquire() == gw0.current, "a lease lasts for the process's lifetime"
    with pytest.raises(DeviceError) as info:
        gw2.acquire()
    message = str(info.value)
    assert "no free device for gw2 among 2: 2 leased by other test processes" in message
    assert f"{sims[0].url} [gw0 pid {os.getpid()}]" in message
    assert "run at most as many xdist workers as devices" in message
    held = gw0.acquire()
    gw0.close()
    assert gw2.acquire() == held, "a released device is free again"
    gw1.close()
    gw2.close()


def test_a_waiting_worker_gets_a_device_released_within_the_wait_and_waits_once(
    tmp_path: Path, sims: tuple[SimServer, SimServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = DeviceSpec(sims[0].url)
    holder = DevicePool([spec], run_id="r2", worker="gw0", lock_dir=tmp_path)
    waiter = DevicePool([spec], run_id="r2", worker="gw1", lock_dir=tmp_path, wait_s=10.0)
    holder.acquire()
    release = threading.Timer(0.3, holder.close)
    release.start()
    assert waiter.acquire() == spec
    release.join()
    impatient = DevicePool([spec], run_id="r2", worker="gw2", lock_dir=tmp_path, wait_s=30.0)
    clock = VirtualClock()
    monkeypatch.setattr(pool_module, "time", clock)
    for _ in range(3):
        with pytest.raises(DeviceError, match=r"1 leased by other test processes"):
            impatient.acquire()
    assert clock.now == pytest.approx(30.0), "a process waits out its wait once, not once per test"
    monkeypatch.undo()
    waiter.close()
    assert impatient.acquire() == spec, "and still takes a device freed later"
    impatient.close()


def test_a_dead_device_is_taken_out_for_every_worker_of_the_run(tmp_path: Path, sims: tuple[SimServer, SimServer]) -> None:
    dead = DeviceSpec(closed_url())
    live = DeviceSpec(sims[0].url)
    gw0 = DevicePool([dead, live], run_id="r3", worker="gw0", lock_dir=tmp_path)
    with pytest.warns(DevicePoolWarning, match=f"device {dead.url} is taken out of the pool: no Appium server"):
        assert gw0.acquire() == live
    gw1 = DevicePool([dead, live], run_id="r3", worker="gw1", lock_dir=tmp_path)
    assert dead.key in gw1.dead(), "the marker is shared by the run"
    with pytest.raises(DeviceError) as info:
        gw1.acquire()
    assert "1 leased by other test processes" in str(info.value)
    assert f"1 taken out ({dead.url}: no Appium server answers at {dead.url}" in str(info.value)
    later_run = DevicePool([dead, live], run_id="r4", worker="gw1", lock_dir=tmp_path)
    assert later_run.dead() == {}, "a later run probes the device afresh"
    for pool in (gw0, gw1, later_run):
        pool.close()


def test_a_single_dead_device_says_nobody_answers(tmp_path: Path) -> None:
    dead = DeviceSpec(closed_url())
    pool = DevicePool([dead], run_id="r5", lock_dir=tmp_path)
    with pytest.warns(DevicePoolWarning), pytest.raises(DeviceError, match=f"^no Appium server answers at {dead.url}"):
        pool.acquire()
    pool.close()
    assert not pool.run_dir.exists(), "a run without xdist removes its markers"


def test_a_crashed_process_leaves_no_lease_behind(tmp_path: Path, sims: tuple[SimServer, SimServer]) -> None:
    spec = DeviceSpec(sims[0].url)
    code = (
        "import sys, time\nfrom pathlib import Path\n"
        "from pytest_guistate.devices.device_list import DeviceSpec\n"
        "from pytest_guistate.devices.pool import DevicePool\n"
        f"pool = DevicePool([DeviceSpec({spec.url!r})], run_id='r6', worker='gw0', lock_dir=Path({str(tmp_path)!r}))\n"
        "print(pool.acquire().url, flush=True)\ntime.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == spec.url
        other = DevicePool([spec], run_id="r6", worker="gw1", lock_dir=tmp_path)
        with pytest.raises(DeviceError, match=r"leased by other test processes .*\[gw0 pid"):
            other.acquire()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    assert other.acquire() == spec, "the OS dropped the killed process's flock"
    other.close()


RACER = """
import sys, time
from pathlib import Path
from pytest_guistate.devices.device_list import DeviceSpec
from pytest_guistate.devices.errors import DeviceError
from pytest_guistate.devices.pool import DevicePool

url, go, worker, lock_dir = sys.argv[1:]
pool = DevicePool([DeviceSpec(url)], run_id="race", worker=worker, lock_dir=Path(lock_dir))
probe = pool.probe
pool.probe = lambda spec: (time.sleep(0.3), probe(spec))[1]  # widen the window between lock and lease
print("ready", flush=True)
while not Path(go).exists():
    time.sleep(0.001)
try:
    print("leased", pool.acquire().url, flush=True)
except DeviceError as exc:
    print("busy", exc, flush=True)
sys.stdin.read()  # hold whatever it got until the test ends
"""


def test_processes_racing_for_one_device_lease_it_once(tmp_path: Path, sims: tuple[SimServer, SimServer]) -> None:
    """Four processes ask for one device at the same instant, the winner slowed down while it probes:
    exactly one leases it (the lease is the lock itself, never a check followed by a write)."""
    url = sims[0].url
    go = tmp_path / "go"
    command = [sys.executable, "-c", RACER, url, str(go)]
    racers = [
        subprocess.Popen([*command, f"gw{i}", str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for i in range(4)
    ]
    try:
        for racer in racers:
            assert racer.stdout is not None and racer.stdout.readline().strip() == "ready"
        go.write_text("")
        answers = [racer.stdout.readline().strip() for racer in racers if racer.stdout is not None]
    finally:
        for racer in racers:
            racer.communicate("", timeout=60)
    assert answers.count(f"leased {url}") == 1, f"one process leases the device: {answers}"
    busy = [answer for answer in answers if answer != f"leased {url}"]
    assert all(answer.startswith("busy no free device for gw") for answer in busy), answers


def test_a_process_probing_a_device_is_named_as_its_holder_not_an_earlier_one(
    tmp_path: Path, sims: tuple[SimServer, SimServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lease file keeps the last holder's name after it ends; while the next holder probes the
    device under the lock, a third process must be told who holds it now."""
    spec = DeviceSpec(sims[0].url)
    earlier = DevicePool([spec], run_id="r7", worker="gw9", lock_dir=tmp_path)
    earlier.acquire()
    earlier.close()  # the file still says "gw9 pid …"
    probing, done = threading.Event(), threading.Event()
    prober = DevicePool([spec], run_id="r7", worker="gw1", lock_dir=tmp_path)
    real_probe = prober.probe

    def slow_probe(probed: DeviceSpec) -> str | None:
        probing.set()
        done.wait(30)
        return real_probe(probed)

    monkeypatch.setattr(prober, "probe", slow_probe)
    leasing = threading.Thread(target=prober.acquire)
    leasing.start()
    try:
        assert probing.wait(30)
        with pytest.raises(DeviceError) as info:
            DevicePool([spec], run_id="r7", worker="gw2", lock_dir=tmp_path).acquire()
    finally:
        done.set()
        leasing.join(30)
    assert f"{spec.url} [gw1 pid {os.getpid()}]" in str(info.value)
    assert prober.current == spec
    prober.close()


# --- whole runs ---------------------------------------------------------------------------------

RECORDING_TESTS = """
import json, os, pathlib, time, pytest

OUT = pathlib.Path({out!r})


@pytest.mark.parametrize("n", range(6))
def test_on_device(device, n):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (OUT / f"{{n}}.json").write_text(json.dumps({{"worker": worker, "url": device.url}}))
    (OUT / f"holding-{{worker}}").write_text(device.url)
    # Both workers hold a lease at once before any test goes on. Without this, a worker starting late
    # (a loaded machine) may find the other already ended (xdist ends a worker with nothing left to
    # run) and rightly lease the device it freed: one device, two workers, never at the same time.
    deadline = time.monotonic() + 30
    while len(list(OUT.glob("holding-*"))) < 2:
        assert time.monotonic() < deadline, "the other worker never held a device"
        time.sleep(0.02)
    assert device.size[0] > 0
"""


def test_two_workers_use_two_live_devices_and_skip_a_dead_one(
    pytester: pytest.Pytester, sims: tuple[SimServer, SimServer]
) -> None:
    out = pytester.mkdir("out")
    pytester.makepyfile(RECORDING_TESTS.format(out=str(out)))
    dead = closed_url()
    devices = f"{dead},{sims[0].url},{sims[1].url}"
    result = pytester.runpytest_subprocess(  # `--dist load` gives each worker tests from the start
        "-n", "2", "--dist", "load", "-p", "no:cacheprovider", "--guistate=off", f"--guistate-device={devices}"
    )
    result.assert_outcomes(passed=6)
    held = {path.name: path.read_text() for path in out.glob("holding-*")}
    assert len(set(held.values())) == 2, f"two workers alive at once hold two devices: {held}"
    used = [json.loads(p.read_text()) for p in out.glob("*.json")]
    by_url: dict[str, set[str]] = {}
    for record in used:
        by_url.setdefault(record["url"], set()).add(record["worker"])
    assert set(by_url) == {sims[0].url, sims[1].url}, f"both live devices are used, the dead one never: {by_url}"
    assert all(len(workers) == 1 for workers in by_url.values()), f"one worker per device: {by_url}"
    assert by_url[sims[0].url] != by_url[sims[1].url]
    result.stdout.fnmatch_lines([f"*device {dead} is taken out of the pool: no Appium server answers at {dead}*"])


DYING_TESTS = """
import json, os, pathlib, time, pytest

OUT = pathlib.Path({out!r})
DOOMED = {doomed!r}


def wait_for(done, what):
    deadline = time.monotonic() + 30
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {{what}}"
        time.sleep(0.05)


@pytest.mark.parametrize("n", range({first}, {first} + 3))
def test_on_device(device, n):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (OUT / f"{{n}}.json").write_text(json.dumps({{"worker": worker, "url": device.url}}))
    (OUT / f"holding-{{worker}}").write_text(device.url)
    # both workers hold a device before one is stopped: else a worker starting late (a loaded machine)
    # finds the doomed group's worker already moved on to the survivor, which was still free
    wait_for(lambda: len(list(OUT.glob("holding-*"))) == 2, "both workers to hold a device")
    if device.url == DOOMED and not (OUT / "stop").exists():
        (OUT / "stop").write_text(str(n))  # the outer test stops this device now
        wait_for(lambda: (OUT / "stopped").exists(), "the device to stop")
    elif device.url != DOOMED:
        # hold the other device until the doomed group is over: xdist ends an idle worker
        # (and so its lease) early, which would hand its device on
        other = range(3) if n >= 3 else range(3, 6)
        wait_for(lambda: all((OUT / f"done-{{m}}").exists() for m in other), "the doomed group")
    device.screenshot()
"""

DYING_CONFTEST = """
import pathlib

def pytest_runtest_logreport(report):
    if report.when == "teardown":
        n = report.nodeid.split("[")[1].split("]")[0]
        (pathlib.Path({out!r}) / f"done-{{n}}").write_text("")
"""


def test_a_device_dying_mid_run_errors_its_tests_and_the_other_worker_goes_on(
    pytester: pytest.Pytester, sims: tuple[SimServer, SimServer]
) -> None:
    doomed, survivor = sims
    doomed_url, survivor_url = doomed.url, survivor.url  # a stopped server has no port
    out = pytester.mkdir("out")
    # two files of three tests: `--dist loadfile` gives each worker one file
    pytester.makepyfile(**{f"test_g{first}": DYING_TESTS.format(out=str(out), doomed=doomed_url, first=first)
                           for first in (0, 3)})
    pytester.makeconftest(DYING_CONFTEST.format(out=str(out)))
    stopped = threading.Event()

    def stop_when_asked() -> None:  # the "phone unplugged" moment, chosen by the inner test
        deadline = time.monotonic() + 60
        while not (out / "stop").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        doomed.stop()
        (out / "stopped").write_text("yes")
        stopped.set()

    watcher = threading.Thread(target=stop_when_asked, daemon=True)
    watcher.start()
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadfile", "-p", "no:cacheprovider",
                                           "--guistate=off", "-rA",
                                           f"--guistate-device={doomed_url},{survivor_url}")
    watcher.join(5)
    assert stopped.is_set(), "no inner test ever ran on the doomed device"
    killer = int((out / "stop").read_text())
    records = {int(p.stem): json.loads(p.read_text()) for p in out.glob("[0-9].json")}
    on_survivor = sorted(n for n, r in records.items() if r["url"] == survivor_url)
    doomed_group = [n for n in range(6) if (n < 3) == (killer < 3)]
    assert on_survivor == [n for n in range(6) if n not in doomed_group], f"the other worker's tests ran: {records}"
    assert sorted(records) == sorted([killer, *on_survivor]), "no test ran on a dead or borrowed device"
    result.assert_outcomes(passed=3, failed=1, errors=3)
    for n in on_survivor:
        result.stdout.fnmatch_lines([f"PASSED *test_on_device?{n}?*"])
    result.stdout.fnmatch_lines([
        f"*ERROR at teardown of test_on_device?{killer}?*",
        f"E *.DeviceError: device {doomed_url} died: no Appium server answers at {doomed_url}*",
    ])
    after = [n for n in doomed_group if n != killer]
    for n in after:
        result.stdout.fnmatch_lines([
            f"*ERROR at setup of test_on_device?{n}?*",
            (f"E *.DeviceError: no free device for gw? among 2: 1 leased by other test processes "
             f"({survivor_url} ?gw? pid *?), 1 taken out ({doomed_url}: no Appium server answers*"),
        ])


def test_device_file_capabilities_reach_the_session(pytester: pytest.Pytester, sims: tuple[SimServer, SimServer]) -> None:
    (pytester.path / "caps.json").write_text(json.dumps({"appium:udid": "from-run", "guistate:seed": 3}))
    (pytester.path / "devices.json").write_text(json.dumps([
        {"url": sims[0].url, "name": "pixel", "capabilities": {"appium:udid": "phone-A", "vendor:options": {"k": [1]}}},
    ]))
    pytester.makepyfile(
        f"""
        import pytest

        def test_caps(device, guistate_device_url):
            caps = device.driver.capabilities
            assert caps["udid"] == "phone-A"            # the device's own wins over the run's
            assert caps["vendor:options"] == {{"k": [1]}}  # vendor capabilities pass through untouched
            assert caps["guistate:seed"] == 3           # the run's capabilities stay underneath
            assert device.url == guistate_device_url == {sims[0].url!r}

        @pytest.mark.guistate(caps={{"appium:udid": "from-marker"}})
        def test_marker_wins(device):
            assert device.driver.capabilities["udid"] == "from-marker"
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--guistate=off",
                                          "--guistate-device=@devices.json", "--guistate-caps=caps.json")
    result.assert_outcomes(passed=2)


def test_a_device_that_answers_but_refuses_sessions_is_taken_out_and_the_test_moves_on(
    pytester: pytest.Pytester, sims: tuple[SimServer, SimServer]
) -> None:
    """/status answers, every new session is refused (as when UiAutomator2 lost the phone): after
    two refusals in a row the device leaves the pool and the tests run on the next one."""
    with SimServer(max_sessions=0) as refusing:
        pytester.makepyfile(
            """
            import pytest

            @pytest.mark.parametrize("n", range(3))
            def test_on_device(device, guistate_device_url, n):
                assert device.size[0] > 0
                print("used", guistate_device_url)
            """
        )
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--guistate=off", "-s",
                                              f"--guistate-device={refusing.url},{sims[0].url}")
        result.assert_outcomes(passed=3)
        assert result.stdout.str().count(f"used {sims[0].url}") == 3
        assert f"used {refusing.url}" not in result.stdout.str()
        result.stdout.fnmatch_lines([(f"*device {refusing.url} is taken out of the pool: refused two new Appium "
                                      "sessions in a row: too many open sessions (0)*")])


def test_a_session_refused_for_the_tests_own_capabilities_keeps_the_device(
    pytester: pytest.Pytester, sims: tuple[SimServer, SimServer]
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.guistate(app="com.example.not_installed")
        def test_1_bad_app(device):
            pass

        def test_2_next_test(device):
            assert device.size[0] > 0
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--guistate=off",
                                          f"--guistate-device={sims[0].url}")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        (f"*DeviceError: could not open an Appium session on {sims[0].url} with this test's capabilities:*"
         "com.example.not_installed*is not installed*the device stays in the pool*"),
    ])
    assert "taken out of the pool" not in result.stdout.str()
