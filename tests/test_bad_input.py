"""Bad input stops the run before any scenario: one line on stderr that says what is wrong and
how to fix it, and exit code 4. Each case runs pytest on the feature files as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FEATURE = ROOT / "features" / "check_it_worked.feature"


def _plugins() -> list[str]:
    namespace: dict[str, object] = {}
    exec((ROOT / "conftest.py").read_text(), namespace)  # noqa: S102 - our own file
    plugins = namespace["pytest_plugins"]
    assert isinstance(plugins, list)
    return [arg for plugin in plugins for arg in ("-p", str(plugin))]


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        *_plugins(),
        "--rootdir",
        str(ROOT),
        "-c",
        str(ROOT / "pyproject.toml"),
        f"--solar-artifacts={pytester.path / 'artifacts'}",
        str(FEATURE),
        *args,
    )


def _one_line_exit_4(result: pytest.RunResult, *words: str) -> str:
    lines = [line for line in result.stderr.lines if line.strip()]
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    assert len(lines) == 1, lines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert " passed" not in result.stdout.str() and " failed" not in result.stdout.str()
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _profile(pytester: pytest.Pytester, text: str) -> Path:
    path = pytester.path / "profile.toml"
    path.write_text(text)
    return path


def test_a_missing_profile(pytester: pytest.Pytester) -> None:
    result = _run(pytester, f"--solar-profile={pytester.path / 'nowhere.toml'}")
    _one_line_exit_4(result, "nowhere.toml", "no such file")


def test_an_unreadable_profile(pytester: pytest.Pytester) -> None:
    folder = pytester.path / "a-folder.toml"
    folder.mkdir()
    result = _run(pytester, f"--solar-profile={folder}")
    _one_line_exit_4(result, "cannot read it", "readable")


def test_a_profile_that_is_not_utf8(pytester: pytest.Pytester) -> None:
    path = pytester.path / "latin1.toml"
    path.write_bytes(b'implementation_name = "Caf\xe9"\n')
    _one_line_exit_4(_run(pytester, f"--solar-profile={path}"), "cannot read it")


def test_a_malformed_profile(pytester: pytest.Pytester) -> None:
    path = _profile(pytester, "token_key = token\n")
    _one_line_exit_4(_run(pytester, f"--solar-profile={path}"), "not valid TOML", "key = value")


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('token_lifetime_seconds = "one hour"', "is not an int"),
        ("token_key = 3", "is not a str"),
        ("rotate_after_fraction = true", "is not a float"),
        ("report_interval_seconds = 5.5", "is not an int"),
    ],
)
def test_a_wrongly_typed_profile(pytester: pytest.Pytester, line: str, said: str) -> None:
    path = _profile(pytester, line + "\n")
    _one_line_exit_4(_run(pytester, f"--solar-profile={path}"), said, "write it like")


def test_a_profile_with_an_unknown_key(pytester: pytest.Pytester) -> None:
    path = _profile(pytester, 'conditon_type = "AgentCredentialReady"\n')
    _one_line_exit_4(_run(pytester, f"--solar-profile={path}"), "unknown keys conditon_type")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("condition_type", "AgentReady"),
        ("revocation_annotation", "example.com/agent-credential"),
        ("revoked_value", "off"),
        ("agent_release_annotation", "example.com/target-credential"),
        ("apiserver_url_setting", "controller.agent.url"),
    ],
)
def test_a_profile_may_not_rename_what_the_page_fixes(
    pytester: pytest.Pytester, key: str, value: str
) -> None:
    path = _profile(pytester, f'{key} = "{value}"\n')
    _one_line_exit_4(
        _run(pytester, f"--solar-profile={path}"), key, "renames what the page fixes", "remove"
    )


def test_a_profile_naming_the_implementation_runs(pytester: pytest.Pytester) -> None:
    """The check is not a blanket refusal: a profile with valid keys runs its scenarios."""
    path = _profile(
        pytester,
        'implementation_name = "SolAr"\nimplementation_version = "v0.3.0"\n'
        'condition_type = "AgentCredentialReady"\n',
    )
    folder = pytester.path / "report"
    result = _run(pytester, f"--solar-profile={path}", f"--solar-report={folder}", "-k", "Issued")
    assert result.ret == 0, result.stdout.str()
    conformance = (folder / "conformance.yaml").read_text()
    # The reference SolAr ran (sim), with the profile's names: the report says so, not the
    # profile's implementation_name, which names another SolAr.
    assert "name: reference SolAr\n" in conformance
    assert f"profile: {path}" in conformance
    assert "answeredBy: reference SolAr\n" in conformance, "each scenario names who answered it"


@pytest.mark.parametrize("option", ["--solar-report", "--solar-artifacts"])
def test_a_folder_that_cannot_be_written(pytester: pytest.Pytester, option: str) -> None:
    blocker = pytester.path / "a-file"
    blocker.write_text("not a folder\n")
    result = _run(pytester, f"{option}={blocker / 'reports'}")
    _one_line_exit_4(result, option, "cannot write there", "give a folder")


@pytest.mark.parametrize("value", ["soon", "-5", "0"])
def test_a_timeout_that_is_not_a_number_of_seconds(pytester: pytest.Pytester, value: str) -> None:
    result = _run(pytester, "-o", f"solar_timeout_flux={value}")
    _one_line_exit_4(result, "solar_timeout_flux", "not a number of seconds", "positive")
