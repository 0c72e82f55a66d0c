"""SolAr's kinds as the harness installs them on a real kube-apiserver: a Target's
`status.bootstrapVersion` is an integer, as in upstream SolAr's API (docs/backends/upstream.md,
row 6), so a renderer that writes anything else is refused as a real SolAr would refuse it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from solar_conformance.backends.local import ControlPlane, missing_control_plane_tools
from solar_conformance.components.crds import apply_crds, solar_crds
from solar_conformance.components.kube import KubeClusterAPI
from solar_conformance.core.api import ApiError, new_object

_MISSING = missing_control_plane_tools()
pytestmark = [
    pytest.mark.local,
    pytest.mark.skipif(
        bool(_MISSING),
        reason=f"control-plane tools not built ({', '.join(p.artifact for p in _MISSING)}); "
        "run: solar-conformance provision tools build",
    ),
]
NAMESPACE = "crds"


@pytest.fixture(scope="module")
def admin() -> Iterator[KubeClusterAPI]:
    with ControlPlane(name="crds") as plane:
        api = KubeClusterAPI(plane.admin_api_client())
        apply_crds(api, solar_crds(), timeout=60)
        api.create(new_object("Namespace", NAMESPACE))
        yield api


def _target_with_status(admin: KubeClusterAPI, name: str, status: dict[str, object]) -> None:
    admin.create(new_object("Target", name, NAMESPACE, spec={"renderRegistryRef": {"name": "r"}}))
    target = admin.get("Target", name, NAMESPACE)
    target["status"] = status
    admin.update_status(target)


def test_an_integer_bootstrap_version_is_stored_as_an_integer(admin: KubeClusterAPI) -> None:
    _target_with_status(admin, "counted", {"bootstrapVersion": 3, "conditions": []})
    assert admin.get("Target", "counted", NAMESPACE)["status"]["bootstrapVersion"] == 3


def test_a_string_bootstrap_version_is_refused(admin: KubeClusterAPI) -> None:
    with pytest.raises(ApiError) as refused:
        _target_with_status(admin, "stringly", {"bootstrapVersion": "0.1.0"})
    assert refused.value.status == 422, refused.value


def test_other_status_fields_stay_open(admin: KubeClusterAPI) -> None:
    _target_with_status(admin, "open", {"bootstrapVersion": 0, "anything": {"a": [1]}})
    assert admin.get("Target", "open", NAMESPACE)["status"]["anything"] == {"a": [1]}
