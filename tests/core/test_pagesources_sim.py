"""The sim's own page sources (iOS persona) in the corpus: committed dumps, kept in sync, parsed.

`tests/core/pagesources/sim/ios_*.xml` are what the simulated iPhone serves for one screen of
every app (frozen clock, seed 0). The first test fails when the sim's output drifts from them;
regenerate with `python tests/core/test_pagesources_sim.py`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.devices.sim.ios.persona import IosScreen
from pytest_guistate.devices.sim.ios.phone import IosPhone
from pytest_guistate.devices.sim.phone import ManualClock, Phone

FOLDER = Path(__file__).parent / "pagesources" / "sim"
SCALE = 3


def _phone(package: str | None, **faults: float) -> IosPhone:
    inner = Phone(width=1170, height=2532, app_package=package, clock=ManualClock(), frozen=True,
                  wall_start=1_700_000_000.0, platform="ios", faults=dict(faults))
    return IosPhone(inner, IosScreen(390, 844, SCALE))  # the corpus is an iPhone 14 (docs/pagesources.md)


def _tap(phone: IosPhone, predicate: Callable[..., bool]) -> None:
    node = next(n for n in phone.root().walk() if predicate(n))
    phone.tap(*node.bounds.center)


def screens() -> dict[str, str]:
    """name -> page source, one screen of every app (and the dialogs and pushed screens)."""
    out: dict[str, str] = {}
    feed = _phone("com.guistate.feed")
    out["ios_feed"] = feed.page_source()
    _tap(feed, lambda n: getattr(n, "label", None) == "Delete post by Carol")
    out["ios_feed_alert"] = feed.page_source()
    gallery = _phone("com.guistate.gallery")
    _tap(gallery, lambda n: getattr(n, "label", None) == "Beach")
    out["ios_gallery_selected"] = gallery.page_source()
    _tap(gallery, lambda n: getattr(n, "name", None) == "albums")
    out["ios_gallery_albums"] = gallery.page_source()
    shop = _phone("com.guistate.shopb", search_delay=0)
    shop.type_text("shop/search", "Phone\n")
    out["ios_shopb_results"] = shop.page_source()
    _tap(shop, lambda n: n.cls == "XCUIElementTypeStaticText" and getattr(n, "label", None) == "Phone Case")
    out["ios_shopb_product"] = shop.page_source()
    settings = _phone("com.guistate.settings")
    settings.type_text("settings/username", "qa@example.com")
    settings.type_text("settings/password", "correct-horse")
    out["ios_settings_login"] = settings.page_source()
    _tap(settings, lambda n: getattr(n, "name", None) == "login")
    out["ios_settings_toggles"] = settings.page_source()
    out["ios_springboard"] = _phone(None).page_source()
    return out


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return screens()


def test_committed_dumps_are_what_the_sim_serves(generated: dict[str, str]) -> None:
    committed = {p.stem: p.read_text(encoding="utf-8") for p in FOLDER.glob("ios_*.xml")}
    assert set(committed) == set(generated), "regenerate: python tests/core/test_pagesources_sim.py"
    drifted = [name for name, xml in generated.items() if committed[name] != xml]
    assert not drifted, f"the sim's iOS source changed for {drifted}; regenerate the dumps"


def _tree(name: str):  # type: ignore[no-untyped-def]
    return parse_page_source((FOLDER / f"{name}.xml").read_text(encoding="utf-8"), scale=SCALE)


def test_every_dump_parses_as_ios_in_pixels() -> None:
    for path in FOLDER.glob("ios_*.xml"):
        tree = _tree(path.stem)
        assert (tree.platform, tree.unit, tree.width, tree.height) == ("ios", "px", 1170, 2532), path.name
        assert tree.actionable(), path.name


def test_actionable_buttons_cells_and_fields() -> None:
    feed = _tree("ios_feed")
    kinds = {n.kind for n in feed.actionable()}
    assert {"Button", "Cell", "Table"} <= kinds
    assert "Delete post by Carol" in {n.label for n in feed.actionable()}
    login = _tree("ios_settings_login")
    assert {"TextField", "SecureTextField", "Button"} <= {n.kind for n in login.actionable()}
    toggles = _tree("ios_settings_toggles")
    switch = next(n for n in toggles.nodes() if n.kind == "Switch" and n.label == "Wi-Fi")
    assert switch.checked and switch.is_actionable


def test_password_field_and_redaction_box() -> None:
    text = (FOLDER / "ios_settings_login.xml").read_text(encoding="utf-8")
    assert "correct-horse" not in text and "\u2022" * 13 in text
    boxes = _tree("ios_settings_login").password_boxes()
    assert len(boxes) == 1 and boxes[0].width > 1000  # the whole field, in screenshot pixels


def test_changes_snap_to_cells_and_alerts() -> None:
    gallery = _tree("ios_gallery_selected")
    cell = next(n for n in gallery.nodes() if n.kind == "Cell" and n.label.startswith("Beach"))
    assert cell.bounds is not None
    check = next(n for n in gallery.nodes() if n.label == "Selected")
    assert check.bounds is not None
    snapped = gallery.smallest_container(check.bounds, screen=gallery.screen_box)
    assert snapped is not None and snapped.bounds == cell.bounds
    alert = _tree("ios_feed_alert")
    title = next(n for n in alert.nodes() if n.kind == "StaticText" and n.label == "Delete post by Carol?")
    assert title.bounds is not None
    container = alert.smallest_container(title.bounds, screen=alert.screen_box)
    assert container is not None and container.kind in ("Alert", "Other") and container.bounds is not None
    assert container.bounds.width < 1170


if __name__ == "__main__":
    FOLDER.mkdir(parents=True, exist_ok=True)
    for name, xml in screens().items():
        (FOLDER / f"{name}.xml").write_text(xml, encoding="utf-8")
        print(f"wrote {FOLDER / name}.xml", file=sys.stderr)
