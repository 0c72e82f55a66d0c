"""Broken solar-controller-manager credential controllers (simulators/reference/controller.py)
and broken conditions (core/conditions.py)."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any

from core.api import ApiError, annotations_of
from core.clock import parse_utc, utc
from mutants.model import Wrapped, mutant

C = "simulators.reference.controller:CredentialController"


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
    "the agent's Role also allows list on Targets",
    f"{C}.agent_rules",
)(_rules(lambda rules: rules[0]["verbs"].append("list")))
mutant(
    "controller-role-any-targetreport",
    "scope",
    "the agent's Role grants its TargetReport verbs without resourceNames (every TargetReport)",
    f"{C}.agent_rules",
)(_rules(lambda rules: rules[1].pop("resourceNames")))
mutant(
    "controller-role-report-status",
    "scope",
    "the agent's Role also grants targetreports/status",
    f"{C}.agent_rules",
)(_rules(lambda rules: rules[1]["resources"].append("targetreports/status")))
mutant(
    "controller-role-every-resource",
    "scope",
    "the agent's first rule names every resource of the SolAr group instead of targets",
    f"{C}.agent_rules",
)(_rules(lambda rules: rules[0].update(resources=["*"])))
mutant(
    "controller-role-no-update",
    ("scope", "table-agent", "report-advances"),
    "the agent's Role lacks update on its TargetReport (the agent cannot report)",
    f"{C}.agent_rules",
)(_rules(lambda rules: rules[1].update(verbs=["get", "patch"])))
mutant(
    "controller-role-no-get-target",
    ("scope", "table-agent"),
    "the agent's Role lacks get on its own Target",
    f"{C}.agent_rules",
)(_rules(lambda rules: rules.pop(0)))
mutant(
    "controller-role-no-patch",
    "scope-patch",
    "the agent's Role grants get and update on its TargetReport, not patch",
    f"{C}.agent_rules",
)(_rules(lambda rules: rules[1].update(verbs=["get", "update"])))
mutant(
    "controller-role-reads-secrets",
    ("scope", "separate-namespaces"),
    "the agent's Role also lets it read the token Secrets of its namespace",
    f"{C}.agent_rules",
)(
    _rules(
        lambda rules: rules.append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})
    )
)


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
    f"{C}._ensure",
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
    f"{C}._ensure",
)(_binding(lambda b: b["subjects"][0].update(name="default")))


@mutant(
    "controller-no-owner-references",
    ("table-controller-owned", "runbook"),
    "the ServiceAccount, Role, RoleBinding, TargetReport and token Secret carry no owner reference",
    f"{C}._ensure",
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
    f"{C}._ensure_access",
)
def _everywhere(original: Any) -> Any:
    from core.api import ApiError, new_object

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
    f"{C}._ensure_report",
)
def _no_report(original: Any) -> Any:
    return lambda self, target, labels: None


@mutant(
    "controller-report-named-differently",
    ("table-controller", "intro-one-report"),
    "the TargetReport is named <target>-report, not like the Target",
    f"{C}._ensure_report",
)
def _report_renamed(original: Any) -> Any:
    from core.api import ApiError, new_object

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
    f"{C}._ensure",
)
def _prefilled(original: Any) -> Any:
    def ensure(self: Any, wanted: dict[str, Any], compare: tuple[str, ...] = ()) -> None:
        if wanted["kind"] == "TargetReport":
            wanted["spec"]["lastReportTime"] = utc(self.clock.now())
        original(self, wanted, compare)

    return ensure


@mutant(
    "controller-writes-report",
    ("table-agent", "intro-one-report"),
    "solar-controller-manager writes lastReportTime itself, as its own user",
    f"{C}._ensure_report",
)
def _controller_reports(original: Any) -> Any:
    def ensure_report(self: Any, target: Any, labels: Any) -> None:
        original(self, target, labels)
        meta = target["metadata"]
        report = self.solar.get("TargetReport", meta["name"], meta["namespace"])
        if not report.get("spec", {}).get("lastReportTime"):
            return  # only once the agent has reported: the report is not empty before that
        report["spec"]["lastReportTime"] = utc(self.clock.now())
        self.solar.update(report)

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


# --- the condition -------------------------------------------------------------------------------
@mutant(
    "controller-ignores-revocation",
    ("condition-revoked", "runbook"),
    "the revocation annotation is ignored: a token is issued anyway",
    f"{C}.reconcile",
)
def _no_revocation(original: Any) -> Any:
    def reconcile(self: Any, target: Any) -> float:
        notes = target["metadata"].get("annotations") or {}
        notes.pop(self.contract.revocation_annotation, None)
        return float(original(self, target))

    return reconcile


def _revoked(self: Any, target: Any) -> bool:
    notes = annotations_of(target)
    return bool(notes.get(self.contract.revocation_annotation) == self.contract.revoked_value)


@mutant(
    "controller-revocation-keeps-secret",
    "runbook",
    "revoking sets Revoked but keeps the token Secret, so the old token keeps working",
    f"{C}.reconcile",
)
def _keeps_secrets(original: Any) -> Any:
    def reconcile(self: Any, target: Any) -> float:
        if not _revoked(self, target):
            return float(original(self, target))
        self._delete_secrets = lambda secrets: None
        try:
            return float(original(self, target))
        finally:
            del self._delete_secrets

    return reconcile


@mutant(
    "controller-ignores-disabled",
    "condition-disabled",
    "without controller.agent.apiserverURL the controller mints a token anyway",
    f"{C}.reconcile",
)
def _no_disabled(original: Any) -> Any:
    def reconcile(self: Any, target: Any) -> float:
        url = self.config.apiserver_url
        self.config.apiserver_url = url or "https://unset.invalid"
        try:
            return float(original(self, target))
        finally:
            self.config.apiserver_url = url

    return reconcile


@mutant(
    "controller-condition-renamed",
    "condition-where",
    "the condition on the Target is called CredentialReady, not AgentCredentialReady",
    f"{C}._set",
)
def _renamed(original: Any) -> Any:
    from core.conditions import set_condition

    def set_(self: Any, target: Any, status: str, reason: str, message: str) -> None:
        meta = target["metadata"]
        fresh = self.solar.get("Target", meta["name"], meta["namespace"])
        if set_condition(fresh, "CredentialReady", status, reason, message, self.clock.now()):
            self.solar.update_status(fresh)

    return set_


@mutant(
    "controller-message-without-expiry",
    "condition-issued",
    "the Issued message names the Secret but not the token's expiry",
    f"{C}._report_issued",
)
def _no_expiry(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        meta = secret["metadata"]
        self._set(target, "True", "Issued", f"token in Secret {meta['namespace']}/{meta['name']}")

    return report_issued


@mutant(
    "controller-expiry-an-hour-off",
    "condition-issued",
    "the Issued message names an expiry an hour later than the token's",
    f"{C}._report_issued",
)
def _expiry_off(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        meta = secret["metadata"]
        expiry = annotations_of(secret).get(self.contract.expiry_annotation)
        later = utc(parse_utc(expiry) + timedelta(hours=1)) if expiry else "?"
        message = f"token in Secret {meta['namespace']}/{meta['name']}, expires at {later}"
        self._set(target, "True", "Issued", message)

    return report_issued


@mutant(
    "controller-message-names-first-secret",
    ("runbook", "condition-issued"),
    "after a new token the Issued message keeps naming the first Secret and expiry it named",
    f"{C}._report_issued",
)
def _first_secret(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        from core.api import find_condition

        fresh = self.solar.get(
            "Target", target["metadata"]["name"], target["metadata"]["namespace"]
        )
        condition = find_condition(fresh, self.contract.condition_type) or {}
        if condition.get("reason") == "Issued":
            return
        original(self, target, secret)

    return report_issued


@mutant(
    "controller-mint-error-hidden",
    "condition-mintfailed",
    "the MintFailed message does not carry the API server's error",
    f"{C}._failed",
)
def _hidden_error(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        return float(original(self, target, current, backoff, "the token could not be created"))

    return failed


@mutant(
    "controller-mint-failed-says-disabled",
    "condition-mintfailed",
    "a failed mint is reported with reason Disabled",
    f"{C}._set",
)
def _wrong_reason(original: Any) -> Any:
    def set_(self: Any, target: Any, status: str, reason: str, message: str) -> None:
        original(self, target, status, "Disabled" if reason == "MintFailed" else reason, message)

    return set_


# --- retries -------------------------------------------------------------------------------------
@mutant(
    "controller-mint-never-retried",
    "condition-mintfailed",
    "after a failed mint the controller never tries again",
    f"{C}._failed",
)
def _no_retry(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        original(self, target, current, backoff, message)
        backoff.next_attempt = self.clock.now() + timedelta(days=365)
        return float(self.config.resync_seconds)

    return failed


@mutant(
    "controller-mint-no-backoff",
    "condition-mintfailed-backoff",
    "a failed mint is retried every second, without growing waits",
    f"{C}._failed",
)
def _hot_loop(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        original(self, target, current, backoff, message)
        backoff.next_attempt = self.clock.now() + timedelta(seconds=1)
        return 1.0

    return failed


@mutant(
    "controller-backoff-uncapped",
    "condition-mintfailed-backoff",
    "the waits between mint attempts double without a cap",
    f"{C}._failed",
)
def _uncapped(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        original(self, target, current, backoff, message)
        wait = self.contract.mint_backoff_initial_seconds * 2 ** (backoff.failures - 1)
        backoff.next_attempt = self.clock.now() + timedelta(seconds=wait)
        return float(wait)

    return failed


@mutant(
    "controller-backoff-gives-up",
    "condition-mintfailed-backoff",
    "the controller stops retrying a failed mint after five attempts",
    f"{C}._failed",
)
def _gives_up(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        wait = float(original(self, target, current, backoff, message))
        if backoff.failures >= 5:
            backoff.next_attempt = self.clock.now() + timedelta(days=365)
        return wait

    return failed


@mutant(
    "controller-no-warning-events",
    "condition-mintfailed-backoff",
    "a failed mint records no Warning event on the Target",
    f"{C}._event",
)
def _no_events(original: Any) -> Any:
    return lambda self, target, attempt, message: None


@mutant(
    "controller-one-backoff-for-all",
    "condition-mintfailed-backoff",
    "one backoff for every Target: a failing Target delays the mints of all others",
    f"{C}._mint",
)
def _shared_backoff(original: Any) -> Any:
    def mint(self: Any, target: Any, names: Any, labels: Any, current: Any, held: Any) -> float:
        shared = self._backoff.get(("*", "*"))
        if shared is not None:
            key = (target["metadata"]["namespace"], target["metadata"]["name"])
            self._backoff[key] = shared
        wait = float(original(self, target, names, labels, current, held))
        key = (target["metadata"]["namespace"], target["metadata"]["name"])
        if key in self._backoff:
            self._backoff[("*", "*")] = self._backoff[key]
        return wait

    return mint


# --- rotation and expiry -------------------------------------------------------------------------
@mutant(
    "controller-ignores-rotation-request",
    "runbook",
    "a rotation requested by annotation is ignored",
    f"{C}._needs_new_token",
)
def _no_requested_rotation(original: Any) -> Any:
    def needs(self: Any, target: Any, secret: Any) -> bool:
        notes = dict(annotations_of(target))
        notes.pop(self.contract.rotation_annotation, None)
        return bool(
            original(
                self, {**target, "metadata": {**target["metadata"], "annotations": notes}}, secret
            )
        )

    return needs


@mutant(
    "controller-rotates-only-once",
    "runbook",
    "only the first rotation request replaces the token",
    f"{C}._needs_new_token",
)
def _first_rotation_only(original: Any) -> Any:
    def needs(self: Any, target: Any, secret: Any) -> bool:
        if self.contract.rotation_handled_annotation in annotations_of(secret):
            notes = dict(annotations_of(target))
            notes.pop(self.contract.rotation_annotation, None)
            target = {**target, "metadata": {**target["metadata"], "annotations": notes}}
        return bool(original(self, target, secret))

    return needs


@mutant(
    "controller-never-rotates-before-expiry",
    "runbook",
    "the controller does not rotate a token that is about to expire",
    f"{C}._needs_new_token",
)
def _no_timed_rotation(original: Any) -> Any:
    def needs(self: Any, target: Any, secret: Any) -> bool:
        requested = annotations_of(target).get(self.contract.rotation_annotation)
        handled = annotations_of(secret).get(self.contract.rotation_handled_annotation)
        return self._issued_at(secret) is None or (requested is not None and requested != handled)

    return needs


@mutant(
    "controller-rotation-by-server-expiry",
    "runbook",
    "rotation compares the controller's clock with the API server's expiry: a clock ahead mints in a loop",
    f"{C}._needs_new_token",
)
def _server_expiry(original: Any) -> Any:
    def needs(self: Any, target: Any, secret: Any) -> bool:
        expiry = annotations_of(secret).get(self.contract.expiry_annotation)
        if expiry is not None:
            lifetime = timedelta(seconds=self.contract.token_lifetime_seconds)
            left = lifetime * (1 - self.contract.rotate_after_fraction)
            if self.clock.now() >= parse_utc(expiry) - left:
                return True
        return bool(original(self, target, secret))

    return needs


@mutant(
    "controller-rotation-keeps-old-secret",
    "runbook",
    "a new token does not delete the old token's Secret (until it expires), so the old token works",
    f"{C}.reconcile",
)
def _keeps_old(original: Any) -> Any:
    def reconcile(self: Any, target: Any) -> float:
        if _revoked(self, target) or not self.config.apiserver_url:
            return float(original(self, target))
        delete = self._delete_secrets
        self._delete_secrets = lambda secrets: delete([s for s in secrets if self._expired(s)])
        try:
            return float(original(self, target))
        finally:
            del self._delete_secrets

    return reconcile


@mutant(
    "controller-mints-twice",
    "runbook",
    "every new token is minted twice (two TokenRequests, the first token thrown away)",
    f"{C}._mint",
)
def _twice(original: Any) -> Any:
    def mint(self: Any, target: Any, names: Any, labels: Any, current: Any, held: Any) -> float:
        namespace = target["metadata"]["namespace"]
        with contextlib.suppress(ApiError):  # the real mint below reports the failure
            self.solar.create_token(
                namespace,
                names.service_account,
                expiration_seconds=self.contract.token_lifetime_seconds,
            )
        return float(original(self, target, names, labels, current, held))

    return mint


@mutant(
    "controller-expired-token-stays-issued",
    "runbook",
    "an expired token is kept: its Secret stays and the condition stays Issued",
    f"{C}._expired",
)
def _never_expired(original: Any) -> Any:
    return lambda self, secret: False


@mutant(
    "controller-token-not-bound",
    ("table-controller", "runbook"),
    "the token is minted without binding it to its Secret",
    f"{C}._mint",
)
def _unbound(original: Any) -> Any:
    def mint(self: Any, target: Any, names: Any, labels: Any, current: Any, held: Any) -> float:
        client = self.solar

        def create_token(namespace: str, account: str, **options: Any) -> Any:
            options.pop("bound_secret", None)
            return client.create_token(namespace, account, **options)

        self.solar = Wrapped(client, create_token=create_token)
        try:
            return float(original(self, target, names, labels, current, held))
        finally:
            self.solar = client

    return mint


@mutant(
    "controller-needs-opt-in",
    ("intro-only-create", "bound-without-steps"),
    "the controller only issues a credential to a Target labelled solar.opendefense.cloud/agent=true",
    f"{C}.reconcile",
)
def _opt_in(original: Any) -> Any:
    def reconcile(self: Any, target: Any) -> float:
        labels = target["metadata"].get("labels") or {}
        if labels.get("solar.opendefense.cloud/agent") != "true":
            return float(self.config.resync_seconds)
        return float(original(self, target))

    return reconcile


# --- conditions (core/conditions.py) -------------------------------------------------------------
@mutant(
    "conditions-keep-first-message",
    ("runbook", "condition-issued"),
    "a condition whose status and reason are unchanged keeps its old message",
    "core.conditions:set_condition",
)
def _stale_message(original: Any) -> Any:
    def set_condition(
        obj: Any, condition_type: str, status: str, reason: str, message: str, now: Any
    ) -> bool:
        for condition in obj.get("status", {}).get("conditions", []):
            if condition.get("type") == condition_type and (
                condition.get("status"),
                condition.get("reason"),
            ) == (status, reason):
                return False
        return bool(original(obj, condition_type, status, reason, message, now))

    return set_condition


@mutant(
    "conditions-never-change",
    ("setup-page", "runbook"),
    "a condition, once set, is never changed",
    "core.conditions:set_condition",
    rebind=("simulators.reference.controller",),
)
def _frozen(original: Any) -> Any:
    def set_condition(
        obj: Any, condition_type: str, status: str, reason: str, message: str, now: Any
    ) -> bool:
        if any(
            c.get("type") == condition_type for c in obj.get("status", {}).get("conditions", [])
        ):
            return False
        return bool(original(obj, condition_type, status, reason, message, now))

    return set_condition
