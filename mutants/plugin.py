"""pytest plugin: run the scenarios against one mutant of the catalogue.

`pytest features/ --solar-mutant=ID` (or SOLAR_MUTANT=ID in the environment) patches the mutant's
seams when pytest starts and undoes them when it ends; nothing else changes. The mutant's likely
killers run first. With SOLAR_MUTANT_RESULT=FILE the run writes what failed there (JSON) for
`python -m mutants`. Without either, the plugin does nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mutants.model import Mutant, SeamMissing

MUTANT_ENV = "SOLAR_MUTANT"
RESULT_ENV = "SOLAR_MUTANT_RESULT"
_ACTIVE = pytest.StashKey[Mutant]()
# Scenarios that take seconds (long waits on virtual time): run after the others.
SLOW_FEATURES = ("runbook.feature",)
# The stateful credential model (its fixed and drawn examples, a few seconds): last of all, so a
# mutant a scenario kills never pays for it.
LAST_FILES = ("test_credential_model.py",)
SLOW_SCENARIOS = (
    "The waits between attempts grow up to the cap and the retries go on at the cap",
    "A Release bound later arrives without touching the target cluster",
    "Binding a Release that already existed re-renders the bootstrap chart",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("solar").addoption(
        "--solar-mutant",
        default=os.environ.get(MUTANT_ENV) or None,
        metavar="ID",
        help="run against a broken SolAr or sim landscape from the mutation catalogue "
        f"(docs/mutants.md; also ${MUTANT_ENV}); sim only",
    )


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    result = os.environ.get(RESULT_ENV)
    if result:
        config.pluginmanager.register(_Recorder(Path(result)), "solar-mutant-recorder")
    mutant_id = config.getoption("--solar-mutant")
    if not mutant_id:
        return
    from mutants.catalogue import find  # imports the components: only when a mutant is asked for

    try:
        mutant = find(mutant_id)
    except KeyError:
        raise pytest.UsageError(
            f"--solar-mutant={mutant_id}: no such mutant; `python -m mutants --list` lists them"
        ) from None
    if config.getoption("--solar-env") != "sim":
        raise pytest.UsageError("--solar-mutant runs on the sim backend only (--solar-env=sim)")
    patcher = pytest.MonkeyPatch()
    try:
        mutant.apply(patcher)
    except SeamMissing as missing:
        patcher.undo()
        raise pytest.UsageError(
            f"mutant {mutant.id} cannot be applied: {missing}; update its seam in mutants/catalogue"
        ) from None
    config.add_cleanup(patcher.undo)
    config.stash[_ACTIVE] = mutant


def scenario_name(item: pytest.Item) -> str:
    """pytest-bdd documents each scenario test as "<feature file>: <scenario as written>"."""
    doc = getattr(getattr(item, "obj", None), "__doc__", None) or ""
    return doc.partition(".feature: ")[2] or item.name


def _rank(item: pytest.Item, killers: tuple[str, ...]) -> tuple[int, int]:
    name = scenario_name(item)
    if item.path.name in LAST_FILES:
        return (3, 0)
    if name in killers:
        return (0, killers.index(name))
    slow = item.path.name in SLOW_FEATURES or name in SLOW_SCENARIOS
    return (2 if slow else 1, 0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mutant = config.stash.get(_ACTIVE, None)
    if mutant is None:
        return
    order = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (*_rank(item, mutant.killers), order[id(item)]))


def pytest_report_header(config: pytest.Config) -> str | None:
    mutant = config.stash.get(_ACTIVE, None)
    return None if mutant is None else f"mutant: {mutant.id} - {mutant.description}"


class _Recorder:
    """Writes which scenarios failed, and in which phase, to the result file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names: dict[str, str] = {}
        self.failed: list[dict[str, str]] = []
        self.passed = 0

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.names = {item.nodeid: scenario_name(item) for item in session.items}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            scenario = self.names.get(report.nodeid, report.nodeid)
            self.failed.append({"scenario": scenario, "when": report.when})
        elif report.passed and report.when == "call":
            self.passed += 1

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        result = {"exitstatus": int(exitstatus), "failed": self.failed, "passed": self.passed}
        self.path.write_text(json.dumps(result))
