"""Broken solar-controller-manager credential controllers (solar_conformance/simulators/reference/controller.py):
the retries of a failed mint, their backoff and their events."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.mutants.model import mutant

CONDITION = "solar_conformance.simulators.reference.credential_condition:CredentialCondition"
TOKEN = "solar_conformance.simulators.reference.agent_token:AgentToken"


# --- retries -------------------------------------------------------------------------------------
@mutant(
    "controller-mint-never-retried",
    "condition-mintfailed",
    "after a failed mint the controller never tries again",
    f"{TOKEN}.mint_failed",
)
def _no_retry(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        original(self, target, current, backoff, message)
        backoff.next_attempt = self.clock.now() + timedelta(days=365)
        return float(self.config.resync_seconds)

    return failed


@mutant(
    "controller-mint-no-backoff",
    "condition-mintfailed-backoff",
    "a failed mint is retried every second, without growing waits",
    f"{TOKEN}.mint_failed",
)
def _hot_loop(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        original(self, target, current, backoff, message)
        backoff.next_attempt = self.clock.now() + timedelta(seconds=1)
        return 1.0

    return failed


@mutant(
    "controller-backoff-uncapped",
    "condition-mintfailed-backoff",
    "the waits between mint attempts double without a cap",
    f"{TOKEN}.mint_failed",
)
def _uncapped(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        original(self, target, current, backoff, message)
        wait = self.contract.mint_backoff_initial_seconds * 2 ** (backoff.failures - 1)
        backoff.next_attempt = self.clock.now() + timedelta(seconds=wait)
        return float(wait)

    return failed


@mutant(
    "controller-backoff-gives-up",
    "condition-mintfailed-backoff",
    "the controller stops retrying a failed mint after five attempts",
    f"{TOKEN}.mint_failed",
)
def _gives_up(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        wait = float(original(self, target, current, backoff, message))
        if backoff.failures >= 5:
            backoff.next_attempt = self.clock.now() + timedelta(days=365)
        return wait

    return failed


@mutant(
    "controller-no-warning-events",
    "condition-mintfailed-backoff",
    "a failed mint records no Warning event on the Target",
    f"{CONDITION}.record_mint_failure",
)
def _no_events(original: Any) -> Any:
    return lambda self, target, attempt, message: None


@mutant(
    "controller-one-backoff-for-all",
    "condition-mintfailed-backoff",
    "one backoff for every Target: a failing Target delays the mints of all others",
    f"{TOKEN}.mint_token",
)
def _shared_backoff(original: Any) -> Any:
    def mint(self: Any, target: Any, names: Any, labels: Any, current: Any, held: Any) -> float:
        shared = self._backoff.get(("*", "*"))
        if shared is not None:
            key = (target["metadata"]["namespace"], target["metadata"]["name"])
            self._backoff[key] = shared
        wait = float(original(self, target, names, labels, current, held))
        key = (target["metadata"]["namespace"], target["metadata"]["name"])
        if key in self._backoff:
            self._backoff[("*", "*")] = self._backoff[key]
        return wait

    return mint
