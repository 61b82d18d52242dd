"""The mobile web Feed: the sim's stale-list delete served as a real page for real Appium (issue 6)."""

from pytest_guistate.devices.web_feed.server import STATIC_DIR, FeedServer

__all__ = ["STATIC_DIR", "FeedServer"]
