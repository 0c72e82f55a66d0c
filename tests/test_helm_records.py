"""What helm-controller and Helm record of an install, and which objects a HelmRelease installed
by those records (solar_conformance/core/helm_records.py)."""

from __future__ import annotations

from typing import Any

import pytest

from solar_conformance.core.api import Obj
from solar_conformance.core.helm_records import (
    HelmReleaseRef,
    configured_release,
    installed_by,
    ownership_annotations,
    ownership_labels,
    recorded_release,
    shortened_release_name,
)


def helm_release(name: str = "app", namespace: str = "flux", **spec: Any) -> Obj:
    status = spec.pop("status", {})
    return {
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": status,
    }


def installed(
    labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None
) -> Obj:
    return {
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": labels or {}, "annotations": annotations or {}},
    }


@pytest.mark.parametrize(
    ("spec", "release"),
    [
        ({}, HelmReleaseRef("app", "flux")),
        ({"targetNamespace": "apps"}, HelmReleaseRef("apps-app", "apps")),
        ({"targetNamespace": "apps", "releaseName": "mine"}, HelmReleaseRef("mine", "apps")),
        ({"releaseName": "mine", "storageNamespace": "store"}, HelmReleaseRef("mine", "flux")),
    ],
    ids=["its name", "targetNamespace-name", "releaseName", "storage is not the namespace"],
)
def test_the_release_a_spec_asks_for_is_helm_controllers(
    spec: dict[str, Any], release: HelmReleaseRef
) -> None:
    assert configured_release(helm_release(**spec)) == release


def test_a_release_name_past_53_characters_is_cut_with_a_hash_as_helm_controller_cuts_it() -> None:
    long = "release-name-with-very-long-name-which-is-longer-than-53-characters"
    assert shortened_release_name(long) == "release-name-with-very-long-name-which-i-788ca0d0d7b0"
    assert shortened_release_name("x" * 53) == "x" * 53
    assert configured_release(helm_release("b" * 50, targetNamespace="apps")).name == (
        shortened_release_name(f"apps-{'b' * 50}")
    )


def test_the_recorded_release_is_the_newest_entry_of_the_history() -> None:
    history = [
        {"name": "old", "namespace": "before", "version": 1},
        {"name": "apps-app", "namespace": "apps", "version": 3},
        {"name": "older", "namespace": "before", "version": 2},
    ]
    found = helm_release(targetNamespace="other", status={"history": history})
    assert recorded_release(found) == HelmReleaseRef("apps-app", "apps")


def test_before_its_first_install_the_recorded_release_is_the_one_the_spec_asks_for() -> None:
    assert recorded_release(helm_release(targetNamespace="apps")) == HelmReleaseRef(
        "apps-app", "apps"
    )
    without_names = helm_release(status={"history": [{"chartName": "c", "version": 1}]})
    assert recorded_release(without_names) == HelmReleaseRef("app", "flux")


def test_what_a_helmrelease_installed_carries_helms_annotations_or_flux_labels() -> None:
    owner = helm_release(targetNamespace="apps")
    by_helm = installed(annotations=ownership_annotations(configured_release(owner)))
    by_flux = installed(ownership_labels(owner))
    assert installed_by(owner, by_helm)
    assert installed_by(owner, by_flux)
    assert ownership_labels(owner)["app.kubernetes.io/managed-by"] == "Helm"


@pytest.mark.parametrize(
    "obj",
    [
        installed(),
        installed(annotations=ownership_annotations(HelmReleaseRef("apps-app", "flux"))),
        installed(annotations=ownership_annotations(HelmReleaseRef("app", "apps"))),
        installed({"helm.toolkit.fluxcd.io/name": "app"}),
        installed({"helm.toolkit.fluxcd.io/name": "app", "helm.toolkit.fluxcd.io/namespace": "x"}),
    ],
    ids=["unmarked", "release of that name elsewhere", "another release", "name only", "elsewhere"],
)
def test_what_another_release_or_nobody_installed_is_not_the_helmreleases(obj: Obj) -> None:
    assert not installed_by(helm_release(targetNamespace="apps"), obj)
