"""A Release's Flux pair on the target cluster, and what its chart installs, are found by the
keys the bootstrap chart may give the Release (its effective uniqueName before its name), as a
label (shortened beyond 63 characters) or an annotation: the rule the bootstrap chart is read
by (solar_conformance/page/charts.py), in the Target's namespace only."""

from __future__ import annotations

from typing import Any, cast

import pytest

from solar_conformance.core.api import Obj, new_object
from solar_conformance.core.contract import Contract
from solar_conformance.core.landscape import Landscape
from solar_conformance.page.charts import keyed_objects, release_label_value
from solar_conformance.page.installed import keyed_to_release, release_pair

CONTRACT = Contract()
LABEL = CONTRACT.release_label
NAMESPACE = "test"


def flux_object(kind: str, name: str, namespace: str = NAMESPACE, **keyed: str) -> Obj:
    """`keyed`: label= and/or annotation=, the key under the profile's release label."""
    labels = {LABEL: keyed["label"]} if "label" in keyed else {}
    annotations = {LABEL: keyed["annotation"]} if "annotation" in keyed else {}
    return new_object(kind, name, namespace, labels=labels, annotations=annotations)


class _Cluster:
    def __init__(self, objects: list[Obj]) -> None:
        self.objects = objects

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        return next(
            o
            for o in self.objects
            if (o["kind"], o["metadata"]["name"], o["metadata"].get("namespace"))
            == (kind, name, namespace)
        )

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return [
            o
            for o in self.objects
            if o["kind"] == kind and namespace in (None, o["metadata"].get("namespace"))
        ]


class _Landscape:
    contract = CONTRACT

    def __init__(self, release: Obj, on_target: list[Obj]) -> None:
        self.solar = _Cluster([release])
        self.target = _Cluster(on_target)


def landscape(on_target: list[Obj], **spec: Any) -> Landscape:
    status = spec.pop("status", {})
    release = new_object("Release", "agent", NAMESPACE, spec=spec)
    release["status"] = status
    return cast(Landscape, _Landscape(release, on_target))


def names(objects: list[Obj]) -> list[str]:
    return sorted(f"{o['kind']}/{o['metadata']['name']}" for o in objects)


@pytest.mark.parametrize(
    ("spec", "keyed"),
    [
        ({}, {"label": "agent"}),
        ({}, {"annotation": "agent"}),
        ({"uniqueName": "agent-test"}, {"label": "agent-test"}),
        ({"uniqueName": "agent-test"}, {"annotation": "agent-test"}),
        ({"status": {"effectiveUniqueName": "agent-component"}}, {"label": "agent-component"}),
        ({"uniqueName": "u" * 70}, {"label": release_label_value("u" * 70)}),
        ({"uniqueName": "u" * 70}, {"annotation": "u" * 70}),
    ],
    ids=[
        "name as label",
        "name as annotation",
        "uniqueName as label",
        "uniqueName as annotation",
        "status.effectiveUniqueName",
        "long uniqueName, shortened label",
        "long uniqueName as annotation",
    ],
)
def test_the_pair_is_found_by_each_key_as_label_or_annotation(
    spec: dict[str, Any], keyed: dict[str, str]
) -> None:
    pair = [flux_object("OCIRepository", "r", **keyed), flux_object("HelmRelease", "r", **keyed)]
    found = release_pair(landscape(pair, **spec), NAMESPACE, "agent")
    assert names(found) == ["HelmRelease/r", "OCIRepository/r"]


def test_the_unique_name_wins_over_the_name() -> None:
    on_target = [
        flux_object("OCIRepository", "by-name", label="agent"),
        flux_object("HelmRelease", "by-name", label="agent"),
        flux_object("OCIRepository", "by-unique-name", label="agent-test"),
        flux_object("HelmRelease", "by-unique-name", annotation="agent-test"),
    ]
    found = release_pair(landscape(on_target, uniqueName="agent-test"), NAMESPACE, "agent")
    assert names(found) == ["HelmRelease/by-unique-name", "OCIRepository/by-unique-name"]


def test_only_the_targets_namespace_and_only_the_releases_key_count() -> None:
    on_target = [
        flux_object("OCIRepository", "elsewhere", "other", label="agent"),
        flux_object("HelmRelease", "other-release", label="agent-other"),
        flux_object("HelmRelease", "unkeyed"),
        flux_object("HelmRelease", "a-shortened-label-of-another-key", label="agent-tes"),
    ]
    assert release_pair(landscape(on_target, uniqueName="agent-test"), NAMESPACE, "agent") == []


def test_what_the_release_installs_is_found_by_the_same_keys() -> None:
    deployments = [
        flux_object("Deployment", "agent", annotation="agent-test"),
        flux_object("Deployment", "another", label="another"),
    ]
    found = keyed_to_release(
        landscape([], uniqueName="agent-test"), NAMESPACE, "agent", deployments
    )
    assert names(found) == ["Deployment/agent"]


def test_keyed_objects_takes_the_first_key_any_object_carries() -> None:
    objects = [
        flux_object("HelmRelease", "a", label="x"),
        flux_object("HelmRelease", "b", label="y"),
    ]
    assert names(keyed_objects(objects, ("z", "y", "x"), LABEL)) == ["HelmRelease/b"]
    assert keyed_objects(objects, ("z",), LABEL) == []
