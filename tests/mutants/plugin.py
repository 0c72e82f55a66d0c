"""pytest plugin: run the scenarios against one mutant or conforming variant of the catalogue.

Loaded only where asked for: `pytest -p tests.mutants.plugin features/ --solar-mutant=ID` patches the
seams of a mutant or conforming variant when pytest starts and undoes them when it ends; nothing
else changes. A mutant's likely killers run first; a variant that comes with a profile runs with
it, as `--solar-profile` would give it; the run's reports name what was applied ("mutant ID of
the reference SolAr", "conforming variant ID of the reference SolAr"). With
SOLAR_MUTANT_RESULT=FILE the run writes what failed there (JSON) for `python -m tests.mutants`, which
loads the plugin into each pytest run it starts: each failure's scenario, phase, exception type,
whether that is a conformance message (an AssertionError) or an exception of the harness, and
its first lines. Without the option, the plugin does nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from solar_conformance.core.redact import REDACT
from solar_conformance.plugin.implementation import VARIANT, Variant
from tests.mutants.model import Mutant, SeamMissing

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
        default=None,
        metavar="ID",
        help="run against a broken SolAr or sim landscape from the mutation catalogue "
        "(docs/mutants.md); sim only",
    )


@pytest.hookimpl(tryfirst=True, specname="pytest_configure")
def pytest_configure_variant_profile(config: pytest.Config) -> None:
    """Before the profile is read: a variant's profile becomes the run's `--solar-profile`."""
    mutant_id = config.getoption("--solar-mutant")
    if not mutant_id:
        return
    from tests.mutants.catalogue import find

    try:
        chosen = find(mutant_id)
    except KeyError:
        return  # said below, with the other reasons a mutant cannot run
    if not chosen.profile:
        return
    if config.getoption("--solar-profile") is not None:
        raise pytest.UsageError(
            f"--solar-mutant={mutant_id} runs with its own profile; leave out --solar-profile"
        )
    folder = Path(tempfile.mkdtemp(prefix="solar-variant-"))
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    path = folder / f"{chosen.id}.toml"
    path.write_text("".join(f"{key} = {json.dumps(value)}\n" for key, value in chosen.profile))
    config.option.solar_profile = path


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    result = os.environ.get(RESULT_ENV)
    if result:
        config.pluginmanager.register(_Recorder(Path(result)), "solar-mutant-recorder")
    mutant_id = config.getoption("--solar-mutant")
    if not mutant_id:
        return
    from tests.mutants.catalogue import (
        find,  # imports the components: only when a mutant is asked for
    )

    try:
        mutant = find(mutant_id)
    except KeyError:
        raise pytest.UsageError(
            f"--solar-mutant={mutant_id}: no such mutant; `python -m tests.mutants --list` lists them"
        ) from None
    if config.getoption("--solar-env") != "sim":
        raise pytest.UsageError("--solar-mutant runs on the sim backend only (--solar-env=sim)")
    patcher = pytest.MonkeyPatch()
    try:
        mutant.apply(patcher)
    except SeamMissing as missing:
        patcher.undo()
        raise pytest.UsageError(
            f"mutant {mutant.id} cannot be applied: {missing}; update its seam in tests/mutants/catalogue"
        ) from None
    config.add_cleanup(patcher.undo)
    config.stash[_ACTIVE] = mutant
    config.stash[VARIANT] = Variant(mutant.id, mutant.description, mutant.conforming)


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
    if mutant is None:
        return None
    return f"{'variant' if mutant.conforming else 'mutant'}: {mutant.id} - {mutant.description}"


MESSAGE_LINES = 3
MESSAGE_CHARACTERS = 400


def conformance_message(error: BaseException) -> bool:
    """A verdict on SolAr (an assertion naming a promise, a wait that ran out), not an exception
    of the harness (a KeyError, ValueError, LookupError ... while it read SolAr's data)."""
    return isinstance(error, AssertionError | pytest.fail.Exception)


def first_lines(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    value = excinfo.value
    text = str(value) if isinstance(value, AssertionError) and str(value) else excinfo.exconly()
    lines = [line.strip() for line in REDACT(text).strip().splitlines() if line.strip()]
    shown = " / ".join(lines[:MESSAGE_LINES])
    return shown if len(shown) <= MESSAGE_CHARACTERS else shown[:MESSAGE_CHARACTERS] + " ..."


class _Recorder:
    """Writes which scenarios failed, in which phase and with which exception, to the result
    file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names: dict[str, str] = {}
        self.failed: list[dict[str, Any]] = []
        self.raised: dict[tuple[str, str], pytest.ExceptionInfo[BaseException]] = {}
        self.passed = 0

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.names = {item.nodeid: scenario_name(item) for item in session.items}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.failed and call.excinfo is not None:
            self.raised[(report.nodeid, report.when)] = call.excinfo
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            scenario = self.names.get(report.nodeid, report.nodeid)
            failure: dict[str, Any] = {"scenario": scenario, "when": report.when}
            excinfo = self.raised.pop((report.nodeid, report.when), None)
            if excinfo is not None:
                failure["exception"] = excinfo.typename
                failure["conformance"] = conformance_message(excinfo.value)
                failure["message"] = first_lines(excinfo)
            self.failed.append(failure)
        elif report.passed and report.when == "call":
            self.passed += 1

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        result = {"exitstatus": int(exitstatus), "failed": self.failed, "passed": self.passed}
        self.path.write_text(json.dumps(result))
