"""A Release's Flux pair on the target cluster, and what its chart installs, are found by the
keys the bootstrap chart may give the Release (its effective uniqueName before its name), as a
label (shortened beyond 63 characters) or an annotation: the rule the bootstrap chart is read
by (solar_conformance/page/charts.py), in the Target's namespace only. Where that pair's
HelmRelease installed OCIRepositories and HelmReleases (a release chart that wraps a pair), the
Release is installed by those, found by Helm's and helm-controller's marks on what each
HelmRelease installed."""

from __future__ import annotations

from typing import Any, cast

import pytest

from solar_conformance.core.api import Obj, new_object
from solar_conformance.core.contract import Contract
from solar_conformance.core.helm_records import (
    configured_release,
    ownership_annotations,
    ownership_labels,
)
from solar_conformance.core.landscape import Landscape
from solar_conformance.page.charts import keyed_objects, release_label_value
from solar_conformance.page.installed import (
    MAX_NESTING,
    keyed_to_release,
    release_installers,
    release_pair,
)
from solar_conformance.page.reading import NotAsPromised

CONTRACT = Contract()
LABEL = CONTRACT.release_label
NAMESPACE = "test"


def flux_object(kind: str, name: str, namespace: str = NAMESPACE, **keyed: str) -> Obj:
    """`keyed`: label= and/or annotation=, the key under the profile's release label."""
    labels = {LABEL: keyed["label"]} if "label" in keyed else {}
    annotations = {LABEL: keyed["annotation"]} if "annotation" in keyed else {}
    obj = new_object(kind, name, namespace, labels=labels, annotations=annotations)
    obj["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    return obj


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


# --- what the pair's HelmRelease installed, followed down to what installs the Release ----------
def installed_by_release(obj: Obj, owner: Obj, *, marks: str = "both") -> Obj:
    """`obj` marked as installed by the HelmRelease `owner`: by Helm's annotations, by
    helm-controller's labels, or both."""
    meta = obj["metadata"]
    if marks in ("helm", "both"):
        meta["annotations"] = {
            **meta.get("annotations", {}),
            **ownership_annotations(configured_release(owner)),
        }
    if marks in ("flux", "both"):
        meta["labels"] = {**meta.get("labels", {}), **ownership_labels(owner)}
    return obj


def inner_pair(owner: Obj, name: str, namespace: str = NAMESPACE, **spec: Any) -> list[Obj]:
    source = installed_by_release(new_object("OCIRepository", name, namespace), owner)
    inner = installed_by_release(new_object("HelmRelease", name, namespace, spec=spec), owner)
    return [source, inner]


def test_a_pair_that_wraps_nothing_installs_the_release_itself() -> None:
    pair = [
        flux_object("OCIRepository", "r", label="agent"),
        flux_object("HelmRelease", "r", label="agent"),
    ]
    found = release_installers(landscape(pair), NAMESPACE, "agent")
    assert found.pair_complete and found.nested == ()
    assert names(list(found.innermost)) == ["HelmRelease/r"]


@pytest.mark.parametrize("marks", ["helm", "flux", "both"])
def test_the_release_is_installed_by_the_pair_its_release_chart_wraps(marks: str) -> None:
    outer = flux_object("HelmRelease", "outer", label="agent")
    inner = inner_pair(outer, "outer-agent", targetNamespace="apps")
    for obj in inner:
        obj["metadata"]["annotations"] = {}
        obj["metadata"]["labels"] = {}
        installed_by_release(obj, outer, marks=marks)
    decoy = inner_pair(flux_object("HelmRelease", "outer", "elsewhere"), "decoy", "elsewhere")
    on_target = [flux_object("OCIRepository", "outer", label="agent"), outer, *inner, *decoy]
    found = release_installers(landscape(on_target), NAMESPACE, "agent")
    assert names(list(found.nested)) == ["HelmRelease/outer-agent", "OCIRepository/outer-agent"]
    assert names(list(found.innermost)) == ["HelmRelease/outer-agent"]
    assert found.chain(found.innermost[0]) == [
        f"HelmRelease {NAMESPACE}/outer",
        f"HelmRelease {NAMESPACE}/outer-agent",
    ]


def test_a_pair_not_yet_ready_is_not_followed() -> None:
    outer = flux_object("HelmRelease", "outer", label="agent")
    outer["status"] = {"conditions": [{"type": "Ready", "status": "Unknown"}]}
    on_target = [
        flux_object("OCIRepository", "outer", label="agent"),
        outer,
        *inner_pair(outer, "outer-agent"),
    ]
    found = release_installers(landscape(on_target), NAMESPACE, "agent")
    assert found.pair_complete and found.nested == () and found.innermost == ()


def test_nested_pairs_are_followed_into_the_namespace_they_were_installed_in() -> None:
    outer = flux_object("HelmRelease", "outer", label="agent")
    outer["spec"] = {"targetNamespace": "middle"}
    middle = inner_pair(outer, "middle", "middle")
    innermost = inner_pair(middle[1], "app", "middle", targetNamespace="apps")
    on_target = [flux_object("OCIRepository", "outer", label="agent"), outer, *middle, *innermost]
    found = release_installers(landscape(on_target), NAMESPACE, "agent")
    assert [o["metadata"]["name"] for o in found.innermost] == ["app"]
    assert len(found.chain(found.innermost[0])) == 3


def test_helmreleases_nested_deeper_than_the_limit_are_a_verdict() -> None:
    outer = flux_object("HelmRelease", "h0", label="agent")
    on_target = [flux_object("OCIRepository", "h0", label="agent"), outer]
    owner = outer
    for depth in range(1, MAX_NESTING + 2):
        pair = inner_pair(owner, f"h{depth}")
        on_target += pair
        owner = pair[1]
    with pytest.raises(NotAsPromised, match=f"more than {MAX_NESTING} levels deep"):
        release_installers(landscape(on_target), NAMESPACE, "agent")
