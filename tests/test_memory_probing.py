"""The in-memory API server answers the scope check as kube-apiserver 1.34 does (tests/local/
test_baseline.py asks a real one the same questions): discovery, dry runs that change nothing,
the baseline of every authenticated user, impersonation, RBAC's escalation check, the audit."""

from __future__ import annotations

import jwt
import pytest

from solar_conformance.core.api import SOLAR_GROUP, Obj, new_object
from solar_conformance.core.baseline import BASELINE_GRANTS, BASELINE_PATHS
from solar_conformance.core.clock import VirtualClock
from solar_conformance.core.probing import Impersonation, RawRequest, ServedResource
from solar_conformance.page.grant import served
from solar_conformance.page.scope import Landmarks, compare, plan
from solar_conformance.simulators.memory.audit import audit_events
from solar_conformance.simulators.memory.client import InMemoryClient
from solar_conformance.simulators.memory.cluster import InMemoryCluster

RBAC = "rbac.authorization.k8s.io"


@pytest.fixture
def cluster() -> InMemoryCluster:
    cluster = InMemoryCluster("t", VirtualClock())
    admin = cluster.admin()
    for namespace in ("ns", "elsewhere"):
        admin.create(new_object("Namespace", namespace))
    admin.create(new_object("ServiceAccount", "sa", "ns"))
    admin.create(new_object("Target", "mine", "ns", spec={}))
    return cluster


def _client(cluster: InMemoryCluster) -> tuple[InMemoryClient, str]:
    token = cluster.admin().create_token("ns", "sa", expiration_seconds=3600).token
    return cluster.with_token(token), token


def _grant(cluster: InMemoryCluster, name: str, rules: list[Obj]) -> None:
    admin = cluster.admin()
    admin.create(new_object("Role", name, "ns", rules=rules))
    admin.create(
        new_object(
            "RoleBinding",
            name,
            "ns",
            roleRef={"apiGroup": RBAC, "kind": "Role", "name": name},
            subjects=[{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}],
        )
    )


def test_an_unbound_service_account_may_do_exactly_the_baseline(cluster: InMemoryCluster) -> None:
    api, _ = _client(cluster)
    for namespace in ("ns", "elsewhere"):
        review = api.review_rules(namespace)
        assert (review.resources, review.paths) == (BASELINE_GRANTS, BASELINE_PATHS)
    marks = Landmarks("ns", "mine", (), "elsewhere", ("theirs",))
    probes = plan(api.discover(), marks)
    seen = compare(probes, api.attempt([p.request for p in probes]), marks, [])
    allowed = sorted(
        {(s.probe.request.verb, s.probe.request.resource.name) for s in seen if s.allowed}
    )
    assert allowed == [
        ("create", "selfsubjectaccessreviews.authorization.k8s.io"),
        ("create", "selfsubjectreviews.authentication.k8s.io"),
        ("create", "selfsubjectrulesreviews.authorization.k8s.io"),
    ]


def test_discovery_lists_subresources_with_their_verbs(cluster: InMemoryCluster) -> None:
    resources = _client(cluster)[0].discover()
    assert served(resources, SOLAR_GROUP, "targets", "status").verbs == ("get", "patch", "update")
    token = served(resources, "", "serviceaccounts", "token")
    assert (token.kind, token.verbs, token.body_api_version) == (
        "TokenRequest",
        ("create",),
        "authentication.k8s.io/v1",
    )


def test_writes_are_dry_runs_that_change_nothing(cluster: InMemoryCluster) -> None:
    api = cluster.admin()
    targets = served(api.discover(), SOLAR_GROUP, "targets")
    before = cluster.admin().get("Target", "mine", "ns")
    answers = api.attempt(
        [
            RawRequest("delete", targets, "ns", "mine"),
            RawRequest("create", targets, "ns", "new"),
            RawRequest("create", targets, "ns", body=new_object("Target", "mine", "ns")),
            RawRequest("update", targets, "ns", "gone"),
            RawRequest("deletecollection", targets, "ns"),
            RawRequest("create", targets, "nowhere"),
        ]
    )
    assert [a.status for a in answers] == [200, 201, 409, 404, 200, 404]
    assert cluster.admin().get("Target", "mine", "ns") == before
    assert [t["metadata"]["name"] for t in cluster.admin().list("Target", "ns")] == ["mine"]


def test_a_refusal_has_the_authorizers_shape(cluster: InMemoryCluster) -> None:
    api, _ = _client(cluster)
    targets = served(api.discover(), SOLAR_GROUP, "targets")
    (answer,) = api.attempt([RawRequest("get", targets, "ns", "mine")])
    assert answer.status == 403
    assert answer.denied, answer.message


def test_impersonation_needs_its_own_grant(cluster: InMemoryCluster) -> None:
    api, _ = _client(cluster)
    targets = served(api.discover(), SOLAR_GROUP, "targets")
    as_masters = RawRequest(
        "get", targets, "ns", "mine", impersonate=Impersonation("someone", ("system:masters",))
    )
    (refused,) = api.attempt([as_masters])
    assert refused.denied and "cannot impersonate" in refused.message
    rule = {"apiGroups": [""], "resources": ["users", "groups"], "verbs": ["impersonate"]}
    _grant(cluster, "imp", [rule])  # a Role cannot grant what is not in a namespace
    (still_refused,) = api.attempt([as_masters])
    assert still_refused.denied
    admin = cluster.admin()
    admin.create(new_object("ClusterRole", "imp", rules=[rule]))
    admin.create(
        new_object(
            "ClusterRoleBinding",
            "imp",
            roleRef={"apiGroup": RBAC, "kind": "ClusterRole", "name": "imp"},
            subjects=[{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}],
        )
    )
    (allowed,) = api.attempt([as_masters])
    assert allowed.status == 200


def test_a_binding_to_more_than_one_holds_is_refused(cluster: InMemoryCluster) -> None:
    """RBAC's escalation check: creating RoleBindings is not enough to bind cluster-admin."""
    _grant(
        cluster,
        "bindings",
        [{"apiGroups": [RBAC], "resources": ["rolebindings"], "verbs": ["create"]}],
    )
    api, _ = _client(cluster)
    bindings = served(api.discover(), RBAC, "rolebindings")
    body = new_object(
        "RoleBinding",
        "up",
        "ns",
        roleRef={"apiGroup": RBAC, "kind": "ClusterRole", "name": "cluster-admin"},
        subjects=[{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}],
    )
    (refused,) = api.attempt([RawRequest("create", bindings, "ns", body=body)])
    assert refused.status == 403 and not refused.denied  # RBAC's own check, not the authorizer
    cluster_roles = ServedResource(RBAC, "v1", "clusterroles", None, "ClusterRole", False, ())
    assert not api.review_access(RawRequest("bind", cluster_roles, "ns", "cluster-admin"))
    _grant(
        cluster, "bind", [{"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["bind"]}]
    )
    assert api.review_access(RawRequest("bind", cluster_roles, "ns", "cluster-admin"))
    (allowed,) = api.attempt([RawRequest("create", bindings, "ns", body=body)])
    assert allowed.status == 201


def test_the_audit_names_the_token_by_its_jti(cluster: InMemoryCluster) -> None:
    _grant(
        cluster,
        "read",
        [{"apiGroups": [SOLAR_GROUP], "resources": ["targets"], "verbs": ["get", "patch"]}],
    )
    api, token = _client(cluster)
    api.get("Target", "mine", "ns")
    targets = served(api.discover(), SOLAR_GROUP, "targets")
    api.attempt([RawRequest("patch", targets, "ns", "mine")])
    events = [e for e in audit_events(cluster.requests) if e.user == "system:serviceaccount:ns:sa"]
    jti = jwt.decode(token, options={"verify_signature": False})["jti"]
    assert [(e.verb, e.jti, e.dry_run, e.code) for e in events] == [
        ("get", jti, False, 200),
        ("patch", jti, True, 200),
    ]
