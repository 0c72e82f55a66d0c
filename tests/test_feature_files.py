"""Bad feature files stop the run before any scenario: one line each, exit code 4."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures.plugin.collection import BadFeatureFile, check_feature_file

ROOT = Path(__file__).resolve().parents[1]
FEATURES = ROOT / "features"
GOOD_SCENARIO = """
  Scenario: the landscape is there
    Given a SolAr cluster, a render registry and a target cluster
"""

BAD_FILES = {
    "a table row short of a cell": (
        """Feature: tables
  Scenario Outline: a row short of a cell
    Given a SolAr cluster, a render registry and a target cluster

    Examples:
      | a | b |
      | 1 |
""",
        ":7: inconsistent cell count within the table",
    ),
    "a misspelt Scenario keyword under a Rule": (
        """Feature: misspelt
  Scenario: one
    Given a SolAr cluster, a render registry and a target cluster

  Rule: the second scenario would vanish
    Scenaro: two
      Given a SolAr cluster, a render registry and a target cluster
""",
        ":6: `Scenaro:` is not a Gherkin keyword (did you mean `Scenario:`?)",
    ),
    "a misspelt step keyword in a scenario": (
        """Feature: misspelt step
  Scenario: one
    Gvien a SolAr cluster, a render registry and a target cluster
    Then nothing
""",
        ":3: `Gvien` is not a step keyword (did you mean `Given`?)",
    ),
    "two scenarios of one name": (
        "Feature: twins\n" + GOOD_SCENARIO + GOOD_SCENARIO,
        ":6: a second scenario named 'the landscape is there'",
    ),
}


def _plugins() -> list[str]:
    from tests.test_harness_catches_faults import _plugins as plugins

    return plugins()


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        *_plugins(), "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"), *args
    )


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_feature_file_stops_the_run_with_one_line(
    pytester: pytest.Pytester, case: str
) -> None:
    text, expected = BAD_FILES[case]
    bad = pytester.path / "bad.feature"
    bad.write_text(text)
    (pytester.path / "good.feature").write_text("Feature: good\n" + GOOD_SCENARIO)
    result = _run(pytester, str(pytester.path / "good.feature"), str(bad))
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1, result.stderr.str()
    assert f"bad feature file: {bad}{expected}" in errors[0]
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes()  # no scenario ran, not even the good file's


def test_a_bad_sibling_does_not_stop_another_file(pytester: pytest.Pytester) -> None:
    (pytester.path / "bad.feature").write_text(BAD_FILES["a table row short of a cell"][0])
    (pytester.path / "good.feature").write_text("Feature: good\n" + GOOD_SCENARIO)
    result = _run(pytester, str(pytester.path / "good.feature"), "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()


@pytest.mark.parametrize("path", sorted(FEATURES.glob("*.feature")), ids=lambda p: p.name)
def test_the_project_feature_files_are_sound(path: Path) -> None:
    assert check_feature_file(path).scenarios > 0


def test_every_example_row_is_a_run(tmp_path: Path) -> None:
    path = tmp_path / "outline.feature"
    path.write_text(
        """Feature: outline
  Scenario Outline: rows
    Given a SolAr cluster, a render registry and a target cluster

    Examples:
      | a |
      | 1 |
      | 2 |

    Examples:
      | a |
      | 3 |
"""
        + GOOD_SCENARIO
    )
    assert check_feature_file(path).scenarios == 4


def test_prose_in_descriptions_is_not_a_misspelling(tmp_path: Path) -> None:
    path = tmp_path / "prose.feature"
    path.write_text(
        "Feature: prose\n  The page says: this is fine.\n  Note: so is this.\n" + GOOD_SCENARIO
    )
    assert check_feature_file(path).scenarios == 1


def test_a_missing_feature_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "empty.feature"
    path.write_text("# only a comment\n")
    with pytest.raises(BadFeatureFile, match="no `Feature:` line"):
        check_feature_file(path)
