"""Drive Debian's headless Chromium with Selenium (no browser download), for tests, screenshots and the bench."""
from __future__ import annotations

import os
import shutil
from typing import Any, Optional

CHROMIUM = os.environ.get("RLA_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("RLA_CHROMEDRIVER", "/usr/bin/chromedriver")


def missing() -> Optional[str]:
    """Why a browser cannot be started here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e .[test])"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.exists(path) or shutil.which(path)):
            return f"{path} is missing (apt-get install chromium chromium-driver, see .ci/install-test-deps)"
    return None


def start(width: int = 1400, height: int = 900) -> Any:
    """A headless Chromium WebDriver (the caller quits it)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--disable-extensions", "--no-first-run",
                "--hide-scrollbars", "--force-device-scale-factor=1",
                # no traffic off this machine: no updater, sync or pings, and every host name
                # but the loopback ones fails to resolve
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--disable-domain-reliability", "--no-pings",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    return driver
