"""Feed (`com.guistate.feed`): the stale-list delete of TSR figure 2, reproducible on demand.

The backend deletes a post at once, but the list redraws only `faults.refresh_delay` seconds
later (or on pull-to-refresh). Until then the deleted row is still on screen and its Delete
button still works - by *position*, like a RecyclerView adapter - so a blind re-tap deletes the
next post. The action log shows it: two `delete_post` entries with different post ids.
Long-pressing a row opens the same confirm dialog. One post's text is hostile markup, to prove
page-source escaping.

App version 2 (`guistate:appVersion` 2, issue 7) restyles the Delete button (a small outlined pill at
the bottom right of the row, resource id `action_remove`, description "Remove <author>'s post") and
pins the first post: a pinned post has no Delete button at all (a negative for healing).

Drifts of version 1 (`drift.py`): `renamed` (the row's Delete is "Remove", id `remove`), `moved`
(Delete at the row's left, under the avatar), `new_row` (a pinned announcement by "Team" first),
`interstitial` (a cookie notice when the feed opens), `removed_screen` (no confirm dialog: Delete
deletes at once).
"""

from __future__ import annotations

from dataclasses import dataclass

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

__all__ = ["FeedApp", "Post"]

HOSTILE_TEXT = "<img src=x onerror=alert(1)>"
_AUTHORS = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy"]
_TEXTS = [
    "Morning run done, 10 km in the rain.",
    "Anyone tried the new ramen place on 5th street?",
    "Our team shipped the release tonight!",
    "Sunset from the pier, no filter.",
    "Looking for a reading list on distributed systems.",
    "The cat learned to open the fridge. Send help.",
    "Trying sourdough again, attempt number seven.",
    "Board game night on Friday, who is in?",
    "Finally fixed the flaky test. It was the clock.",
    "Concert tickets are up for grabs, DM me.",
    "Three days of hiking and zero signal. Recommended.",
    "Coffee tasting notes: cherry, cocoa, regret.",
]
_AVATAR_COLORS = [(239, 83, 80), (171, 71, 188), (92, 107, 192), (41, 182, 246), (38, 166, 154),
                  (156, 204, 101), (255, 202, 40), (255, 112, 67), (141, 110, 99), (120, 144, 156)]
ROW_H = 250  # reference px


@dataclass(frozen=True)
class Post:
    id: str
    author: str
    text: str
    color: tuple[int, int, int]


class FeedApp(App):
    package = "com.guistate.feed"
    label = "Feed"
    primary = (25, 118, 210)

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx)
        rng = ctx.rng("feed")
        texts = rng.sample(_TEXTS, len(_AUTHORS) - 1)
        texts.insert(rng.randrange(1, 6), HOSTILE_TEXT)  # on the first screen
        self.backend = [Post(f"p{i + 1}", author, texts[i], _AVATAR_COLORS[i]) for i, author in enumerate(_AUTHORS)]
        if ctx.drift == "new_row":
            self.backend.insert(0, Post("p0", "Team", "Welcome to the new Feed! Posts are now pinned.", (0, 137, 123)))
        self.cookie_notice = ctx.drift == "interstitial"
        self.shown = list(self.backend)  # what the adapter draws: stale until a redraw
        self.confirm: int | None = None  # adapter position the open dialog acts on
        self.redraw_at: float | None = None
        self.refresh_until: float | None = None
        self.toast_on_redraw = False

    # -- state transitions ---------------------------------------------------------------
    def _ask_delete(self, position: int) -> None:
        self.confirm = position
        if self.ctx.drift == "removed_screen":  # no confirm dialog in this release
            self._confirm_delete()
            return
        self.ctx.log("open_dialog", dialog="confirm_delete", author=self.shown[position].author)

    def _close_cookie_notice(self, choice: str) -> None:
        self.cookie_notice = False
        self.ctx.log("dismiss_dialog", dialog="cookie_notice", choice=choice)

    def _cancel(self) -> None:
        self.confirm = None
        self.ctx.log("dismiss_dialog", dialog="confirm_delete")

    def _confirm_delete(self) -> None:
        position, self.confirm = self.confirm, None
        if position is None or position >= len(self.backend):
            return  # the stale row points past the end of the backend list: nothing to delete
        post = self.backend.pop(position)
        self.ctx.log("delete_post", post_id=post.id, author=post.author, position=position)
        self.toast_on_redraw = True
        delay = self.ctx.faults().refresh_delay
        if delay <= 0:
            self._redraw(self.ctx.now())
        elif self.redraw_at is None:
            self.redraw_at = self.ctx.now() + delay

    def _pull_to_refresh(self) -> None:
        if self.refresh_until is None:
            self.refresh_until = self.ctx.now() + self.ctx.faults().refresh_duration
            self.ctx.log("refresh", target="feed/list")

    def _redraw(self, when: float) -> None:
        self.shown = list(self.backend)
        self.redraw_at = None
        if self.toast_on_redraw:
            self.toast_on_redraw = False
            self.ctx.toast("Post deleted", start=when)

    def advance(self, now: float) -> bool:
        changed = False
        events = sorted(t for t in (self.redraw_at, self.refresh_until) if t is not None and t <= now)
        for when in events:
            if when == self.refresh_until:
                self.refresh_until = None
            self._redraw(when)
            changed = True
        return changed

    def back(self) -> bool:
        if self.cookie_notice:
            self._close_cookie_notice("back")
            return True
        if self.confirm is not None:
            self._cancel()
            return True
        return False

    # -- views ---------------------------------------------------------------------------
    def build_content(self, area: Box) -> list[View]:
        m, px = self.m, self.m.px
        row_h = px(ROW_H)
        extent = row_h * len(self.shown)
        offset = self.offset("feed/list", extent, area.height)
        swipe = View("feed/swipe_refresh", "android.view.ViewGroup", area, rid=f"{self.package}:id/swipe_refresh")
        listing = self.scroller("feed/list", area, extent, f"{self.package}:id/posts", on_refresh=self._pull_to_refresh)
        for position, post in enumerate(self.shown):
            top = area.top + position * row_h - offset
            if top >= area.bottom or top + row_h <= area.top:
                continue
            listing.add(self._row(position, post, Box(0, top, m.width, top + row_h)))
        swipe.add(listing)
        if self.refresh_until is not None:
            c = m.width // 2
            swipe.add(View("feed/refreshing", "android.widget.ProgressBar",
                           Box(c - px(64), area.top + px(48), c + px(64), area.top + px(176)),
                           rid=f"{self.package}:id/refresh_progress", desc="Refreshing",
                           style=Style(kind="spinner", fg=self.primary)))
        return [swipe]

    def _row(self, position: int, post: Post, box: Box) -> View:
        px, key, top = self.m.px, f"feed/post/{post.id}", box.top
        row = View(key, "android.view.ViewGroup", box, rid=f"{self.package}:id/post_row",
                   on_long=lambda: self._ask_delete(position), style=Style(kind="row", bg=WHITE))
        row.add(View(f"{key}/avatar", "android.widget.ImageView", Box(px(48), top + px(44), px(160), top + px(156)),
                     desc=f"Avatar of {post.author}", rid=f"{self.package}:id/avatar",
                     style=Style(kind="avatar", bg=post.color, fg=WHITE, size=px(52), glyph=post.author[0])))
        row.add(self.label_view(f"{key}/author", Box(px(196), top + px(36), px(760), top + px(100)), post.author,
                                size=44, bold=True, rid=f"{self.package}:id/author"))
        row.add(self.label_view(f"{key}/text", Box(px(196), top + px(108), px(770), top + px(218)), post.text,
                                size=38, color=TEXT2, max_lines=2, rid=f"{self.package}:id/text"))
        if self.ctx.app_version == 2:
            return self._row_v2(row, post, position, top)
        drift = self.ctx.drift
        if post.id == "p0":  # the new_row drift's pinned announcement: nothing to delete
            return row
        where = (Box(px(24), top + px(166), px(184), top + px(238)) if drift == "moved"
                 else Box(px(800), top + px(77), px(1032), top + px(173)))
        renamed = drift == "renamed"
        delete = self.button(f"{key}/delete", where, "Remove" if renamed else "Delete",
                             lambda: self._ask_delete(position), rid=f"{self.package}:id/{'remove' if renamed else 'delete'}",
                             color=(211, 47, 47))
        # the accessibility label a real app gives each row's button
        delete.desc = f"Remove {post.author}'s post" if renamed else f"Delete post by {post.author}"
        row.add(delete)
        return row

    def _row_v2(self, row: View, post: Post, position: int, top: int) -> View:
        px, key = self.m.px, row.key
        if post.id == "p1":  # pinned: it cannot be deleted, so the function is absent from this row
            row.add(self.label_view(f"{key}/pinned", Box(px(820), top + px(160), px(1032), top + px(224)), "Pinned",
                                    size=32, color=TEXT2, align="right", rid=f"{self.package}:id/pinned"))
            return row
        red = (198, 40, 40)
        row.add(View(f"{key}/delete", "android.widget.Button", Box(px(860), top + px(152), px(1032), top + px(226)),
                     text="Delete", desc=f"Remove {post.author}'s post", rid=f"{self.package}:id/action_remove",
                     on_tap=lambda: self._ask_delete(position), clickable=True, focusable=True,
                     style=Style(kind="button", bg=WHITE, fg=red, border=red, size=px(32), bold=True,
                                 align="center", radius=px(37))))
        return row

    def dialog(self) -> View | None:
        if self.cookie_notice:
            return alert(self.m, "feed/cookies", self.package, "Cookies", "We use cookies to improve your feed.",
                         [("feed/cookies/decline", "android:id/button2", "Decline",
                           lambda: self._close_cookie_notice("decline")),
                          ("feed/cookies/accept", "android:id/button1", "Accept",
                           lambda: self._close_cookie_notice("accept"))], self.primary)
        if self.confirm is None or self.confirm >= len(self.shown):
            return None
        author = self.shown[self.confirm].author
        return alert(self.m, "feed/dialog", self.package, "Delete post?", f"Delete post by {author}?",
                     [("feed/dialog/cancel", "android:id/button2", "Cancel", self._cancel),
                      ("feed/dialog/delete", "android:id/button1", "Delete", self._confirm_delete)],
                     (211, 47, 47))
