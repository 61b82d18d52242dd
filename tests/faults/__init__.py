"""The fault suite (issue 14)."""
