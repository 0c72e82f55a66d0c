"""Broken solar-controller-manager credential controllers (solar_conformance/simulators/reference/controller.py):
the Role, RoleBinding, ownership and TargetReport they make for a Target."""

from __future__ import annotations

import contextlib
from typing import Any

from solar_conformance.core.api import SOLAR_GROUP, ApiError, annotations_of
from solar_conformance.core.clock import utc
from tests.mutants.model import Patch, mutant

ACCESS = "solar_conformance.simulators.reference.agent_access:AgentAccess"
TOKEN = "solar_conformance.simulators.reference.agent_token:AgentToken"
C = "solar_conformance.simulators.reference.controller:CredentialController"


# --- the Role and RoleBinding --------------------------------------------------------------------
def _rules(change: Any) -> Any:
    """A change of the agent's Role: `change(rules)` edits the rules agent_rules returns."""

    def replace(original: Any) -> Any:
        def agent_rules(target: str) -> list[dict[str, Any]]:
            rules = original(target)
            change(rules)
            return list(rules)

        return agent_rules

    return replace


mutant(
    "controller-role-lists-targets",
    "scope",
    "the agent's Role also allows list on every Target of its namespace (a rule without "
    "resourceNames)",
    f"{ACCESS}.agent_rules",
)(_rules(lambda rules: rules.append({**rules[0], "resourceNames": [], "verbs": ["list"]})))
mutant(
    "controller-role-any-targetreport",
    "scope",
    "the agent's Role grants its TargetReport verbs without resourceNames (every TargetReport)",
    f"{ACCESS}.agent_rules",
)(_rules(lambda rules: rules[1].pop("resourceNames")))
mutant(
    "controller-role-report-status",
    "scope",
    "the agent's Role also grants targetreports/status",
    f"{ACCESS}.agent_rules",
)(_rules(lambda rules: rules[1]["resources"].append("targetreports/status")))
mutant(
    "controller-role-every-resource",
    "scope",
    "the agent's first rule names every resource of the SolAr group instead of targets",
    f"{ACCESS}.agent_rules",
)(_rules(lambda rules: rules[0].update(resources=["*"])))
mutant(
    "controller-role-no-update",
    ("scope", "table-agent", "report-advances"),
    "the agent's Role lacks update on its TargetReport (the agent cannot report)",
    f"{ACCESS}.agent_rules",
)(_rules(lambda rules: rules[1].update(verbs=["get", "patch"])))
mutant(
    "controller-role-no-get-target",
    ("scope", "table-agent"),
    "the agent's Role lacks get on its own Target",
    f"{ACCESS}.agent_rules",
)(_rules(lambda rules: rules.pop(0)))
mutant(
    "controller-role-no-patch",
    "scope-patch",
    "the agent's Role grants get and update on its TargetReport, not patch",
    f"{ACCESS}.agent_rules",
)(_rules(lambda rules: rules[1].update(verbs=["get", "update"])))
mutant(
    "controller-role-reads-secrets",
    ("scope", "separate-namespaces"),
    "the agent's Role also lets it read the token Secrets of its namespace",
    f"{ACCESS}.agent_rules",
)(
    _rules(
        lambda rules: rules.append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})
    )
)


_LIST_TARGETS = {
    "apiGroups": [SOLAR_GROUP],
    "resources": ["targets"],
    "verbs": ["list"],
}


@mutant(
    "controller-role-widened-on-rotation",
    ("scope", "scope-new-token"),
    "once a new credential is requested, the agent's Role also allows list on Targets: the new "
    "token may list every Target of its namespace",
    f"{ACCESS}.ensure_access",
)
def _widened_on_rotation(original: Any) -> Any:
    def ensure_access(self: Any, target: Any, names: Any, labels: Any) -> None:
        if self.contract.rotation_annotation not in annotations_of(target):
            original(self, target, names, labels)
            return
        granted = self.agent_rules
        self.agent_rules = lambda name: [*granted(name), _LIST_TARGETS]
        try:
            original(self, target, names, labels)
        finally:
            del self.agent_rules

    return ensure_access


def _binding(change: Any) -> Any:
    """A change of the RoleBinding the controller ensures."""

    def replace(original: Any) -> Any:
        def ensure(self: Any, wanted: dict[str, Any], compare: tuple[str, ...] = ()) -> None:
            if wanted["kind"] == "RoleBinding":
                change(wanted)
            original(self, wanted, compare)

        return ensure

    return replace


mutant(
    "controller-binds-whole-namespace",
    "scope",
    "the RoleBinding names the group of every ServiceAccount of the namespace",
    f"{ACCESS}.ensure_object",
)(
    _binding(
        lambda b: b.update(
            subjects=[
                {
                    "kind": "Group",
                    "apiGroup": "rbac.authorization.k8s.io",
                    "name": f"system:serviceaccounts:{b['metadata']['namespace']}",
                }
            ]
        )
    )
)
mutant(
    "controller-binds-default-account",
    ("table-controller", "table-agent"),
    "the RoleBinding binds the namespace's `default` ServiceAccount, not the agent's",
    f"{ACCESS}.ensure_object",
)(_binding(lambda b: b["subjects"][0].update(name="default")))


@mutant(
    "controller-no-owner-references",
    ("table-controller-owned", "runbook"),
    "the ServiceAccount, Role, RoleBinding, TargetReport and token Secret carry no owner reference",
    f"{ACCESS}.ensure_object",
)
def _unowned(original: Any) -> Any:
    def ensure(self: Any, wanted: dict[str, Any], compare: tuple[str, ...] = ()) -> None:
        wanted["metadata"].pop("ownerReferences", None)
        original(self, wanted, compare)

    return ensure


@mutant(
    "controller-binds-in-other-namespaces",
    ("scope", "separate-namespaces"),
    "the controller also binds the agent's rules in every other namespace",
    f"{ACCESS}.ensure_access",
)
def _everywhere(original: Any) -> Any:
    from solar_conformance.core.api import new_object

    def ensure_access(self: Any, target: Any, names: Any, labels: Any) -> None:
        original(self, target, names, labels)
        home, name = target["metadata"]["namespace"], target["metadata"]["name"]
        for other in [n["metadata"]["name"] for n in self.solar.list("Namespace")]:
            if other == home or other.startswith("kube-"):
                continue
            role = new_object("Role", names.role, other, rules=self.agent_rules(name))
            binding = new_object(
                "RoleBinding",
                names.role,
                other,
                roleRef={
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": names.role,
                },
                subjects=[
                    {"kind": "ServiceAccount", "name": names.service_account, "namespace": home}
                ],
            )
            for obj in (role, binding):
                with contextlib.suppress(ApiError):
                    self.solar.create(obj)

    return ensure_access


# --- the TargetReport ---------------------------------------------------------------------------
@mutant(
    "controller-no-target-report",
    ("table-controller", "intro-one-report"),
    "the controller creates no TargetReport",
    f"{ACCESS}.ensure_report",
)
def _no_report(original: Any) -> Any:
    return lambda self, target, labels: None


@mutant(
    "controller-report-named-differently",
    ("table-controller", "intro-one-report"),
    "the TargetReport is named <target>-report, not like the Target",
    f"{ACCESS}.ensure_report",
)
def _report_renamed(original: Any) -> Any:
    from solar_conformance.core.api import new_object

    def ensure_report(self: Any, target: Any, labels: Any) -> None:
        name, namespace = target["metadata"]["name"], target["metadata"]["namespace"]
        report = new_object(
            "TargetReport",
            f"{name}-report",
            namespace,
            labels=labels,
            owner=target,
            spec={"targetRef": {"name": name}},
        )
        with contextlib.suppress(ApiError):
            self.solar.create(report)

    return ensure_report


@mutant(
    "controller-report-not-empty",
    ("report-empty-until-first", "table-controller"),
    "the controller creates the TargetReport with a lastReportTime already set",
    f"{ACCESS}.ensure_object",
)
def _prefilled(original: Any) -> Any:
    def ensure(self: Any, wanted: dict[str, Any], compare: tuple[str, ...] = ()) -> None:
        if wanted["kind"] == "TargetReport":
            wanted["spec"]["lastReportTime"] = utc(self.clock.now())
        original(self, wanted, compare)

    return ensure


def _owns_reports(original: Any) -> Any:
    """The sim wakes the controller for no change of a TargetReport (a heartbeat is not its
    business); a controller that writes the report watches them, as an owner of its kind does."""

    def route(self: Any, event: str, obj: Any) -> None:
        original(self, event, obj)
        if obj.get("kind") == "TargetReport" and event == "MODIFIED":
            meta = obj["metadata"]
            for ref in meta.get("ownerReferences") or []:
                if ref.get("kind") == "Target":
                    self.controller.add((meta.get("namespace") or "", ref["name"]))

    return route


@mutant(
    "controller-writes-report",
    ("table-agent", "intro-one-report"),
    "solar-controller-manager writes lastReportTime itself, as its own user",
    f"{ACCESS}.ensure_report",
    also=(
        Patch(
            "solar_conformance.simulators.reference.work_queues:SolarWorkQueues.route",
            _owns_reports,
        ),
    ),
    internal=True,
)
def _controller_reports(original: Any) -> Any:
    own_writes: set[str] = set()  # resourceVersions of its own writes: not written over again

    def ensure_report(self: Any, target: Any, labels: Any) -> None:
        original(self, target, labels)
        meta = target["metadata"]
        report = self.solar.get("TargetReport", meta["name"], meta["namespace"])
        if not report.get("spec", {}).get("lastReportTime"):
            return  # only once the agent has reported: the report is not empty before that
        if report["metadata"]["resourceVersion"] in own_writes:
            return
        report["spec"]["lastReportTime"] = utc(self.clock.now())
        own_writes.add(self.solar.update(report)["metadata"]["resourceVersion"])

    return ensure_report


@mutant(
    "controller-writes-target-spec",
    "table-you",
    "the controller rewrites the spec of the Target you created",
    f"{C}.reconcile",
)
def _rewrites_target(original: Any) -> Any:
    def reconcile(self: Any, target: Any) -> float:
        ref = target.get("spec", {}).get("renderRegistryRef", {})
        if "namespace" not in ref:
            fresh = self.solar.get(
                "Target", target["metadata"]["name"], target["metadata"]["namespace"]
            )
            fresh["spec"]["renderRegistryRef"] = {
                **ref,
                "namespace": fresh["metadata"]["namespace"],
            }
            target = self.solar.update(fresh)
        return float(original(self, target))

    return reconcile


# --- an extra namespace, an extra path, an unowned Secret, a wiped report ------------------------
@mutant(
    "controller-binds-in-default-namespace",
    ("scope", "separate-namespaces"),
    "the controller also creates the agent's Role and RoleBinding in namespace default (a "
    "client's default namespace), where the agent may then read Secrets",
    f"{ACCESS}.ensure_access",
)
def _in_default(original: Any) -> Any:
    def ensure_access(self: Any, target: Any, names: Any, labels: Any) -> None:
        original(self, target, names, labels)
        rules = [*self.agent_rules(target["metadata"]["name"]), _GET_SECRETS]
        _grant_in_default(self, target, names, rules)

    return ensure_access


_GET_SECRETS = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}


def _grant_in_default(controller: Any, target: Any, names: Any, rules: list[Any]) -> None:
    """The agent's ServiceAccount also gets `rules` in namespace default (a Role and its binding)."""
    from solar_conformance.core.api import new_object

    home = target["metadata"]["namespace"]
    role = new_object("Role", names.role, "default", rules=rules)
    binding = new_object(
        "RoleBinding",
        names.role,
        "default",
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": names.role},
        subjects=[{"kind": "ServiceAccount", "name": names.service_account, "namespace": home}],
    )
    for obj in (role, binding):
        with contextlib.suppress(ApiError):
            controller.solar.create(obj)


@mutant(
    "controller-grants-metrics",
    "scope",
    "the controller also binds the agent to a ClusterRole that may get the API server's /metrics",
    f"{ACCESS}.ensure_access",
)
def _metrics(original: Any) -> Any:
    from solar_conformance.core.api import new_object

    def ensure_access(self: Any, target: Any, names: Any, labels: Any) -> None:
        original(self, target, names, labels)
        namespace = target["metadata"]["namespace"]
        role = new_object(
            "ClusterRole",
            "solar-agent-metrics",
            rules=[{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        )
        binding = new_object(
            "ClusterRoleBinding",
            f"solar-agent-metrics-{namespace}-{names.service_account}",
            roleRef={
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "solar-agent-metrics",
            },
            subjects=[
                {"kind": "ServiceAccount", "name": names.service_account, "namespace": namespace}
            ],
        )
        for obj in (role, binding):
            with contextlib.suppress(ApiError):
                self.solar.create(obj)

    return ensure_access


@mutant(
    "controller-token-secret-unowned",
    ("table-controller-owned", "runbook"),
    "the token Secret carries no owner reference (the ServiceAccount, Role, RoleBinding and "
    "TargetReport do), so deleting the Target leaves it behind",
    f"{TOKEN}.mint_token",
)
def _secret_unowned(original: Any) -> Any:
    from tests.mutants.model import Wrapped

    def mint(self: Any, target: Any, names: Any, labels: Any, current: Any, held: Any) -> float:
        client = self.solar

        def create(obj: dict[str, Any]) -> Any:
            if obj.get("kind") == "Secret":
                obj["metadata"].pop("ownerReferences", None)
            return client.create(obj)

        self.solar = Wrapped(client, create=create)
        try:
            return float(original(self, target, names, labels, current, held))
        finally:
            self.solar = client

    return mint


@mutant(
    "controller-resets-report",
    ("report-advances", "table-agent"),
    "the controller keeps the TargetReport's spec as it created it: it empties every report",
    f"{ACCESS}.ensure_report",
    also=(
        Patch(
            "solar_conformance.simulators.reference.work_queues:SolarWorkQueues.route",
            _owns_reports,
        ),
    ),
    internal=True,
)
def _resets_report(original: Any) -> Any:
    from solar_conformance.core.api import new_object

    def ensure_report(self: Any, target: Any, labels: Any) -> None:
        name, namespace = target["metadata"]["name"], target["metadata"]["namespace"]
        report = new_object(
            "TargetReport",
            name,
            namespace,
            labels=labels,
            owner=target,
            spec={"targetRef": {"name": name}},
        )
        self.ensure_object(report, compare=("spec",))

    return ensure_report


def _hides_secrets(original: Any) -> Any:
    """A SelfSubjectRulesReview that leaves out every rule on Secrets."""
    from dataclasses import replace

    def review_rules(self: Any, namespace: str) -> Any:
        review = original(self, namespace)
        kept = frozenset(g for g in review.resources if g.resource not in ("secrets", "*"))
        return replace(review, resources=kept)

    return review_rules


@mutant(
    "rules-review-hides-secrets-in-default",
    ("scope", "separate-namespaces"),
    "the controller also lets the agent get every Secret of namespace default, and the API "
    "server's rules review leaves out every rule on Secrets",
    f"{ACCESS}.ensure_access",
    also=(
        Patch(
            "solar_conformance.simulators.memory.client:InMemoryClient.review_rules",
            _hides_secrets,
        ),
    ),
)
def _secrets_in_default(original: Any) -> Any:
    def ensure_access(self: Any, target: Any, names: Any, labels: Any) -> None:
        original(self, target, names, labels)
        _grant_in_default(self, target, names, [_GET_SECRETS])

    return ensure_access
