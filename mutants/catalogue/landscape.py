"""Broken pieces of the sim landscape: the API server's authentication and its cache, RBAC
(core/rbac.py), garbage collection, the render registry and its access policy (core/policy.py),
Flux, and the clocks."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mutants.model import mutant

CLUSTER = "simulators.memory.cluster:InMemoryCluster"
REGISTRY = "simulators.memory.registry:InMemoryRegistry"
POLICY = "core.policy:AccessPolicy"


# --- authentication ------------------------------------------------------------------------------
@mutant(
    "apiserver-cache-forever",
    "runbook",
    "the API server answers a token from its authentication cache forever",
    f"{CLUSTER}.authenticate",
)
def _cache_forever(original: Any) -> Any:
    def authenticate(self: Any, token: str) -> Any:
        remembered = self.__dict__.setdefault("mutant_cache", {})
        if token in remembered:
            return remembered[token]
        user = original(self, token)
        remembered[token] = user
        return user

    return authenticate


@mutant(
    "apiserver-cache-a-minute",
    "runbook",
    "the API server caches a successful authentication for 60 s, not 10 s",
    f"{CLUSTER}.authenticate",
)
def _cache_minute(original: Any) -> Any:
    def authenticate(self: Any, token: str) -> Any:
        remembered = self.__dict__.setdefault("mutant_cache", {})
        now = self.clock.now()
        if token in remembered and now - remembered[token][1] < timedelta(seconds=60):
            return remembered[token][0]
        user = original(self, token)
        remembered[token] = (user, now)
        return user

    return authenticate


@mutant(
    "apiserver-no-auth-cache",
    "runbook",
    "the API server checks every token afresh (no authentication cache)",
    f"{CLUSTER}.authenticate",
    internal=True,
    equivalent=(
        "the page allows a revoked, rotated-away, deleted or expired token to work for up to "
        "the cache window, it does not require it to: an API server that rejects such a token "
        "at once conforms"
    ),
)
def _no_cache(original: Any) -> Any:
    def authenticate(self: Any, token: str) -> Any:
        user = original(self, token)
        self.__dict__.get("_auth_cache", {}).pop(token, None)
        return user

    return authenticate


@mutant(
    "tokens-never-expire",
    "runbook",
    "the API server accepts a token after its expiry",
    "simulators.memory.tokens:TokenIssuer.verify",
    equivalent=(
        "the reference controller deletes a token's Secret once the token has expired (by its own "
        "clock), and the API server rejects a token whose bound Secret is gone: with this SolAr the "
        "token stops working at its expiry either way, which is all a scenario can see"
    ),
)
def _never_expire(original: Any) -> Any:
    def verify(self: Any, token: str, now: Any) -> Any:
        return original(self, token, now - timedelta(days=365))

    return verify


@mutant(
    "tokens-ignore-bound-secret",
    "runbook",
    "the API server does not check that a token's bound Secret still exists",
    "simulators.memory.tokens:TokenIssuer.verify",
)
def _unbound(original: Any) -> Any:
    from dataclasses import replace

    def verify(self: Any, token: str, now: Any) -> Any:
        claims = original(self, token, now)
        return None if claims is None else replace(claims, secret=None)

    return verify


@mutant(
    "apiserver-mint-ignores-lifetime",
    ("condition-issued", "runbook"),
    "TokenRequest issues a token that expires an hour after the expiry it reports",
    f"{CLUSTER}.mint",
)
def _longer_lived(original: Any) -> Any:
    def mint(self: Any, namespace: str, account: str, expiration_seconds: int, bound: Any) -> Any:
        from core.api import IssuedToken

        issued = original(self, namespace, account, expiration_seconds + 3600, bound)
        return IssuedToken(issued.token, issued.expires_at - timedelta(hours=1))

    return mint


# --- RBAC ----------------------------------------------------------------------------------------
@mutant(
    "rbac-ignores-serviceaccount-namespace",
    ("scope", "separate-namespaces"),
    "RBAC matches a ServiceAccount subject by its name alone, whatever its namespace",
    "core.rbac:subject_matches",
)
def _any_namespace(original: Any) -> Any:
    def subject_matches(subject: Any, user: Any, binding_namespace: str | None) -> bool:
        if subject.get("kind") == "ServiceAccount":
            return bool(user.name.rsplit(":", 1)[-1] == subject.get("name"))
        return bool(original(subject, user, binding_namespace))

    return subject_matches


@mutant(
    "rbac-ignores-resource-names",
    "scope",
    "RBAC ignores resourceNames: a rule for one object allows all of its kind",
    "core.rbac:_rule_allows",
)
def _any_name(original: Any) -> Any:
    def rule_allows(rule: Any, request: Any) -> bool:
        return bool(original({**rule, "resourceNames": []}, request))

    return rule_allows


@mutant(
    "rbac-rolebindings-everywhere",
    ("scope", "separate-namespaces"),
    "RBAC applies a RoleBinding in every namespace, not only its own",
    "core.rbac:allowed",
)
def _bindings_everywhere(original: Any) -> Any:
    def allowed(user: Any, request: Any, roles: Any, bindings: Any, *cluster: Any) -> bool:
        roles, bindings, cluster = list(roles), list(bindings), tuple(list(c) for c in cluster)
        if bool(original(user, request, roles, bindings, *cluster)):
            return True
        if not request.namespace:
            return False
        for namespace in {b["metadata"].get("namespace") for b in bindings}:
            moved = [
                {**r, "metadata": {**r["metadata"], "namespace": request.namespace}}
                for r in roles
                if r["metadata"].get("namespace") == namespace
            ]
            here = [
                {**b, "metadata": {**b["metadata"], "namespace": request.namespace}}
                for b in bindings
                if b["metadata"].get("namespace") == namespace
            ]
            if original(user, request, moved, here, *cluster):
                return True
        return False

    return allowed


@mutant(
    "rbac-subresource-as-parent",
    "scope",
    "RBAC lets a rule on a resource also cover its subresources (targetreports/status)",
    "core.rbac:_rule_allows",
)
def _parent(original: Any) -> Any:
    from dataclasses import replace

    def rule_allows(rule: Any, request: Any) -> bool:
        return bool(original(rule, replace(request, subresource=None)))

    return rule_allows


@mutant(
    "rbac-get-implies-list",
    "scope",
    "RBAC lets a get grant also list and watch",
    "core.rbac:_rule_allows",
)
def _get_lists(original: Any) -> Any:
    def rule_allows(rule: Any, request: Any) -> bool:
        verbs = list(rule.get("verbs") or [])
        if "get" in verbs:
            verbs += ["list", "watch"]
        return bool(original({**rule, "verbs": verbs}, request))

    return rule_allows


@mutant(
    "rbac-update-implies-patch-and-delete",
    "scope",
    "RBAC lets an update grant also delete",
    "core.rbac:_rule_allows",
)
def _update_deletes(original: Any) -> Any:
    def rule_allows(rule: Any, request: Any) -> bool:
        verbs = list(rule.get("verbs") or [])
        if "update" in verbs:
            verbs += ["delete"]
        return bool(original({**rule, "verbs": verbs}, request))

    return rule_allows


@mutant(
    "apiserver-impersonation-unchecked",
    "scope",
    "the API server lets any user impersonate anyone",
    "simulators.memory.attempts:_impersonation_checks",
)
def _impersonate(original: Any) -> Any:
    return lambda who: []


# --- garbage collection --------------------------------------------------------------------------
@mutant(
    "gc-no-cascade",
    ("runbook", "table-controller-owned"),
    "deleting an object leaves its dependents (no garbage collection by owner)",
    f"{CLUSTER}.store_delete",
    internal=True,
)
def _no_cascade(original: Any) -> Any:
    def store_delete(self: Any, kind: str, namespace: str | None, name: str) -> None:
        depth = self.__dict__.get("mutant_depth", 0)
        if depth:
            return
        self.__dict__["mutant_depth"] = 1
        try:
            original(self, kind, namespace, name)
        finally:
            self.__dict__["mutant_depth"] = 0

    return store_delete


# --- the render registry and its access policy ---------------------------------------------------
@mutant(
    "policy-readers-everywhere",
    ("regcred-namespace", "separate-namespaces"),
    "each namespace's pull user may read every repository",
    f"{POLICY}.for_namespaces",
)
def _read_all(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        for entry in policy.document["repositories"].values():
            entry["policies"].append({"users": sorted(readers), "actions": ["read"]})
        return policy

    return for_namespaces


@mutant(
    "policy-namespace-prefix",
    "regcred-namespace",
    "a pull user may read <namespace>** (any repository whose path begins like its namespace)",
    f"{POLICY}.for_namespaces",
)
def _prefix(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        repositories = policy.document["repositories"]
        for pattern in [p for p in repositories if p.endswith("/**")]:
            repositories[pattern.removesuffix("/**") + "**"] = repositories.pop(pattern)
        return policy

    return for_namespaces


@mutant(
    "policy-readers-may-write",
    "security-notes",
    "each namespace's pull user may also push and delete in its namespace",
    f"{POLICY}.for_namespaces",
)
def _readers_write(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        for entry in policy.document["repositories"].values():
            for rule in entry["policies"]:
                rule["actions"] = ["read", "create", "update", "delete"]
        return policy

    return for_namespaces


@mutant(
    "policy-readers-may-overwrite",
    "security-notes",
    "each namespace's pull user may overwrite existing tags in its namespace",
    f"{POLICY}.for_namespaces",
)
def _readers_update(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        for entry in policy.document["repositories"].values():
            for rule in entry["policies"]:
                rule["actions"] = ["read", "update"]
        return policy

    return for_namespaces


@mutant(
    "policy-anonymous-read",
    "security-notes",
    "anonymous pulls are allowed everywhere",
    f"{POLICY}.for_namespaces",
)
def _anonymous(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        for entry in policy.document["repositories"].values():
            entry["anonymousPolicy"] = ["read"]
        return policy

    return for_namespaces


@mutant(
    "policy-push-user-cannot-delete",
    "security-notes",
    "SolAr's push user may push but not delete",
    f"{POLICY}.for_namespaces",
)
def _pusher_no_delete(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        policy.document["adminPolicy"]["actions"] = ["read", "create", "update"]
        return policy

    return for_namespaces


@mutant(
    "policy-shortest-pattern-decides",
    "regcred-namespace",
    "the least specific matching pattern decides (the catch-all `**` denies every reader)",
    f"{POLICY}.deciding_pattern",
)
def _shortest(original: Any) -> Any:
    from core.policy import _glob

    def deciding_pattern(self: Any, repository: str) -> str | None:
        matches = [p for p in self.document.get("repositories", {}) if _glob(p).match(repository)]
        return min(matches, key=len) if matches else None

    return deciding_pattern


@mutant(
    "registry-any-password",
    "security-notes",
    "the registry accepts a known user with any password",
    f"{REGISTRY}.authenticate",
)
def _any_password(original: Any) -> Any:
    def authenticate(self: Any, username: str | None, password: str | None) -> None:
        original(self, username, self.users.get(username or "", password))

    return authenticate


@mutant(
    "registry-catalog-lists-everything",
    "regcred-namespace",
    "the registry's catalog lists every repository to every user",
    "simulators.memory.registry:InMemoryRegistryClient.catalog",
    internal=True,
)
def _full_catalog(original: Any) -> Any:
    def catalog(self: Any) -> list[str]:
        original(self)
        return sorted(self._registry.repositories)

    return catalog


# --- Flux ----------------------------------------------------------------------------------------
@mutant(
    "flux-ignores-pull-secret",
    ("table-flux", "point-once", "page-objects"),
    "Flux pulls without the credentials of the OCIRepository's secretRef",
    "core.credentials:credentials_for",
    rebind=("simulators.memory.flux",),
)
def _anonymous_flux(original: Any) -> Any:
    return lambda config_json, host: None


@mutant(
    "flux-picks-lowest-version",
    ("on-its-own", "table-flux"),
    "Flux picks the lowest tag the semver range matches, not the highest",
    "core.oci:highest_matching",
    rebind=("simulators.memory.flux",),
)
def _lowest(original: Any) -> Any:
    from core.oci import matches_constraint, parse_version

    def highest_matching(tags: list[str], constraint: str) -> str | None:
        found = [t for t in tags if parse_version(t) and matches_constraint(t, constraint)]
        return min(found, key=lambda t: parse_version(t) or (0, 0, 0, ())) if found else None

    return highest_matching


@mutant(
    "flux-polls-rarely",
    ("on-its-own", "runbook"),
    "Flux reconciles every object a hundred times less often than its interval says",
    "core.clock:parse_duration",
    rebind=("simulators.memory.flux",),
)
def _rare(original: Any) -> Any:
    return lambda text: original(text) * 100


# --- clocks --------------------------------------------------------------------------------------
@mutant(
    "clock-skew-ignored",
    "runbook",
    "a component's skewed clock shows the base clock's time (the controller never runs ahead)",
    "core.clock:SkewedClock.now",
)
def _no_skew(original: Any) -> Any:
    return lambda self: self.base.now()
