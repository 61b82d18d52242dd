"""Tests of the CI scripts in .ci/ (the Appium job stays in tests/appium, addressed there by path)."""
