"""App drift on the sim (issue 21): what a real app's next release does to a recorded test.

Besides versions 1 and 2 (a restyle, issue 7), `guistate:appVersion` may name one drift of version 1,
each in the Shop and Feed apps:

* `renamed`: a button says something else (Shop: "Add to bag", same id; Feed: the row's Delete is
  "Remove" with a new id and description -- a rename the cache cannot trust);
* `moved`: a control sits elsewhere (Shop: Add to cart above the description; Feed: Delete at the
  row's left under the avatar);
* `new_row`: a row at the top of a list (Shop: a sponsored "Phone Case Pro" result; Feed: a pinned
  announcement post by "Team");
* `interstitial`: a dialog to dismiss when the app opens (Shop: rate-the-app; Feed: a cookie notice);
* `removed_screen`: a screen of the flow is gone (Shop: no product page, each result row has its own
  Add to cart; Feed: no confirm dialog, Delete deletes at once).

`device.action_log()` stays the ground truth of what happened (`dismiss_dialog`, `add_to_cart`,
`delete_post`, ...).
"""

from __future__ import annotations

__all__ = ["DRIFTS", "is_app_version"]

DRIFTS: tuple[str, ...] = ("renamed", "moved", "new_row", "interstitial", "removed_screen")


def is_app_version(value: object) -> bool:
    """1, 2 (restyle) or a drift name; a bool is not a version."""
    if isinstance(value, bool):
        return False
    return value in (1, 2) or (isinstance(value, str) and value in DRIFTS)
