"""The living-documentation report: features, scenario statuses, the page's coverage, no secrets,
and the files `--solar-report DIR` writes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from solar_conformance.plugin.attachments import Table
from solar_conformance.report.__main__ import main
from solar_conformance.report.conformance import to_yaml
from solar_conformance.report.html import render
from solar_conformance.report.kept import (
    Outcome,
    failure_summary,
    read_feature_files,
    records_from_cucumber,
    skip_reason,
)
from solar_conformance.report.model import Report, build_report
from solar_conformance.report.plugin import FILES
from solar_conformance.report.records import RunInfo, ScenarioRecord, dump, page_version

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.abc"

LAMPS = """\
@spec
Feature: Lamps
  Every lamp has its own switch.

  | Lamp | Switch |
  | red  | left   |

  Rule: Pressing the switch

    Scenario: The lamp lights
      Given a lamp
      When I press its switch
      Then it lights

    Scenario: The lamp goes out
      Given a lit lamp
      When I press its switch
      Then it goes out

    Scenario Outline: The <colour> lamp has a switch
      Given a <colour> lamp
      Then it has a switch

      Examples:
        | colour |
        | red    |
        | green  |
"""

SPARES = f"""\
@defined-here
Feature: Spare lamps
  The drawer's key is {TOKEN}.

  Scenario: A spare lamp is in the drawer
    Given a drawer
    And the drawer is open
    Then it holds a spare lamp

  Scenario: Nobody looked in the cupboard
    Given a cupboard
"""

INDEX: dict[str, Any] = {
    "page": "lamps.md",
    "entries": [
        {
            "id": "lights",
            "section": "Lamps",
            "quote": "| A lamp lights | you |",
            "scenarios": ["The lamp lights", "The <colour> lamp has a switch"],
        },
        {
            "id": "goes-out",
            "section": "Lamps",
            "quote": "A lit lamp goes out.",
            "scenarios": ["The lamp lights", "The lamp goes out"],
        },
        {
            "id": "cupboard",
            "section": "Spares",
            "quote": "Someone looks in the cupboard.",
            "scenarios": ["Nobody looked in the cupboard"],
        },
        {
            "id": "drawer",
            "section": "Spares",
            "quote": "The drawer holds a spare lamp.",
            "defined_here": True,
            "scenarios": ["A spare lamp is in the drawer", "The lamp lights"],
        },
    ],
}


def _step(keyword: str, name: str, status: str = "passed", error: str | None = None) -> Any:
    result: dict[str, Any] = {"status": status, "duration": 2_000_000}
    if error is not None:
        result["error_message"] = error
    return {
        "keyword": keyword,
        "name": name,
        "line": 0,
        "match": {"location": ""},
        "result": result,
    }


def _element(text: str, heading: str, name: str, test_id: str, steps: list[Any]) -> Any:
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.strip() == heading)
    return {
        "keyword": heading.split(":")[0],
        "id": test_id,
        "name": name,
        "line": line,
        "description": "",
        "tags": [],
        "type": "scenario",
        "steps": steps,
    }


def _feature(text: str, uri: str, elements: list[Any]) -> Any:
    lines = text.splitlines()
    end = next(i for i, line in enumerate(lines) if line.strip().startswith(("Rule:", "Scenario")))
    return {
        "keyword": "Feature",
        "uri": uri,
        "name": lines[1].removeprefix("Feature: "),
        "id": uri,
        "line": 2,
        "description": textwrap.dedent("\n".join(lines[2:end])).strip(),
        "language": "en",
        "tags": [{"name": lines[0].lstrip("@"), "line": 1}],
        "elements": elements,
    }


def _cucumber() -> list[Any]:
    """As pytest-bdd writes it: a failure, outline examples, a skip; one scenario did not run."""
    outline = "Scenario Outline: The <colour> lamp has a switch"
    lamps = [
        _element(
            LAMPS,
            "Scenario: The lamp lights",
            "The lamp lights",
            "test_the_lamp_lights",
            [
                _step("Given", "a lamp"),
                _step("When", "I press its switch"),
                _step("Then", "it lights"),
            ],
        ),
        _element(
            LAMPS,
            "Scenario: The lamp goes out",
            "The lamp goes out",
            "test_the_lamp_goes_out",
            [
                _step("Given", "a lit lamp"),
                _step("When", "I press its switch", "failed", f"E   AssertionError: lit {TOKEN}"),
                _step("Then", "it goes out", "failed", ""),
            ],
        ),
        *(
            _element(
                LAMPS,
                outline,
                f"The {colour} lamp has a switch",
                f"test_the_colour_lamp_has_a_switch[{colour}]",
                [_step("Given", f"a {colour} lamp"), _step("Then", "it has a switch")],
            )
            for colour in ("red", "green")
        ),
    ]
    # a step that skips never finishes: pytest-bdd lists it as passed, taking no time
    drawer = [_step("Given", "a drawer"), _step("And", "the drawer is open")]
    drawer[1]["result"]["duration"] = 0
    spares = [
        _element(
            SPARES,
            "Scenario: A spare lamp is in the drawer",
            "A spare lamp is in the drawer",
            "test_a_spare_lamp_is_in_the_drawer",
            drawer,
        )
    ]
    return [
        _feature(LAMPS, "features/lamps.feature", lamps),
        _feature(SPARES, "features/spares.feature", spares),
    ]


OUTCOMES = {
    ("features/spares.feature", "test_a_spare_lamp_is_in_the_drawer"): Outcome(
        "skipped", f"no drawer in this landscape (key {TOKEN})"
    ),
    ("features/lamps.feature", "test_the_lamp_goes_out"): Outcome(
        "failed", f"AssertionError: lit {TOKEN}"
    ),
}
DIAGNOSTICS = {"test_the_lamp_goes_out": "../artifacts/lamps_goes_out/"}
RUN = RunInfo(
    backend="sim",
    implementation="reference",
    started=datetime(2025, 1, 2, 3, 4, tzinfo=UTC).isoformat(),
)


@pytest.fixture
def features(tmp_path: Path) -> Path:
    folder = tmp_path / "features"
    folder.mkdir()
    (folder / "lamps.feature").write_text(LAMPS)
    (folder / "spares.feature").write_text(SPARES)
    return folder


def _records(features: Path | None, outcomes: Any = OUTCOMES) -> list[ScenarioRecord]:
    records = records_from_cucumber(
        _cucumber(), outcomes, read_feature_files([features]) if features else None
    )
    return [replace(r, diagnostics=DIAGNOSTICS.get(r.test_id)) for r in records]


def _report(features: Path | None, outcomes: Any = OUTCOMES) -> Report:
    return build_report(_records(features, outcomes), RUN, INDEX)


def _scenario_html(page: str, name: str) -> str:
    """The scenario card that shows `name`."""
    cards: list[str] = re.findall(r'<article class="scenario.*?</article>', page, re.S)
    found = [card for card in cards if f'<span class="sc-name">{name}</span>' in card]
    assert len(found) == 1, f"{name!r} is shown {len(found)} times"
    return found[0]


def _coverage_row(page: str, entry_id: str) -> str:
    rows = page.split('<tr class="v-')[1:]
    found = [row for row in rows if f'<span class="entry-id">{entry_id}' in row]
    assert len(found) == 1
    return found[0]


# --- the renderer -------------------------------------------------------------------------------
def test_the_header_names_backend_implementation_date_and_totals(features: Path) -> None:
    page = render(_report(features))
    assert "<dd>sim</dd>" in page
    assert "<dd>reference</dd>" in page
    assert "2025-01-02 03:04 UTC" in page
    totals = re.search(r'<table class="totals">.*?</table>', page, re.S)
    assert totals is not None
    cells = re.findall(r"<tr[^>]*><td>([^<]+)</td>((?:<td[^>]*>\d+</td>)+)</tr>", totals.group(0))
    counts = {label: re.findall(r">(\d+)<", numbers) for label, numbers in cells}
    # passed, failed, skipped, total
    assert counts["@spec — the page itself"] == ["3", "1", "0", "4"]
    assert counts["@defined-here — definitions made here"] == ["0", "0", "1", "1"]


def test_each_feature_rule_and_narrative_is_shown(features: Path) -> None:
    page = render(_report(features))
    assert '<span class="kw">Feature:</span> Lamps</h2>' in page
    assert '<span class="kw">Feature:</span> Spare lamps</h2>' in page
    assert '<span class="kw">Rule:</span> Pressing the switch</h3>' in page
    assert "<p>Every lamp has its own switch.</p>" in page
    assert "<td>red</td><td>left</td>" in page, "the narrative's table is a table"


def test_each_scenario_shows_its_status_and_steps(features: Path) -> None:
    page = render(_report(features))
    assert "st-passed" in _scenario_html(page, "The lamp lights")
    assert "st-passed" in _scenario_html(page, "The red lamp has a switch")
    failed = _scenario_html(page, "The lamp goes out")
    assert "st-failed" in failed
    assert re.search(r'<tr class="s-failed">.*?I press its switch', failed)
    assert re.search(r'<tr class="s-not-run">.*?it goes out', failed), "steps after a failure"
    assert "AssertionError: lit &lt;redacted&gt;" in failed
    assert 'href="../artifacts/lamps_goes_out/"' in failed, "link to the diagnostics"


def test_a_skip_shows_its_reason_and_the_step_that_skipped(features: Path) -> None:
    card = _scenario_html(render(_report(features)), "A spare lamp is in the drawer")
    assert "st-skipped" in card
    assert "Skipped because" in card
    assert "no drawer in this landscape" in card
    assert re.search(r'<tr class="s-skipped">.*?the drawer is open', card)
    assert re.search(r'<tr class="s-not-run">.*?it holds a spare lamp', card)


def test_coverage_ticks_crosses_and_marks_not_run(features: Path) -> None:
    page = render(_report(features))
    assert 'class="badge b-proven"' in _coverage_row(page, "lights")
    assert 'class="badge b-broken"' in _coverage_row(page, "goes-out")
    assert 'class="badge b-not-run"' in _coverage_row(page, "cupboard")
    assert 'class="badge b-partial"' in _coverage_row(page, "drawer")
    assert "(not in this run)" in _coverage_row(page, "cupboard")
    assert "<td>A lamp lights</td><td>you</td>" in _coverage_row(page, "lights")


def test_an_outline_proves_by_its_name_as_written(features: Path) -> None:
    with_files = {e.id: e for e in _report(features).coverage}["lights"]
    without = {e.id: e for e in _report(None).coverage}["lights"]
    for entry in (with_files, without):
        outline = entry.proofs[1]
        assert [r.name for r in outline.results] == [
            "The red lamp has a switch",
            "The green lamp has a switch",
        ]
        assert entry.verdict == "proven"


def test_a_table_a_step_attached_is_shown_under_its_scenario(features: Path) -> None:
    table = Table("What the lamp may do", ("lamp", "on", "off"), (("red", "own", f"- {TOKEN}"),))
    records = [
        replace(r, tables=(table,)) if r.test_id == "test_the_lamp_lights" else r
        for r in _records(features)
    ]
    card = _scenario_html(render(build_report(records, RUN, INDEX)), "The lamp lights")
    assert "<summary>What the lamp may do</summary>" in card
    assert "<th>lamp</th><th>on</th><th>off</th>" in card
    assert "<td>red</td><td>own</td><td>- &lt;redacted&gt;</td>" in card


def test_no_token_reaches_the_page(features: Path) -> None:
    page = render(_report(features))
    assert "eyJ" not in page
    assert "&lt;redacted&gt;" in page


def test_a_step_without_definition_fails_where_the_json_stops(features: Path) -> None:
    """pytest-bdd leaves the undefined step out and lists the earlier ones as passed."""
    cucumber = _cucumber()
    drawer = cucumber[1]["elements"][0]
    drawer["steps"] = drawer["steps"][:1]
    outcomes = {
        ("features/spares.feature", drawer["id"]): Outcome(
            "failed", "StepDefinitionNotFoundError: Step definition is not found"
        )
    }
    records = records_from_cucumber(cucumber, outcomes, read_feature_files([features]))
    spare = next(s for s in records if s.test_id == drawer["id"])
    assert spare.status == "failed"
    assert [s.status for s in spare.steps] == ["passed", "undefined", "not run"]


def test_without_outcomes_a_scenario_that_stopped_short_is_unknown(features: Path) -> None:
    report = _report(features, outcomes={})
    spare = next(s for s in report.scenarios if s.name == "A spare lamp is in the drawer")
    assert spare.status == "unknown"


@pytest.mark.parametrize(
    "longrepr",
    [
        ("/x/steps.py", 12, "Skipped: needs kind"),
        "('/x/steps.py', 12, 'Skipped: needs kind')",
        "needs kind",
    ],
)
def test_skip_reason(longrepr: object) -> None:
    assert skip_reason(longrepr) == "needs kind"


def test_failure_summary_keeps_the_e_lines() -> None:
    text = "def f():\n>   assert x\nE   AssertionError: no\nE     last seen: 3\n\nsteps.py:3: Error"
    assert failure_summary(text) == "AssertionError: no\n  last seen: 3"


# --- solar-conformance report ------------------------------------------------------------------
def test_the_command_renders_a_kept_cucumber_json(tmp_path: Path, features: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps(_cucumber()))
    (features / "traceability.yaml").write_text(json.dumps(INDEX))
    (tmp_path / "junit.xml").write_text(
        '<?xml version="1.0"?><testsuites><testsuite>'
        '<testcase classname="features.lamps.feature" name="test_the_lamp_goes_out" time="0.5">'
        f'<failure message="x">E   AssertionError: lit {TOKEN}</failure></testcase>'
        '<testcase classname="features.spares.feature" name="test_a_spare_lamp_is_in_the_drawer">'
        '<skipped type="pytest.skip" message="no drawer here">x</skipped></testcase>'
        "</testsuite></testsuites>"
    )
    out = tmp_path / "out" / "report.html"
    out.parent.mkdir()
    code = main(
        [
            f"--cucumber={tmp_path / 'c.json'}",
            f"--junit={tmp_path / 'junit.xml'}",
            f"--features={features}",
            f"--out={out}",
            "--backend=kind",
            "--impl=external",
        ]
    )
    assert code == 0
    page = out.read_text()
    assert "<dd>kind</dd>" in page
    assert "<dd>external</dd>" in page
    assert "no drawer here" in _scenario_html(page, "A spare lamp is in the drawer")
    assert 'class="badge b-broken"' in _coverage_row(page, "goes-out")
    assert "eyJ" not in page


def test_the_command_runs_as_a_module(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text("[]")
    out = tmp_path / "report.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "solar_conformance.report",
            f"--cucumber={tmp_path / 'c.json'}",
            f"--out={out}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Verdict: nothing ran" in out.read_text()


def _kept_run(features: Path, uri: str, records: list[ScenarioRecord], folder: Path) -> Path:
    """records.json of a run of one feature file, as the plugin writes it."""
    mine = [replace(r, feature_file=uri) for r in records if r.uri.endswith(Path(uri).name)]
    run = replace(RUN, page_version=page_version(None, features), duration=10.0)
    folder.mkdir()
    (folder / "records.json").write_text(json.dumps(dump(run, mine)))
    return folder / "records.json"


def test_runs_of_one_feature_file_each_merge_into_one_report(
    tmp_path: Path, features: Path
) -> None:
    records = _records(features)
    lamps = _kept_run(features, "features/lamps.feature", records, tmp_path / "lamps")
    spares = _kept_run(features, "features/spares.feature", records, tmp_path / "spares")
    out = tmp_path / "merged.yaml"
    args = [f"--features={features}", f"--out={tmp_path / 'r.html'}", f"--conformance={out}"]
    assert main(["--records", str(lamps), str(spares), *args]) == 0
    merged = yaml.safe_load(out.read_text())
    together = yaml.safe_load(to_yaml(build_report(records, RUN, None)))
    for key in ("level", "notPassed", "summary", "scenarios"):
        assert merged[key] == together[key], key
    whole = page_version(None, features)
    assert merged["page"]["version"] == whole, "the page version of every feature file"


def test_runs_of_another_page_version_are_not_merged(
    tmp_path: Path, features: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _records(features)
    lamps = _kept_run(features, "features/lamps.feature", records, tmp_path / "lamps")
    spares = _kept_run(features, "features/spares.feature", records, tmp_path / "spares")
    (features / "spares.feature").write_text(SPARES + "\n# changed since the run\n")
    assert main(["--records", str(lamps), str(spares), f"--features={features}"]) == 4
    assert "another version of the page or its feature files" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "text", "said"),
    [
        ("--cucumber", '{"not": "a list"}', "expected a list of features"),
        ("--cucumber", "[{}]", "a feature has no uri"),
        ("--cucumber", '[{"uri": "a", "elements": [{"id": "x"}]}]', "lacks its id, name"),
        (
            "--cucumber",
            '[{"uri": "a", "elements": [{"id": "x", "name": "n", "line": 1, '
            '"steps": [{"keyword": "Given", "name": "s", "result": {}}]}]}]',
            "has no status",
        ),
        ("--cucumber", "not json", "is not JSON"),
        ("--records", "[]", "is not a records file"),
        ("--records", '{"run": {}, "scenarios": []}', "the run lacks backend"),
        ("--records", '{"run": {"backend": "sim"}, "scenarios": [{"uri": "x"}]}', "lacks feature"),
    ],
)
def test_input_of_the_wrong_shape_is_one_line_and_exit_4(
    tmp_path: Path, option: str, text: str, said: str
) -> None:
    (tmp_path / "in.json").write_text(text)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "solar_conformance.report",
            f"{option}={tmp_path / 'in.json'}",
            f"--out={tmp_path / 'r.html'}",
            f"--features={tmp_path}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 4, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert said in done.stderr
    assert "Traceback" not in done.stderr


def _report_command(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "solar_conformance.report", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )


UNREADABLE = {
    "records that are not JSON": (("--records", "in.json"), "in.json is not JSON"),
    "records that are not there": (("--records", "none.json"), "none.json: No such file"),
    "a junit file that is not XML": (
        ("--cucumber", "cucumber.json", "--junit", "in.json"),
        "in.json is not JUnit XML",
    ),
    "a report that is not YAML": (("compare", "in.json", "in.json"), "in.json is not YAML ("),
    "a report that is not there": (("compare", "none.yaml", "in.json"), "report none.yaml: No"),
    "a report that is a folder": (("compare", "a", "in.json"), "report a: Is a directory"),
}


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_a_file_that_cannot_be_read_is_named_in_one_line(tmp_path: Path, case: str) -> None:
    argv, said = UNREADABLE[case]
    (tmp_path / "in.json").write_text("key: [one\nsecond: line: of: it\n")
    (tmp_path / "cucumber.json").write_text("[]")
    (tmp_path / "a").mkdir()
    out = () if argv[0] == "compare" else ("--out=out.html",)
    done = _report_command(tmp_path, *argv, *out)
    assert done.returncode == 4, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert said in line and "Traceback" not in done.stderr
    assert not (tmp_path / "out.html").exists()


@pytest.mark.parametrize(
    ("outputs", "said"),
    [
        (("--out=out.html", "--conformance=no/conformance.yaml"), "no folder no to write it in"),
        (("--out=a",), "a is a folder; name a file"),
    ],
)
def test_a_report_that_cannot_be_written_writes_nothing(
    tmp_path: Path, outputs: tuple[str, ...], said: str
) -> None:
    (tmp_path / "cucumber.json").write_text("[]")
    (tmp_path / "a").mkdir()
    done = _report_command(tmp_path, "--cucumber=cucumber.json", *outputs)
    assert done.returncode == 4, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert said in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "cucumber.json"]


# --- the plugin ---------------------------------------------------------------------------------
FAILING_STEP = f"""
from pytest_bdd import then

@then("the lamp is checked and the check fails")
def fail():
    raise AssertionError("the check failed, token {TOKEN}")
"""

FAILING_FEATURE = """
@spec
Feature: a scenario that fails
  Scenario: a check that fails
    Given a SolAr cluster, a render registry and a target cluster
    Then the lamp is checked and the check fails
"""


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--rootdir",
        str(ROOT),
        "-c",
        str(ROOT / "pyproject.toml"),
        f"--solar-artifacts={pytester.path / 'artifacts'}",
        *args,
    )


def test_the_plugin_writes_every_file(pytester: pytest.Pytester) -> None:
    folder = pytester.path / "report"
    result = _run(
        pytester, str(ROOT / "features" / "registry_isolation.feature"), f"--solar-report={folder}"
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes["passed"] > 0
    passed = outcomes["passed"]
    assert sorted(p.name for p in folder.iterdir()) == sorted(FILES)
    assert json.loads((folder / "cucumber.json").read_text())[0]["name"] == "Registry isolation"
    assert "<testsuites" in (folder / "junit.xml").read_text()
    page = (folder / "report.html").read_text()
    assert '<span class="kw">Feature:</span> Registry isolation</h2>' in page
    assert page.count('class="scenario st-passed"') == passed
    assert 'class="badge b-proven"' in _coverage_row(page, "regcred-weakness")
    assert 'class="badge b-not-run"' in _coverage_row(page, "intro-own-agent")
    assert 'class="badge b-informative"' in _coverage_row(page, "walk-through")
    assert "<dd>sim</dd>" in page
    # one feature file proves part of the page: the level says so, in the YAML and the HTML
    conformance = yaml.safe_load((folder / "conformance.yaml").read_text())
    assert conformance["level"] == "partially conformant"
    assert {m["status"] for m in conformance["notPassed"]} == {"not run"}
    assert "Conformance level: partially conformant" in page
    result.stdout.fnmatch_lines(["Verdict: passed — *conformance level: partially conformant*"])


def test_the_plugin_reports_a_failure_with_its_diagnostics(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(failing_step=FAILING_STEP)
    (pytester.path / "failing.feature").write_text(FAILING_FEATURE)
    folder = pytester.path / "report"
    result = _run(
        pytester,
        "-p",
        "failing_step",
        str(pytester.path / "failing.feature"),
        f"--solar-report={folder}",
    )
    result.assert_outcomes(failed=1)
    page = (folder / "report.html").read_text()
    card = _scenario_html(page, "a check that fails")
    assert "st-failed" in card
    assert "the check failed, token &lt;redacted&gt;" in card
    link = re.search(r'Diagnostics: <a href="([^"]+)"', card)
    assert link is not None
    target = (folder / link.group(1)).resolve()
    assert target.is_dir(), "the link leads to the diagnostics folder"
    # artifacts/<backend>/<run id>/<scenario>: a run of its own
    assert target.parent.parent == (pytester.path / "artifacts" / "sim").resolve()
    for name in FILES:
        assert "eyJ" not in (folder / name).read_text(), f"a token reached {name}"
    assert "Conformance level: not conformant" in page


PASSING_STEP = """
from pytest_bdd import then

@then("the lamp is checked and the check fails")
def passes_after_all():
    pass
"""


def test_a_passed_scenario_links_no_diagnostics_of_an_earlier_run(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "failing.feature").write_text(FAILING_FEATURE)
    folder = pytester.path / "report"
    pytester.makepyfile(failing_step=FAILING_STEP)
    _run(
        pytester,
        "-p",
        "failing_step",
        str(pytester.path / "failing.feature"),
        f"--solar-report={folder}",
    ).assert_outcomes(failed=1)
    first = sorted((pytester.path / "artifacts" / "sim").iterdir())
    assert len(first) == 1, "the failed run wrote its diagnostics in a folder of its own"
    pytester.makepyfile(failing_step=PASSING_STEP)
    _run(
        pytester,
        "-p",
        "failing_step",
        str(pytester.path / "failing.feature"),
        f"--solar-report={folder}",
    ).assert_outcomes(passed=1)
    card = _scenario_html((folder / "report.html").read_text(), "a check that fails")
    assert "st-passed" in card
    assert "Diagnostics:" not in card
    assert sorted((pytester.path / "artifacts" / "sim").iterdir()) == first
