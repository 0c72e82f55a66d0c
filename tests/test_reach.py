"""What of one scenario a target cluster holds (solar_conformance/page/reach.py): every kind and
every place counts, tied to the scenario by its tag; what the harness created there does not."""

from __future__ import annotations

import pytest

from solar_conformance.core.api import Obj, new_object
from solar_conformance.page.reach import scenario_traces
from solar_conformance.plugin.names import Names

NAMES = Names("ab12c")
OTHER = Names("9f0e1")


def traces(
    objects: list[Obj], created: set[tuple[str, str | None, str]] | None = None
) -> list[str]:
    return [str(t) for t in scenario_traces(objects, NAMES.named_in, created or set())]


@pytest.mark.parametrize(
    "text",
    ["test-ab12c", "test-ab12c/cluster-1", "test-ab12c-shadow", "bootstrap.test-ab12c.v1"],
)
def test_a_text_that_carries_the_scenarios_tag_names_it(text: str) -> None:
    assert NAMES.named_in(text)


@pytest.mark.parametrize(
    "text", ["", "ab12c", "test-ab12cd", "test-9f0e1", "cluster-1", "test-xab12c", "-ab12c"]
)
def test_a_text_without_the_tag_names_it_not(text: str) -> None:
    assert not NAMES.named_in(text)


def test_every_kind_in_the_scenarios_namespace_counts() -> None:
    found = traces(
        [
            new_object("ConfigMap", "anything", "test-ab12c"),
            new_object("Secret", "regcred", "test-ab12c"),
            new_object("ServiceAccount", "agent", "test-ab12c"),
            {
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": "w", "namespace": "test-ab12c"},
            },
        ]
    )
    assert len(found) == 4, found
    assert all("in the scenario's namespace" in f for f in found), found


def test_objects_elsewhere_count_where_their_name_labels_or_annotations_name_the_scenario() -> None:
    found = traces(
        [
            new_object("Namespace", "test-ab12c"),
            new_object("ClusterRole", "solar-test-ab12c-cluster-1"),
            new_object(
                "ConfigMap", "solar", "default", labels={"solar/target-namespace": "test-ab12c"}
            ),
            new_object(
                "Secret", "s", "kube-system", annotations={"solar/target": "test-ab12c/cluster-1"}
            ),
        ]
    )
    assert found == [
        "ClusterRole solar-test-ab12c-cluster-1 (its name)",
        "ConfigMap default/solar (its label solar/target-namespace)",
        "Namespace test-ab12c (its name)",
        "Secret kube-system/s (its annotation solar/target)",
    ]


def test_objects_of_other_scenarios_and_of_the_cluster_itself_do_not_count() -> None:
    assert (
        traces(
            [
                new_object("Namespace", "test-9f0e1"),
                new_object(
                    "ConfigMap", "solar", "test-9f0e1", annotations={"t": "test-9f0e1/cluster-1"}
                ),
                new_object("Namespace", "kube-system"),
                new_object("ConfigMap", "kube-root-ca.crt", "default"),
                new_object("ClusterRole", "cluster-1"),  # a Target's name alone is every scenario's
            ]
        )
        == []
    )


def test_what_the_harness_created_there_does_not_count_by_its_record() -> None:
    namespace = new_object("Namespace", "test-ab12c")
    regcred = new_object("Secret", "regcred", "test-ab12c")
    other = new_object("Secret", "regcred-2", "test-ab12c")
    created = {("Namespace", None, "test-ab12c"), ("Secret", "test-ab12c", "regcred")}
    assert traces([namespace, regcred, other], created) == [
        "Secret test-ab12c/regcred-2 (in the scenario's namespace)"
    ]
