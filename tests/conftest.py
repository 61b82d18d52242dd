"""Shared by every test directory.

`pytester.runpytest_inprocess` restores `sys.modules` after an inner run, dropping modules first
imported inside it. Had the inner run been the first to import the anthropic SDK and its HTTP
library, a later test would import a second copy whose timeout exceptions the first SDK's handlers
do not catch (a read timeout then surfaces as `APIConnectionError`). Importing them here, before any
inner run, keeps one copy for the whole session.
"""

import anthropic  # noqa: F401

import pytest_guistate.llm.client  # noqa: F401
