"""The reference controller beside another writer of the Target's status (solar-renderer records
BootstrapReady there): on a real API server their writes race, and the loser gets 409 Conflict.
A rotation whose Issued report lost that race must still be one rotation: exactly one
TokenRequest per new token, and the old token's Secret deleted."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from solar_conformance.core.api import ApiError, ClusterAPI, Obj, find_condition, new_object
from solar_conformance.core.clock import SkewedClock, VirtualClock
from solar_conformance.core.contract import Contract
from solar_conformance.simulators.memory.cluster import InMemoryCluster
from solar_conformance.simulators.reference.controller import ControllerConfig, CredentialController

NAMESPACE = "test"
TARGET = "cluster-1"


class RacingWriter:
    """The controller's client; while `armed`, another component writes the Target's status
    between the controller's read and its write, so the controller's write is refused."""

    def __init__(self, inner: ClusterAPI, other: ClusterAPI) -> None:
        self._inner = inner
        self._other = other
        self.armed = 0
        self.conflicts = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def update_status(self, obj: Obj) -> Obj:
        if self.armed and obj["kind"] == "Target":
            self.armed -= 1
            meta = obj["metadata"]
            fresh = self._other.get("Target", meta["name"], meta["namespace"])
            fresh.setdefault("status", {})["bootstrapVersion"] = (
                fresh["status"].get("bootstrapVersion", 0) + 1
            )
            self._other.update_status(fresh)
            self.conflicts += 1
        return self._inner.update_status(obj)


def _controller(races: int) -> tuple[CredentialController, RacingWriter, SkewedClock, ClusterAPI]:
    clock = VirtualClock()
    cluster = InMemoryCluster("solar", clock)
    admin = cluster.admin()
    admin.create(new_object("Namespace", NAMESPACE))
    admin.create(new_object("Target", TARGET, NAMESPACE, spec={"userdata": {}}))
    client = RacingWriter(cluster.admin("solar-controller-manager"), cluster.admin("renderer"))
    controller_clock = SkewedClock(clock)
    controller = CredentialController(
        client,  # a ClusterAPI by delegation
        controller_clock,
        Contract(),
        ControllerConfig(apiserver_url="https://solar-api.invalid:6443"),
        log=lambda _line: None,
    )
    controller.reconcile_all()
    client.armed = races
    return controller, client, controller_clock, admin


def _token_secrets(admin: ClusterAPI, contract: Contract) -> list[str]:
    secrets = admin.list("Secret", NAMESPACE, labels=contract.credential_labels(TARGET))
    return sorted(s["metadata"]["name"] for s in secrets)


def _only_token_secret(admin: ClusterAPI, contract: Contract) -> str:
    held = _token_secrets(admin, contract)
    assert len(held) == 1, f"token Secrets of {TARGET}: {held} (the old one not deleted)"
    return held[0]


def _skew(controller_clock: SkewedClock, admin: ClusterAPI, contract: Contract) -> None:
    controller_clock.offset = timedelta(seconds=contract.token_lifetime_seconds * 0.8 + 1)


def _request(controller_clock: SkewedClock, admin: ClusterAPI, contract: Contract) -> None:
    notes = {contract.rotation_annotation: "1"}
    admin.patch("Target", TARGET, NAMESPACE, {"metadata": {"annotations": notes}})


ROTATIONS = {"a clock that runs ahead": _skew, "a rotation request": _request}


@pytest.mark.parametrize("rotation", ROTATIONS)
def test_a_rotation_whose_report_lost_a_race_reports_it_in_the_same_pass(rotation: str) -> None:
    controller, client, controller_clock, admin = _controller(races=1)
    contract = controller.contract
    first = _only_token_secret(admin, contract)
    ROTATIONS[rotation](controller_clock, admin, contract)
    controller.reconcile_all()

    assert client.conflicts == 1, "the race was not run"
    minted = [ok for _, _, ok in controller.mint_attempts]
    assert minted == [True, True], f"TokenRequests (first token, then rotation): {minted}"
    second = _only_token_secret(admin, contract)
    assert second != first
    condition = find_condition(admin.get("Target", TARGET, NAMESPACE), contract.condition_type)
    assert condition is not None and second in str(condition.get("message"))


@pytest.mark.parametrize("rotation", ROTATIONS)
def test_a_report_that_keeps_losing_is_given_up_until_the_next_pass(rotation: str) -> None:
    """Never a loop of writes in one pass: a Target that another writer changes without pause
    is reported on a later pass, and still no second token is minted meanwhile."""
    controller, client, controller_clock, admin = _controller(races=100)
    contract = controller.contract
    ROTATIONS[rotation](controller_clock, admin, contract)
    controller.reconcile_all()
    assert client.conflicts < 100, "one pass kept writing"
    client.armed = 0
    for _ in range(3):
        controller.reconcile_all()

    minted = [ok for _, _, ok in controller.mint_attempts]
    assert minted == [True, True], f"TokenRequests (first token, then rotation): {minted}"
    second = _only_token_secret(admin, contract)
    condition = find_condition(admin.get("Target", TARGET, NAMESPACE), contract.condition_type)
    assert condition is not None and second in str(condition.get("message"))


def test_a_deleted_target_is_forgotten_and_a_new_one_of_its_name_starts_afresh() -> None:
    controller, _client, _clock, admin = _controller(races=0)
    first = _only_token_secret(admin, Contract())
    admin.delete("Target", TARGET, NAMESPACE)
    controller.reconcile_all()
    assert controller.remembered() == set(), "the controller still holds state of a gone Target"
    admin.create(new_object("Target", TARGET, NAMESPACE, spec={"userdata": {}}))
    controller.reconcile_all()
    target = admin.get("Target", TARGET, NAMESPACE)
    condition = find_condition(target, Contract().condition_type) or {}
    assert condition.get("status") == "True", f"the new Target's condition: {condition}"
    assert first not in str(condition.get("message")), "the new Target names the old Secret"


def test_a_target_made_again_between_two_passes_does_not_wait_out_the_old_backoff(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    controller, client, _clock, admin = _controller(races=0)
    admin.delete("Target", TARGET, NAMESPACE)
    admin.create(new_object("Target", TARGET, NAMESPACE, spec={"userdata": {}}))

    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise ApiError(403, "Forbidden", "token requests are refused here")

    with monkeypatch.context() as refusing:
        refusing.setattr(client, "create_token", refused)
        controller.reconcile_all()  # a failed mint: the next attempt waits out the backoff
    admin.delete("Target", TARGET, NAMESPACE)
    admin.create(new_object("Target", TARGET, NAMESPACE, spec={"userdata": {}}))
    controller.reconcile_all()  # no time has passed: only another Target may mint now
    target = admin.get("Target", TARGET, NAMESPACE)
    condition = find_condition(target, Contract().condition_type) or {}
    assert condition.get("status") == "True", f"the new Target's condition: {condition}"
