"""Condition transitions follow apimachinery's SetStatusCondition (property-based)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from solar_conformance.core.api import Obj, find_condition
from solar_conformance.core.conditions import set_condition

statuses = st.sampled_from(["True", "False", "Unknown"])
reasons = st.sampled_from(["Issued", "Disabled", "Revoked", "MintFailed"])
updates = st.lists(st.tuples(statuses, reasons, st.text(max_size=10)), min_size=1, max_size=12)


@given(updates)
def test_transition_time_moves_only_when_the_status_changes(
    steps: list[tuple[str, str, str]],
) -> None:
    target: Obj = {"metadata": {"generation": 1}}
    start = datetime(2026, 1, 1, tzinfo=UTC)
    previous: Obj | None = None
    for minute, (status, reason, message) in enumerate(steps):
        changed = set_condition(
            target,
            "AgentCredentialReady",
            status,
            reason,
            message,
            start + timedelta(minutes=minute),
        )
        current = find_condition(target, "AgentCredentialReady")
        assert current is not None
        assert (current["status"], current["reason"], current["message"]) == (
            status,
            reason,
            message,
        )
        if previous is None:
            assert changed
        else:
            same = (previous["status"], previous["reason"], previous["message"]) == (
                status,
                reason,
                message,
            )
            assert changed is not same
            moved = current["lastTransitionTime"] != previous["lastTransitionTime"]
            assert moved is (previous["status"] != status)
        previous = current
    assert len(target["status"]["conditions"]) == 1
