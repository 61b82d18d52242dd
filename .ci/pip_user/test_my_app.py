"""A pip user's first test against a real Appium server (checked by .ci/pip_user.sh, issue 15).

Their own tiny mobile web app, served from this folder: a list whose rows redraw 2 s late after
a Remove, where a stale Remove would delete the next item. Written from the docs alone (README.md,
docs/appium.md): `text=` / `desc=` / `id=` locators, `expect=`, `idempotent=False`, a step `refresh=`.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_guistate import gone, visible

PAGE = """<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:18px sans-serif;margin:0} li{padding:18px;border-bottom:1px solid #ccc}
button{font-size:18px;margin-left:12px} h1{padding:12px;margin:0;background:#246;color:#fff}</style></head>
<body><h1>Groceries</h1><ul id="items"></ul><button data-testid="reload">Reload</button>
<script>
let items = ["Apples", "Bread", "Cheese"], shown = items.slice();
function draw() { document.getElementById("items").innerHTML = shown.map((name, i) =>
  `<li><span>${name}</span><button aria-label="Remove ${name}" onclick="removeAt(${i})">Remove</button></li>`).join(""); }
function removeAt(i) { items.splice(i, 1); setTimeout(() => { shown = items.slice(); draw(); }, 2000); }
document.querySelector("[data-testid=reload]").onclick = () => { shown = items.slice(); draw(); };
draw();
</script></body></html>"""


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root: Path = tmp_path_factory.mktemp("app")
    (root / "index.html").write_text(PAGE, encoding="utf-8")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    server.shutdown()


def test_remove_bread_once(device, guistate, app_url: str) -> None:
    device.open_url(app_url)
    guistate.goal("Remove Bread from the list", plan=["list shown", ("Bread gone", gone("Bread"))])
    with guistate.step("wait for the list", expect=visible("Groceries")):
        pass
    guistate.milestone("list shown")
    # Not safe to repeat: a second Remove on the stale row would remove Cheese.
    with guistate.step("remove Bread", expect=gone("Bread"), idempotent=False,
                       refresh=lambda: device.tap(id="reload")) as step:
        device.tap(desc="Remove Bread")
    guistate.milestone("Bread gone")
    guistate.assert_complete()
    assert step.outcome in ("settled", "refreshed")
    assert device.exists(text="Cheese") and device.exists(text="Apples")
