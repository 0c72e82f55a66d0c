"""Conforming variants of how solar-controller-manager and the agent write (solar_conformance/simulators/reference/
controller.py, agent.py): in another order across passes, after conflicts, with more labels and
annotations, beside other controllers' conditions, with Events of other reasons or aggregated.
Every scenario must pass them."""

from __future__ import annotations

from typing import Any

from solar_conformance.core.api import ApiError, find_condition, new_object
from solar_conformance.core.clock import parse_utc, utc
from solar_conformance.core.conditions import set_condition
from tests.mutants.model import patch, variant

ACCESS = "solar_conformance.simulators.reference.agent_access:AgentAccess"
CONDITION = "solar_conformance.simulators.reference.credential_condition:CredentialCondition"
C = "solar_conformance.simulators.reference.controller:CredentialController"
ACCESS_MODULE = "solar_conformance.simulators.reference.agent_access"
TOKEN_MODULE = "solar_conformance.simulators.reference.agent_token"
CONDITION_MODULE = "solar_conformance.simulators.reference.credential_condition"


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
            self.ensure_object(
                new_object(
                    "ServiceAccount",
                    names.service_account,
                    meta["namespace"],
                    labels=labels,
                    owner=target,
                )
            )

        self.__dict__["ensure_access"] = account_only
        self.__dict__["ensure_report"] = lambda target, labels: None
        try:
            delay = float(original(self, target))
        finally:
            del self.__dict__["ensure_access"], self.__dict__["ensure_report"]
        return min(delay, 1.0)

    return reconcile


variant(
    "variant-issues-before-the-role",
    ("table-controller", "condition-issued"),
    "the controller mints and sets Issued on a Target's first pass and creates the Role, "
    "RoleBinding and TargetReport on its next, a second later",
    _issues_first,
)


@patch(f"{CONDITION}.set_credential_condition")
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


@patch("solar_conformance.simulators.reference.agent:Agent.report")
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


@patch(
    f"{ACCESS_MODULE}:new_object",
    rebind=(TOKEN_MODULE, CONDITION_MODULE),
)
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


@patch(f"{CONDITION}.set_credential_condition")
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


@patch(f"{CONDITION}.report_issued")
def _issued_events(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        before = find_condition(target, self.contract.condition_type) or {}
        original(self, target, secret)
        if secret["metadata"]["name"] not in str(before.get("message", "")):
            _record(self, target, "Normal", "TokenIssued", f"Secret {secret['metadata']['name']}")

    return report_issued


@patch(f"{CONDITION}.record_mint_failure")
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


@patch(f"{CONDITION}.record_mint_failure")
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


@patch(f"{ACCESS}.ensure_report")
def _report_status(original: Any) -> Any:
    """Dead-agent detection as upstream's draft plans it: the controller reads the heartbeat and
    keeps a condition in the TargetReport's status (the status subresource, which the agent's
    Role does not grant), written when it changes."""

    def ensure_report(self: Any, target: Any, labels: dict[str, str]) -> None:
        original(self, target, labels)
        meta = target["metadata"]
        report = self.solar.get("TargetReport", meta["name"], meta["namespace"])
        reported = bool(report.get("spec", {}).get("lastReportTime"))
        status, reason = ("True", "Reporting") if reported else ("False", "NoReportYet")
        if set_condition(report, "AgentReporting", status, reason, "", self.clock.now()):
            try:
                self.solar.update_status(report)
            except ApiError as error:
                if error.status != 409:
                    raise  # a conflict with the agent's report: written on a later pass

    return ensure_report


variant(
    "variant-controller-keeps-report-status",
    ("table-agent", "report-after-install"),
    "the controller keeps a condition in the TargetReport's status (AgentReporting, from the "
    "heartbeat), beside the agent's reports in its spec",
    _report_status,
)


# --- finalizers ----------------------------------------------------------------------------------
CLEANUP_FINALIZER = "solar.opendefense.cloud/target-finalizer"
FINALIZER_HELD_SECONDS = 3.0


@patch(f"{C}.reconcile")
def _holds_targets_with_a_finalizer(original: Any) -> Any:
    """As upstream's controller-manager does: a finalizer on every Target, removed a few seconds
    after the Target's deletion was requested; until then the Target is there, being deleted."""

    def reconcile(self: Any, target: Any) -> float:
        meta = target["metadata"]
        held = list(meta.get("finalizers") or [])
        where = ("Target", meta["name"], meta["namespace"])
        if meta.get("deletionTimestamp"):
            if CLEANUP_FINALIZER not in held:
                return FINALIZER_HELD_SECONDS
            since = parse_utc(meta["deletionTimestamp"])
            waited: float = (self.clock.now() - since).total_seconds()
            if waited < FINALIZER_HELD_SECONDS:
                return FINALIZER_HELD_SECONDS - waited
            left = [name for name in held if name != CLEANUP_FINALIZER]
            self.solar.patch(*where, {"metadata": {"finalizers": left or None}})
            return FINALIZER_HELD_SECONDS
        if CLEANUP_FINALIZER not in held:
            target = self.solar.patch(
                *where, {"metadata": {"finalizers": [*held, CLEANUP_FINALIZER]}}
            )
        return float(original(self, target))

    return reconcile


variant(
    "variant-targets-held-by-a-finalizer",
    ("table-controller", "runbook"),
    "the controller puts a finalizer on every Target and removes it three seconds after the "
    "Target's deletion was requested, as upstream's controller-manager holds its Targets",
    _holds_targets_with_a_finalizer,
)
