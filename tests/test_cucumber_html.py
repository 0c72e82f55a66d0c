"""Cucumber's own HTML formatter (`@cucumber/html-formatter`, pinned in tests/cucumber_html)
renders the run's Cucumber Messages with the right counts, in headless Chromium.

Needs Node.js, Chromium and `npm ci` in tests/cucumber_html (`make cucumber-html-check` runs it);
without them it skips naming what is missing, unless SOLAR_REQUIRE_CUCUMBER_HTML=1 makes that a
failure (as the Make target does).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cucumber_feature import SCENARIOS, run_lamps

HERE = Path(__file__).resolve().parent / "cucumber_html"
FORMATTER = HERE / "node_modules" / "@cucumber" / "html-formatter"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def _prerequisites() -> tuple[str, str]:
    node = shutil.which("node")
    chromium = os.environ.get("CHROMIUM") or next(
        filter(None, map(shutil.which, CHROMIUM_NAMES)), None
    )
    missing = None
    if node is None:
        missing = (
            "node is not on PATH: install Node.js 18 or later (Debian: apt-get install nodejs npm)"
        )
    elif chromium is None:
        missing = (
            "chromium is not on PATH: install it (Debian: apt-get install chromium) or set CHROMIUM"
        )
    elif not FORMATTER.is_dir():
        missing = "@cucumber/html-formatter is not installed: run `make cucumber-html-check`"
    if missing is not None:
        if os.environ.get("SOLAR_REQUIRE_CUCUMBER_HTML") == "1":
            pytest.fail(missing, pytrace=False)
        pytest.skip(missing)
    assert node is not None and chromium is not None
    return node, chromium


def test_the_official_html_formatter_shows_the_runs_counts(tmp_path: Path) -> None:
    node, chromium = _prerequisites()
    done = run_lamps(tmp_path, tmp_path / "report")
    assert "1 failed, 3 passed, 1 skipped" in done.stdout, done.stdout[-2000:]
    page = tmp_path / "cucumber.html"
    with (tmp_path / "report" / "cucumber.ndjson").open("rb") as messages:
        rendered = subprocess.run(
            [node, str(HERE / "render.mjs")],
            stdin=messages,
            capture_output=True,
            cwd=HERE,
            check=True,
            timeout=60,
        )
    page.write_bytes(rendered.stdout)
    dom = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",  # the check runs as root in CI containers
            "--disable-gpu",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            "--virtual-time-budget=10000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    text = re.sub(
        r"\s+",
        " ",
        re.sub(r"<[^>]+>", " ", re.sub(r"<(style|script).*?</\1>", "", dom, flags=re.S)),
    )
    total = sum(SCENARIOS.values())
    assert f"({SCENARIOS['passed']} / {total}) passed" in text, text[:2000]
    for status, count in SCENARIOS.items():
        assert re.search(rf"\b{status} {count}\b", text), f"no '{status} {count}' in: {text[:2000]}"
    assert "the lamp did not go dark: last seen lit" in text
    assert "Rule: A switch turns its lamp on and off" in text
