"""Gallery (`com.guistate.gallery`): select photos, move them to an album (the photo-sorting case).

A grid of 12 photos (label, date, category); tapping a tile toggles its selection; "Move to
album" opens a picker; moving removes the photos from "All" and logs exactly which moved where.
The app bar's "Albums" action lists the albums with their counts, so a test can verify.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps.base import (
    TEXT2,
    WHITE,
    App,
    AppContext,
    Style,
    View,
)
from pytest_guistate.devices.sim.apps.system import alert

__all__ = ["ALBUMS", "GalleryApp", "Photo"]

ALBUMS = ["Travel", "Family", "Work", "Pets"]
_PHOTOS = [("Beach", "Travel"), ("Mountains", "Travel"), ("Birthday", "Family"), ("Office", "Work"),
           ("Dog", "Pets"), ("Sunset", "Travel"), ("Picnic", "Family"), ("Wedding", "Family"), ("Cat", "Pets"),
           ("Conference", "Work"), ("Whiteboard", "Work"), ("Parrot", "Pets")]
_SKIES = [(129, 212, 250), (179, 157, 219), (255, 204, 188), (197, 225, 165), (255, 224, 130), (178, 235, 242)]
_HILLS = [(56, 142, 60), (121, 85, 72), (69, 90, 100), (216, 67, 21), (0, 121, 107), (123, 31, 162)]


@dataclass(frozen=True)
class Photo:
    id: str
    label: str
    date: str
    category: str
    sky: tuple[int, int, int]
    hill: tuple[int, int, int]

    @property
    def description(self) -> str:
        return f"{self.label} {self.date} {self.category}"


class GalleryApp(App):
    package = "com.guistate.gallery"
    label = "Gallery"
    primary = (0, 121, 107)

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx)
        rng = ctx.rng("gallery")
        order = rng.sample(_PHOTOS, len(_PHOTOS))
        self.photos = [Photo(f"g{i + 1}", label, f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", cat,
                             _SKIES[i % len(_SKIES)], _HILLS[(i * 5) % len(_HILLS)])
                       for i, (label, cat) in enumerate(order)]
        self.all = [p.id for p in self.photos]
        self.albums: dict[str, list[str]] = {name: [] for name in ALBUMS}
        self.selected: list[str] = []
        self.picker = False
        self.screen = "grid"  # grid | albums

    def screen_id(self) -> str:
        return self.screen

    def title(self) -> str:
        if self.screen == "albums":
            return "Albums"
        return f"{len(self.selected)} selected" if self.selected else "All photos"

    def _photo(self, photo_id: str) -> Photo:
        return next(p for p in self.photos if p.id == photo_id)

    def _toggle(self, photo_id: str) -> None:
        if photo_id in self.selected:
            self.selected.remove(photo_id)
        else:
            self.selected.append(photo_id)
        self.ctx.log("select_photo", photo_id=photo_id, label=self._photo(photo_id).label,
                     selected=photo_id in self.selected)

    def _open_picker(self) -> None:
        self.picker = True
        self.ctx.log("open_dialog", dialog="album_picker")

    def _move(self, album: str) -> None:
        moved = [pid for pid in self.selected if pid in self.all]
        for pid in moved:
            self.all.remove(pid)
            self.albums[album].append(pid)
        self.ctx.log("move_to_album", album=album, photo_ids=moved, labels=[self._photo(p).label for p in moved])
        self.selected, self.picker = [], False
        self.ctx.toast(f"Moved {len(moved)} to {album}")

    def _cancel_picker(self) -> None:
        self.picker = False
        self.ctx.log("dismiss_dialog", dialog="album_picker")

    def back(self) -> bool:
        if self.picker:
            self._cancel_picker()
        elif self.screen == "albums":
            self.screen = "grid"
        elif self.selected:
            self.selected = []
        else:
            return False
        return True

    def back_title(self) -> str | None:
        if self.screen == "albums" and not self.picker:
            return "All photos" if not self.selected else f"{len(self.selected)} selected"
        return None

    def appbar_actions(self, bar: Box) -> list[View]:
        px = self.m.px
        if self.screen != "grid":
            return []
        return [View("gallery/albums_action", "android.widget.TextView", Box(bar.right - px(280), bar.top + px(40),
                                                                              bar.right - px(32), bar.bottom - px(40)),
                     text="Albums", rid=f"{self.package}:id/albums", on_tap=self._show_albums,
                     style=Style(kind="text", fg=WHITE, size=px(44), bold=True, align="right"))]

    def _show_albums(self) -> None:
        self.screen = "albums"
        self.ctx.log("open_screen", screen="albums")

    def build_content(self, area: Box) -> list[View]:
        return self._albums(area) if self.screen == "albums" else self._grid(area)

    def _grid(self, area: Box) -> list[View]:
        m, px = self.m, self.m.px
        bar_h, gap = px(168), px(24)
        box = Box(0, area.top, m.width, area.bottom - bar_h)
        cell_w = (m.width - 4 * gap) // 3
        cell_h = cell_w + px(120)
        rows = (len(self.all) + 2) // 3
        extent = gap + rows * (cell_h + gap)
        grid = self.scroller("gallery/grid", box, extent, f"{self.package}:id/grid")
        offset = self.offset("gallery/grid", extent, box.height)
        for i, pid in enumerate(self.all):
            left = gap + (i % 3) * (cell_w + gap)
            top = box.top + gap + (i // 3) * (cell_h + gap) - offset
            if top >= box.bottom or top + cell_h <= box.top:
                continue
            grid.add(self._cell(self._photo(pid), Box(left, top, left + cell_w, top + cell_h), cell_w))
        bottom = View("gallery/bottom_bar", "android.view.ViewGroup", Box(0, box.bottom, m.width, area.bottom),
                      rid=f"{self.package}:id/bottom_bar", style=Style(bg=(245, 245, 245)))
        bottom.add(self.label_view("gallery/count", Box(px(48), box.bottom + px(40), px(500), area.bottom - px(40)),
                                   f"{len(self.all)} photos", size=40, color=TEXT2, rid=f"{self.package}:id/count"),
                   self.button("gallery/move", Box(px(560), box.bottom + px(28), px(1032), area.bottom - px(28)),
                               "Move to album", self._open_picker, enabled=bool(self.selected),
                               rid=f"{self.package}:id/move"))
        return [grid, bottom]

    def _cell(self, photo: Photo, box: Box, size: int) -> View:
        px, key, chosen = self.m.px, f"gallery/photo/{photo.id}", photo.id in self.selected
        cell = View(key, "android.view.ViewGroup", box, desc=photo.description, rid=f"{self.package}:id/photo",
                    on_tap=lambda: self._toggle(photo.id), selected=chosen, focusable=True,
                    style=Style(bg=WHITE, border=self.primary if chosen else None))
        tile = Box(box.left, box.top, box.right, box.top + size)
        cell.add(View(f"{key}/image", "android.widget.ImageView", tile, desc=photo.label,
                      rid=f"{self.package}:id/thumbnail", style=Style(kind="image", bg=photo.sky, fg=photo.hill)))
        if chosen:
            cell.add(View(f"{key}/check", "android.widget.CheckBox",
                          Box(tile.right - px(84), tile.top + px(20), tile.right - px(20), tile.top + px(84)),
                          desc="Selected", rid=f"{self.package}:id/check", checkable=True, checked=True,
                          style=Style(kind="check", bg=self.primary)))
        cell.add(self.label_view(f"{key}/label", Box(box.left + px(8), tile.bottom + px(8), box.right - px(8),
                                                     tile.bottom + px(60)), photo.label, size=38, bold=True,
                                 rid=f"{self.package}:id/label"),
                 self.label_view(f"{key}/meta", Box(box.left + px(8), tile.bottom + px(62), box.right - px(8),
                                                    tile.bottom + px(112)), f"{photo.date}  {photo.category}",
                                 size=32, color=TEXT2, rid=f"{self.package}:id/meta"))
        return cell

    def _albums(self, area: Box) -> list[View]:
        px, views, y = self.m.px, [], area.top
        for name in ["All", *ALBUMS]:
            ids = self.all if name == "All" else self.albums[name]
            labels = ", ".join(self._photo(p).label for p in ids) or "Empty"
            row = View(f"gallery/album/{name}", "android.widget.LinearLayout", Box(0, y, self.m.width, y + px(200)),
                       rid=f"{self.package}:id/album_row", style=Style(kind="row", bg=WHITE))
            row.add(self.label_view(f"gallery/album/{name}/name", Box(px(48), y + px(30), px(760), y + px(96)),
                                    name, size=46, bold=True, rid=f"{self.package}:id/album_name"),
                    self.label_view(f"gallery/album/{name}/count", Box(px(760), y + px(30), px(1032), y + px(96)),
                                    f"{len(ids)} photos", size=40, color=TEXT2, align="right",
                                    rid=f"{self.package}:id/album_count"),
                    self.label_view(f"gallery/album/{name}/items", Box(px(48), y + px(108), px(1032), y + px(172)),
                                    labels, size=34, color=TEXT2, rid=f"{self.package}:id/album_items"))
            views.append(row)
            y += px(200)
        return views

    def dialog(self) -> View | None:
        if not self.picker:
            return None
        items = [(f"gallery/picker/{name}", f"{name} ({len(self.albums[name])})", partial(self._move, name))
                 for name in ALBUMS]
        return alert(self.m, "gallery/picker", self.package, "Move to album", "",
                     [("gallery/picker/cancel", "android:id/button2", "Cancel", self._cancel_picker)], self.primary,
                     items=items)
