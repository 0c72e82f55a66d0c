"""The credential lifecycle as a stateful model (fixtures/model/): random sequences of the
operator's, the runbook's and the environment's actions, with the page's promises checked after
every step. 200 examples on sim; a few short ones on a real backend (nightly)."""

from __future__ import annotations

import pytest

from core.contract import Contract
from core.landscape import Landscape
from fixtures.model.run import REAL_BUDGET, SIM_BUDGET, Figures, run, shared_starter, sim_starter
from fixtures.plugin.landscapes import holding
from fixtures.plugin.options import TIMEOUT_KINDS

# The table is the page's; un-revoking and rotation on request are the runbook's (defined here).
pytestmark = [
    getattr(pytest.mark, "defined-here"),
    pytest.mark.fault,
]


def test_the_credential_lifecycle_keeps_the_pages_promises_in_any_order(
    pytestconfig: pytest.Config,
    contract: Contract,
    shared_landscape: Landscape | None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    timeouts = {kind: float(pytestconfig.getini(f"solar_timeout_{kind}")) for kind in TIMEOUT_KINDS}
    backend = pytestconfig.getoption("--solar-env")
    if pytestconfig.getoption("--solar-impl") != "reference":
        pytest.skip(
            "the model unsets and sets controller.agent.apiserverURL, which only the reference "
            "SolAr lets the harness do: run it with --solar-impl=reference"
        )
    figures = Figures()
    if shared_landscape is None:
        run(sim_starter(contract, timeouts, figures), SIM_BUDGET, figures)
    else:
        with holding(shared_landscape):  # it unsets controller.agent.apiserverURL: alone then
            run(shared_starter(shared_landscape, timeouts, figures), REAL_BUDGET, figures)
    with capsys.disabled():
        print(f"\n{figures.line(backend)}")
