"""Fixtures of the report tests."""

from __future__ import annotations

import shutil

import pytest

from tests.reports.browser import chromium_driver


@pytest.fixture(scope="module")
def chrome():
    """A headless Chromium driver for the module's tests (skipped where Chromium or selenium is absent)."""
    driver, profile = chromium_driver()
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)
