"""Broken pieces of the sim's SolAr API server: authentication and its cache, token minting,
RBAC (solar_conformance/core/rbac.py), garbage collection; and a skewed clock that does not skew."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.mutants.model import Patch, mutant

CLUSTER = "solar_conformance.simulators.memory.cluster:InMemoryCluster"


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
    "solar_conformance.simulators.memory.tokens:TokenIssuer.verify",
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
    "solar_conformance.simulators.memory.tokens:TokenIssuer.verify",
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
    def mint(
        self: Any,
        namespace: str,
        account: str,
        expiration_seconds: int,
        bound: Any,
        *more: Any,
        **named: Any,
    ) -> Any:
        from solar_conformance.core.api import IssuedToken

        issued = original(
            self, namespace, account, expiration_seconds + 3600, bound, *more, **named
        )
        return IssuedToken(issued.token, issued.expires_at - timedelta(hours=1))

    return mint


# --- RBAC ----------------------------------------------------------------------------------------
def _every_binding(original: Any) -> Any:
    """The store hands RBAC every binding, not only those naming the user: RBAC alone decides
    whose they are (the sim's index of bindings by subject spells out the namespace)."""

    def bound_to(self: Any, user: Any) -> list[Any]:
        return [*self.of_kind("RoleBinding"), *self.of_kind("ClusterRoleBinding")]

    return bound_to


@mutant(
    "rbac-ignores-serviceaccount-namespace",
    ("scope", "separate-namespaces"),
    "RBAC matches a ServiceAccount subject by its name alone, whatever its namespace",
    "solar_conformance.core.rbac:subject_matches",
    also=(Patch("solar_conformance.simulators.memory.store:Store.bound_to", _every_binding),),
    internal=True,
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
    "solar_conformance.core.rbac:rule_allows",
)
def _any_name(original: Any) -> Any:
    def rule_allows(rule: Any, request: Any) -> bool:
        return bool(original({**rule, "resourceNames": []}, request))

    return rule_allows


@mutant(
    "rbac-rolebindings-everywhere",
    ("scope", "separate-namespaces"),
    "RBAC applies a RoleBinding in every namespace, not only its own",
    "solar_conformance.core.rbac:allowed",
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
    "solar_conformance.core.rbac:rule_allows",
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
    "solar_conformance.core.rbac:rule_allows",
    equivalent=(
        "the agent's only get grants name its own Target and TargetReport, so the list and watch "
        "they imply are narrowed to those names: reading its own objects by list and watch is "
        "either answer of the scope check"
    ),
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
    "solar_conformance.core.rbac:rule_allows",
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
    "solar_conformance.simulators.memory.attempts:impersonation_checks",
)
def _impersonate(original: Any) -> Any:
    return lambda who: []


# --- garbage collection --------------------------------------------------------------------------
@mutant(
    "gc-no-cascade",
    ("runbook", "table-controller-owned"),
    "deleting an object leaves its dependents (no garbage collection by owner)",
    f"{CLUSTER}.store_remove",
    internal=True,
)
def _no_cascade(original: Any) -> Any:
    def store_remove(self: Any, obj: Any) -> None:
        depth = self.__dict__.get("mutant_depth", 0)
        if depth:
            return
        self.__dict__["mutant_depth"] = 1
        try:
            original(self, obj)
        finally:
            self.__dict__["mutant_depth"] = 0

    return store_remove


# --- clocks --------------------------------------------------------------------------------------
@mutant(
    "clock-skew-ignored",
    "runbook",
    "a component's skewed clock shows the base clock's time (the controller never runs ahead)",
    "solar_conformance.core.clock:SkewedClock.now",
)
def _no_skew(original: Any) -> Any:
    return lambda self: self.base.now()
