"""Broken credential sides of solar-controller-manager (solar_conformance/simulators/reference/
controller.py and the modules it is made of, bindings.py; solar-renderer where a Target made
before its namespace's setup is never delivered): a token for more than the SolAr
API server or longer than the profile says, a revocation that sticks to the annotation's key, a
retired token that works on for tens of seconds, a lifecycle step that withdraws the token of a
Target of the same name in another namespace, a token Secret deleted out of band, Targets made
before their namespace's setup, the MintFailed message, a failed mint's Secret, a ReleaseBinding
that outlives its Target."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from solar_conformance.core.api import ApiError, annotations_of, find_condition
from solar_conformance.core.clock import parse_utc
from tests.mutants.catalogue.credential import _minting_with, _revoked
from tests.mutants.model import mutant, with_solar_changed

TOKEN = "solar_conformance.simulators.reference.agent_token:AgentToken"
C = "solar_conformance.simulators.reference.controller:CredentialController"
P = "solar_conformance.simulators.reference.bindings:ProfileController"
R = "solar_conformance.simulators.reference.renderer:Renderer"
# The sim's SolAr API server: its issuer, the one audience it accepts (solar_conformance/simulators/memory).
SIM_API_AUDIENCE = "https://solar.sim.invalid"
# Long enough to pass "tens of seconds", short enough that every step that waited for a
# Secret to go (up to the reconcile deadline) saw it go.
GRACE_SECONDS = 20.0


def _state(self: Any, name: str) -> dict[Any, Any]:
    """A dict a mutant keeps on the controller between passes."""
    kept: dict[Any, Any] = self.__dict__.setdefault(name, {})
    return kept


def _key(target: Any) -> tuple[str, str]:
    return target["metadata"]["namespace"], target["metadata"]["name"]


def _namesake_secrets(self: Any, target: Any) -> list[Any]:
    """The token Secrets of the Targets of the same name in every other namespace."""
    namespace, name = _key(target)
    labels = self.contract.credential_labels(name)
    return [
        s
        for s in self.solar.list("Secret", None, labels=labels)
        if s["metadata"]["namespace"] != namespace
    ]


# --- (1) what a token is for and how long it lives ---------------------------------------------
@mutant(
    "controller-mints-for-an-extra-audience",
    ("table-controller", "security-notes"),
    "every token is requested for the SolAr API server's audience and another one (solar-agent): "
    "it works, and is good for a second service too",
    f"{TOKEN}.mint_token",
)
def _extra_audience(original: Any) -> Any:
    return _minting_with(
        original, lambda options: options.update(audiences=(SIM_API_AUDIENCE, "solar-agent"))
    )


@mutant(
    "controller-first-token-lives-longer",
    ("table-controller", "condition-issued"),
    "a Target's first token is requested to live half as long again as the profile's token "
    "lifetime; only the tokens that replace it live the profile's",
    f"{TOKEN}.mint_token",
)
def _first_longer(original: Any) -> Any:
    def longer(options: dict[str, Any]) -> None:
        options["expiration_seconds"] = options["expiration_seconds"] * 3 // 2

    first = _minting_with(original, longer)

    def mint(self: Any, target: Any, names: Any, labels: Any, current: Any, held: Any) -> float:
        minted_before = _state(self, "_mutant_minted_before")
        if _key(target) in minted_before:
            return float(original(self, target, names, labels, current, held))
        wait = float(first(self, target, names, labels, current, held))
        if _key(target) in self._minted:
            minted_before[_key(target)] = True
        return wait

    return mint


# --- (2) the revocation annotation changed in place ---------------------------------------------
@mutant(
    "controller-revocation-sticks-to-the-key",
    ("condition-revoked-value", "runbook"),
    "once Revoked, a Target stays Revoked for as long as it carries the revocation annotation, "
    "whatever its value: only removing the annotation issues a new token",
    f"{C}.reconcile",
)
def _sticks(original: Any) -> Any:
    def reconcile(self: Any, target: Any) -> float:
        notes = target["metadata"].get("annotations") or {}
        condition = find_condition(target, self.contract.condition_type) or {}
        if self.contract.revocation_annotation in notes and condition.get("reason") == "Revoked":
            notes[self.contract.revocation_annotation] = self.contract.revoked_value
        return float(original(self, target))

    return reconcile


# --- (3) a retired token that works on -----------------------------------------------------------
def _issued_at(self: Any, secret: Any) -> datetime | None:
    text = annotations_of(secret).get(self.contract.issued_annotation)
    return parse_utc(text) if text else None


@mutant(
    "controller-old-secret-kept-a-while",
    "runbook",
    "after a new token the old token's Secret is deleted only once the new one is 20 s old (a "
    "grace period for the agent): both tokens work for tens of seconds",
    f"{TOKEN}.delete_token_secrets",
)
def _grace(original: Any) -> Any:
    def delete_secrets(self: Any, secrets_: list[Any]) -> None:
        now = self.clock.now()
        gone = []
        for secret in secrets_:
            meta = secret["metadata"]
            target = (meta.get("labels") or {}).get(self.contract.target_label, "")
            issued = _issued_at(self, secret)
            newer = [
                when
                for other in self.credential_secrets(meta["namespace"], target)
                if (when := _issued_at(self, other)) is not None
                and issued is not None
                and when > issued
            ]
            if newer and now - max(newer) < timedelta(seconds=GRACE_SECONDS):
                continue
            gone.append(secret)
        original(self, gone)

    return delete_secrets


def _late_when(original: Any, trigger: Any, state: str) -> Any:
    """`reconcile` that, while `trigger(controller, target)` holds, keeps the token Secrets for
    GRACE_SECONDS after it first saw the trigger (the condition is set at once)."""

    def reconcile(self: Any, target: Any) -> float:
        since = _state(self, state)
        if not trigger(self, target):
            since.pop(_key(target), None)
            return float(original(self, target))
        first = since.setdefault(_key(target), self.clock.now())
        left = GRACE_SECONDS - (self.clock.now() - first).total_seconds()
        if left <= 0:
            return float(original(self, target))
        self.delete_token_secrets = lambda secrets: None
        try:
            original(self, target)
        finally:
            del self.delete_token_secrets
        return float(left)

    return reconcile


@mutant(
    "controller-revoked-secret-deleted-late",
    "runbook",
    "revoking sets Revoked at once but deletes the token Secret only 20 s later: the revoked "
    "token works on for tens of seconds",
    f"{C}.reconcile",
)
def _revoked_late(original: Any) -> Any:
    return _late_when(original, _revoked, "_mutant_revoked_since")


@mutant(
    "controller-disabled-secret-deleted-late",
    ("condition-disabled", "setup-page"),
    "unsetting controller.agent.apiserverURL sets Disabled at once but deletes the token Secret "
    "only 20 s later: the token works on for tens of seconds",
    f"{C}.reconcile",
)
def _disabled_late(original: Any) -> Any:
    return _late_when(
        original, lambda self, target: not self.config.apiserver_url, "_mutant_disabled_since"
    )


# --- (4) a lifecycle step that withdraws a namesake's token -------------------------------------
def _then_withdraw_namesakes(original: Any, when: Any) -> Any:
    """`reconcile` that, in a pass where `when(controller, target, before, minted)` holds
    (`before`: the Target's condition and whether it asked for a rotation, before the pass;
    `minted`: the pass minted a token), deletes the token Secrets of the Targets of the same name
    in every other namespace after the pass."""

    def reconcile(self: Any, target: Any) -> float:
        condition = find_condition(target, self.contract.condition_type) or {}
        before = {"reason": condition.get("reason"), "due": _rotation_due(self, target)}
        minted = self._minted.get(_key(target))
        delay = float(original(self, target))
        if when(self, target, before, minted != self._minted.get(_key(target))):
            self.delete_token_secrets(_namesake_secrets(self, target))
        return delay

    return reconcile


def _rotation_due(self: Any, target: Any) -> str | None:
    """Why the Target's current token is to be replaced: "requested" (a rotation it has not
    answered yet), "aged" (80 % of its lifetime), or None (no current token, or none due)."""
    namespace, name = _key(target)
    current = self.current_secret(target, self.credential_secrets(namespace, name))
    if current is None or not self.needs_new_token(target, current):
        return None
    requested = annotations_of(target).get(self.contract.rotation_annotation)
    handled = annotations_of(current).get(self.contract.rotation_handled_annotation)
    return "requested" if requested is not None and requested != handled else "aged"


@mutant(
    "controller-revocation-takes-namesakes",
    ("runbook", "separate-namespaces"),
    "revoking a Target also deletes the token Secrets of the Targets of the same name in every "
    "other namespace",
    f"{C}.reconcile",
)
def _revocation_namesakes(original: Any) -> Any:
    return _then_withdraw_namesakes(
        original, lambda self, target, before, minted: _revoked(self, target)
    )


@mutant(
    "controller-rotation-takes-namesakes",
    ("runbook", "separate-namespaces"),
    "a rotation on request also deletes the token Secrets of the Targets of the same name in "
    "every other namespace",
    f"{C}.reconcile",
)
def _rotation_namesakes(original: Any) -> Any:
    return _then_withdraw_namesakes(
        original,
        lambda self, target, before, minted: (
            minted and before["reason"] == "Issued" and before["due"] == "requested"
        ),
    )


@mutant(
    "controller-age-rotation-takes-namesakes",
    ("runbook", "separate-namespaces"),
    "a rotation before expiry also deletes the token Secrets of the Targets of the same name in "
    "every other namespace",
    f"{C}.reconcile",
)
def _age_rotation_namesakes(original: Any) -> Any:
    return _then_withdraw_namesakes(
        original,
        lambda self, target, before, minted: (
            minted and before["reason"] == "Issued" and before["due"] == "aged"
        ),
    )


@mutant(
    "controller-unrevocation-takes-namesakes",
    ("runbook", "separate-namespaces"),
    "the new token after a revocation is lifted also deletes the token Secrets of the Targets "
    "of the same name in every other namespace",
    f"{C}.reconcile",
)
def _unrevocation_namesakes(original: Any) -> Any:
    return _then_withdraw_namesakes(
        original, lambda self, target, before, minted: minted and before["reason"] == "Revoked"
    )


# --- (5) a token Secret deleted out of band ------------------------------------------------------
@mutant(
    "controller-misses-deleted-secret",
    ("runbook", "condition-issued"),
    "a token Secret deleted out of band goes unnoticed: the condition stays Issued naming a "
    "Secret that is gone, and nothing is minted again",
    f"{C}.reconcile",
)
def _misses_deleted(original: Any) -> Any:
    def reconcile(self: Any, target: Any) -> float:
        condition = find_condition(target, self.contract.condition_type) or {}
        named = self.contract.secret_named_in(str(condition.get("message", "")))
        if (
            condition.get("reason") == "Issued"
            and named is not None
            and self.config.apiserver_url
            and not _revoked(self, target)
        ):
            try:
                self.solar.get("Secret", named[1], named[0])
            except ApiError as error:
                if error.status == 404:
                    return float(self.config.resync_seconds)
                raise
        return float(original(self, target))

    return reconcile


# --- (6) Targets made before their namespace's setup ---------------------------------------------
@mutant(
    "profile-binds-only-on-target-events",
    ("setup-order", "empty-selector", "bound-without-steps"),
    "the Profile controller binds on a Target's events only, not on its Profile's: the Targets a "
    "namespace held before the operator set it up are never bound",
    "solar_conformance.simulators.reference.work_queues:SolarWorkQueues.wake_concerned_keys",
    internal=True,
)
def _binds_on_target_events(original: Any) -> Any:
    def route(self: Any, event: str, obj: Any) -> None:
        if obj.get("kind") != "Profile":
            original(self, event, obj)
            return
        meta = obj["metadata"]
        namespace = meta.get("namespace") or ""
        names = self._profiles.setdefault(namespace, set())
        (names.discard if event == "DELETED" else names.add)(meta["name"])
        self._render_namespace(namespace)

    return route


@mutant(
    "renderer-gives-up-without-registry",
    ("setup-order", "table-renderer"),
    "a Target whose Registry did not exist when solar-renderer first saw it is never rendered, "
    "even once the operator has created the Registry",
    f"{R}.render_target",
)
def _gives_up(original: Any) -> Any:
    def render_target(self: Any, target: Any) -> None:
        given_up = _state(self, "_mutant_given_up")
        if target["metadata"]["uid"] in given_up:
            return
        if self.registry_of(target) is None:
            given_up[target["metadata"]["uid"]] = True
            return
        original(self, target)

    return render_target


# --- (7) MintFailed, a failed mint's Secret, a ReleaseBinding of a deleted Target ---------------
@mutant(
    "controller-mint-error-of-the-first-attempt",
    "condition-mintfailed",
    "the MintFailed message keeps the error of the first failed attempt when later ones fail "
    "for another reason",
    f"{TOKEN}.mint_failed",
)
def _first_error(original: Any) -> Any:
    def failed(self: Any, target: Any, current: Any, backoff: Any, message: str) -> float:
        return float(original(self, target, current, backoff, backoff.last_error or message))

    return failed


@mutant(
    "controller-failed-mint-keeps-secret",
    ("condition-mintfailed", "table-controller"),
    "a refused TokenRequest leaves the empty Secret made for its token behind: one more with "
    "every failed attempt",
    f"{TOKEN}.mint_token",
)
def _keeps_failed(original: Any) -> Any:
    def mint(self: Any, target: Any, names: Any, labels: Any, current: Any, held: Any) -> float:
        self.credential_secrets = lambda namespace, name: []
        try:
            return float(original(self, target, names, labels, current, held))
        finally:
            del self.credential_secrets

    return mint


@mutant(
    "profile-keeps-bindings-of-deleted-targets",
    ("runbook", "table-operator"),
    "a ReleaseBinding whose Target is deleted stays (only one whose Target no longer matches "
    "goes): a Target made again under that name is bound before any Profile selects it",
    f"{P}.reconcile",
)
def _keeps_deleted(original: Any) -> Any:
    def reconcile(self: Any, profile: Any) -> None:
        namespace = profile["metadata"]["namespace"]
        present = {t["metadata"]["name"] for t in self.solar.list("Target", namespace)}

        def changes(real: Any) -> dict[str, Any]:
            def delete(kind: str, name: str, namespace: str | None = None) -> Any:
                if kind == "ReleaseBinding":
                    binding = real.get(kind, name, namespace)
                    if binding["spec"]["targetRef"]["name"] not in present:
                        return None
                return real.delete(kind, name, namespace)

            return {"delete": delete}

        with_solar_changed(original, changes)(self, profile)

    return reconcile
