"""Run the feature files on sim against every mutant and variant of the catalogue and score both.

Each mutant or variant is one `pytest -p tests.mutants.plugin features/ -x` process with
`--solar-mutant=ID` (the plugin patches the seams, gives a variant its profile and runs a mutant's
likely killers first, the stateful credential model last); the unmutated suite runs too, and must
pass. A mutant is killed when a scenario (or the model) fails with a conformance message (an AssertionError naming a promise), crashed when the first failure is an
exception of the harness instead (a KeyError, ValueError, LookupError ... while it read SolAr's
data: a verdict nobody can act on), survives when every scenario passes, and is an error when
the run could not judge it (the seam is gone, pytest could not start, the time ran out). A
conforming variant must pass every scenario; a scenario that fails for it is a false alarm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.mutants.model import Mutant
from tests.mutants.plugin import RESULT_ENV

ROOT = Path(__file__).resolve().parents[2]
FEATURES = ("features/",)
KILLED, SURVIVED, EQUIVALENT, ERROR = "killed", "survived", "equivalent", "error"
CRASHED = "crashed"  # a scenario failed with an exception of the harness, not a verdict
PASSED = "passed"  # the unmutated suite, a conforming variant
FALSE_ALARM = "false alarm"  # a conforming variant failed a scenario


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant | None  # None: the unmutated suite
    verdict: str
    killer: str  # the scenario that failed first, or what went wrong
    seconds: float

    @property
    def name(self) -> str:
        return self.mutant.id if self.mutant else "(no mutant)"

    @property
    def conforming(self) -> bool:
        """The unmutated suite or a conforming variant: every scenario must pass."""
        return self.mutant is None or self.mutant.conforming

    @property
    def expected(self) -> bool:
        """What the catalogue promises: killed, or surviving as a documented equivalent; every
        scenario passing for the reference and each conforming variant."""
        if self.mutant is None or self.mutant.conforming:
            return self.verdict == PASSED
        wanted = EQUIVALENT if self.mutant.equivalent else KILLED
        return self.verdict == wanted


def run_one(
    mutant: Mutant | None,
    *,
    selection: Sequence[str] = FEATURES,
    timeout: float = 300.0,
    marker: str | None = None,
) -> Outcome:
    """One pytest run on sim, stopping at the first failing scenario."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="solar-mutant-") as scratch:
        result = Path(scratch) / "result.json"
        command = [
            sys.executable,
            "-m",
            "pytest",
            *selection,
            "-x",
            "-q",
            "-p",
            "tests.mutants.plugin",  # the product's plugin list leaves the catalogue out
            "-p",
            # The credential model runs Hypothesis itself (solar_conformance/model/run.py); the pytest
            # plugin adds nothing to it and costs a second.
            "no:hypothesispytest",
            f"--solar-artifacts={Path(scratch) / 'artifacts'}",
        ]
        env = {**os.environ, RESULT_ENV: str(result)}
        env.pop("SOLAR_MUTANT", None)
        if mutant is not None:
            command.append(f"--solar-mutant={mutant.id}")
        if marker is not None:
            command += ["-m", marker]
        try:
            done = subprocess.run(
                command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return Outcome(mutant, ERROR, f"no verdict within {timeout:g} s", _since(started))
        seconds = _since(started)
        found = json.loads(result.read_text()) if result.is_file() else None
    return Outcome(mutant, *verdict_of(mutant, done, found), seconds)


def _since(started: float) -> float:
    return time.monotonic() - started


def verdict_of(
    mutant: Mutant | None, done: subprocess.CompletedProcess[str], found: dict[str, object] | None
) -> tuple[str, str]:
    failed = list(found.get("failed") or []) if found else []  # type: ignore[call-overload]
    if done.returncode == 0:
        if mutant is None or mutant.conforming:
            return PASSED, ""
        return (EQUIVALENT if mutant.equivalent else SURVIVED), ""
    if done.returncode == 1 and failed:
        first = failed[0]
        where = "" if first.get("when") == "call" else f" ({first.get('when')})"
        scenario = f"{first.get('scenario')}{where}"
        raised = f"{first.get('exception', 'an unknown exception')}: {first.get('message', '')}"
        if mutant is None:
            return ERROR, f"{scenario}: {raised}"
        if mutant.conforming:
            return FALSE_ALARM, f"{scenario}: {raised}"
        if first.get("conformance") is False:
            return CRASHED, f"{scenario}: {raised}"
        return KILLED, scenario
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return ERROR, f"exit {done.returncode}: {lines[-1] if lines else 'no output'}"


def run_all(
    mutants: Iterable[Mutant],
    *,
    jobs: int = 2,
    timeout: float = 300.0,
    marker: str | None = None,
    progress: Callable[[Outcome], None] = lambda outcome: None,
) -> list[Outcome]:
    """The unmutated suite and every mutant and variant, `jobs` at a time; the longest runs (the
    unmutated suite, the variants and the equivalents, which run every scenario) start first."""
    chosen = list(mutants)
    longest_first = sorted(chosen, key=lambda m: m.equivalent is None and not m.conforming)
    order: list[Mutant | None] = [None, *longest_first]

    def one(mutant: Mutant | None) -> Outcome:
        outcome = run_one(mutant, timeout=timeout, marker=marker)
        progress(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = list(pool.map(one, order))
    rank = {id(m): i for i, m in enumerate(chosen)}
    return sorted(outcomes, key=lambda o: -1 if o.mutant is None else rank[id(o.mutant)])
