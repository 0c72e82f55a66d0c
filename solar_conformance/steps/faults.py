"""Fault injection steps: each one registers its own undo with the scenario's cleanup."""

from __future__ import annotations

from contextlib import ExitStack

import pytest
from pytest_bdd import given, parsers, when

from solar_conformance.core.capabilities import Capability, needs
from solar_conformance.core.landscape import Landscape, Undo
from solar_conformance.plugin.actors import You
from solar_conformance.plugin.names import Names


class ActiveFaults(dict[str, Undo]):
    """Faults in force, by name, so a later step can lift one."""


def _inject(cleanup: ExitStack, faults: ActiveFaults, name: str, undo: Undo) -> None:
    faults[name] = undo
    cleanup.callback(lambda: faults.pop(name, lambda: None)())


@pytest.fixture
def active_faults() -> ActiveFaults:
    return ActiveFaults()


@given(
    parsers.parse(
        'the SolAr API server denies token requests in namespace "{namespace}" with "{message}"'
    )
)
@needs(Capability.DENY_TOKEN_REQUESTS)
def deny_tokens(
    landscape: Landscape,
    names: Names,
    cleanup: ExitStack,
    active_faults: ActiveFaults,
    namespace: str,
    message: str,
) -> None:
    undo = landscape.faults.deny_token_requests(names.namespace(namespace), message)
    _inject(cleanup, active_faults, "deny-tokens", undo)


@when(
    parsers.parse(
        'the SolAr API server\'s denial of token requests in namespace "{namespace}" changes to '
        '"{message}"'
    )
)
@needs(Capability.CHANGE_DENIAL)
def change_denial(
    landscape: Landscape, names: Names, active_faults: ActiveFaults, namespace: str, message: str
) -> None:
    """The denial in force says something else from now on, changed in place: there is no moment
    without it (a retry then would mint)."""
    assert "deny-tokens" in active_faults, "no denial of token requests is in force"
    landscape.faults.deny_token_requests(names.namespace(namespace), message)


@given("the SolAr API server accepts token requests again")
@when("the SolAr API server accepts token requests again")
def accept_tokens(active_faults: ActiveFaults) -> None:
    assert "deny-tokens" in active_faults, "no denial of token requests is in force"
    active_faults.pop("deny-tokens")()


@given("the agent pods of the target cluster cannot reach the SolAr API server")
@needs(Capability.CUT_AGENT_LINK)
def cut_solar_api(landscape: Landscape, cleanup: ExitStack, active_faults: ActiveFaults) -> None:
    undo = landscape.faults.cut_solar_api_from_target()
    _inject(cleanup, active_faults, "cut-solar-api", undo)


@given("the clock of solar-controller-manager has passed the age at which a token is rotated")
@when("the clock of solar-controller-manager passes the age at which a token is rotated")
@needs(Capability.SKEW_CONTROLLER_CLOCK)
def skew_controller_clock(
    landscape: Landscape, you: You, cleanup: ExitStack, active_faults: ActiveFaults
) -> None:
    """The profile's rotate_after_fraction of its token lifetime, and a second."""
    contract = landscape.contract
    seconds = contract.token_lifetime_seconds * contract.rotate_after_fraction + 1
    undo = landscape.faults.skew_controller_clock(seconds)
    _inject(cleanup, active_faults, "skew-controller-clock", undo)
