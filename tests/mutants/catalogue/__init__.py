"""The catalogue: every mutant, by id, with the scenarios expected to kill it, and every conforming
variant, which every scenario must pass (docs/mutants.md)."""

from __future__ import annotations

from dataclasses import replace

from tests.mutants.catalogue import (
    access,
    agent,
    apiserver,
    credential,
    hunt_controller,
    hunt_credential,
    hunt_delivery,
    hunt_passes_delivery,
    mint,
    profiles,
    registry,
    renderer,
    variants_access,
    variants_condition,
    variants_delivery,
    variants_release_chart,
    variants_writes,
)
from tests.mutants.catalogue.killers import KILLERS
from tests.mutants.model import CATALOGUE, Mutant

del (
    access,
    agent,
    apiserver,
    credential,
    hunt_controller,
    hunt_credential,
    hunt_delivery,
    hunt_passes_delivery,
    mint,
    profiles,
    registry,
    renderer,
    variants_access,
    variants_condition,
    variants_delivery,
    variants_release_chart,
    variants_writes,
)  # imported to register their mutants


def all_mutants() -> list[Mutant]:
    return [replace(m, killers=KILLERS.get(m.id, ())) for m in CATALOGUE]


def find(mutant_id: str) -> Mutant:
    for found in all_mutants():
        if found.id == mutant_id:
            return found
    raise KeyError(mutant_id)
