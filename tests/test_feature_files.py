"""Bad feature files stop the run before any scenario: one line per mistake, with the file and the
line of the mistake, exit code 4: the checks one by one, then whole runs on copies of the
project's feature files with one mistake each."""

from __future__ import annotations

from pathlib import Path

import pytest

from solar_conformance.plugin.collection import PAGE_TAGS
from solar_conformance.plugin.feature_checks import count_runs, feature_file_problems, parse
from tests.project_runs import ROOT, USAGE_ERROR, project_folder, run_pytest
from tests.test_bad_input import FEATURE, refused

FEATURES = ROOT / "features"
TAGS = frozenset(PAGE_TAGS)
GOOD_SCENARIO = """
  @spec
  Scenario: the landscape is there
    Given a SolAr cluster, a render registry and a target cluster
"""
OUTLINE = """Feature: outline
  @spec
  Scenario Outline: a <kind> row
    Given a SolAr cluster, a render registry and a target cluster
    Then the <kind> is "<value>"

    Examples:
      | kind | value |
      | one  | 1     |
"""

BAD_FILES = {
    "a table row short of a cell": (
        OUTLINE.replace("| one  | 1     |", "| one  |"),
        ":9: inconsistent cell count within the table",
    ),
    "a misspelt Scenario keyword under a Rule": (
        "Feature: misspelt\n" + GOOD_SCENARIO + "\n  Rule: the second scenario would vanish\n"
        "    Scenaro: two\n      Given a SolAr cluster, a render registry and a target cluster\n",
        ":8: `Scenaro:` is not a Gherkin keyword (did you mean `Scenario:`?)",
    ),
    "a misspelt step keyword in a scenario": (
        "Feature: misspelt step\n  @spec\n  Scenario: one\n    Gvien a SolAr cluster\n"
        "    Then nothing\n",
        ":4: `Gvien` is not a step keyword (did you mean `Given`?)",
    ),
    "a misspelling no keyword is close to": (
        "Feature: misspelt step\n  @spec\n  Scenario: one\n    Provided a SolAr cluster\n"
        "    Then nothing\n",
        ":4: `Provided a SolAr cluster` is not a step: a Scenario holds steps and tables only",
    ),
    "a misspelt step keyword after a step": (
        "Feature: misspelt step\n  @spec\n  Scenario: one\n    Given a SolAr cluster\n"
        "    Tehn nothing\n",
        ":5: `Tehn` is not a step keyword (did you mean `Then`?)",
    ),
    "a scenario that starts with And": (
        "Feature: and\n  @spec\n  Scenario: one\n    And a SolAr cluster\n",
        ":4: `And` cannot begin a scenario: its first step starts with Given, When or Then",
    ),
    "a scenario without steps": (
        "Feature: empty\n  @spec\n  Scenario: one\n",
        ":3: scenario 'one' has no step, so it would check nothing",
    ),
    "two scenarios of one name": (
        "Feature: twins\n" + GOOD_SCENARIO + GOOD_SCENARIO,
        ":8: a second scenario named 'the landscape is there'",
    ),
    "an outline without Examples": (
        OUTLINE[: OUTLINE.index("    Examples:")],
        ":3: the outline 'a <kind> row' has no Examples",
    ),
    "Examples without rows": (
        OUTLINE.replace("      | one  | 1     |\n", ""),
        ":7: Examples without rows runs nothing",
    ),
    "a placeholder that is no column": (
        OUTLINE.replace('"<value>"', '"<valu>"'),
        ":5: <valu> is not a column of the Examples at line 7 (did you mean <value>?)",
    ),
    "a placeholder in the name that is no column": (
        OUTLINE.replace("a <kind> row", "a <sort> row"),
        ":3: <sort> is not a column of the Examples at line 7",
    ),
    "two columns of one name": (
        OUTLINE.replace("| kind | value |", "| kind | kind  |").replace('"<value>"', "x"),
        ":7: two columns named kind",
    ),
    "an unknown tag": (
        OUTLINE.replace("  @spec\n", "  @spec @slow\n"),
        ":2: unknown tag @slow",
    ),
    "an unknown tag on Examples": (
        OUTLINE.replace("    Examples:", "    @fautl\n    Examples:"),
        ":7: unknown tag @fautl (did you mean @fault?)",
    ),
    "an untagged scenario": (
        OUTLINE.replace("  @spec\n", ""),
        ":2: scenario 'a <kind> row' is neither @spec nor @defined-here",
    ),
    "a scenario tagged both ways": (
        OUTLINE.replace("  @spec\n", "  @spec @defined-here\n"),
        ":3: scenario 'a <kind> row' is both @spec and @defined-here",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_each_mistake_is_one_line_at_its_line(tmp_path: Path, case: str) -> None:
    text, expected = BAD_FILES[case]
    bad = tmp_path / "bad.feature"
    bad.write_text(text)
    problems = feature_file_problems(bad, TAGS)
    assert problems == [problems[0]], problems
    assert problems[0].startswith(f"{bad}{expected}"), problems[0]


def test_a_bad_file_stops_the_run_and_a_bad_sibling_does_not(tmp_path: Path) -> None:
    project = project_folder(tmp_path)
    (project / "features" / "bad.feature").write_text(BAD_FILES["an untagged scenario"][0])
    whole = run_pytest(project, "features/", "--collect-only", "-q")
    assert whole.returncode == USAGE_ERROR, whole.stdout + whole.stderr
    assert whole.error_lines == [
        f"ERROR: {project / 'features' / 'bad.feature'}:2: scenario "
        "'a <kind> row' is neither @spec nor @defined-here; tag it (or "
        "its Rule) @spec when the page says it, @defined-here when it "
        "checks the harness's definition (docs/contracts.md)"
    ]
    other = run_pytest(project, "features/check_it_worked.feature", "--collect-only", "-q")
    assert other.returncode == 0, other.stdout + other.stderr


def test_feature_files_pytest_would_not_collect_are_not_checked(tmp_path: Path) -> None:
    """A bad feature file where pytest does not look (an npm package, a virtualenv, an ignored
    folder) is nobody's page: the run goes on; the same file where pytest looks stops it."""
    project = project_folder(tmp_path)
    bad = BAD_FILES["an untagged scenario"][0]
    hidden = [
        project / "tests" / "node_modules" / "reporter" / "examples" / "gmail.feature",
        project / "tests" / "env" / "lib" / "site.feature",
        project / "tests" / "scratch" / "bad.feature",
    ]
    for path in hidden:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(bad)
    (project / "tests" / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    quiet = run_pytest(
        project, "features/", "tests/", "--ignore=tests/scratch", "--collect-only", "-q"
    )
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    loud = run_pytest(project, "features/", "tests/", "--collect-only", "-q")
    assert loud.returncode == USAGE_ERROR, loud.stdout + loud.stderr
    assert [line.split(":")[1].strip() for line in loud.error_lines] == [str(hidden[2])]


@pytest.mark.parametrize("path", sorted(FEATURES.glob("*.feature")), ids=lambda p: p.name)
def test_the_project_feature_files_are_sound(path: Path) -> None:
    assert feature_file_problems(path, TAGS) == []
    assert count_runs(parse(path)[0]) > 0


def test_the_pages_own_notation_stays_text_in_an_outline(tmp_path: Path) -> None:
    """The page writes the URL form with <render-registry>; an outline may quote it as it is."""
    path = tmp_path / "notation.feature"
    path.write_text(
        "Feature: notation\n  The URL has the form oci://<render-registry>/<namespace>.\n"
        + OUTLINE.replace('"<value>"', "oci://<render-registry>/<value>").split("\n", 1)[1]
    )
    assert feature_file_problems(path, TAGS) == []


def test_every_example_row_is_a_run(tmp_path: Path) -> None:
    path = tmp_path / "outline.feature"
    path.write_text(
        OUTLINE + "\n    Examples:\n      | kind | value |\n      | two  | 2 |\n"
        "      | three | 3 |\n" + GOOD_SCENARIO
    )
    assert count_runs(parse(path)[0]) == 4


def test_prose_in_descriptions_is_not_a_misspelling(tmp_path: Path) -> None:
    path = tmp_path / "prose.feature"
    path.write_text(
        "Feature: prose\n  The page says: this is fine.\n  Note: so is this.\n" + GOOD_SCENARIO
    )
    assert feature_file_problems(path, TAGS) == []


def test_a_missing_feature_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "empty.feature"
    path.write_text("# only a comment\n")
    assert feature_file_problems(path, TAGS) == [
        f"{path}: no `Feature:` line; every feature file starts with one"
    ]


# --- feature files -------------------------------------------------------------------------------
ORIGINAL = (ROOT / FEATURE).read_text()
OUTLINE_EXAMPLES = ORIGINAL[
    ORIGINAL.index("      Examples: the page's table") : ORIGINAL.index("  @spec\n  Rule: Issued")
]
FEATURE_MISTAKES = {
    "an outline without its Examples": (
        ORIGINAL.replace(OUTLINE_EXAMPLES, ""),
        ":22: the outline 'AgentCredentialReady is <Status> with reason <Reason>' has no Examples",
    ),
    "a placeholder typo": (
        ORIGINAL.replace('with reason "<Reason>"', 'with reason "<Reasn>"', 1),
        ":25: <Reasn> is not a column of the Examples at line 28 (did you mean <Reason>?)",
    ),
    "a misspelt step keyword opening the Background": (
        ORIGINAL.replace("    Given a SolAr cluster", "    Gievn a SolAr cluster", 1),
        ":15: `Gievn` is not a step keyword (did you mean `Given`?)",
    ),
    "a misspelt step keyword opening a scenario": (
        ORIGINAL.replace(
            "    Scenario: The Secret named in the message holds a token that expires when the "
            "message says\n      When",
            "    Scenario: The Secret named in the message holds a token that expires when the "
            "message says\n      Wehn",
        ),
        ":39: `Wehn` is not a step keyword (did you mean `When`?)",
    ),
    "a misspelt step keyword among the steps": (
        ORIGINAL.replace(
            '      And no token is minted for "cluster-1"\n      When',
            '      Adn no token is minted for "cluster-1"\n      When',
            1,
        ),
        "`Adn` is not a step keyword (did you mean `And`?)",
    ),
    "a misspelt Examples keyword": (
        ORIGINAL.replace("      Examples: the page", "      Exmples: the page", 1),
        ":28: `Exmples:` is not a Gherkin keyword (did you mean `Examples:`?)",
    ),
    "a tag typo": (
        ORIGINAL.replace("@defined-here\n  Rule: Disabled", "@defined_here\n  Rule: Disabled", 1),
        ":44: unknown tag @defined_here (did you mean @defined-here?)",
    ),
    "a tag no marker registers": (
        ORIGINAL.replace(
            "    @fault @needs-configure-apiserver-url\n    Scenario: Unsetting",
            "    @skip @needs-configure-apiserver-url\n    Scenario: Unsetting",
        ),
        ":55: unknown tag @skip",
    ),
    "an untagged scenario": (
        ORIGINAL.replace("  @spec\n  Rule: Issued", "  Rule: Issued", 1),
        ":37: scenario 'The Secret named in the message holds a token that expires when the "
        "message says' is neither @spec nor @defined-here",
    ),
    "a scenario tagged both ways": (
        ORIGINAL.replace(
            "    @fault @needs-configure-apiserver-url\n    Scenario: Unsetting",
            "    @spec @needs-configure-apiserver-url\n    Scenario: Unsetting",
        ),
        "is both @spec and @defined-here",
    ),
}


@pytest.mark.parametrize("case", sorted(FEATURE_MISTAKES))
def test_a_feature_file_mistake(tmp_path: Path, case: str) -> None:
    text, said = FEATURE_MISTAKES[case]
    assert text != ORIGINAL, "the mistake was not made"
    project = project_folder(tmp_path)
    (project / FEATURE).write_text(text)
    line = refused(project, words=(said,))
    assert line.startswith(f"ERROR: {project / FEATURE}:"), line
