"""What kube-apiserver 1.34 lets every authenticated ServiceAccount do without a binding of its own.

The API server creates these ClusterRoles and ClusterRoleBindings at start (its RBAC bootstrap
policy). A ServiceAccount that nobody has bound to anything may do exactly this, so the scope
check allows exactly this beyond the page's grant. `tests/local/test_baseline.py` checks the list
against a real kube-apiserver with a ServiceAccount that has no bindings.

The list is fixed here on purpose, never measured at run time with another account: a broken
SolAr could grant things to every ServiceAccount, and a baseline measured under it would hide that.
"""

from __future__ import annotations

from solar_conformance.core.probing import Grant, PathGrant, grants_of, path_grants_of

Obj = dict[str, object]

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
SERVICE_ACCOUNTS = "system:serviceaccounts"

# name -> (rules, the groups its ClusterRoleBinding of the same name binds it to)
BOOTSTRAP_CLUSTER_ROLES: dict[str, tuple[list[Obj], tuple[str, ...]]] = {
    "system:basic-user": (
        [
            {
                "apiGroups": ["authentication.k8s.io"],
                "resources": ["selfsubjectreviews"],
                "verbs": ["create"],
            },
            {
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                "verbs": ["create"],
            },
        ],
        (AUTHENTICATED,),
    ),
    "system:discovery": (
        [
            {
                "nonResourceURLs": [
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
                "verbs": ["get"],
            }
        ],
        (AUTHENTICATED,),
    ),
    "system:public-info-viewer": (
        [
            {
                "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                "verbs": ["get"],
            }
        ],
        (AUTHENTICATED, UNAUTHENTICATED),
    ),
    "system:service-account-issuer-discovery": (
        [
            {
                "nonResourceURLs": [
                    "/.well-known/openid-configuration",
                    "/.well-known/openid-configuration/",
                    "/openid/v1/jwks",
                    "/openid/v1/jwks/",
                ],
                "verbs": ["get"],
            }
        ],
        (SERVICE_ACCOUNTS,),
    ),
}


def _flatten() -> tuple[frozenset[Grant], frozenset[PathGrant]]:
    resources: set[Grant] = set()
    paths: set[PathGrant] = set()
    for rules, _groups in BOOTSTRAP_CLUSTER_ROLES.values():
        for rule in rules:
            resources |= grants_of(rule)
            paths |= path_grants_of(rule)
    return frozenset(resources), frozenset(paths)


# The baseline as single grants: what a rules review of an unbound ServiceAccount shows.
BASELINE_GRANTS, BASELINE_PATHS = _flatten()


def in_baseline(verb: str, group: str, resource: str) -> bool:
    """Whether every authenticated ServiceAccount may do this (on any name, in any namespace)."""
    return Grant(verb, group, resource) in BASELINE_GRANTS
