"""Conforming variants of solar-controller-manager (simulators/reference/controller.py): SolArs
that differ from the reference only in what the page leaves open, so every scenario must pass
them. Names, the shape of the Role, timestamps, the condition's wording, the token Secret, the
profile's choices, the order of the writes, conflicts, labels, other conditions and Events."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from core.api import SOLAR_GROUP, ApiError, annotations_of, find_condition, new_object
from core.clock import utc
from core.conditions import set_condition
from mutants.model import Patch, patch, variant

C = "simulators.reference.controller:CredentialController"
NAMES = "simulators.reference.controller:CredentialNames"
CONTROLLER = "simulators.reference.controller"


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


# --- the Role: the same grant, other shapes -------------------------------------------------------
@patch(f"{C}.agent_rules")
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


@patch(f"{C}._ensure_access")
def _role_per_resource(original: Any) -> Any:
    def ensure_access(self: Any, target: Any, names: Any, labels: dict[str, str]) -> None:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        account = names.service_account
        self._ensure(new_object("ServiceAccount", account, namespace, labels=labels, owner=target))
        for suffix, rule in zip(("target", "report"), self.agent_rules(name), strict=True):
            role = f"{names.role}-{suffix}"
            self._ensure(
                new_object("Role", role, namespace, labels=labels, owner=target, rules=[rule]),
                compare=("rules",),
            )
            self._ensure(
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


@patch(f"{C}._ensure_access")
def _cluster_role(original: Any) -> Any:
    def ensure_access(self: Any, target: Any, names: Any, labels: dict[str, str]) -> None:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        account = names.service_account
        role = _cluster_role_name(namespace, name)
        self._ensure(new_object("ServiceAccount", account, namespace, labels=labels, owner=target))
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
        self._ensure(
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


@patch(f"{C}.agent_rules")
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


# --- timestamps: every RFC 3339 form --------------------------------------------------------------
CENTRAL_EUROPEAN_SUMMER = timezone(timedelta(hours=2))


def _with_offset(moment: datetime) -> str:
    """Local time with its offset, as a component in Central Europe writes it in summer."""
    return moment.astimezone(CENTRAL_EUROPEAN_SUMMER).strftime("%Y-%m-%dT%H:%M:%S+02:00")


def _fractional(moment: datetime) -> str:
    """Nanoseconds, every digit written (metav1.MicroTime writes six, Go's RFC3339Nano nine)."""
    return f"{moment.astimezone(UTC):%Y-%m-%dT%H:%M:%S}.{moment.microsecond:06d}000Z"


def _rewritten_time(text: str, write: Any) -> str:
    return str(write(datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)))


def _times_written_as(write: Any) -> tuple[Patch, ...]:
    """lastReportTime, lastTransitionTime and the Issued message's expiry, written by `write`."""

    @patch("simulators.reference.agent:utc", rebind=())
    def agent_time(original: Any) -> Any:
        return write

    @patch(f"{CONTROLLER}:set_condition", rebind=())
    def transition_time(original: Any) -> Any:
        def set_(obj: Any, kind: str, status: str, reason: str, message: str, now: Any) -> bool:
            changed = bool(original(obj, kind, status, reason, message, now))
            for condition in obj.get("status", {}).get("conditions", []):
                text = condition.get("lastTransitionTime")
                if condition.get("type") == kind and str(text).endswith("Z") and "." not in text:
                    condition["lastTransitionTime"] = _rewritten_time(text, write)
            return changed

        return set_

    @patch(f"{C}._report_issued")
    def expiry(original: Any) -> Any:
        def report_issued(self: Any, target: Any, secret: Any) -> None:
            text = annotations_of(secret).get(self.contract.expiry_annotation, "?")
            meta = secret["metadata"]
            self._set(
                target,
                "True",
                "Issued",
                f"token in Secret {meta['namespace']}/{meta['name']}, expires at "
                f"{_rewritten_time(text, write)}",
            )

        return report_issued

    return agent_time, transition_time, expiry


variant(
    "variant-times-with-offset",
    ("report-advances", "condition-issued", "condition-where"),
    "lastReportTime, lastTransitionTime and the Issued message's expiry are written in local "
    "time with its offset (+02:00), not in UTC with Z",
    *_times_written_as(_with_offset),
)

variant(
    "variant-times-with-fractions",
    ("report-advances", "condition-issued", "condition-where"),
    "lastReportTime, lastTransitionTime and the Issued message's expiry are written with "
    "nanoseconds (2026-01-01T00:00:05.250000000Z)",
    *_times_written_as(_fractional),
)


# --- the condition's wording ------------------------------------------------------------------
@patch(f"{C}._report_issued")
def _reworded(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        expiry = annotations_of(secret).get(self.contract.expiry_annotation, "?")
        meta = secret["metadata"]
        self._set(
            target,
            "True",
            "Issued",
            f"the agent's credential is kept in {meta['namespace']}/{meta['name']} and is "
            f"valid until {expiry}",
        )

    return report_issued


variant(
    "variant-message-reworded",
    ("condition-issued",),
    "the Issued message says 'kept in <namespace>/<name> and is valid until <time>', which the "
    "profile's message patterns describe",
    _reworded,
    profile={
        "message_secret_pattern": r"kept in (?P<namespace>[a-z0-9.-]+)/(?P<name>[a-z0-9.-]+)",
        "message_expiry_pattern": r"valid until (?P<expiry>\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:\d\d))",
    },
)


@patch(f"{C}._report_issued")
def _expiry_first(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        expiry = annotations_of(secret).get(self.contract.expiry_annotation, "?")
        meta = secret["metadata"]
        self._set(
            target,
            "True",
            "Issued",
            f"Issued a token that expires at {expiry}. Secret {meta['namespace']}/{meta['name']} "
            "holds it.",
        )

    return report_issued


variant(
    "variant-message-expiry-first",
    ("condition-issued",),
    "the Issued message names the expiry first and the Secret after it, in the reference "
    "profile's words",
    _expiry_first,
)


@patch(f"{C}._report_issued")
def _secret_alone(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        expiry = annotations_of(secret).get(self.contract.expiry_annotation, "?")
        self._set(
            target,
            "True",
            "Issued",
            f"token in secret/{secret['metadata']['name']}, expires at {expiry}",
        )

    return report_issued


variant(
    "variant-message-names-the-secret-alone",
    ("condition-issued",),
    "the Issued message names the Secret as kubectl does, secret/<name>, without its namespace "
    "(the Target's), which the profile's pattern describes",
    _secret_alone,
    profile={"message_secret_pattern": r"secret/(?P<name>[a-z0-9.-]+)"},
)


# --- the token Secret ---------------------------------------------------------------------------
@patch(f"{CONTROLLER}:new_object", rebind=())
def _custom_secret_type(original: Any) -> Any:
    def made(kind: str, name: str, namespace: str | None = None, **fields: Any) -> Any:
        if kind == "Secret":
            fields["type"] = "solar.opendefense.cloud/agent-token"
        return original(kind, name, namespace, **fields)

    return made


variant(
    "variant-secret-type-and-key",
    ("table-controller", "condition-issued"),
    "the token Secret has the type solar.opendefense.cloud/agent-token and keeps the token under "
    "the key agent-token, as its profile says",
    _custom_secret_type,
    profile={"token_key": "agent-token"},
)

variant(
    "variant-credential-labels",
    ("table-controller",),
    "the credential's objects carry other labels (agent.solar.example/target and "
    "agent.solar.example/credential), as its profile says",
    profile={
        "target_label": "agent.solar.example/target",
        "credential_label": "agent.solar.example/credential",
    },
)

variant(
    "variant-token-lifetime-an-hour",
    ("runbook", "condition-issued"),
    "every token lives an hour, as its profile says",
    profile={"token_lifetime_seconds": 3600},
)

variant(
    "variant-rotates-late",
    ("runbook",),
    "every token lives 20 minutes and is rotated once it is 90 % of that old, as its profile says",
    profile={"token_lifetime_seconds": 1200, "rotate_after_fraction": 0.9},
)

variant(
    "variant-gentler-backoff",
    ("condition-mintfailed", "condition-mintfailed-backoff"),
    "a failed mint is retried after 2 s, doubling up to 20 s, as its profile says",
    profile={"mint_backoff_initial_seconds": 2.0, "mint_backoff_cap_seconds": 20.0},
)


# --- the order of the writes, and conflicts ------------------------------------------------------
@patch(f"{C}.reconcile")
def _issues_first(original: Any) -> Any:
    """The first pass of a Target makes its ServiceAccount, mints and sets the condition; the
    Role, RoleBinding and TargetReport come with the next pass, a second later."""

    def reconcile(self: Any, target: Any) -> float:
        meta = target["metadata"]
        passes: set[str] = self.__dict__.setdefault("variant_first_passes", set())
        if meta.get("uid") in passes:
            return float(original(self, target))
        passes.add(meta.get("uid"))

        def account_only(target: Any, names: Any, labels: dict[str, str]) -> None:
            self._ensure(
                new_object(
                    "ServiceAccount",
                    names.service_account,
                    meta["namespace"],
                    labels=labels,
                    owner=target,
                )
            )

        self.__dict__["_ensure_access"] = account_only
        self.__dict__["_ensure_report"] = lambda target, labels: None
        try:
            delay = float(original(self, target))
        finally:
            del self.__dict__["_ensure_access"], self.__dict__["_ensure_report"]
        return min(delay, 1.0)

    return reconcile


variant(
    "variant-issues-before-the-role",
    ("table-controller", "condition-issued"),
    "the controller mints and sets Issued on a Target's first pass and creates the Role, "
    "RoleBinding and TargetReport on its next, a second later",
    _issues_first,
)


@patch(f"{C}._set")
def _stale_status_first(original: Any) -> Any:
    def set_(self: Any, target: Any, status: str, reason: str, message: str) -> None:
        meta = target["metadata"]
        cache: dict[Any, Any] = self.__dict__.setdefault("variant_status_reads", {})
        key = (meta["namespace"], meta["name"])
        stale, cache[key] = cache.get(key), _copy(target)
        if stale is not None and set_condition(
            stale, self.contract.condition_type, status, reason, message, self.clock.now()
        ):
            try:
                self.solar.update_status(stale)
                return
            except ApiError as error:
                if error.status != 409:
                    raise
                self.log(f"status of {key[1]}: {error.reason}; reading the Target again")
        original(self, target, status, reason, message)

    return set_


@patch("simulators.reference.agent:Agent.report")
def _stale_report_first(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        stale = self.__dict__.get("variant_report_read")
        self.__dict__["variant_report_read"] = _copy(
            solar.get("TargetReport", self.target, self.namespace)
        )
        if stale is not None:
            stale.setdefault("spec", {})["lastReportTime"] = utc(self.clock.now())
            try:
                solar.update(stale)
                return
            except ApiError as error:
                if error.status != 409:
                    raise
                self.log(f"report of {self.namespace}/{self.target}: conflict, trying again")
        original(self, solar)

    return report


def _copy(obj: Any) -> Any:
    import copy

    return copy.deepcopy(obj)


variant(
    "variant-conflicts-retried",
    ("table-controller", "table-agent", "report-advances"),
    "the controller writes the condition and the agent its report first from what they read "
    "before, meet 409 Conflict and write again from a fresh read",
    _stale_status_first,
    _stale_report_first,
)


# --- more than the page asks for: labels, conditions, Events ------------------------------------
MANAGED = {
    "app.kubernetes.io/managed-by": "solar-controller-manager",
    "app.kubernetes.io/part-of": "solar",
}


@patch(f"{CONTROLLER}:new_object", rebind=())
def _labelled(original: Any) -> Any:
    def made(kind: str, name: str, namespace: str | None = None, **fields: Any) -> Any:
        fields["labels"] = {**(fields.get("labels") or {}), **MANAGED}
        fields["annotations"] = {
            **(fields.get("annotations") or {}),
            "solar.opendefense.cloud/generated-by": "solar-controller-manager v0.3.0",
        }
        return original(kind, name, namespace, **fields)

    return made


variant(
    "variant-more-labels-and-annotations",
    ("table-controller", "table-controller-owned"),
    "every object the controller makes carries more labels and annotations "
    "(app.kubernetes.io/managed-by, part-of, a generated-by note)",
    _labelled,
)


@patch(f"{C}._set")
def _other_conditions(original: Any) -> Any:
    def set_(self: Any, target: Any, status: str, reason: str, message: str) -> None:
        original(self, target, status, reason, message)
        meta = target["metadata"]
        fresh = self.solar.get("Target", meta["name"], meta["namespace"])
        conditions = fresh.setdefault("status", {}).setdefault("conditions", [])
        if find_condition(fresh, "Ready") is not None:
            return
        now = utc(self.clock.now())
        conditions[:0] = [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Reconciled",
                "message": "",
                "lastTransitionTime": now,
            },
            {
                "type": "Synced",
                "status": "Unknown",
                "reason": "Pending",
                "message": "waiting for the first sync",
                "lastTransitionTime": now,
            },
        ]
        try:
            self.solar.update_status(fresh)
        except ApiError as error:
            if error.status != 409:
                raise  # a conflict: written again with the next status write

    return set_


variant(
    "variant-other-conditions-first",
    ("condition-where", "condition-issued"),
    "the Target also carries conditions of other controllers (Ready, Synced), listed before "
    "AgentCredentialReady",
    _other_conditions,
)


def _record(self: Any, target: Any, kind: str, reason: str, message: str) -> None:
    meta = target["metadata"]
    now = utc(self.clock.now())
    event = new_object(
        "Event",
        f"{meta['name']}.{reason.lower()}-{int(self.clock.now().timestamp() * 1000)}",
        meta["namespace"],
        involvedObject={
            "apiVersion": target["apiVersion"],
            "kind": "Target",
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
        },
        reason=reason,
        message=message,
        type=kind,
        firstTimestamp=now,
        lastTimestamp=now,
        count=1,
        source={"component": "solar-controller-manager"},
    )
    try:
        self.solar.create(event)
    except ApiError as error:
        self.log(f"could not record event: {error}")


@patch(f"{C}._report_issued")
def _issued_events(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        before = find_condition(target, self.contract.condition_type) or {}
        original(self, target, secret)
        if secret["metadata"]["name"] not in str(before.get("message", "")):
            _record(self, target, "Normal", "TokenIssued", f"Secret {secret['metadata']['name']}")

    return report_issued


@patch(f"{C}._event")
def _more_warnings(original: Any) -> Any:
    def event(self: Any, target: Any, attempt: int, message: str) -> None:
        original(self, target, attempt, message)
        _record(self, target, "Warning", "ReconcileError", f"attempt {attempt} failed")

    return event


variant(
    "variant-events-of-other-reasons",
    ("condition-mintfailed-backoff", "condition-issued"),
    "the controller also records Events of other reasons on the Target: Normal TokenIssued for "
    "each new token, Warning ReconcileError beside each MintFailed",
    _issued_events,
    _more_warnings,
)


@patch(f"{C}._event")
def _aggregated(original: Any) -> Any:
    """As client-go's event recorder does: one Event per Target and reason, its count grown."""

    def event(self: Any, target: Any, attempt: int, message: str) -> None:
        meta = target["metadata"]
        for found in self.solar.list("Event", meta["namespace"]):
            involved = found.get("involvedObject") or {}
            if (involved.get("uid"), found.get("reason")) == (
                meta["uid"],
                self.contract.mint_failed_event_reason,
            ):
                found["count"] = int(found.get("count") or 1) + 1
                found["message"] = message
                found["lastTimestamp"] = utc(self.clock.now())
                self.solar.update(found)
                return
        original(self, target, attempt, message)

    return event


variant(
    "variant-events-aggregated",
    ("condition-mintfailed-backoff",),
    "failed mints are one Warning Event per Target whose count grows with each attempt, as "
    "client-go's event recorder aggregates them",
    _aggregated,
)
