"""The credential model can fail: broken SolAr components and a broken sim API server each make
it fail, with a message that says which promise broke; the reference passes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import Phase

from core.contract import Contract
from fixtures.model.run import Budget, Figures, run, sim_starter
from fixtures.plugin.options import TIMEOUT_KINDS
from fixtures.plugin.waiting import WaitTimeout
from simulators.memory import cluster
from simulators.reference.controller import CredentialController
from simulators.reference.solar import ReferenceSolar

# derandomize: the same draws every run, so whether a fault is found never depends on luck
BUDGET = Budget(examples=60, steps=8, advances=(5.0, 11.0, 120.0, 490.0, 610.0))
TIMEOUTS = dict.fromkeys(TIMEOUT_KINDS, 10.0) | {"reconcile": 60.0}
Patch = Callable[[pytest.MonkeyPatch], None]


def keeps_the_secret_on_revoke(monkeypatch: pytest.MonkeyPatch) -> None:
    reconcile = CredentialController.reconcile
    delete = CredentialController._delete_secrets
    revoking = [False]

    def noting(self: CredentialController, target: dict[str, Any]) -> float:
        notes = target["metadata"].get("annotations") or {}
        revoking[0] = notes.get(self.contract.revocation_annotation) == self.contract.revoked_value
        return reconcile(self, target)

    def forgetful(self: CredentialController, secrets_: list[dict[str, Any]]) -> None:
        if not revoking[0]:
            delete(self, secrets_)

    monkeypatch.setattr(CredentialController, "reconcile", noting)
    monkeypatch.setattr(CredentialController, "_delete_secrets", forgetful)


def caches_tokens_forever(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster, "AUTH_CACHE_TTL", timedelta(days=1))


def ignores_the_unset_url(monkeypatch: pytest.MonkeyPatch) -> None:
    def only_the_renderer(self: ReferenceSolar, url: str | None) -> None:
        self.renderer.config.apiserver_url = url
        self.wake()

    monkeypatch.setattr(ReferenceSolar, "configure_apiserver_url", only_the_renderer)


def grants_every_target(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = CredentialController.agent_rules

    def broken(target: str) -> list[dict[str, object]]:
        granted = rules(target)
        granted[0].pop("resourceNames")
        return granted

    monkeypatch.setattr(CredentialController, "agent_rules", staticmethod(broken))


FAULTS: dict[str, tuple[Patch, str]] = {
    "the controller keeps the token Secret of a revoked Target": (
        keeps_the_secret_on_revoke,
        "a token Secret exactly when Issued",
    ),
    "the API server accepts a token long after its Secret went": (
        caches_tokens_forever,
        "is refused after the authentication cache window",
    ),
    "the controller ignores an unset apiserverURL": (
        ignores_the_unset_url,
        "AgentCredentialReady as the page's table says",
    ),
    "the Role lets an agent read every Target of its namespace": (
        grants_every_target,
        "may read the Target of",
    ),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_the_model_catches(monkeypatch: pytest.MonkeyPatch, fault: str) -> None:
    patch, promise = FAULTS[fault]
    patch(monkeypatch)
    with pytest.raises((AssertionError, WaitTimeout)) as caught:
        # Finding the fault is what counts here; the test below shows the shrinking.
        run(
            sim_starter(Contract(), TIMEOUTS, Figures()),
            BUDGET,
            Figures(),
            phases=[Phase.generate],
            derandomize=True,
        )
    assert promise in str(caught.value)


def test_a_failure_shrinks_to_a_short_readable_sequence(monkeypatch: pytest.MonkeyPatch) -> None:
    keeps_the_secret_on_revoke(monkeypatch)
    with pytest.raises(WaitTimeout) as caught:
        run(sim_starter(Contract(), TIMEOUTS, Figures()), BUDGET, Figures(), derandomize=True)
    steps = [
        line.strip()
        for line in getattr(caught.value, "__notes__", [])
        for line in str(line).splitlines()
        if line.strip().startswith("state.") and "the_page_holds" not in line
    ]
    assert any(step.startswith("state.revoke(") for step in steps), steps
    # create, revoke, teardown; on a loaded machine Hypothesis's shrink budget may leave one
    # harmless step more (seen: a cut link before the Target exists), never a long sequence
    assert len(steps) <= 4, steps


def test_the_model_passes_on_the_reference() -> None:
    figures = Figures()
    run(sim_starter(Contract(), TIMEOUTS, figures), BUDGET, figures)
    assert figures.examples == BUDGET.examples
    assert len(figures.states) > 10, figures.line("sim")
