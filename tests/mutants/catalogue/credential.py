"""Broken solar-controller-manager credential controllers (solar_conformance/simulators/reference/controller.py):
the condition, rotation and expiry; and broken conditions
(solar_conformance/core/conditions.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from solar_conformance.core.api import ApiError, annotations_of
from solar_conformance.core.clock import parse_utc, utc
from tests.mutants.model import Wrapped, mutant

CONDITION = "solar_conformance.simulators.reference.credential_condition:CredentialCondition"
TOKEN = "solar_conformance.simulators.reference.agent_token:AgentToken"
C = "solar_conformance.simulators.reference.controller:CredentialController"


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
    return _keeping_secrets_when(original, _revoked)


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
    f"{CONDITION}.set_credential_condition",
)
def _renamed(original: Any) -> Any:
    from solar_conformance.core.conditions import set_condition

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
    f"{CONDITION}.report_issued",
)
def _no_expiry(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        meta = secret["metadata"]
        self.set_credential_condition(
            target, "True", "Issued", f"token in Secret {meta['namespace']}/{meta['name']}"
        )

    return report_issued


@mutant(
    "controller-expiry-an-hour-off",
    "condition-issued",
    "the Issued message names an expiry an hour later than the token's",
    f"{CONDITION}.report_issued",
)
def _expiry_off(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        meta = secret["metadata"]
        expiry = annotations_of(secret).get(self.contract.expiry_annotation)
        later = utc(parse_utc(expiry) + timedelta(hours=1)) if expiry else "?"
        message = f"token in Secret {meta['namespace']}/{meta['name']}, expires at {later}"
        self.set_credential_condition(target, "True", "Issued", message)

    return report_issued


@mutant(
    "controller-message-names-first-secret",
    ("runbook", "condition-issued"),
    "after a new token the Issued message keeps naming the first Secret and expiry it named",
    f"{CONDITION}.report_issued",
)
def _first_secret(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        from solar_conformance.core.api import find_condition

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
    f"{TOKEN}.mint_failed",
)
def _hidden_error(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        return float(original(self, target, current, backoff, "the token could not be created"))

    return failed


@mutant(
    "controller-mint-failed-says-disabled",
    "condition-mintfailed",
    "a failed mint is reported with reason Disabled",
    f"{CONDITION}.set_credential_condition",
)
def _wrong_reason(original: Any) -> Any:
    def set_(self: Any, target: Any, status: str, reason: str, message: str) -> None:
        original(self, target, status, "Disabled" if reason == "MintFailed" else reason, message)

    return set_


# --- rotation and expiry -------------------------------------------------------------------------
@mutant(
    "controller-ignores-rotation-request",
    "runbook",
    "a rotation requested by annotation is ignored",
    f"{TOKEN}.needs_new_token",
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
    f"{TOKEN}.needs_new_token",
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
    f"{TOKEN}.needs_new_token",
)
def _no_timed_rotation(original: Any) -> Any:
    def needs(self: Any, target: Any, secret: Any) -> bool:
        requested = annotations_of(target).get(self.contract.rotation_annotation)
        handled = annotations_of(secret).get(self.contract.rotation_handled_annotation)
        return self.issued_at(secret) is None or (requested is not None and requested != handled)

    return needs


@mutant(
    "controller-rotation-by-server-expiry",
    "runbook",
    "rotation compares the controller's clock with the API server's expiry: a clock ahead mints in a loop",
    f"{TOKEN}.needs_new_token",
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
        delete = self.delete_token_secrets
        self.delete_token_secrets = lambda secrets: delete(
            [s for s in secrets if self.token_expired(s)]
        )
        try:
            return float(original(self, target))
        finally:
            del self.delete_token_secrets

    return reconcile


@mutant(
    "controller-mints-twice",
    "runbook",
    "every new token is minted twice (two TokenRequests, the first token thrown away)",
    f"{TOKEN}.mint_token",
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
    f"{TOKEN}.token_expired",
)
def _never_expired(original: Any) -> Any:
    return lambda self, secret: False


@mutant(
    "controller-token-not-bound",
    ("table-controller", "runbook"),
    "the token is minted without binding it to its Secret",
    f"{TOKEN}.mint_token",
)
def _unbound(original: Any) -> Any:
    return _minting_with(original, lambda options: options.pop("bound_secret", None))


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


# --- conditions (solar_conformance/core/conditions.py) -------------------------------------------------------------
@mutant(
    "conditions-keep-first-message",
    ("runbook", "condition-issued"),
    "a condition whose status and reason are unchanged keeps its old message",
    "solar_conformance.core.conditions:set_condition",
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
    "solar_conformance.core.conditions:set_condition",
    rebind=("solar_conformance.simulators.reference.credential_condition",),
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


# --- a new token, its lifetime, Disabled, a rotation that cannot mint ----------------------------
@mutant(
    "controller-rotates-in-place",
    "runbook",
    "a new token is written into the Secret of the old one, to which the old token stays bound, "
    "so the old token keeps working until it expires",
    f"{TOKEN}.mint_token",
)
def _in_place(original: Any) -> Any:
    from solar_conformance.simulators.reference.credential_condition import Backoff

    def mint(self: Any, target: Any, names: Any, labels: Any, current: Any, held: Any) -> float:
        if current is None:
            return float(original(self, target, names, labels, current, held))
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        meta = current["metadata"]
        backoff = self._backoff.setdefault((namespace, name), Backoff())
        try:
            issued = self.solar.create_token(
                namespace,
                names.service_account,
                expiration_seconds=self.contract.token_lifetime_seconds,
                bound_secret=(meta["name"], meta["uid"]),
            )
        except ApiError as error:
            return float(self.mint_failed(target, current, backoff, error.message))
        self.mint_attempts.append((self.clock.now(), name, True))
        self._backoff.pop((namespace, name), None)
        secret = self.solar.get("Secret", meta["name"], namespace)
        notes = secret["metadata"].setdefault("annotations", {})
        notes[self.contract.expiry_annotation] = utc(issued.expires_at)
        notes[self.contract.issued_annotation] = utc(self.clock.now())
        requested = annotations_of(target).get(self.contract.rotation_annotation)
        if requested is not None:
            notes[self.contract.rotation_handled_annotation] = requested
        secret["stringData"] = {self.contract.token_key: issued.token}
        secret.pop("data", None)
        secret = self.solar.update(secret)
        self.report_issued(target, secret)
        return float(self.next_check(secret, self.config.resync_seconds))

    return mint


@mutant(
    "controller-token-lifetime-a-day",
    "runbook",
    "every token is requested with a lifetime of a day, not the profile's token lifetime",
    f"{TOKEN}.mint_token",
)
def _a_day(original: Any) -> Any:
    return _minting_with(original, lambda options: options.update(expiration_seconds=24 * 3600))


@mutant(
    "controller-mints-for-another-audience",
    ("table-controller", "table-agent"),
    "every token is requested for another audience (the agent's name), not the SolAr API "
    "server's own",
    f"{TOKEN}.mint_token",
)
def _other_audience(original: Any) -> Any:
    return _minting_with(original, lambda options: options.update(audiences=("solar-agent",)))


@mutant(
    "controller-disabled-mints-unlabelled",
    ("condition-disabled", "table-controller"),
    "without controller.agent.apiserverURL the condition says Disabled, but a token is minted "
    "anyway into a Secret without the credential's labels",
    f"{C}.reconcile",
)
def _disabled_but_minted(original: Any) -> Any:
    from solar_conformance.core.api import new_object
    from solar_conformance.simulators.reference.agent_access import CredentialNames

    def reconcile(self: Any, target: Any) -> float:
        delay = float(original(self, target))
        if self.config.apiserver_url or _revoked(self, target):
            return delay
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        names = CredentialNames.for_target(name)
        secret_name = f"{names.secret_prefix}pending"
        with contextlib.suppress(ApiError):
            self.solar.get("Secret", secret_name, namespace)
            return delay
        with contextlib.suppress(ApiError):
            secret = self.solar.create(
                new_object("Secret", secret_name, namespace, owner=target, type="Opaque")
            )
            issued = self.solar.create_token(
                namespace,
                names.service_account,
                expiration_seconds=self.contract.token_lifetime_seconds,
                bound_secret=(secret_name, secret["metadata"]["uid"]),
            )
            secret["stringData"] = {self.contract.token_key: issued.token}
            self.solar.update(secret)
        return delay

    return reconcile


@mutant(
    "controller-disabled-keeps-token",
    ("condition-disabled", "setup-page"),
    "unsetting controller.agent.apiserverURL sets Disabled but keeps the token Secret, so the "
    "token keeps working",
    f"{C}.reconcile",
)
def _disabled_keeps(original: Any) -> Any:
    return _keeping_secrets_when(
        original, lambda self, target: not (self.config.apiserver_url or _revoked(self, target))
    )


@mutant(
    "controller-status-lowercase",
    ("condition-issued", "condition-disabled", "condition-revoked", "condition-mintfailed"),
    "the condition's status is written as true/false, not True/False",
    f"{CONDITION}.set_credential_condition",
)
def _lowercase(original: Any) -> Any:
    def set_(self: Any, target: Any, status: str, reason: str, message: str) -> None:
        original(self, target, status.lower(), reason, message)

    return set_


@mutant(
    "controller-mintfailed-hides-valid-token",
    ("runbook", "condition-issued"),
    "while a rotation cannot mint, the condition says MintFailed although the old token is valid",
    f"{CONDITION}.report_waiting",
)
def _lies_mintfailed(original: Any) -> Any:
    def report_waiting(self: Any, target: Any, current: Any, backoff: Any) -> None:
        original(self, target, None, backoff)

    return report_waiting


@mutant(
    "controller-failed-rotation-drops-token",
    "runbook",
    "a rotation that cannot mint deletes the old token's Secret at once: the agent loses a valid "
    "token",
    f"{TOKEN}.mint_failed",
)
def _drops_token(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        if current is not None:
            self.delete_token_secrets([current])
        return float(original(self, target, None, backoff, message))

    return failed


def _minting_with(original: Any, change: Callable[[dict[str, Any]], object]) -> Any:
    """`mint_token` with every TokenRequest's options changed by `change` before it is sent."""

    def mint(self: Any, target: Any, names: Any, labels: Any, current: Any, held: Any) -> float:
        client = self.solar

        def create_token(namespace: str, account: str, **options: Any) -> Any:
            change(options)
            return client.create_token(namespace, account, **options)

        self.solar = Wrapped(client, create_token=create_token)
        try:
            return float(original(self, target, names, labels, current, held))
        finally:
            self.solar = client

    return mint


def _keeping_secrets_when(original: Any, keep: Callable[[Any, Any], bool]) -> Any:
    """`reconcile` that deletes no Secret in the passes where `keep(controller, target)`."""

    def reconcile(self: Any, target: Any) -> float:
        if not keep(self, target):
            return float(original(self, target))
        self.delete_token_secrets = lambda secrets: None
        try:
            return float(original(self, target))
        finally:
            del self.delete_token_secrets

    return reconcile


def _revoking_when(original: Any, revokes: Callable[[str], bool]) -> Any:
    """`reconcile` that treats the revocation annotation as `revoked` whenever `revokes(value)`."""

    def reconcile(self: Any, target: Any) -> float:
        notes = target["metadata"].get("annotations") or {}
        value = notes.get(self.contract.revocation_annotation)
        if value is not None and revokes(value):
            notes[self.contract.revocation_annotation] = self.contract.revoked_value
        return float(original(self, target))

    return reconcile


@mutant(
    "controller-revokes-on-any-value",
    "condition-revoked-value",
    "the controller revokes whenever the Target carries the revocation annotation, whatever "
    "its value (also empty)",
    f"{C}.reconcile",
)
def _revokes_any(original: Any) -> Any:
    return _revoking_when(original, lambda value: True)


@mutant(
    "controller-revokes-on-any-non-empty-value",
    "condition-revoked-value",
    "the controller revokes whenever the revocation annotation has a non-empty value",
    f"{C}.reconcile",
)
def _revokes_non_empty(original: Any) -> Any:
    return _revoking_when(original, bool)


@mutant(
    "controller-revokes-case-insensitively",
    "condition-revoked-value",
    "the controller reads the revocation annotation's value without regard to case: Revoked "
    "and REVOKED revoke too",
    f"{C}.reconcile",
)
def _revokes_any_case(original: Any) -> Any:
    return _revoking_when(original, lambda value: value.lower() == "revoked")
