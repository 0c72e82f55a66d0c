"""Cucumber's own consumers read the run's reports right, in headless Chromium: Cucumber's HTML
formatter (`@cucumber/html-formatter`) renders its Cucumber Messages with the right counts, and
multiple-cucumber-html-reporter renders its Cucumber JSON keeping the data tables, doc strings,
an id per example, each tag's line, each error message once and the run's verdict (both pinned
in tests/cucumber_html).

Needs Node.js, Chromium and `npm ci` in tests/cucumber_html (`make cucumber-html-check` runs it);
without them it skips naming what is missing, unless SOLAR_REQUIRE_CUCUMBER_HTML=1 makes that a
failure (as the Make target does).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.cucumber_feature import DOC_STRING, FAILURE, SCENARIOS, TABLE, TAG_LINES, run_lamps

HERE = Path(__file__).resolve().parent / "cucumber_html"
PACKAGES = HERE / "node_modules"
NEEDED = ("@cucumber/html-formatter", "multiple-cucumber-html-reporter")
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
    elif not all((PACKAGES / package).is_dir() for package in NEEDED):
        missing = f"{' and '.join(NEEDED)} are not installed: run `make cucumber-html-check`"
    if missing is not None:
        if os.environ.get("SOLAR_REQUIRE_CUCUMBER_HTML") == "1":
            pytest.fail(missing, pytrace=False)
        pytest.skip(missing)
    assert node is not None and chromium is not None
    return node, chromium


@pytest.fixture(scope="module")
def lamps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("lamps")
    done = run_lamps(where, where / "report")
    counts = ", ".join(f"{n} {status}" for status, n in sorted(SCENARIOS.items()))
    assert counts in done.stdout, done.stdout[-2000:]
    return where / "report"


def _text(chromium: str, page: Path, scratch: Path) -> str:
    """The page as Chromium builds it, as text."""
    dom = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",  # the check runs as root in CI containers
            "--disable-gpu",
            f"--user-data-dir={scratch / 'chromium-profile'}",
            "--virtual-time-budget=10000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return re.sub(
        r"\s+",
        " ",
        re.sub(r"<[^>]+>", " ", re.sub(r"<(style|script).*?</\1>", "", dom, flags=re.S)),
    )


def test_the_official_html_formatter_shows_the_runs_counts(lamps: Path, tmp_path: Path) -> None:
    node, chromium = _prerequisites()
    page = tmp_path / "cucumber.html"
    with (lamps / "cucumber.ndjson").open("rb") as messages:
        rendered = subprocess.run(
            [node, str(HERE / "render.mjs")],
            stdin=messages,
            capture_output=True,
            cwd=HERE,
            check=True,
            timeout=60,
        )
    page.write_bytes(rendered.stdout)
    text = _text(chromium, page, tmp_path)
    total = sum(SCENARIOS.values())
    assert f"({SCENARIOS['passed']} / {total}) passed" in text, text[:2000]
    for status, count in SCENARIOS.items():
        assert re.search(rf"\b{status} {count}\b", text), f"no '{status} {count}' in: {text[:2000]}"
    assert FAILURE in text
    assert "Rule: A switch turns its lamp on and off" in text


def test_a_cucumber_json_reporter_keeps_tables_ids_tags_messages_and_the_verdict(
    lamps: Path, tmp_path: Path
) -> None:
    node, chromium = _prerequisites()
    given = tmp_path / "json"
    given.mkdir()
    shutil.copy(lamps / "cucumber.json", given / "cucumber.json")
    out = tmp_path / "mchr"
    subprocess.run(
        [node, str(HERE / "report.mjs"), str(given), str(out)],
        capture_output=True,
        cwd=HERE,
        check=True,
        timeout=120,
    )
    built: dict[str, Any] = json.loads((out / "enriched-output.json").read_text())
    (feature,) = built["features"]
    elements = {e["name"]: e for e in feature["elements"]}
    ids = Counter(e["id"] for e in feature["elements"])
    assert len(feature["elements"]) == sum(SCENARIOS.values())
    assert max(ids.values()) == 1, f"ids shared by examples: {ids}"
    for (scenario, tag), line in TAG_LINES.items():
        assert {"name": tag, "line": line} in elements[scenario]["tags"], elements[scenario]
    assert feature["scenarios"]["failed"] == SCENARIOS["failed"]
    assert feature["scenarios"]["passed"] == SCENARIOS["passed"]

    text = _text(chromium, out / "features" / f"{feature['id']}.html", tmp_path)
    header, *rows = TABLE
    assert " ".join(header) in text and all(" ".join(row) in text for row in rows), text[:3000]
    assert DOC_STRING in text
    assert text.count(FAILURE) == 1, "the error message once"
    assert all(tag in text for _, tag in TAG_LINES)
    assert "Verdict: failed — reference SolAr" in text, (
        "the run's verdict as the feature's metadata"
    )
