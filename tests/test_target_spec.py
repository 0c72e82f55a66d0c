"""What of the Target I wrote the SolAr API server must keep (solar_conformance/steps/you/targets.py,
`lost_fields`): every value I wrote, where an API server may add defaults and leave out an empty
value, as `omitempty` does."""

from __future__ import annotations

from solar_conformance.steps.you.targets import lost_fields

WRITTEN = {"renderRegistryRef": {"name": "render"}, "userdata": {}}


def test_defaults_added_and_an_empty_value_left_out_are_no_loss() -> None:
    stored = {"renderRegistryRef": {"name": "render", "namespace": "test"}, "paused": False}
    assert lost_fields(WRITTEN, stored) == []


def test_a_changed_or_missing_value_is_a_loss() -> None:
    assert lost_fields(WRITTEN, {"renderRegistryRef": {"name": "other"}}) == [
        "spec.renderRegistryRef.name: wrote 'render', stored 'other'"
    ]
    assert lost_fields(WRITTEN, {"userdata": {}}) == [
        "spec.renderRegistryRef: wrote {'name': 'render'}, stored None"
    ]
    assert lost_fields({"userdata": {"site": "a"}}, {"userdata": {}}) == [
        "spec.userdata.site: wrote 'a', stored None"
    ]
