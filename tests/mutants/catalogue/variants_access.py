"""Conforming variants of solar-controller-manager's credential objects (solar_conformance/simulators/reference/
controller.py): other names for the ServiceAccount, Role, RoleBinding and token Secrets, and the
same grant in other shapes (rules cut otherwise, a Role per resource, a ClusterRole per Target,
no patch where the profile says so). Every scenario must pass them."""

from __future__ import annotations

import hashlib
from typing import Any

from solar_conformance.core.api import SOLAR_GROUP, ApiError, new_object
from tests.mutants.model import patch, variant

ACCESS = "solar_conformance.simulators.reference.agent_access:AgentAccess"
C = "solar_conformance.simulators.reference.controller:CredentialController"
NAMES = "solar_conformance.simulators.reference.agent_access:CredentialNames"


# --- names --------------------------------------------------------------------------------------
@patch(f"{NAMES}.for_target")
def _generated_names(original: Any) -> Any:
    def for_target(cls: Any, target: str) -> Any:
        suffix = hashlib.sha256(target.encode()).hexdigest()[:5]
        return cls(
            service_account=f"agent-{target}-{suffix}",
            role=f"agent-{target}-{suffix}-access",
            secret_prefix=f"agent-{target}-{suffix}-",
        )

    return for_target


variant(
    "variant-generated-names",
    ("table-controller", "table-controller-owned"),
    "the ServiceAccount, Role, RoleBinding and token Secrets have generated names "
    "(agent-<target>-<hash>, agent-<target>-<hash>-access, agent-<target>-<hash>-<random>)",
    _generated_names,
)


@patch(f"{NAMES}.for_target")
def _names_of_the_target(original: Any) -> Any:
    def for_target(cls: Any, target: str) -> Any:
        return cls(service_account=target, role=target, secret_prefix=f"{target}-")

    return for_target


variant(
    "variant-names-of-the-target",
    ("table-controller", "table-controller-owned"),
    "the ServiceAccount, Role and RoleBinding are named like the Target itself, each token "
    "Secret <target>-<random>",
    _names_of_the_target,
)


@patch(f"{NAMES}.for_target")
def _names_apart(original: Any) -> Any:
    def for_target(cls: Any, target: str) -> Any:
        return cls(
            service_account=f"{target}-agent",
            role=f"{target}-agent-reader",
            secret_prefix=f"{target}-agent-token-",
        )

    return for_target


@patch(f"{ACCESS}.ensure_access")
def _binding_named_apart(original: Any) -> Any:
    def ensure_access(self: Any, target: Any, names: Any, labels: dict[str, str]) -> None:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        account = names.service_account
        self.ensure_object(
            new_object("ServiceAccount", account, namespace, labels=labels, owner=target)
        )
        self.ensure_object(
            new_object(
                "Role",
                names.role,
                namespace,
                labels=labels,
                owner=target,
                rules=self.agent_rules(name),
            ),
            compare=("rules",),
        )
        binding = f"{name}-agent-reads"
        self.ensure_object(
            _binding(binding, namespace, "Role", names.role, account, labels=labels, owner=target)
        )

    return ensure_access


variant(
    "variant-names-apart",
    ("table-controller", "table-controller-owned"),
    "the ServiceAccount, Role and RoleBinding each have a name of its own (<target>-agent, "
    "<target>-agent-reader, <target>-agent-reads)",
    _names_apart,
    _binding_named_apart,
)


@patch(f"{ACCESS}.ensure_report")
def _report_without_target_ref(original: Any) -> Any:
    def ensure_report(self: Any, target: Any, labels: dict[str, str]) -> None:
        meta = target["metadata"]
        self.ensure_object(
            new_object(
                "TargetReport",
                meta["name"],
                meta["namespace"],
                labels=labels,
                owner=target,
                spec={},
            )
        )

    return ensure_report


variant(
    "variant-report-created-bare",
    ("table-controller", "report-empty-until-first"),
    "the controller creates the TargetReport with an empty spec (no targetRef: its name says "
    "whose it is)",
    _report_without_target_ref,
)


# --- the Role: the same grant, other shapes -------------------------------------------------------
@patch(f"{ACCESS}.agent_rules")
def _reshaped_rules(original: Any) -> Any:
    def agent_rules(target: str) -> list[Any]:
        return [
            {
                "apiGroups": [SOLAR_GROUP],
                "resources": ["targetreports", "targets"],
                "resourceNames": [target],
                "verbs": ["get"],
            },
            {
                "apiGroups": [SOLAR_GROUP],
                "resources": ["targetreports"],
                "resourceNames": [target],
                "verbs": ["patch", "update"],
            },
        ]

    return agent_rules


variant(
    "variant-role-reshaped",
    ("table-controller", "scope"),
    "the Role's rules are cut the other way: get on the Target and its TargetReport in one rule, "
    "update and patch on the TargetReport in another (the same grant)",
    _reshaped_rules,
)


def _binding(
    name: str, namespace: str, role_kind: str, role: str, account: str, **meta: Any
) -> Any:
    return new_object(
        "RoleBinding",
        name,
        namespace,
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        subjects=[{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        **meta,
    )


@patch(f"{ACCESS}.ensure_access")
def _role_per_resource(original: Any) -> Any:
    def ensure_access(self: Any, target: Any, names: Any, labels: dict[str, str]) -> None:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        account = names.service_account
        self.ensure_object(
            new_object("ServiceAccount", account, namespace, labels=labels, owner=target)
        )
        for suffix, rule in zip(("target", "report"), self.agent_rules(name), strict=True):
            role = f"{names.role}-{suffix}"
            self.ensure_object(
                new_object("Role", role, namespace, labels=labels, owner=target, rules=[rule]),
                compare=("rules",),
            )
            self.ensure_object(
                _binding(role, namespace, "Role", role, account, labels=labels, owner=target)
            )

    return ensure_access


variant(
    "variant-role-per-resource",
    ("table-controller", "table-controller-owned", "scope"),
    "two Roles and two RoleBindings per Target: one grants get on the Target, the other get, "
    "update and patch on its TargetReport",
    _role_per_resource,
)


def _cluster_role_name(namespace: str, target: str) -> str:
    return f"solar-agent:{namespace}:{target}"


@patch(f"{ACCESS}.ensure_access")
def _cluster_role(original: Any) -> Any:
    def ensure_access(self: Any, target: Any, names: Any, labels: dict[str, str]) -> None:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        account = names.service_account
        role = _cluster_role_name(namespace, name)
        self.ensure_object(
            new_object("ServiceAccount", account, namespace, labels=labels, owner=target)
        )
        wanted = new_object("ClusterRole", role, labels=labels, rules=self.agent_rules(name))
        try:
            current = self.solar.get("ClusterRole", role)
        except ApiError as error:
            if error.status != 404:
                raise
            self.solar.create(wanted)
        else:
            if current.get("rules") != wanted["rules"]:
                self.solar.update({**current, "rules": wanted["rules"]})
        self.ensure_object(
            _binding(
                names.role, namespace, "ClusterRole", role, account, labels=labels, owner=target
            )
        )

    return ensure_access


@patch(f"{C}.forget")
def _cluster_role_goes_with_its_target(original: Any) -> Any:
    """A cluster-scoped object cannot be owned by a namespaced Target: the controller deletes it
    when the Target is gone (or made again under its name, when it makes it anew)."""

    def forget(self: Any, namespace: str, name: str) -> None:
        original(self, namespace, name)
        try:
            self.solar.delete("ClusterRole", _cluster_role_name(namespace, name))
        except ApiError as error:
            if error.status != 404:
                raise

    return forget


variant(
    "variant-cluster-role-per-target",
    ("table-controller", "table-controller-owned", "scope"),
    "the grant is a ClusterRole per Target (solar-agent:<namespace>:<target>, by resourceNames) "
    "that a RoleBinding in the Target's namespace binds; the controller deletes it with its Target",
    _cluster_role,
    _cluster_role_goes_with_its_target,
)


@patch(f"{ACCESS}.agent_rules")
def _no_patch(original: Any) -> Any:
    def agent_rules(target: str) -> list[Any]:
        rules = original(target)
        rules[1]["verbs"] = ["get", "update"]
        return list(rules)

    return agent_rules


variant(
    "variant-role-without-patch",
    ("scope", "scope-patch"),
    "the Role grants get and update on the TargetReport, not patch, and the profile says so",
    _no_patch,
    profile={"grants_patch": False},
)


@patch(f"{ACCESS}.agent_rules")
def _read_by_list_and_watch(original: Any) -> Any:
    def agent_rules(target: str) -> list[Any]:
        rules = [dict(rule) for rule in original(target)]
        for rule in rules:
            rule["verbs"] = [*rule["verbs"], "list", "watch"]
        return rules

    return agent_rules


variant(
    "variant-role-reads-by-list-and-watch",
    "scope",
    "the Role also lets the agent list and watch its own Target and TargetReport, narrowed to "
    "their names (resourceNames), as Kubernetes reads an object by get, list and watch",
    _read_by_list_and_watch,
)


def _revoked(self: Any, target: Any) -> bool:
    annotations = target["metadata"].get("annotations") or {}
    return bool(annotations.get(self.contract.revocation_annotation) == self.contract.revoked_value)


@patch(f"{ACCESS}.ensure_access")
def _unbound_while_revoked(original: Any) -> Any:
    def ensure_access(self: Any, target: Any, names: Any, labels: dict[str, str]) -> None:
        if not _revoked(self, target):
            original(self, target, names, labels)
            return
        ensure = self.ensure_object

        def all_but_the_binding(wanted: Any, compare: tuple[str, ...] = ()) -> None:
            if wanted["kind"] != "RoleBinding":
                ensure(wanted, compare)

        self.__dict__["ensure_object"] = all_but_the_binding
        try:
            original(self, target, names, labels)
        finally:
            del self.__dict__["ensure_object"]
        try:
            self.solar.delete("RoleBinding", names.role, target["metadata"]["namespace"])
        except ApiError as error:
            if error.status != 404:
                raise

    return ensure_access


variant(
    "variant-revoking-also-unbinds",
    ("condition-revoked", "runbook"),
    "revoking also deletes the agent's RoleBinding (the token is gone anyway); removing the "
    "annotation binds it again with the new token",
    _unbound_while_revoked,
)


@patch(f"{C}.reconcile")
def _nothing_until_it_can_mint(original: Any) -> Any:
    """While Disabled or Revoked, a Target gets nothing: its ServiceAccount, Role, RoleBinding
    and TargetReport come with the first token."""

    def reconcile(self: Any, target: Any) -> float:
        if self.config.apiserver_url and not _revoked(self, target):
            return float(original(self, target))
        self.__dict__["ensure_access"] = lambda target, names, labels: None
        self.__dict__["ensure_report"] = lambda target, labels: None
        try:
            return float(original(self, target))
        finally:
            del self.__dict__["ensure_access"], self.__dict__["ensure_report"]

    return reconcile


variant(
    "variant-nothing-until-it-can-mint",
    ("table-controller", "condition-disabled", "condition-revoked"),
    "while a Target is Disabled or Revoked the controller creates none of its credential's "
    "objects; they come with its first token",
    _nothing_until_it_can_mint,
)
