"""What a landscape can do is data known before the run: each backend's capabilities, the tags
that say what a scenario needs, the skip at collection that names the capability and the
landscape's reason, and the check that keeps tags and steps from drifting apart."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
import yaml
from _pytest.mark.expression import Expression

from solar_conformance.backends.existing.landscape_file import ClusterRef, LandscapeFile, Secret
from solar_conformance.backends.existing.landscape_schema import CAPABILITIES
from solar_conformance.backends.existing.publish import granted
from solar_conformance.backends.sim.landscape import SimLandscape
from solar_conformance.components.capabilities import of_implementation
from solar_conformance.core.capabilities import ALL, STEP_NEEDS, Capabilities, Capability
from solar_conformance.core.upstream_parts import upstream_parts
from solar_conformance.plugin.capabilities import run_capabilities
from solar_conformance.plugin.collection import PAGE_TAGS
from solar_conformance.report import answered
from tests.project_runs import USAGE_ERROR, project_folder, run_pytest
from tests.test_existing_landscape import _landscape

ROOT = Path(__file__).resolve().parent.parent


def test_every_capability_has_a_name_and_a_registered_tag_that_m_can_select() -> None:
    for capability in Capability:
        assert capability.human_name
        assert capability.tag == f"needs-{capability.value}"
        assert capability.tag in PAGE_TAGS
        Expression.compile(f"not {capability.tag}")  # `-m "not needs-audit-log"` parses


def test_a_landscape_file_grants_every_capability_but_changing_a_denial_which_comes_with_denying() -> (
    None
):
    assert set(CAPABILITIES) == set(Capability) - {Capability.CHANGE_DENIAL}


def test_every_capability_is_needed_by_some_step() -> None:
    needed = {capability for needs in STEP_NEEDS.values() for capability in needs}
    assert needed == set(Capability) - {Capability.DIAGNOSTICS}  # diagnostics: failures only


def test_the_sim_and_the_reference_solar_can_do_everything() -> None:
    assert SimLandscape.capabilities == frozenset(Capability)
    assert of_implementation("reference") == ALL


def test_upstream_cannot_configure_the_apiserver_url_and_says_it_is_not_implemented() -> None:
    upstream = of_implementation("upstream")
    assert upstream.granted == frozenset(Capability) - {Capability.CONFIGURE_APISERVER_URL}
    [reason] = upstream.why_not([Capability.CONFIGURE_APISERVER_URL])
    parts = upstream_parts("upstream", {})
    assert answered.reason("skipped", (), reason, parts) == answered.NOT_IMPLEMENTED


def test_an_installed_solar_keeps_its_helm_values_and_its_clock() -> None:
    assert set(of_implementation("external").lacking) == {
        Capability.CONFIGURE_APISERVER_URL,
        Capability.SKEW_CONTROLLER_CLOCK,
    }


def _file(capabilities: dict[str, str], implementation: str = "external") -> LandscapeFile:
    ref = ClusterRef(Path("kubeconfig"), "c")
    return LandscapeFile(
        solar=ref,
        target=ref,
        push_host="registry:5000",
        pull_host="registry:5000",
        plain_http=True,
        registry_kind="zot",
        push_user="solar",
        push_password=Secret(file=None, env="UNUSED", named_at=""),
        pull_users="command",
        pull_user_command=("make-pull-user",),
        apiserver_url="https://solar:6443",
        implementation=implementation,
        capabilities=capabilities,
    )


def test_a_landscape_file_grants_what_it_names_and_says_why_not_for_the_rest() -> None:
    capabilities = _file({"deny-token-requests": "admission-policy"}).granted()
    assert capabilities.granted == {Capability.DENY_TOKEN_REQUESTS, Capability.CHANGE_DENIAL}
    assert capabilities.why_not([Capability.AUDIT_LOG]) == [
        "needs the SolAr API server's audit log: the landscape file does not grant audit-log"
    ]


def test_a_landscape_files_implementation_says_why_first() -> None:
    everything = {str(c): "control" for c in CAPABILITIES}
    upstream = _file(everything, implementation="upstream").granted()
    assert upstream.lacking == of_implementation("upstream").lacking


def test_a_published_landscape_file_grants_exactly_what_its_landscape_can_do() -> None:
    for implementation in ("reference", "upstream", "external"):
        can = of_implementation(implementation).granted
        published = _file(granted(can), implementation="reference").granted()
        assert published.granted == can, implementation


def _decided(**options: object) -> tuple[Capabilities, Capabilities]:
    """What one process (the controller or an xdist worker) decides from these options alone."""
    given = {f"--solar-{name.replace('_', '-')}": value for name, value in options.items()}
    config = SimpleNamespace(stash=pytest.Stash(), getoption=given.get)
    return run_capabilities(cast(pytest.Config, config))


def test_each_process_of_a_run_decides_the_same_from_its_options_and_landscape_files(
    tmp_path: Path,
) -> None:
    (tmp_path / "main").mkdir()
    (tmp_path / "alone").mkdir()
    main_file = _landscape(tmp_path / "main")  # grants deny-token-requests
    alone_file = _landscape(tmp_path / "alone", capabilities={})
    existing = {"env": "existing", "landscape": main_file, "landscape_alone": alone_file}
    main, alone = _decided(**existing)
    assert main.granted == {Capability.DENY_TOKEN_REQUESTS, Capability.CHANGE_DENIAL}
    assert alone.granted == frozenset()
    assert alone.why_not([Capability.DENY_TOKEN_REQUESTS]) == [
        "needs denying TokenRequests: the landscape file does not grant deny-token-requests"
    ]
    assert _decided(**existing) == (main, alone)  # another worker, the same decision
    upstream = of_implementation("upstream")
    assert _decided(env="kind", impl="upstream") == (upstream, upstream)
    assert _decided(env="local", impl="reference") == (ALL, ALL)
    assert _decided(env="sim", impl="reference") == (ALL, ALL)


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:randomly",
            "-p",
            "tests.lacking_plugin",
            f"--solar-report={tmp_path / 'report'}",
            f"--solar-artifacts={tmp_path / 'artifacts'}",
            "-rs",
            *args,
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_a_scenario_needing_what_the_landscape_lacks_is_skipped_at_collection_and_reported_not_run(
    tmp_path: Path,
) -> None:
    reason = "the landscape file does not grant deny-token-requests"
    done = _run(
        tmp_path,
        "features/check_it_worked.feature",
        SOLAR_TEST_LACKING="deny-token-requests",
        SOLAR_TEST_LACKING_REASON=reason,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SKIPPED [6] " in done.stdout  # the MintFailed row and 5 scenarios of mint failures
    assert f"needs denying TokenRequests: {reason}" in done.stdout
    report = yaml.safe_load((tmp_path / "report" / "conformance.yaml").read_text())
    skipped = [s for s in report["notPassed"] if s["status"] == "skipped"]
    assert len(skipped) == 3, (
        skipped
    )  # the @spec MintFailed scenarios, the outline's MintFailed row
    assert all(s["reason"] == f"needs denying TokenRequests: {reason}" for s in skipped), skipped
    statements = {st["id"]: st for section in report["sections"] for st in section["statements"]}
    backoff = statements["condition-mintfailed-backoff"]
    assert backoff["result"] == "not run"
    assert f"needs denying TokenRequests: {reason}" in backoff["reason"]
    outline = statements["condition-where"]  # the outline's other rows ran
    assert outline["result"] == "partial", outline


def test_a_step_that_needs_a_capability_in_an_untagged_scenario_stops_the_run(
    tmp_path: Path,
) -> None:
    project = project_folder(tmp_path)
    feature = project / "features" / "drift.feature"
    feature.write_text(
        "Feature: drift\n"
        "  @spec\n"
        "  Scenario: a denial without its tag\n"
        '    Given the SolAr API server denies token requests in namespace "test" with "no"\n'
        "\n"
        "  @spec @needs-audit-log\n"
        "  Scenario: a tag without its step\n"
        "    Given a SolAr cluster, a render registry and a target cluster\n"
    )
    done = run_pytest(project, "features/drift.feature", "--collect-only", "-q")
    assert done.returncode == USAGE_ERROR, done.stdout + done.stderr
    assert done.error_lines == [
        f"ERROR: {feature}:3: scenario 'a denial without its tag' uses `the SolAr API server "
        'denies token requests in namespace "test" with "no"`, which needs denying '
        "TokenRequests: tag it (or its Rule) @needs-deny-token-requests",
        f"ERROR: {feature}:7: scenario 'a tag without its step' is tagged @needs-audit-log, but "
        "none of its steps needs the SolAr API server's audit log: remove the tag, or it is "
        "skipped for nothing",
    ]
