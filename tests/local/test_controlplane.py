"""The local control plane is a real Kubernetes: RBAC, bound tokens, Deployments on kwok."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from kubernetes.client import (
    ApiClient,
    AppsV1Api,
    AuthenticationV1TokenRequest,
    CoreV1Api,
    RbacAuthorizationV1Api,
    RbacV1Subject,
    V1BoundObjectReference,
    V1Container,
    V1Deployment,
    V1DeploymentSpec,
    V1LabelSelector,
    V1Namespace,
    V1ObjectMeta,
    V1PodSpec,
    V1PodTemplateSpec,
    V1PolicyRule,
    V1Role,
    V1RoleBinding,
    V1RoleRef,
    V1Secret,
    V1ServiceAccount,
    V1TokenRequestSpec,
    VersionApi,
)
from kubernetes.client.exceptions import ApiException
from kubernetes.config import new_client_from_config

from solar_conformance.backends.local import (
    ControlPlane,
    ReadinessTimeout,
    missing_control_plane_tools,
)
from solar_conformance.backends.local.components import NODE_NAME
from solar_conformance.components.probes import client_tls_context, http_get
from solar_conformance.components.waiting import Deadline, wait_until
from solar_conformance.provision.toolchain import versions

_MISSING = missing_control_plane_tools()
_MISSING_COMPONENTS = sorted({problem.component.name for problem in _MISSING})

pytestmark = [
    pytest.mark.local,
    pytest.mark.skipif(
        bool(_MISSING),
        reason=(
            f"control-plane tools not built ({', '.join(p.artifact for p in _MISSING)}); run: "
            f"solar-conformance provision tools build --only {' '.join(_MISSING_COMPONENTS)}"
        ),
    ),
]

# The apiserver caches successful token authentications for 10 s.
TOKEN_AUTH_CACHE_SECONDS = 10.0
TOKEN_REJECTION_MARGIN_SECONDS = 10.0
DEPLOYMENT_AVAILABLE_SECONDS = 60.0
TOKEN_LIFETIME_SECONDS = 600


@pytest.fixture(scope="module")
def plane() -> Iterator[ControlPlane]:
    with ControlPlane(name="test") as started:
        yield started


@pytest.fixture(scope="module")
def admin(plane: ControlPlane) -> Iterator[ApiClient]:
    with plane.admin_api_client() as client:
        yield client


def _new_namespace(admin: ApiClient) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    CoreV1Api(admin).create_namespace(V1Namespace(metadata=V1ObjectMeta(name=name)))
    return name


def _status_of(call: Callable[[], Any]) -> int:
    try:
        call()
    except ApiException as error:
        return int(error.status)
    return 200


def _grant_get_on_secret(admin: ApiClient, namespace: str, account: str, secret: str) -> None:
    rbac = RbacAuthorizationV1Api(admin)
    rule = V1PolicyRule(
        api_groups=[""], resources=["secrets"], resource_names=[secret], verbs=["get"]
    )
    rbac.create_namespaced_role(
        namespace, V1Role(metadata=V1ObjectMeta(name="read-own-secret"), rules=[rule])
    )
    rbac.create_namespaced_role_binding(
        namespace,
        V1RoleBinding(
            metadata=V1ObjectMeta(name="read-own-secret"),
            role_ref=V1RoleRef(
                api_group="rbac.authorization.k8s.io", kind="Role", name="read-own-secret"
            ),
            subjects=[RbacV1Subject(kind="ServiceAccount", name=account, namespace=namespace)],
        ),
    )


def _token_bound_to_new_secret(admin: ApiClient, namespace: str) -> tuple[str, str]:
    """A ServiceAccount token bound to a Secret; returns (token, secret name)."""
    core = CoreV1Api(admin)
    account, secret_name = "agent", "agent-token"
    core.create_namespaced_service_account(
        namespace, V1ServiceAccount(metadata=V1ObjectMeta(name=account))
    )
    created = core.create_namespaced_secret(
        namespace, V1Secret(metadata=V1ObjectMeta(name=secret_name), string_data={"note": "x"})
    )
    assert created.metadata is not None
    secret_uid = created.metadata.uid
    _grant_get_on_secret(admin, namespace, account, secret_name)
    request = AuthenticationV1TokenRequest(
        spec=V1TokenRequestSpec(
            audiences=[],
            expiration_seconds=TOKEN_LIFETIME_SECONDS,
            bound_object_ref=V1BoundObjectReference(
                api_version="v1", kind="Secret", name=secret_name, uid=secret_uid
            ),
        )
    )
    response = core.create_namespaced_service_account_token(account, namespace, request)
    assert response.status is not None
    assert response.status.token
    return response.status.token, secret_name


def test_apiserver_is_ready_and_reports_the_pinned_version(plane: ControlPlane) -> None:
    files = plane.directory / "pki"
    tls = client_tls_context(plane.ca_path, files / "admin.crt", files / "admin.key")
    assert http_get(f"{plane.server_url}/readyz", tls) == (200, "ok")
    with plane.admin_api_client() as admin:
        assert VersionApi(admin).get_code().git_version == versions.KUBERNETES
    assert plane.startup is not None
    assert plane.startup.apiserver_ready_seconds <= plane.startup.fully_ready_seconds


def test_bound_token_grants_what_the_role_allows_and_nothing_else(
    plane: ControlPlane, admin: ApiClient
) -> None:
    namespace, other_namespace = _new_namespace(admin), _new_namespace(admin)
    token, secret_name = _token_bound_to_new_secret(admin, namespace)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["kubernetes.io"]["secret"]["name"] == secret_name
    assert claims["exp"] - claims["iat"] == TOKEN_LIFETIME_SECONDS

    with plane.token_api_client(token) as as_agent:
        core = CoreV1Api(as_agent)
        assert _status_of(lambda: core.read_namespaced_secret(secret_name, namespace)) == 200
        assert _status_of(lambda: core.list_namespaced_secret(namespace)) == 403
        assert _status_of(lambda: core.read_namespaced_secret(secret_name, other_namespace)) == 403


def test_token_kubeconfig_authenticates_with_the_token_alone(
    plane: ControlPlane, admin: ApiClient
) -> None:
    namespace = _new_namespace(admin)
    token, secret_name = _token_bound_to_new_secret(admin, namespace)
    kubeconfig = plane.write_token_kubeconfig(token)
    assert "client-certificate" not in kubeconfig.read_text()

    # The kubernetes package's own kubeconfig loader, as an agent process would use it.
    loaded = new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
    with loaded as as_agent:
        core = CoreV1Api(as_agent)
        assert _status_of(lambda: core.read_namespaced_secret(secret_name, namespace)) == 200
        assert _status_of(lambda: core.list_namespaced_secret(namespace)) == 403


def test_deleting_the_bound_secret_rejects_the_token_within_the_auth_cache_ttl(
    plane: ControlPlane, admin: ApiClient
) -> None:
    namespace = _new_namespace(admin)
    token, secret_name = _token_bound_to_new_secret(admin, namespace)
    with plane.token_api_client(token) as as_agent:
        core = CoreV1Api(as_agent)
        assert _status_of(lambda: core.read_namespaced_secret(secret_name, namespace)) == 200

        CoreV1Api(admin).delete_namespaced_secret(secret_name, namespace)
        deleted = time.monotonic()

        def rejected() -> tuple[bool, str]:
            # While the cached authentication lasts: 404 (authorized, Secret gone).
            status = _status_of(lambda: core.read_namespaced_secret(secret_name, namespace))
            return status == 401, f"HTTP {status}"

        wait_until(
            "the token to be rejected after its Secret was deleted",
            rejected,
            Deadline.after(TOKEN_AUTH_CACHE_SECONDS + TOKEN_REJECTION_MARGIN_SECONDS),
            interval=0.5,
        )
    assert time.monotonic() - deleted <= TOKEN_AUTH_CACHE_SECONDS + TOKEN_REJECTION_MARGIN_SECONDS


def test_deployment_becomes_available_on_the_kwok_node(admin: ApiClient) -> None:
    namespace = _new_namespace(admin)
    labels = {"app": "fake"}
    deployment = V1Deployment(
        metadata=V1ObjectMeta(name="fake"),
        spec=V1DeploymentSpec(
            replicas=2,
            selector=V1LabelSelector(match_labels=labels),
            template=V1PodTemplateSpec(
                metadata=V1ObjectMeta(labels=labels),
                # kwok only pretends to run containers: the image is never pulled.
                spec=V1PodSpec(
                    containers=[V1Container(name="fake", image="registry.invalid/fake")]
                ),
            ),
        ),
    )
    apps = AppsV1Api(admin)
    apps.create_namespaced_deployment(namespace, deployment)

    def available() -> tuple[bool, str]:
        status = apps.read_namespaced_deployment_status("fake", namespace).status
        if status is None:
            return False, "no status yet"
        conditions = {c.type: c.status for c in status.conditions or []}
        return conditions.get("Available") == "True" and status.ready_replicas == 2, (
            f"ready replicas {status.ready_replicas}, conditions {conditions}"
        )

    wait_until(
        "Deployment fake to be Available", available, Deadline.after(DEPLOYMENT_AVAILABLE_SECONDS)
    )
    pods = CoreV1Api(admin).list_namespaced_pod(namespace, label_selector="app=fake").items
    placements = {
        (pod.spec and pod.spec.node_name, pod.status and pod.status.phase) for pod in pods
    }
    assert placements == {(NODE_NAME, "Running")}


def _processes_in_groups(groups: set[int]) -> list[int]:
    """Live processes whose process group is one of `groups` (each component leads its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited meanwhile
        # Fields after the command name (which may contain spaces) start at ") ".
        state, _parent, group = stat.rsplit(")", 1)[1].split()[:3]
        if int(group) in groups and state != "Z":
            found.append(int(entry.name))
    return found


def test_a_second_control_plane_runs_alongside_and_stop_leaves_nothing_behind(
    plane: ControlPlane,
) -> None:
    second = ControlPlane(name="second")
    with second:
        assert second.server_url != plane.server_url
        directory = second.directory
        groups = set(second.process_ids.values())
        assert _processes_in_groups(groups)
    assert not directory.exists()
    assert _processes_in_groups(groups) == []
    with plane.admin_api_client() as admin:
        node = CoreV1Api(admin).read_node(NODE_NAME)
    assert node.metadata is not None
    assert node.metadata.name == NODE_NAME


def test_a_failed_start_tears_down_what_it_started() -> None:
    impatient = ControlPlane(name="impatient", startup_timeout=0.5)
    with pytest.raises(ReadinessTimeout, match="not within") as failure:
        impatient.start()
    assert "last seen" in str(failure.value)
    assert not impatient.directory.exists()
    assert _processes_in_groups(set(impatient.process_ids.values())) == []


def test_each_component_runs_in_its_own_process_group(plane: ControlPlane) -> None:
    own_group = os.getpgrp()
    assert all(os.getpgid(pid) == pid != own_group for pid in plane.process_ids.values())
