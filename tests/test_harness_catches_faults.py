"""The scenarios can fail: run them against broken SolAr implementations and see them fail, with
messages that say what was last seen, and without showing a secret."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FEATURES = ROOT / "features"

# Broken Roles of the agent: each changes CredentialController.agent_rules(target) -> rules.
ROLE_MUTANT = """
from solar_conformance.simulators.reference.controller import CredentialController

_rules = CredentialController.agent_rules

def _broken(target):
    rules = _rules(target)
    {change}
    return rules

CredentialController.agent_rules = staticmethod(_broken)
"""
BROKEN_ROLES = {
    "an extra verb": (
        'rules[0]["verbs"].append("delete")',
        '*targets.solar.opendefense.cloud*delete*own "cluster-1": expected forbidden, seen allowed*',
    ),
    "no resourceNames": (
        'rules[1].pop("resourceNames")',
        '*targetreports.solar.opendefense.cloud*update*another Target\'s "cluster-2": '
        "expected forbidden, seen allowed*",
    ),
    "a grant on targetreports/status": (
        'rules[1]["resources"].append("targetreports/status")',
        "*targetreports.solar.opendefense.cloud/status*update*own*expected forbidden*",
    ),
    "a rule on every resource": (
        'rules[0]["resources"] = ["*"]',
        "*releases.solar.opendefense.cloud*get*own*expected forbidden, seen allowed*",
    ),
}

# The agent's RoleBinding names every ServiceAccount of the namespace, not the Target's own.
GROUP_BINDING = """
from solar_conformance.simulators.reference.controller import CredentialController

_ensure = CredentialController.ensure_object

def _ensure_for_everyone(self, wanted, compare=()):
    if wanted["kind"] == "RoleBinding":
        namespace = wanted["metadata"]["namespace"]
        wanted["subjects"] = [{"kind": "Group", "name": f"system:serviceaccounts:{namespace}",
                               "apiGroup": "rbac.authorization.k8s.io"}]
    return _ensure(self, wanted, compare)

CredentialController.ensure_object = _ensure_for_everyone
"""

# The controller also binds the agent's rules in every other namespace ("other-*").
OTHER_NAMESPACE_BINDING = """
from solar_conformance.core.api import ApiError, new_object
from solar_conformance.simulators.reference.controller import CredentialController

_access = CredentialController.ensure_access

def _access_everywhere(self, target, names, labels):
    _access(self, target, names, labels)
    namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
    for other in [n["metadata"]["name"] for n in self.solar.list("Namespace")]:
        if other == namespace or not other.startswith("other-"):
            continue
        for obj in (
            new_object("Role", names.role, other, rules=self.agent_rules(name)),
            new_object("RoleBinding", names.role, other,
                       roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                "name": names.role},
                       subjects=[{"kind": "ServiceAccount", "name": names.service_account,
                                  "namespace": namespace}]),
        ):
            try:
                self.solar.create(obj)
            except ApiError:
                pass

CredentialController.ensure_access = _access_everywhere
"""

# solar-controller-manager writes lastReportTime itself (as the harness's admin).
CONTROLLER_REPORTS = """
from solar_conformance.core.clock import utc
from solar_conformance.simulators.reference.controller import CredentialController

_report = CredentialController.ensure_report

def _report_too(self, target, labels):
    _report(self, target, labels)
    meta = target["metadata"]
    report = self.solar.get("TargetReport", meta["name"], meta["namespace"])
    report.setdefault("spec", {})["lastReportTime"] = utc(self.clock.now())
    self.solar.update(report)

CredentialController.ensure_report = _report_too
"""

# solar-renderer renders a token it minted itself, not the one in the Secret the condition names.
RENDERER_MINTS = """
from solar_conformance.simulators.reference.renderer import Renderer

_minted = {}

def _own_token(self, target):
    meta = target["metadata"]
    key = meta["uid"]
    if key not in _minted:
        account = f"solar-agent-{meta['name']}"
        _minted[key] = self.solar.create_token(
            meta["namespace"], account, expiration_seconds=3600).token
    return _minted[key]

Renderer.token_of = _own_token
"""

SILENT_AGENT = """
from solar_conformance.simulators.reference.agent import Agent

def _pretend(self, solar):
    self.log("reported (but wrote nothing)")

Agent.report = _pretend
"""

LEAKY_STEP = """
from pytest_bdd import then, parsers

from solar_conformance.page.lookup import token_in, token_secret

@then(parsers.parse('the token of "{target}" is printed and the scenario fails'))
def leak(landscape, you, target):
    token = token_in(landscape, token_secret(landscape, you.namespace_of(target), target))
    print("token:", token)
    raise AssertionError(f"deliberate failure, token {token}")
"""

LEAKY_FEATURE = """
Feature: a careless step
  @spec
  Scenario: a step prints the agent token and fails
    Given a SolAr cluster, a render registry and a target cluster
    And the operator has set up the solar-agent in namespace "test"
    And I have created the Target "cluster-1" in namespace "test"
    And AgentCredentialReady of "cluster-1" is "True" with reason "Issued"
    Then the token of "cluster-1" is printed and the scenario fails
"""


def _run(pytester: pytest.Pytester, mutant: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(mutant_plugin=mutant)
    return pytester.runpytest_subprocess(
        "-p",
        "mutant_plugin",
        "--rootdir",
        str(ROOT),
        "-c",
        str(ROOT / "pyproject.toml"),
        f"--solar-artifacts={pytester.path / 'artifacts'}",
        *args,
    )


EXACTLY_THE_GRANT = "credential_scope.feature::test_the_token_can_do_exactly_what_the_page_grants"


@pytest.mark.parametrize("broken", sorted(BROKEN_ROLES))
def test_a_role_that_allows_more_fails_the_scope_check(
    pytester: pytest.Pytester, broken: str
) -> None:
    change, difference = BROKEN_ROLES[broken]
    result = _run(pytester, ROLE_MUTANT.format(change=change), str(FEATURES / EXACTLY_THE_GRANT))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the token's rights differ from the page's grant*", difference])


@pytest.mark.parametrize(
    ("mutant", "difference"),
    [
        (GROUP_BINDING, "*targets.solar.opendefense.cloud*get*another Target's*seen allowed*"),
        (OTHER_NAMESPACE_BINDING, '*get*other ns: own name "cluster-1": expected forbidden*'),
    ],
    ids=["bound to every ServiceAccount", "bound in another namespace"],
)
def test_a_binding_that_reaches_too_far_fails_the_scope_check(
    pytester: pytest.Pytester, mutant: str, difference: str
) -> None:
    result = _run(pytester, mutant, str(FEATURES / EXACTLY_THE_GRANT))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([difference])


@pytest.mark.parametrize(
    ("mutant", "seen"),
    [
        (CONTROLLER_REPORTS, "*by kubernetes-admin (not with its Secret's token)*"),
        (RENDERER_MINTS, "*no write came from*solar-agent-cluster-1*not with its Secret's token*"),
    ],
    ids=["the controller writes lastReportTime", "the agent's token is not its Secret's"],
)
def test_a_report_written_under_another_identity_fails(
    pytester: pytest.Pytester, mutant: str, seen: str
) -> None:
    result = _run(
        pytester, mutant, str(FEATURES / "create_target.feature"), "-k", "agent_updates_its_own"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([seen])
    assert "eyJ" not in result.stdout.str()


def test_an_agent_that_does_not_report_fails_with_its_logs(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        SILENT_AGENT,
        str(FEATURES / "check_it_worked.feature"),
        "-k",
        "advances_with_every_report",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*lastReportTime of cluster-1*not within*last seen*",
            "*reported (but wrote nothing)*",
        ]
    )


def test_tokens_never_reach_the_output(pytester: pytest.Pytester) -> None:
    (pytester.path / "leak.feature").write_text(LEAKY_FEATURE)
    result = _run(
        pytester,
        LEAKY_STEP,
        str(pytester.path / "leak.feature"),
        f"--junitxml={pytester.path / 'junit.xml'}",
        "-rA",
    )
    result.assert_outcomes(failed=1)
    output = result.stdout.str() + result.stderr.str()
    assert "deliberate failure" in output
    assert "eyJ" not in output, "a JWT-shaped token reached the terminal"
    assert "<redacted>" in output
    junit = (pytester.path / "junit.xml").read_text()
    assert "eyJ" not in junit, "a JWT-shaped token reached the JUnit report"
    for artifact in (pytester.path / "artifacts").rglob("*"):
        if artifact.is_file():
            assert "eyJ" not in artifact.read_text(), f"a token reached {artifact.name}"


WRONG_TOKENS = """
import os

from solar_conformance.core import redact
from solar_conformance.simulators.reference.controller import CredentialController
from solar_conformance.simulators.reference.renderer import Renderer

_seen = open(os.environ["SOLAR_TOKEN_LOG"], "a")
_register = redact.Redactor.register


def _logging_register(self, *values):
    for value in values:
        if value:
            _seen.write(value + "\\n")
            _seen.flush()
    return _register(self, *values)


redact.Redactor.register = _logging_register
_token_of = Renderer.token_of


def _almost(self, target):
    token = _token_of(self, target)
    return None if token is None else token[:-6] + token[-6:][::-1]


Renderer.token_of = _almost
_needs = CredentialController.needs_new_token
CredentialController.needs_new_token = lambda self, target, secret: _needs(self, target, secret) and (
    self.contract.rotation_annotation not in (target["metadata"].get("annotations") or {})
)
"""

TOKEN_STEPS = [
    "create_target.feature::test_solarrenderer_renders_the_agent_release_with_the_kubeconfig_and_the_token",
    "registry_isolation.feature::test_one_targets_regcred_reads_another_targets_agent_token_in_the_same_namespace",
    "runbook.feature::test_a_rotation_on_request_replaces_the_token_and_the_agent_picks_it_up_through_flux",
    "runbook.feature::test_removing_the_annotation_issues_a_new_token_and_the_agent_reports_again",
]


def test_no_token_nor_a_piece_of_one_reaches_any_output(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Token-comparing steps fail against a renderer that renders an almost-right token and a
    controller that ignores rotation requests; nothing of any token may reach the terminal,
    JUnit, Cucumber JSON, the HTML report or the diagnostics."""
    log = pytester.path / "tokens.txt"
    monkeypatch.setenv("SOLAR_TOKEN_LOG", str(log))
    result = _run(
        pytester,
        WRONG_TOKENS,
        *(str(FEATURES / node) for node in TOKEN_STEPS),
        f"--junitxml={pytester.path / 'junit.xml'}",
        f"--solar-report={pytester.path / 'report'}",
        "-rA",
        "--tb=long",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == len(TOKEN_STEPS), result.stdout.str()[-3000:]
    tokens = {line for line in log.read_text().splitlines() if line.startswith("eyJ")}
    assert tokens, "the run saw no token, so this test could not fail"
    outputs = {"terminal": result.stdout.str() + result.stderr.str()}
    for path in pytester.path.rglob("*"):
        if path.is_file() and path != log:
            outputs[str(path.relative_to(pytester.path))] = path.read_text(errors="replace")
    assert any("artifacts" in name for name in outputs), "no diagnostics were written"
    pieces = {token[i : i + 8] for token in tokens for i in range(len(token) - 7)}
    leaking = sorted(
        name
        for name, text in outputs.items()
        if any(text[i : i + 8] in pieces for i in range(len(text) - 7))
    )
    assert leaking == [], f"a token, or a piece of one, reached: {leaking}"


def test_a_malformed_name_is_one_clear_line(pytester: pytest.Pytester) -> None:
    (pytester.path / "bad.feature").write_text(
        "Feature: bad input\n"
        "  @spec\n"
        "  Scenario: a namespace that Kubernetes would reject\n"
        "    Given a SolAr cluster, a render registry and a target cluster\n"
        '    And the operator has set up the solar-agent in namespace "Not_A_Name"\n'
    )
    result = _run(pytester, "", str(pytester.path / "bad.feature"))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["BadName: namespace 'Not_A_Name' is not a valid name*"])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--solar-env=moon"], "*--solar-env='moon': not one of sim, local, kind, existing*"),
        (["--solar-impl=external"], "*--solar-impl=external needs a real SolAr*"),
    ],
)
def test_bad_options_are_one_clear_line(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    result = _run(pytester, "", str(FEATURES / "create_target.feature"), *args)
    assert result.ret != 0
    result.stderr.fnmatch_lines([message])
