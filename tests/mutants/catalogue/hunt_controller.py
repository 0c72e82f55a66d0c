"""Broken credential and Profile controllers of solar-controller-manager
(solar_conformance/simulators/reference/controller.py and the modules it is made of, bindings.py)
that a real SolAr could plausibly ship: the condition's lastTransitionTime and its neighbours, the Warning events, the
mint backoff, what a deleted Target takes with it, where the token appears, the Role's verbs and
subjects, and ReleaseBindings that outlive their selection."""

from __future__ import annotations

import contextlib
from typing import Any

from solar_conformance.core.api import ApiError, find_condition, labels_of
from solar_conformance.core.clock import utc
from tests.mutants.catalogue.target_client import REMEMBER_TARGET_CLUSTER, target_cluster
from tests.mutants.model import mutant, with_solar_changed

ACCESS = "solar_conformance.simulators.reference.agent_access:AgentAccess"
CONDITION = "solar_conformance.simulators.reference.credential_condition:CredentialCondition"
TOKEN = "solar_conformance.simulators.reference.agent_token:AgentToken"
C = "solar_conformance.simulators.reference.controller:CredentialController"
P = "solar_conformance.simulators.reference.bindings:ProfileController"


def _write_condition(self: Any, target: Any, change: Any) -> None:
    """Apply `change(conditions, fresh)` to the Target as it is now and write its status."""
    meta = target["metadata"]
    fresh = self.solar.get("Target", meta["name"], meta["namespace"])
    conditions = fresh.setdefault("status", {}).setdefault("conditions", [])
    if change(conditions, fresh):
        self.solar.update_status(fresh)


# --- the condition's lastTransitionTime and its neighbours --------------------------------------
@mutant(
    "controller-transition-time-on-every-change",
    ("condition-issued", "runbook"),
    "lastTransitionTime moves whenever the message changes (a rotation), not only the status",
    f"{CONDITION}.set_credential_condition",
)
def _time_on_every_change(original: Any) -> Any:
    def set_(self: Any, target: Any, status: str, reason: str, message: str) -> None:
        kind = self.contract.condition_type

        def change(conditions: list[Any], fresh: Any) -> bool:
            wanted = {"type": kind, "status": status, "reason": reason, "message": message}
            for condition in conditions:
                if condition.get("type") == kind:
                    if all(condition.get(k) == v for k, v in wanted.items()):
                        return False
                    condition.update(wanted, lastTransitionTime=utc(self.clock.now()))
                    return True
            conditions.append({**wanted, "lastTransitionTime": utc(self.clock.now())})
            return True

        _write_condition(self, target, change)

    return set_


@mutant(
    "controller-transition-time-never-moves",
    ("condition-issued", "condition-revoked", "runbook"),
    "lastTransitionTime keeps the time the condition was first set, through every transition",
    f"{CONDITION}.set_credential_condition",
)
def _time_never_moves(original: Any) -> Any:
    def set_(self: Any, target: Any, status: str, reason: str, message: str) -> None:
        kind = self.contract.condition_type
        meta = target["metadata"]
        before = self.solar.get("Target", meta["name"], meta["namespace"])
        first = (find_condition(before, kind) or {}).get("lastTransitionTime")
        original(self, target, status, reason, message)
        if first is None:
            return

        def change(conditions: list[Any], fresh: Any) -> bool:
            for condition in conditions:
                if condition.get("type") == kind and condition.get("lastTransitionTime") != first:
                    condition["lastTransitionTime"] = first
                    return True
            return False

        _write_condition(self, target, change)

    return set_


@mutant(
    "controller-transition-time-of-the-target",
    ("condition-issued", "condition-disabled", "condition-mintfailed"),
    "lastTransitionTime is the Target's creationTimestamp, whatever the transition",
    f"{CONDITION}.set_credential_condition",
)
def _time_of_target(original: Any) -> Any:
    def set_(self: Any, target: Any, status: str, reason: str, message: str) -> None:
        original(self, target, status, reason, message)
        kind = self.contract.condition_type

        def change(conditions: list[Any], fresh: Any) -> bool:
            created = fresh["metadata"].get("creationTimestamp")
            for condition in conditions:
                if condition.get("type") == kind and condition.get("lastTransitionTime") != created:
                    condition["lastTransitionTime"] = created
                    return True
            return False

        _write_condition(self, target, change)

    return set_


@mutant(
    "controller-drops-other-conditions",
    ("condition-where", "table-controller"),
    "writing AgentCredentialReady replaces the Target's conditions: other components' go",
    f"{CONDITION}.set_credential_condition",
    equivalent=(
        "the page names one condition, AgentCredentialReady, and says nothing of any other "
        "condition on the Target; the one other component that writes one (solar-renderer's "
        "BootstrapReady, no statement of the page) writes it again on its next pass, and the "
        "controller writes the status only when its own condition changes"
    ),
)
def _drops_others(original: Any) -> Any:
    def set_(self: Any, target: Any, status: str, reason: str, message: str) -> None:
        original(self, target, status, reason, message)
        kind = self.contract.condition_type

        def change(conditions: list[Any], fresh: Any) -> bool:
            others = [c for c in conditions if c.get("type") != kind]
            conditions[:] = [c for c in conditions if c.get("type") == kind]
            return bool(others)

        _write_condition(self, target, change)

    return set_


@mutant(
    "controller-condition-appended",
    ("condition-where", "condition-issued"),
    "every change appends another AgentCredentialReady instead of updating the one there",
    f"{CONDITION}.set_credential_condition",
)
def _appended(original: Any) -> Any:
    def set_(self: Any, target: Any, status: str, reason: str, message: str) -> None:
        kind = self.contract.condition_type

        def change(conditions: list[Any], fresh: Any) -> bool:
            mine = [c for c in conditions if c.get("type") == kind]
            last = mine[-1] if mine else {}
            if (last.get("status"), last.get("reason"), last.get("message")) == (
                status,
                reason,
                message,
            ):
                return False
            conditions.append(
                {
                    "type": kind,
                    "status": status,
                    "reason": reason,
                    "message": message,
                    "lastTransitionTime": utc(self.clock.now()),
                }
            )
            return True

        _write_condition(self, target, change)

    return set_


# --- the Warning events and the backoff ---------------------------------------------------------
@mutant(
    "controller-event-about-the-serviceaccount",
    "condition-mintfailed-backoff",
    "a failed mint's Warning event names the Target but carries its ServiceAccount's uid, so "
    "`kubectl describe target` never shows it",
    f"{CONDITION}.record_mint_failure",
)
def _event_other_uid(original: Any) -> Any:
    def event(self: Any, target: Any, attempt: int, message: str) -> None:
        meta = target["metadata"]
        try:
            account = self.solar.get(
                "ServiceAccount", f"solar-agent-{meta['name']}", meta["namespace"]
            )
        except ApiError:
            account = {"metadata": {"uid": ""}}
        other = {**target, "metadata": {**meta, "uid": account["metadata"].get("uid", "")}}
        original(self, other, attempt, message)

    return event


@mutant(
    "controller-event-normal",
    "condition-mintfailed-backoff",
    "a failed mint is recorded as a Normal event, not a Warning",
    f"{CONDITION}.record_mint_failure",
)
def _event_normal(original: Any) -> Any:
    def changes(real: Any) -> dict[str, Any]:
        def create(obj: Any) -> Any:
            if obj.get("kind") == "Event":
                obj = {**obj, "type": "Normal"}
            return real.create(obj)

        return {"create": create}

    return with_solar_changed(original, changes)


@mutant(
    "controller-backoff-kept-after-success",
    ("condition-mintfailed-backoff", "condition-mintfailed"),
    "a successful mint keeps the count of failures: the next failure waits as long as the last "
    "one before the success, not the initial wait",
    f"{C}.reconcile",
)
def _backoff_kept(original: Any) -> Any:
    def reconcile(self: Any, target: Any) -> float:
        key = (target["metadata"]["namespace"], target["metadata"]["name"])
        before = self._backoff.get(key)
        failures = before.failures if before is not None else 0
        delay = float(original(self, target))
        if failures and key not in self._backoff:
            kept = type(before)(failures=failures)
            self._backoff[key] = kept
        return delay

    return reconcile


@mutant(
    "controller-backoff-by-name-only",
    ("condition-mintfailed-backoff", "separate-namespaces"),
    "the mint backoff is kept by Target name alone: a failing Target delays the mints of the "
    "Target of the same name in every other namespace",
    f"{TOKEN}.mint_token",
)
def _backoff_by_name(original: Any) -> Any:
    def mint(self: Any, target: Any, names: Any, labels: Any, current: Any, held: Any) -> float:
        name = target["metadata"]["name"]
        key = (target["metadata"]["namespace"], name)
        shared = self._backoff.get(("*", name))
        if shared is not None and key not in self._backoff:
            self._backoff[key] = shared
        wait = float(original(self, target, names, labels, current, held))
        if key in self._backoff:
            self._backoff[("*", name)] = self._backoff[key]
        return wait

    return mint


# --- deletion: what a deleted Target takes with it -------------------------------------------------
@mutant(
    "controller-deletion-takes-namesakes",
    ("separate-namespaces", "table-controller", "runbook"),
    "when a Target is gone the controller deletes the token Secrets of that name in every "
    "namespace, so a namesake in another namespace loses its token",
    f"{C}.forget",
)
def _takes_namesakes(original: Any) -> Any:
    def forget(self: Any, namespace: str, name: str) -> None:
        original(self, namespace, name)
        labels = self.contract.credential_labels(name)
        self.delete_token_secrets(self.solar.list("Secret", None, labels=labels))

    return forget


@mutant(
    "controller-deletion-takes-the-namespace",
    ("table-controller", "runbook", "intro-setup-once"),
    "when a Target is gone the controller deletes every token Secret of its namespace",
    f"{C}.forget",
)
def _takes_namespace(original: Any) -> Any:
    def forget(self: Any, namespace: str, name: str) -> None:
        original(self, namespace, name)
        label = self.contract.credential_label
        for secret in self.solar.list("Secret", namespace):
            if label in labels_of(secret):
                self.delete_token_secrets([secret])

    return forget


# --- where the token appears --------------------------------------------------------------------
@mutant(
    "controller-token-in-event",
    ("table-controller", "security-notes"),
    "every mint is recorded as a Normal event on the Target whose message carries the token",
    f"{CONDITION}.report_issued",
)
def _token_in_event(original: Any) -> Any:
    from solar_conformance.core.api import new_object
    from solar_conformance.core.conditions import secret_value

    def report_issued(self: Any, target: Any, secret: Any) -> None:
        original(self, target, secret)
        token = secret_value(secret, self.contract.token_key)
        meta = target["metadata"]
        name = f"{meta['name']}.minted-{secret['metadata']['name']}"
        try:
            self.solar.get("Event", name, meta["namespace"])
            return
        except ApiError as error:
            if error.status != 404:
                raise
        self.solar.create(
            new_object(
                "Event",
                name,
                meta["namespace"],
                involvedObject={"kind": "Target", "name": meta["name"], "uid": meta["uid"]},
                reason="TokenMinted",
                message=f"minted {token}",
                type="Normal",
            )
        )

    return report_issued


@mutant(
    "controller-token-in-target-annotation",
    ("table-controller", "security-notes"),
    "the controller writes the token it minted into an annotation of the Target",
    f"{CONDITION}.report_issued",
)
def _token_on_target(original: Any) -> Any:
    from solar_conformance.core.conditions import secret_value

    def report_issued(self: Any, target: Any, secret: Any) -> None:
        original(self, target, secret)
        token = secret_value(secret, self.contract.token_key)
        meta = target["metadata"]
        fresh = self.solar.get("Target", meta["name"], meta["namespace"])
        notes = fresh["metadata"].setdefault("annotations", {})
        if notes.get("solar.opendefense.cloud/last-token") != token:
            notes["solar.opendefense.cloud/last-token"] = token
            self.solar.update(fresh)

    return report_issued


# --- the credential's scope -----------------------------------------------------------------------
@mutant(
    "controller-role-deletes-own-report",
    ("scope", "scope-patch"),
    "the Role also lets the agent delete its own TargetReport",
    f"{ACCESS}.agent_rules",
)
def _delete_report(original: Any) -> Any:
    def agent_rules(target: str) -> list[Any]:
        rules: list[Any] = list(original(target))
        rules[1] = {**rules[1], "verbs": [*rules[1]["verbs"], "delete"]}
        return rules

    return agent_rules


@mutant(
    "controller-binds-namespace-serviceaccounts",
    ("scope", "separate-namespaces"),
    "the RoleBinding also binds the group of every ServiceAccount of the namespace, so every "
    "sibling agent gets the Target's grant",
    f"{ACCESS}.ensure_object",
)
def _binds_group(original: Any) -> Any:
    def ensure(self: Any, wanted: Any, compare: tuple[str, ...] = ()) -> None:
        if wanted.get("kind") == "RoleBinding":
            namespace = wanted["metadata"]["namespace"]
            wanted = {
                **wanted,
                "subjects": [
                    *wanted["subjects"],
                    {
                        "kind": "Group",
                        "apiGroup": "rbac.authorization.k8s.io",
                        "name": f"system:serviceaccounts:{namespace}",
                    },
                ],
            }
        original(self, wanted, compare)

    return ensure


# --- the Profile controller ---------------------------------------------------------------------
@mutant(
    "profile-never-unbinds",
    ("table-operator", "bound-without-steps"),
    "a ReleaseBinding stays when its Target no longer matches the selector or is deleted",
    f"{P}.reconcile",
)
def _never_unbinds(original: Any) -> Any:
    def changes(real: Any) -> dict[str, Any]:
        def delete(kind: str, name: str, namespace: str | None = None) -> Any:
            if kind == "ReleaseBinding":
                return None
            return real.delete(kind, name, namespace)

        return {"delete": delete}

    return with_solar_changed(original, changes)


@mutant(
    "profile-status-counts-bindings",
    ("table-operator",),
    "a Profile's matchedTargets counts every ReleaseBinding of its namespace, of any Profile",
    f"{P}.reconcile",
)
def _counts_bindings(original: Any) -> Any:
    def reconcile(self: Any, profile: Any) -> None:
        original(self, profile)
        meta = profile["metadata"]
        count = len(self.solar.list("ReleaseBinding", meta["namespace"]))
        fresh = self.solar.get("Profile", meta["name"], meta["namespace"])
        if fresh.get("status", {}).get("matchedTargets") != count:
            fresh.setdefault("status", {})["matchedTargets"] = count
            self.solar.update_status(fresh)

    return reconcile


# --- reaching into the target cluster ------------------------------------------------------------
@mutant(
    "controller-writes-into-target",
    "no-reach",
    "SolAr reaches into the target cluster: on each Target the controller writes a ConfigMap into "
    "the target's `default` namespace, annotated with the Target",
    f"{C}.reconcile",
    also=(REMEMBER_TARGET_CLUSTER,),
)
def _writes_into_target(original: Any) -> Any:
    from solar_conformance.core.api import new_object

    def reconcile(self: Any, target: Any) -> float:
        delay = float(original(self, target))
        client = target_cluster()
        if client is not None:
            namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
            note = new_object(
                "ConfigMap",
                f"solar-target-{name}",
                "default",
                annotations={"solar.opendefense.cloud/target": f"{namespace}/{name}"},
                data={"target": name},
            )
            with contextlib.suppress(ApiError):
                client.create(note)
        return delay

    return reconcile
