"""The mutation catalogue: it covers every entry of the index, each mutant applies where it says,
a handful of mutants are killed by the scenarios that should kill them, and the same scenarios
pass without a mutant. The whole catalogue runs with `make mutants` (docs/mutants.md)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from pytest_bdd.feature import get_features

from tests.mutants.catalogue import all_mutants, find
from tests.mutants.model import Mutant, Patch, SeamMissing
from tests.mutants.run import CRASHED, FALSE_ALARM, KILLED, PASSED, run_one, verdict_of

ROOT = Path(__file__).resolve().parent.parent
INDEX = ROOT / "features" / "traceability.yaml"


@pytest.fixture(scope="module")
def entries() -> list[dict[str, Any]]:
    return list(yaml.safe_load(INDEX.read_text())["entries"])


@pytest.fixture(scope="module")
def scenario_names() -> set[str]:
    features = get_features([str(p) for p in sorted((ROOT / "features").glob("*.feature"))])
    return {name for feature in features for name in feature.scenarios}


def test_every_entry_that_states_or_defines_a_behaviour_has_a_mutant(
    entries: list[dict[str, Any]],
) -> None:
    broken = {row for mutant in all_mutants() if not mutant.conforming for row in mutant.rows}
    behaviours = [e["id"] for e in entries if e["kind"] in ("statement", "definition")]
    missing = [entry for entry in behaviours if entry not in broken]
    assert missing == [], f"entries of the index that no mutant breaks: {missing}"


def test_every_mutant_breaks_entries_that_exist(entries: list[dict[str, Any]]) -> None:
    known = {e["id"] for e in entries if e["kind"] != "informative"}
    unknown = {m.id: [r for r in m.rows if r not in known] for m in all_mutants()}
    assert {k: v for k, v in unknown.items() if v} == {}, "mutants naming unknown entries"


def test_the_catalogue_is_large_unique_and_described(scenario_names: set[str]) -> None:
    mutants = all_mutants()
    ids = [m.id for m in mutants]
    assert len([m for m in mutants if not m.conforming]) >= 60, f"only {len(mutants)} mutants"
    assert len(ids) == len(set(ids)), f"duplicate ids: {sorted(i for i in ids if ids.count(i) > 1)}"
    for mutant in mutants:
        assert mutant.rows and mutant.description, mutant.id
        assert "\n" not in mutant.description, f"{mutant.id}: one line, please"
        if mutant.conforming:
            assert not mutant.killers and mutant.equivalent is None, mutant.id
            continue
        assert mutant.killers, f"{mutant.id} names no scenario to run first"
        unknown = [k for k in mutant.killers if k not in scenario_names]
        assert unknown == [], f"{mutant.id} names scenarios that do not exist: {unknown}"
        if mutant.equivalent is not None:
            assert len(mutant.equivalent) > 40, f"{mutant.id}: say why it is equivalent"


# The mutants that rely on solar_conformance/simulators/memory beyond its public methods (docs/mutants.md).
MEMORY_INTERNAL = {
    "gc-no-cascade",
    "apiserver-no-auth-cache",
    "apiserver-impersonation-unchecked",
    "registry-catalog-lists-everything",
    "rbac-ignores-serviceaccount-namespace",
    "controller-writes-report",
    "controller-resets-report",
    "registry-blobs-unchecked",
    "registry-tags-unchecked",
    "profile-binds-only-on-target-events",
    "registry-manifests-by-digest-unchecked",
    "registry-head-unchecked",
}


def test_the_mutants_that_rely_on_the_sims_insides_are_the_documented_ones() -> None:
    assert {m.id for m in all_mutants() if m.memory_internal} == MEMORY_INTERNAL


@pytest.mark.parametrize("mutant", all_mutants(), ids=lambda m: m.id)
def test_each_mutant_applies_at_its_seams_and_undoes_cleanly(mutant: Mutant) -> None:
    """A seam that moved or vanished (a refactoring of the sim, say) fails here, by name."""
    patcher = pytest.MonkeyPatch()
    try:
        mutant.apply(patcher)
    finally:
        patcher.undo()


def _seams() -> list[str]:
    return sorted({seam for m in all_mutants() for seam in m.seams})


@pytest.mark.parametrize("seam", _seams())
def test_each_seam_names_a_public_attribute_where_it_is_defined(seam: str) -> None:
    """A seam is part of the reference's public surface for its self-tests: no part of it is
    private (a leading underscore), the module and every attribute on its path exist, and a
    method is named on the class that defines it (not on one that inherits it), so a seam says
    where the code it patches lives."""
    module_name, _, path = seam.partition(":")
    private = [part for part in (*module_name.split("."), *path.split(".")) if part.startswith("_")]
    assert not private, f"{seam} names private {', '.join(private)}"
    owner: Any = importlib.import_module(module_name)
    *parents, attribute = path.split(".")
    for parent in parents:
        assert hasattr(owner, parent), f"{seam}: {owner.__name__} has no {parent}"
        owner = getattr(owner, parent)
    if isinstance(owner, type):
        assert attribute in vars(owner), (
            f"{seam}: {owner.__name__} does not define {attribute}"
            + "".join(
                f" ({k.__module__}:{k.__qualname__} does)"
                for k in owner.__mro__
                if attribute in vars(k)
            )
        )
    else:
        assert hasattr(owner, attribute), f"{seam}: {owner.__name__} has no {attribute}"


def test_a_private_or_missing_seam_is_caught() -> None:
    """The check above fails for a private name, a missing one and an inherited one."""
    for seam, said in (
        ("solar_conformance.core.rbac:_rule_allows", "names private _rule_allows"),
        ("solar_conformance.core.rbac:no_such_function", "has no no_such_function"),
        (
            "solar_conformance.simulators.reference.controller:CredentialController.mint_token",
            "does not define mint_token",
        ),
    ):
        with pytest.raises(AssertionError, match=said):
            test_each_seam_names_a_public_attribute_where_it_is_defined(seam)


def test_a_seam_that_is_gone_is_named() -> None:
    with pytest.raises(SeamMissing, match=r"core\.rbac:no_such_function"):
        Patch("solar_conformance.core.rbac:no_such_function", lambda original: original).apply(
            pytest.MonkeyPatch()
        )


def test_an_unknown_mutant_is_one_clear_line() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.mutants.plugin",
            "features/",
            "--solar-mutant=no-such-mutant",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "--solar-mutant=no-such-mutant: no such mutant" in done.stderr
    assert "Traceback" not in done.stderr


# (mutant, the scenarios that must kill it): one per kind of blind spot the catalogue aims at.
HANDFUL = {
    "rbac-ignores-serviceaccount-namespace": ("features/credential_scope.feature", "same_name"),
    "controller-role-any-targetreport": ("features/credential_scope.feature", "exactly"),
    "policy-anonymous-read": ("features/registry_isolation.feature", "pull_who"),
    "agent-clock-an-hour-ahead": ("features/check_it_worked.feature", "advances_with_every"),
    "profile-binds-other-namespaces": ("features/create_target.feature", "only_matches"),
    "controller-binds-in-default-namespace": ("features/credential_scope.feature", "own_list"),
    "registry-blobs-unchecked": ("features/registry_isolation.feature", "nothing_in_another"),
    "agent-stops-after-20-reports": ("features/check_it_worked.feature", "advances_with_every"),
    "controller-revokes-case-insensitively": ("features/runbook.feature", "not_revoke"),
    "rules-review-hides-secrets-in-default": ("features/credential_scope.feature", "exactly"),
    "renderer-agent-token-in-configmap": ("features/create_target.feature", "pulls_and_installs"),
    "registry-head-unchecked": ("features/registry_isolation.feature", "nothing_in_another"),
    "agent-empties-report-on-start": ("features/runbook.feature", "rotation_on_request"),
}


def test_a_handful_of_mutants_are_killed_and_the_same_scenarios_pass_without_one() -> None:
    files = sorted({path for path, _ in HANDFUL.values()})
    everything = [*files, "-k", " or ".join(k for _, k in HANDFUL.values())]
    runs: list[tuple[Mutant | None, list[str]]] = [(None, everything)]
    runs += [(find(m), [path, "-k", k]) for m, (path, k) in HANDFUL.items()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda run: run_one(run[0], selection=run[1]), runs))
    baseline, *mutated = outcomes
    assert baseline.verdict == PASSED, f"without a mutant: {baseline.verdict} {baseline.killer}"
    not_killed = [f"{o.name}: {o.verdict} {o.killer}" for o in mutated if o.verdict != KILLED]
    assert not_killed == [], f"mutants the scenarios should kill: {not_killed}"


# --- the conforming half: variants ----------------------------------------------------------------
def test_the_catalogue_holds_at_least_twenty_conforming_variants() -> None:
    variants = [m for m in all_mutants() if m.conforming]
    assert len(variants) >= 20, f"only {len(variants)} conforming variants"
    assert all(m.id.startswith("variant-") for m in variants), "a variant's id says it is one"


@pytest.mark.parametrize("variant", [m for m in all_mutants() if m.profile], ids=lambda m: m.id)
def test_a_variants_profile_is_one_an_installation_could_pass(variant: Mutant) -> None:
    """Known keys of the right types, and none renaming what the page fixes."""
    from solar_conformance.plugin.validation import load_profile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "profile.toml"
        path.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in variant.profile))
        loaded = load_profile(path, "reference")
    for key, value in variant.profile:
        assert getattr(loaded, key) == value, key


def test_a_variant_with_a_profile_refuses_another_one() -> None:
    with_profile = next(m for m in all_mutants() if m.profile)
    with tempfile.TemporaryDirectory() as folder:
        another = Path(folder) / "another.toml"
        another.write_text('implementation_name = "another SolAr"\n')
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "tests.mutants.plugin",
                "features/",
                f"--solar-mutant={with_profile.id}",
                f"--solar-profile={another}",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "runs with its own profile; leave out --solar-profile" in done.stderr


# One variant without a profile and one with: every scenario of the feature files passes them.
WHOLE_SUITE_VARIANTS = ("variant-cluster-role-per-target", "variant-message-names-the-secret-alone")


def test_a_couple_of_variants_pass_every_scenario() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda v: run_one(find(v), timeout=600), WHOLE_SUITE_VARIANTS))
    wrong = [f"{o.name}: {o.verdict} {o.killer}" for o in outcomes if o.verdict != PASSED]
    assert wrong == [], f"false alarms: {wrong}"


def _judged(
    mutant: Mutant | None, returncode: int, failed: list[dict[str, Any]]
) -> tuple[str, str]:
    done = subprocess.CompletedProcess(["pytest"], returncode, "", "")
    return verdict_of(mutant, done, {"failed": failed})


def test_a_kill_by_an_exception_of_the_harness_is_no_kill() -> None:
    mutant = next(m for m in all_mutants() if not m.conforming and not m.equivalent)
    assertion = {
        "scenario": "S",
        "when": "call",
        "exception": "AssertionError",
        "conformance": True,
        "message": "the promise",
    }
    harness = {**assertion, "exception": "KeyError", "conformance": False, "message": "'uid'"}
    assert _judged(mutant, 1, [assertion]) == (KILLED, "S")
    verdict, said = _judged(mutant, 1, [harness])
    assert verdict == CRASHED and "KeyError" in said


def test_a_failing_variant_is_a_false_alarm_with_its_scenario_and_message() -> None:
    variant = next(m for m in all_mutants() if m.conforming)
    failure = {
        "scenario": "S",
        "when": "call",
        "exception": "AssertionError",
        "conformance": True,
        "message": "the promise it says is broken",
    }
    verdict, said = _judged(variant, 1, [failure])
    assert verdict == FALSE_ALARM and said.startswith("S:") and "the promise it says" in said
    assert _judged(variant, 0, []) == (PASSED, "")
