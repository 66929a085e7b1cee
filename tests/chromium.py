"""Debian's headless Chromium through chromedriver, for the tests that open a generated HTML page.

One place for how the browser starts (no network of its own, a throwaway profile, every network event
and console message logged) and for what a page did when it was opened, so the simulation report's and
the sweep report's tests check the same things the same way.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")

#: Skips on a developer machine without the Debian packages; CI installs them, so there it fails instead.
needs_browser = pytest.mark.skipif((CHROMIUM is None or CHROMEDRIVER is None) and not os.environ.get("CI"),
                                   reason="Debian chromium and chromium-driver not installed (CI installs them)")


@contextmanager
def headless_chromium() -> Iterator[Any]:
    """A headless Chromium driver logging every network event and console message; quit on exit."""
    assert CHROMIUM and CHROMEDRIVER, "CI must have chromium and chromedriver (.ci/run installs them)"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--window-size=1280,1600"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver: Any, page: Path) -> tuple[list[str], list[str], list[dict]]:
    """Load ``page``; return the URLs it requested, every off-machine URL requested meanwhile, and the console."""
    driver.get_log("performance")  # drop earlier events (the browser's own start-up page)
    driver.get_log("browser")
    uri = page.as_uri()
    driver.get(uri)
    events = [json.loads(entry["message"])["message"] for entry in driver.get_log("performance")]
    sent = [e["params"] for e in events if e["method"] == "Network.requestWillBeSent"]
    ours = [p["request"]["url"] for p in sent if p.get("documentURL") == uri]
    remote = [p["request"]["url"] for p in sent if re.match(r"(?i)(https?|wss?|ftp):", p["request"]["url"])]
    return ours, remote, driver.get_log("browser")


#: Each table of the page wider than what holds it: the table's width, its box's, the viewport's, and the first
#: header. A table in a scrolling box (``.table-scroll``, ``.scroll``) counts when it overflows the box: its
#: figures would need a sideways scroll.
_OVERFLOWING = r"""
const view = document.documentElement.clientWidth;
return Array.from(document.querySelectorAll('table')).map(function (table) {
  const box = table.parentElement;
  const right = table.getBoundingClientRect().right;
  return {id: table.id || '', width: Math.round(table.getBoundingClientRect().width),
          box: Math.round(box.clientWidth), scroll: box.scrollWidth, right: Math.round(right), view: view,
          first: table.tHead && table.tHead.rows[0] ? table.tHead.rows[0].cells[0].textContent : ''};
}).filter(function (t) { return t.scroll > t.box + 1 || t.right > t.view + 1; });
"""

#: Every table's width on the page, the widest first.
_WIDTHS = r"""
return Array.from(document.querySelectorAll('table')).map(function (table) {
  return {id: table.id || '', width: Math.round(table.getBoundingClientRect().width)};
}).sort(function (a, b) { return b.width - a.width; });
"""


def overflowing_tables(driver: Any, page: Path, width: int = 1400) -> tuple[list[dict], list[dict]]:
    """Open ``page`` in a window ``width`` pixels wide: the tables that need a sideways scroll, and every
    table's width (the widest first)."""
    driver.set_window_size(width, 1600)
    driver.get(page.as_uri())
    return driver.execute_script(_OVERFLOWING), driver.execute_script(_WIDTHS)
