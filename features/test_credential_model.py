"""The credential lifecycle as a stateful model (solar_conformance/model/): sequences of the operator's,
the runbook's and the environment's actions, drawn from one fixed seed (the same every run), with
the page's promises checked after every step. 200 examples on sim; a few short ones on a real
backend (nightly). With `-s` the run prints how often each rule ran and each state was checked."""

from __future__ import annotations

import pytest

from solar_conformance.core.capabilities import Capability
from solar_conformance.core.contract import Contract
from solar_conformance.core.landscape import Landscape
from solar_conformance.model.run import (
    REAL_BUDGET,
    SIM_BUDGET,
    Figures,
    run,
    shared_starter,
    sim_starter,
)
from solar_conformance.plugin.options import TIMEOUT_KINDS

# The table is the page's; un-revoking and rotation on request are the runbook's (defined here).
pytestmark = [
    getattr(pytest.mark, "defined-here"),
    pytest.mark.fault,
    # It unsets controller.agent.apiserverURL and cuts the agents' link: on a shared landscape,
    # with the landscape alone (solar_conformance/plugin/concurrent.py).
    pytest.mark.landscape_alone,
    # What its actions do; where the landscape lacks one, it is skipped at collection.
    *(
        getattr(pytest.mark, capability.tag)
        for capability in (
            Capability.CONFIGURE_APISERVER_URL,
            Capability.DENY_TOKEN_REQUESTS,
            Capability.CUT_AGENT_LINK,
        )
    ),
]


def test_the_credential_lifecycle_keeps_the_pages_promises_in_any_order(
    pytestconfig: pytest.Config,
    contract: Contract,
    held_landscape: Landscape | None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    timeouts = {kind: float(pytestconfig.getini(f"solar_timeout_{kind}")) for kind in TIMEOUT_KINDS}
    backend = pytestconfig.getoption("--solar-env")
    figures = Figures()
    if held_landscape is None:
        run(sim_starter(contract, timeouts, figures), SIM_BUDGET, figures)
    else:
        run(shared_starter(held_landscape, timeouts, figures), REAL_BUDGET, figures)
    with capsys.disabled():
        print(f"\n{figures.line(backend)}")
        if pytestconfig.getoption("capture") == "no":
            print(figures.table())
