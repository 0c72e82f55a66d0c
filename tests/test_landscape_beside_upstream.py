"""A landscape file says which SolAr serves Targets and where TargetReport is served, so workers
attach to a landscape whose SolAr is upstream's (Targets through its APIService, TargetReport at
the reference's own version) as they do to the reference's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from solar_conformance.backends.existing.landscape import (
    TARGET_APISERVICE,
    TARGET_CRD,
    serves_targets,
)
from solar_conformance.backends.existing.landscape_file import BadLandscapeFile, load
from solar_conformance.core.api import ApiError
from tests.test_existing_landscape import _landscape


def test_targets_and_targetreport_reach_the_file_and_back(tmp_path: Path) -> None:
    loaded = load(
        _landscape(
            tmp_path, solar__targets="apiservice", solar__targetreport_version="v1alpha1-reference"
        )
    )
    assert (loaded.targets, loaded.targetreport_version) == ("apiservice", "v1alpha1-reference")
    default = load(_landscape(tmp_path))
    assert (default.targets, default.targetreport_version) == ("crd", "v1alpha1")


def test_an_unknown_way_of_serving_targets_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadLandscapeFile, match=r"solar\.targets"):
        load(_landscape(tmp_path, solar__targets="magic"))


class _Solar:
    server = "https://solar.example:6443"

    def __init__(self, objects: dict[tuple[str, str], dict[str, Any]]) -> None:
        self.objects = objects

    def get(self, kind: str, name: str) -> dict[str, Any]:
        if (kind, name) not in self.objects:
            raise ApiError(404, "NotFound", f"{kind} {name}")
        return self.objects[kind, name]


def _apiservice(status: str, message: str = "") -> dict[str, Any]:
    condition = {"type": "Available", "status": status, "message": message}
    return {"status": {"conditions": [condition]}}


def test_targets_are_found_where_the_file_says() -> None:
    crd: dict[tuple[str, str], dict[str, Any]] = {("CustomResourceDefinition", TARGET_CRD): {}}
    serves_targets(_Solar(crd), "crd")  # type: ignore[arg-type]
    with pytest.raises(BadLandscapeFile, match=f"APIService {TARGET_APISERVICE}: 404"):
        serves_targets(_Solar(crd), "apiservice")  # type: ignore[arg-type]
    upstream = {("APIService", TARGET_APISERVICE): _apiservice("True")}
    serves_targets(_Solar(upstream), "apiservice")  # type: ignore[arg-type]
    with pytest.raises(BadLandscapeFile, match=f"CustomResourceDefinition {TARGET_CRD}: 404"):
        serves_targets(_Solar(upstream), "crd")  # type: ignore[arg-type]


def test_an_apiservice_that_is_not_available_serves_no_targets() -> None:
    down = {("APIService", TARGET_APISERVICE): _apiservice("False", "endpoints not ready")}
    with pytest.raises(BadLandscapeFile, match=r"not Available \(endpoints not ready\)"):
        serves_targets(_Solar(down), "apiservice")  # type: ignore[arg-type]
