"""Who the report says answered each scenario and statement with --solar-impl=upstream: by the
steps that ran, and by what rendered the bootstrap chart in that run (the reference, or upstream
with SOLAR_UPSTREAM_RENDERS_RELEASES=1)."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from pytest_bdd.reporting import scenario_reports_registry

from solar_conformance.core.upstream_parts import (
    RENDERS_RELEASES_ENV,
    UpstreamParts,
    upstream_parts,
)
from solar_conformance.plugin.implementation import REFERENCE as REFERENCE_SOLAR
from solar_conformance.plugin.landscapes import LANDSCAPE_KEY
from solar_conformance.report import answered
from solar_conformance.report.capture import Seen, build_record
from solar_conformance.report.conformance import to_yaml
from solar_conformance.report.model import build_report
from solar_conformance.report.records import RunInfo, ScenarioRecord, StepRecord

REFERENCE_RENDERS = upstream_parts("upstream", {})
UPSTREAM_RENDERS = upstream_parts("upstream", {RENDERS_RELEASES_ENV: "1"})
BOTH = f"{answered.REFERENCE}{answered.SEPARATOR}{answered.UPSTREAM}"

# Each step of the features that names the bootstrap chart or solar-renderer, with its owners
# when the reference renders the bootstrap chart, and when upstream renders it.
BOOTSTRAP_AND_RENDERER_STEPS = [
    ('solar-renderer has pushed the bootstrap chart of "cluster-1"', "reference", BOTH),
    (
        'solar-renderer has pushed the bootstrap chart of "a" to exactly that URL',
        "reference",
        BOTH,
    ),
    (
        'solar-renderer pushes a bootstrap chart of "cluster-1" that carries the Release "podinfo"',
        "reference",
        BOTH,
    ),
    (
        'the bootstrap chart of "cluster-1" in the render registry no longer carries the Release '
        '"podinfo"',
        "reference",
        "upstream",
    ),
    (
        'the bootstrap chart of "cluster-2" points Flux at the render registry the Target '
        "references, with its pull Secret",
        "reference",
        "upstream",
    ),
    (
        'the bootstrap charts of "cluster-1" and "cluster-2" carry exactly the Releases bound to '
        "each",
        BOTH,
        "upstream",
    ),
    (
        'the bootstrap chart of "cluster-1" in the render registry still carries the agent release',
        "reference",
        BOTH,
    ),
    (
        'solar-renderer pushes the agent release of "cluster-1" to the render registry',
        "reference",
        "reference",
    ),
    (
        'solar-renderer has pushed the agent releases of "cluster-1", "cluster-2" and "cluster-3"',
        "reference",
        "reference",
    ),
    (
        'I pull the bootstrap chart of "cluster-1" with the regcred of "cluster-1"',
        "harness",
        "harness",
    ),
    ('I pull the bootstrap chart of "cluster-1" without credentials', "harness", "harness"),
    (
        'I point an OCIRepository with the regcred of "cluster-1" at the bootstrap chart of '
        '"cluster-3"',
        "harness",
        "harness",
    ),
    ('SolAr\'s push user tries to delete the bootstrap chart of "cluster-3"', "harness", "harness"),
]


def test_that_upstream_pushed_a_bootstrap_chart_at_all_is_the_reference_s_work_too() -> None:
    # Upstream renders a Target's bootstrap chart only once the reference published the
    # Target's agent release to it, so a missing chart does not say upstream differs.
    steps = _steps(('solar-renderer has pushed the bootstrap chart of "cluster-1"', "failed"))
    assert answered.answered_by(steps, UPSTREAM_RENDERS) == BOTH
    assert answered.reason("failed", steps, "", UPSTREAM_RENDERS) == answered.HARNESS_WRONG


def test_what_solar_must_not_write_on_the_target_is_solar_s_not_the_harness_s() -> None:
    for parts in (REFERENCE_RENDERS, UPSTREAM_RENDERS):
        owner = answered.step_owner('the target cluster holds nothing of "cluster-1"', parts)
        assert owner == BOTH


@pytest.mark.parametrize(("text", "by_reference", "by_upstream"), BOOTSTRAP_AND_RENDERER_STEPS)
def test_a_bootstrap_chart_step_is_owned_by_what_rendered_it(
    text: str, by_reference: str, by_upstream: str
) -> None:
    assert answered.step_owner(text, REFERENCE_RENDERS) == by_reference
    assert answered.step_owner(text, UPSTREAM_RENDERS) == by_upstream


@pytest.mark.parametrize("parts", [REFERENCE_RENDERS, UPSTREAM_RENDERS])
@pytest.mark.parametrize(
    ("text", "owner"),
    [
        ('the SolAr API has accepted the Target "cluster-1"', answered.UPSTREAM),
        ('"cluster-1" is bound to the agent Release', answered.UPSTREAM),
        ('solar-controller-manager mints a token for "cluster-1" into a Secret', "reference"),
        ('the TargetReport "cluster-1" gets a lastReportTime', answered.REFERENCE),
        (
            'the agent release of "cluster-1" in the render registry carries the new token',
            "reference",
        ),
        ('I write the page\'s regcred for "cluster-1"', answered.HARNESS),
        ('the OCIRepository "solar-bootstrap" on the target becomes Ready', answered.HARNESS),
        ('Flux on the target installs the release "podinfo" of "cluster-1"', answered.HARNESS),
    ],
)
def test_a_step_of_no_chart_has_the_same_owner_whatever_renders(
    text: str, owner: str, parts: UpstreamParts
) -> None:
    assert answered.step_owner(text, parts) == owner


def _steps(*texts_and_statuses: tuple[str, str]) -> tuple[StepRecord, ...]:
    background = StepRecord(
        "Given", "a SolAr cluster, a render registry", "passed", background=True
    )
    return (background, *(StepRecord("Then", t, s) for t, s in texts_and_statuses))


def test_a_scenario_is_answered_by_the_owners_of_the_steps_that_ran() -> None:
    steps = _steps(
        ('I create the Target "cluster-1" in namespace "test"', "passed"),
        ('solar-controller-manager mints a token for "cluster-1" into a Secret', "failed"),
        ('the TargetReport "cluster-1" gets a lastReportTime', "not run"),
    )
    for parts in (REFERENCE_RENDERS, UPSTREAM_RENDERS):
        assert answered.answered_by(steps, parts) == BOTH
        assert answered.reason("failed", steps, "", parts) == answered.HARNESS_WRONG


def test_a_scenario_of_the_bootstrap_chart_alone_is_answered_by_its_renderer() -> None:
    steps = _steps(
        (
            'the bootstrap chart of "cluster-2" points Flux at the render registry the Target '
            "references, with its pull Secret",
            "passed",
        ),
        (
            'the bootstrap chart of "cluster-1" in the render registry no longer carries the Release '
            '"podinfo"',
            "failed",
        ),
    )
    assert answered.answered_by(steps, REFERENCE_RENDERS) == answered.REFERENCE
    assert answered.reason("failed", steps, "", REFERENCE_RENDERS) == answered.HARNESS_WRONG
    assert answered.answered_by(steps, UPSTREAM_RENDERS) == answered.UPSTREAM
    assert answered.reason("failed", steps, "", UPSTREAM_RENDERS) == answered.UPSTREAM_DIFFERS


def test_a_step_of_the_bootstrap_chart_and_the_agent_release_joins_both_once() -> None:
    steps = _steps(
        ('solar-renderer has pushed the bootstrap chart of "cluster-1"', "passed"),
        (
            'the bootstrap chart of "cluster-1" in the render registry still carries the agent '
            "release",
            "failed",
        ),
    )
    assert answered.answered_by(steps, REFERENCE_RENDERS) == answered.REFERENCE
    assert answered.answered_by(steps, UPSTREAM_RENDERS) == BOTH
    # The reference's work is in the failed step too: it does not say upstream is wrong.
    assert answered.reason("failed", steps, "", UPSTREAM_RENDERS) == answered.HARNESS_WRONG


def test_a_failed_upstream_step_means_upstream_differs() -> None:
    steps = _steps(('"cluster-1" is bound to the agent Release', "failed"))
    assert answered.reason("failed", steps, "", REFERENCE_RENDERS) == answered.UPSTREAM_DIFFERS


def test_a_skip_upstream_cannot_do_is_not_implemented_upstream() -> None:
    message = "unsetting it: controller.agent.apiserverURL is not implemented upstream"
    assert answered.reason("skipped", (), message, REFERENCE_RENDERS) == answered.NOT_IMPLEMENTED


def _record(name: str, who: str, status: str = "passed", message: str = "") -> ScenarioRecord:
    return ScenarioRecord(
        uri="features/x.feature",
        feature="X",
        name=name,
        template=name,
        test_id=f"test_{name.lower().replace(' ', '_')}",
        status=status,
        tags=("spec",),
        message=message,
        answered_by=who,
    )


def test_the_conformance_report_names_who_answered_each_statement() -> None:
    run = RunInfo(
        backend="kind",
        implementation="upstream SolAr",
        implementation_version="",
        page="features/agent-registration.md",
        page_version="sha256:abc",
        versions={},
        started="2026-01-02T03:04:05+00:00",
    )
    index = {
        "page": "agent-registration.md",
        "entries": [
            {
                "id": "own-agent",
                "section": "Intro",
                "kind": "statement",
                "quote": "Every Target gets its own agent.",
                "scenarios": ["Two agents", "Bound"],
            }
        ],
    }
    records = [
        _record("Two agents", "reference+upstream"),
        _record("Bound", "upstream", "failed", f"{answered.UPSTREAM_DIFFERS}: a name"),
    ]
    # As kept in records.json and read again: the report says the same.
    records = [ScenarioRecord.from_dict(record.to_dict()) for record in records]
    published = yaml.safe_load(to_yaml(build_report(records, run, index)))
    statement = published["sections"][0]["statements"][0]
    assert statement["answeredBy"] == ["reference", "upstream"]
    assert statement["result"] == "failed"
    assert answered.UPSTREAM_DIFFERS in statement["reason"]


# --- a scenario's record: attributed per part wherever upstream played SolAr -----------------
RAN = (
    ('I create the Target "cluster-1" in namespace "test"', False),
    ('"cluster-1" is bound to the agent Release', True),
)


class _Config:
    def __init__(self, solar_impl: str) -> None:
        self.options = {"--solar-impl": solar_impl, "--solar-profile": None}
        self.stash = pytest.Stash()

    def getoption(self, name: str, default: object = None) -> object:
        return self.options.get(name, default)


class _Item:
    """A scenario's test item as the record is built from it, once its steps ran."""

    def __init__(self, solar_impl: str, played_by: str | None) -> None:
        self.config = _Config(solar_impl)
        self.name = "test_bound"
        self.stash = pytest.Stash()
        if played_by is not None:
            self.stash[LANDSCAPE_KEY] = SimpleNamespace(implementation=played_by)


def _template() -> Any:
    steps = [SimpleNamespace(keyword="Then", name=text, line_number=3) for text, _ in RAN]
    feature = SimpleNamespace(
        filename="features/agent-registration.feature", name="X", description="", tags=set()
    )
    return SimpleNamespace(
        feature=feature,
        rule=None,
        tags=set(),
        steps=steps,
        all_background_steps=[],
        name="Bound",
        line_number=2,
        templated=False,
    )


@pytest.fixture
def ran() -> Iterator[list[_Item]]:
    """Items whose steps ran: the first passed, the second failed."""
    items: list[_Item] = []
    yield items
    for item in items:
        scenario_reports_registry.pop(item, None)  # type: ignore[call-overload]


def _built_record(ran: list[_Item], solar_impl: str, played_by: str | None) -> ScenarioRecord:
    item = _Item(solar_impl, played_by)
    ran.append(item)
    template = _template()
    step_reports = [SimpleNamespace(failed=failed, duration=0.1, stopped=1.0) for _, failed in RAN]
    scenario = SimpleNamespace(name="Bound", steps=template.steps)
    scenario_reports_registry[item] = SimpleNamespace(  # type: ignore[index, assignment]
        scenario=scenario, step_reports=step_reports
    )
    return build_record(item, template, Seen(status="failed", message="not bound"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("solar_impl", "played_by"),
    [
        (
            "reference",
            "upstream",
        ),  # a landscape file of an upstream landscape, --solar-env=existing
        ("upstream", "upstream"),
        ("upstream", None),  # no landscape reached: --solar-impl says
    ],
)
def test_where_upstream_played_solar_a_scenario_is_answered_per_part(
    ran: list[_Item], solar_impl: str, played_by: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(RENDERS_RELEASES_ENV, raising=False)
    record = _built_record(ran, solar_impl, played_by)
    assert record.answered_by == answered.UPSTREAM  # by its steps, not upstream as a whole
    assert record.message == f"{answered.UPSTREAM_DIFFERS}: not bound"


def test_where_the_reference_played_solar_the_scenario_is_the_implementations(
    ran: list[_Item],
) -> None:
    record = _built_record(ran, "upstream", "reference")
    assert record.answered_by == REFERENCE_SOLAR
    assert record.message == "not bound"
