"""solar_conformance/core/baseline.py is what a real kube-apiserver lets an unbound ServiceAccount do, and the scope
check's requests and the audit log work against it as they do on the sim."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jwt
import pytest

from solar_conformance.backends.local import ControlPlane, missing_control_plane_tools
from solar_conformance.components.audit import AuditLog
from solar_conformance.components.kube import KubeClusterAPI, token_api_client
from solar_conformance.components.waiting import Deadline, wait_until
from solar_conformance.core.api import ApiError, new_object
from solar_conformance.core.baseline import BASELINE_GRANTS, BASELINE_PATHS, BOOTSTRAP_CLUSTER_ROLES
from solar_conformance.page.scope import Landmarks, compare, plan

_MISSING = missing_control_plane_tools()
pytestmark = [
    pytest.mark.local,
    pytest.mark.skipif(
        bool(_MISSING),
        reason=f"control-plane tools not built ({', '.join(p.artifact for p in _MISSING)}); "
        "run: solar-conformance provision tools build",
    ),
]
NAMESPACE, OTHER = "lonely", "elsewhere"


@pytest.fixture(scope="module")
def plane() -> Iterator[ControlPlane]:
    with ControlPlane(name="baseline") as started:
        yield started


@pytest.fixture(scope="module")
def admin(plane: ControlPlane) -> KubeClusterAPI:
    api = KubeClusterAPI(plane.admin_api_client())
    for namespace in (NAMESPACE, OTHER):
        api.create(new_object("Namespace", namespace))
    api.create(new_object("ServiceAccount", "unbound", NAMESPACE))
    return api


@pytest.fixture(scope="module")
def token(admin: KubeClusterAPI) -> str:
    return admin.create_token(NAMESPACE, "unbound", expiration_seconds=3600).token


@pytest.fixture(scope="module")
def unbound(plane: ControlPlane, token: str) -> KubeClusterAPI:
    client = token_api_client(plane.server_url, token, plane.ca_pem.decode(), plane.directory)
    return KubeClusterAPI(client)


@pytest.mark.parametrize("namespace", [NAMESPACE, OTHER, "kube-system"])
def test_an_unbound_service_account_may_do_exactly_the_baseline(
    unbound: KubeClusterAPI, namespace: str
) -> None:
    review = unbound.review_rules(namespace)
    assert not review.incomplete, review.evaluation_error
    assert review.resources == BASELINE_GRANTS
    assert review.paths == BASELINE_PATHS


def test_the_bootstrap_roles_are_what_the_sim_installs(admin: KubeClusterAPI) -> None:
    for name, (rules, groups) in BOOTSTRAP_CLUSTER_ROLES.items():
        role = admin.get("ClusterRole", name)
        assert _normalized(role["rules"]) == _normalized(rules), name
        binding = admin.get("ClusterRoleBinding", name)
        assert binding["roleRef"]["name"] == name
        assert sorted(s["name"] for s in binding["subjects"]) == sorted(groups), name


def _normalized(rules: list[Any]) -> list[dict[str, list[str]]]:
    return sorted(
        ({k: sorted(v) for k, v in rule.items() if isinstance(v, list)} for rule in rules),
        key=repr,
    )


def test_trying_every_verb_everywhere_allows_only_the_baseline(unbound: KubeClusterAPI) -> None:
    marks = Landmarks(
        NAMESPACE,
        "cluster-1",
        ("cluster-2",),
        OTHER,
        ("cluster-3",),
        elsewhere=("default", "kube-system"),
    )
    probes = plan(unbound.discover(), marks)
    seen = compare(probes, unbound.attempt([p.request for p in probes]), marks, [])
    allowed = sorted(
        {(s.probe.request.verb, s.probe.request.resource.name) for s in seen if s.allowed}
    )
    assert allowed == [
        ("create", "selfsubjectaccessreviews.authorization.k8s.io"),
        ("create", "selfsubjectreviews.authentication.k8s.io"),
        ("create", "selfsubjectrulesreviews.authorization.k8s.io"),
    ]
    assert [s.describe() for s in seen if s.differs] == []
    assert len(seen) > 1000, "discovery found too little to try"


def test_a_token_for_another_audience_is_not_authenticated(
    plane: ControlPlane, admin: KubeClusterAPI
) -> None:
    """kube-apiserver accepts a token only for one of its --api-audiences (by default its
    issuer), as the sim does: the same account's token for its own audience is authenticated."""
    answers = {}
    for audiences in ((), ("solar-agent",)):
        token = admin.create_token(
            NAMESPACE, "unbound", expiration_seconds=3600, audiences=audiences
        ).token
        client = token_api_client(plane.server_url, token, plane.ca_pem.decode(), plane.directory)
        with pytest.raises(ApiError) as refused:
            KubeClusterAPI(client).get("ServiceAccount", "unbound", NAMESPACE)
        answers[audiences] = refused.value.status
    assert answers == {(): 403, ("solar-agent",): 401}


def test_the_audit_log_names_the_token_that_was_used(
    plane: ControlPlane, admin: KubeClusterAPI, unbound: KubeClusterAPI, token: str
) -> None:
    """kube-apiserver 1.34 records a ServiceAccount token's jti as the credential id."""
    admin.create(
        new_object(
            "Role",
            "mint-own",
            NAMESPACE,
            rules=[
                {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]}
            ],
        )
    )
    admin.create(
        new_object(
            "RoleBinding",
            "mint-own",
            NAMESPACE,
            roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "mint-own"},
            subjects=[{"kind": "ServiceAccount", "name": "unbound", "namespace": NAMESPACE}],
        )
    )
    wait_until(
        "the RoleBinding to take effect",
        lambda: (bool(unbound.review_rules(NAMESPACE).resources - BASELINE_GRANTS), "not yet"),
        Deadline.after(10),
    )
    unbound.create_token(NAMESPACE, "unbound", expiration_seconds=3600)
    log = AuditLog.of_file(plane.audit_log_path)

    def recorded() -> tuple[bool, str]:
        events = [
            e
            for e in log.events()
            if e.user == f"system:serviceaccount:{NAMESPACE}:unbound" and e.succeeded
        ]
        return bool(events), f"{len(events)} events"

    wait_until("the token request in the audit log", recorded, Deadline.after(10))
    (event,) = [e for e in log.events() if e.succeeded and e.user.endswith(":unbound")]
    assert event.jti == jwt.decode(token, options={"verify_signature": False})["jti"]
    assert (event.verb, event.resource, event.subresource, event.dry_run) == (
        "create",
        "serviceaccounts",
        "token",
        False,
    )
