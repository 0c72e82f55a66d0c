"""Bad input stops the run before any scenario: one line on stderr that says where the mistake is
and how to fix it, exit code 4, nothing written (no report folder, artifacts or junit file) and
nothing left behind. Each case runs pytest on copies of the project's feature files as a user
would, with a report folder, a junit file and the default artifacts folder asked for, so that
anything the run wrote would show. Here: the profile, the options and the ini settings; the
feature files in test_feature_files.py, the landscape file in test_bad_landscape_file.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project_runs import ROOT, one_line_exit_4, project_folder, run_pytest

FEATURE = "features/check_it_worked.feature"
OUTPUTS = ("--solar-report=report", "--junitxml=junit/junit.xml")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return project_folder(tmp_path)


def refused(project: Path, *args: str, words: tuple[str, ...]) -> str:
    outputs = [o for o in OUTPUTS if not any(a.startswith(o.split("=")[0]) for a in args)]
    return one_line_exit_4(run_pytest(project, FEATURE, *outputs, *args), *words)


# --- the implementation profile ------------------------------------------------------------------
PROFILES = {
    "a regex that does not compile": (
        'message_secret_pattern = "Secret (["',
        ("profile.toml:1: message_secret_pattern:", "is not a regular expression"),
    ),
    "a regex without a group the harness reads": (
        'message_secret_pattern = "Secret (?P<namespace>[a-z.-]+)/(?P<secret>[a-z.-]+)"',
        ("profile.toml:1: message_secret_pattern:", "no named group name"),
    ),
    "an expiry regex without its group": (
        'message_expiry_pattern = "expires at (\\\\S+)"',
        ("message_expiry_pattern:", "no named group expiry"),
    ),
    "a token lifetime of 0": (
        "token_lifetime_seconds = 0",
        ("token_lifetime_seconds:", "600", "write at least"),
    ),
    "a token lifetime under Kubernetes' 600 s": (
        "token_lifetime_seconds = 599",
        ("token_lifetime_seconds:", "599 s is not a lifetime Kubernetes grants"),
    ),
    "a report interval of 0": ("report_interval_seconds = 0", ("report_interval_seconds:",)),
    "a negative authentication cache": (
        "api_server_auth_cache_seconds = -1",
        ("api_server_auth_cache_seconds:", "write 0 or more"),
    ),
    "a negative backoff": (
        "mint_backoff_initial_seconds = -1",
        ("mint_backoff_initial_seconds:", "above 0"),
    ),
    "an initial backoff above its cap": (
        "# the cap stays 30\nmint_backoff_initial_seconds = 60",
        ("profile.toml:2: mint_backoff_initial_seconds:", "longer than the cap"),
    ),
    "a cap below the initial backoff": (
        "mint_backoff_initial_seconds = 5\nmint_backoff_cap_seconds = 2",
        ("profile.toml:1: mint_backoff_initial_seconds:", "must not exceed"),
    ),
    "a rotate fraction of 1": ("rotate_after_fraction = 1.0", ("between 0 and 1",)),
    "a rotate fraction of 0": ("rotate_after_fraction = 0", ("between 0 and 1",)),
    "a rotate fraction that is no number": ("rotate_after_fraction = nan", ("between 0 and 1",)),
    "a label that is no label key": (
        'credential_label = "agent credential"',
        ("credential_label:", "not a Kubernetes label or annotation key"),
    ),
    "a Secret key that is no Secret key": ('token_key = "to/ken"', ("not a Secret data key",)),
    "a string for a number": (
        'token_lifetime_seconds = "one hour"',
        ('"one hour" is not a whole number', "write it like token_lifetime_seconds = 600"),
    ),
    "a number for a string": ("token_key = 3", ("is not a string", 'token_key = "text"')),
    "true for a number": ("rotate_after_fraction = true", ("true is not a number",)),
    "a fraction for whole seconds": ("report_interval_seconds = 5.5", ("not a whole number",)),
    "an unknown key": (
        'conditon_type = "AgentCredentialReady"',
        ("conditon_type: unknown key (did you mean condition_type?)", "docs/contracts.md"),
    ),
    "an unknown table": ("[extra]\nkey = 1", ("profile.toml:1: extra: unknown key",)),
    "not TOML": ("token_key = token", ("profile.toml:1:", "not valid TOML", "key = value")),
    "an empty implementation name": ('implementation_name = ""', ("must be one line of text",)),
}
RENAMED = {
    "condition_type": "AgentReady",
    "revocation_annotation": "example.com/agent-credential",
    "revoked_value": "off",
    "agent_release_annotation": "example.com/target-credential",
    "apiserver_url_setting": "controller.agent.url",
}


@pytest.mark.parametrize("case", sorted(PROFILES))
def test_a_bad_profile(project: Path, case: str) -> None:
    text, words = PROFILES[case]
    (project / "profile.toml").write_text(text + "\n")
    refused(project, "--solar-profile=profile.toml", words=words)


@pytest.mark.parametrize("key", sorted(RENAMED))
def test_a_profile_may_not_rename_what_the_page_fixes(project: Path, key: str) -> None:
    (project / "profile.toml").write_text(f'{key} = "{RENAMED[key]}"\n')
    refused(
        project,
        "--solar-profile=profile.toml",
        words=(key, "renames what the page fixes", "remove"),
    )


def test_a_missing_profile(project: Path) -> None:
    refused(project, "--solar-profile=nowhere.toml", words=("nowhere.toml: no such file",))


def test_an_unreadable_profile(project: Path) -> None:
    (project / "a-folder.toml").mkdir()
    refused(project, "--solar-profile=a-folder.toml", words=("cannot read it", "readable"))


def test_a_profile_that_is_not_utf8(project: Path) -> None:
    (project / "latin1.toml").write_bytes(b'implementation_name = "Caf\xe9"\n')
    refused(project, "--solar-profile=latin1.toml", words=("cannot read it",))


def test_a_profile_naming_the_implementation_runs(project: Path) -> None:
    """The check is not a blanket refusal: a profile with valid keys runs its scenarios."""
    (project / "profile.toml").write_text(
        'implementation_name = "SolAr"\nimplementation_version = "v0.3.0"\n'
        'condition_type = "AgentCredentialReady"\ntoken_lifetime_seconds = 3600\n'
        "mint_backoff_initial_seconds = 2\nmint_backoff_cap_seconds = 2\n"
    )
    run = run_pytest(
        project, FEATURE, "--solar-profile=profile.toml", "--solar-report=report", "-k", "Issued"
    )
    assert run.returncode == 0, run.stdout + run.stderr
    conformance = (project / "report" / "conformance.yaml").read_text()
    # The reference SolAr ran (sim), with the profile's names: the report says so, not the
    # profile's implementation_name, which names another SolAr.
    assert "name: reference SolAr\n" in conformance
    assert "profile: profile.toml" in conformance
    assert "answeredBy: reference SolAr\n" in conformance, "each scenario names who answered it"


# --- options and ini settings --------------------------------------------------------------------
OPTIONS = {
    "an unknown backend": (("--solar-env=simm",), ("--solar-env='simm'", "did you mean sim?")),
    "an unknown implementation": (("--solar-impl=ref",), ("--solar-impl='ref'", "reference")),
    "an unknown image mode": (("--solar-kind-images=on",), ("--solar-kind-images='on'",)),
    "an empty report folder": (("--solar-report=",), ("--solar-report ''", "names no path")),
    "an empty artifacts folder": (("--solar-artifacts=",), ("--solar-artifacts ''",)),
    "an empty profile": (("--solar-profile=",), ("--solar-profile ''",)),
    "an empty junit file": (("--junitxml=",), ("--junitxml ''", "names no file")),
    "a junit file that is a folder": (("--junitxml=features",), ("must be a filename",)),
    "a junit file under a file": (
        ("--junitxml=features/check_it_worked.feature/junit.xml",),
        ("--junitxml", "cannot write there", "is a file"),
    ),
    "a report folder under a file": (
        ("--solar-report=features/traceability.yaml/reports",),
        ("--solar-report", "cannot write there", "give a folder"),
    ),
    "an artifacts folder under a file": (
        ("--solar-artifacts=features/traceability.yaml/artifacts",),
        ("--solar-artifacts", "cannot write there"),
    ),
    "a landscape file on sim": (
        ("--solar-landscape=landscape.toml",),
        ("--solar-landscape is used only with --solar-env=existing",),
    ),
    "a landscape for global faults on sim": (
        ("--solar-landscape-alone=landscape.toml",),
        ("--solar-landscape-alone is used only with --solar-env=existing",),
    ),
    "existing without a landscape file": (("--solar-env=existing",), ("--solar-landscape FILE",)),
    "kind's reuse on sim": (("--solar-kind-reuse",), ("--solar-kind-reuse is used only",)),
    "kind's images on sim": (("--solar-kind-images=online",), ("--solar-kind-images is used",)),
    "upstream's programs without upstream": (
        ("--solar-upstream-bin=bin",),
        ("--solar-upstream-bin is used only with --solar-impl=upstream",),
    ),
    "upstream on sim": (("--solar-impl=upstream",), ("use --solar-env=kind",)),
    "an installed SolAr on sim": (("--solar-impl=external",), ("needs a real SolAr",)),
    "keeping namespaces on sim": (("--solar-keep-on-failure",), ("the sim keeps nothing",)),
    "a mutant the catalogue does not hold": (
        ("-p", "tests.mutants.plugin", "--solar-mutant=nope"),
        ("no such mutant",),
    ),
    "a -k that does not parse": (
        ("-k", "revoked and"),
        ("-k 'revoked and': not an expression (column 12", "join names with and, or, not"),
    ),
    "a -m that does not parse": (("-m", "spec and ("), ("-m 'spec and (': not an expression",)),
    "a negative number of workers": (("-n", "-3"), ("-n -3: not a number of workers",)),
    "a timeout that is no number": (
        ("-o", "solar_timeout_flux=soon"),
        ("-o solar_timeout_flux=soon: solar_timeout_flux:", "not a number of seconds"),
    ),
    "a negative timeout": (("-o", "solar_timeout_flux=-5"), ("positive",)),
    "a timeout of 0": (("-o", "solar_timeout_report=0"), ("solar_timeout_report",)),
    "an endless timeout": (("-o", "solar_timeout_reconcile=inf"), ("not a number of seconds",)),
    "an unknown setting": (
        ("-o", "solar_timout_flux=60"),
        ("unknown setting (did you mean solar_timeout_flux?)",),
    ),
    "an authentication-cache deadline shorter than the profile's cache": (
        ("-o", "solar_timeout_auth_cache=5"),
        ("solar_timeout_auth_cache", "api_server_auth_cache_seconds (10)", "at least 10"),
    ),
}


@pytest.mark.parametrize("case", sorted(OPTIONS))
def test_a_bad_option(project: Path, case: str) -> None:
    args, words = OPTIONS[case]
    refused(project, *args, words=words)


def test_a_bad_setting_in_the_ini_file_is_named_with_its_line(project: Path) -> None:
    text = (ROOT / "pyproject.toml").read_text()
    text = text.replace('pythonpath = ["."]', f"pythonpath = [{str(ROOT)!r}]")
    text = text.replace(
        "xfail_strict = true\n", 'xfail_strict = true\nsolar_timeout_margin = "five"\n'
    )
    (project / "pyproject.toml").write_text(text)
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.startswith("solar_timeout_m"))
    run = run_pytest(project, FEATURE, config=project / "pyproject.toml")
    one_line_exit_4(run, f"pyproject.toml:{line}: solar_timeout_margin: 'five'")


@pytest.mark.parametrize("selection", [("-k", "no-such-scenario"), ("-m", "no_such_tag")])
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "workers"])
def test_a_selection_that_matches_no_scenario_says_so(
    project: Path, selection: tuple[str, str], workers: tuple[str, ...]
) -> None:
    """Not bad input (pytest's exit code 5), but a run that ran nothing names what selected
    nothing and where to look up the names."""
    run = run_pytest(project, FEATURE, *selection, *workers)
    assert run.returncode == 5, run.stdout + run.stderr
    assert "Verdict: nothing ran" in run.stdout, run.stdout
    said = next(line for line in run.stdout.splitlines() if line.startswith("No scenario"))
    assert f"{selection[0]} '{selection[1]}'" in said and "--collect-only" in said, said
