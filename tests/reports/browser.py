"""A headless Chromium driven by selenium, for tests of the HTML report; skips with the reason when absent."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

CHROMIUM_OPTIONS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--window-size=1400,1000")


def _find(*names: str) -> str | None:
    for name in names:
        path = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").is_file() else None)
        if path:
            return path
    return None


def chromium_driver():
    """A started selenium Chrome driver on Debian's chromium + chromedriver (pytest.skip when missing)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("needs selenium (pip install 'retrieval-harness[dev]'), which is not installed")
    browser = _find("chromium", "chromium-browser")
    driver = _find("chromedriver")
    if browser is None or driver is None:
        pytest.skip("needs Chromium and its driver (Debian: apt-get install chromium chromium-driver); "
                    f"found chromium={browser}, chromedriver={driver}")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    profile = tempfile.mkdtemp(prefix="harness-chromium-")
    for argument in (*CHROMIUM_OPTIONS, f"--user-data-dir={profile}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        chrome = webdriver.Chrome(options=options, service=Service(driver))
    except Exception as exc:  # noqa: BLE001 - a browser that cannot start is an absent browser
        shutil.rmtree(profile, ignore_errors=True)
        pytest.skip(f"Chromium could not be started through {driver}: {str(exc).splitlines()[0]}")
    chrome.set_page_load_timeout(60)
    return chrome, profile


def console_errors(chrome) -> list[dict]:
    """Browser log entries at SEVERE level (JavaScript errors, failed loads) since the last read."""
    return [entry for entry in chrome.get_log("browser") if entry.get("level") == "SEVERE"]
