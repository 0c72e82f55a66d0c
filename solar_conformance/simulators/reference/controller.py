"""Reference solar-controller-manager, the credential part: the page's third table row.

For every Target: a ServiceAccount, a Role that allows `get` on this Target and get/update/patch
on its TargetReport (by resourceName, nothing else), a RoleBinding, an empty TargetReport, and a
TokenRequest token bound to the Secret that holds it. It keeps `AgentCredentialReady` current:
Issued, Disabled (no `controller.agent.apiserverURL`), Revoked (annotation), MintFailed (with the
API server's error; retried with exponential backoff).

Every token gets a Secret of its own: the new token is minted into a new Secret, the condition
names it, and only then is the old Secret deleted (which invalidates the old token, bound to
it). A rotation that cannot mint keeps the old token until it expires: the condition stays
Issued (a token exists) while Warning events record the failures; at expiry the Secret goes and
the condition becomes MintFailed, saying why.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import jwt

from solar_conformance.core.api import (
    SOLAR_GROUP,
    ApiError,
    ClusterAPI,
    Obj,
    annotations_of,
    find_condition,
    new_object,
)
from solar_conformance.core.clock import Clock, parse_utc, utc
from solar_conformance.core.conditions import secret_value, set_condition
from solar_conformance.core.contract import Contract

Log = Callable[[str], None]
# Another component writes the Target's status too (solar-renderer's BootstrapReady): a write
# that loses the race (409 Conflict) is made again on the Target as it now is.
STATUS_WRITE_ATTEMPTS = 5


@dataclass
class ControllerConfig:
    """The controller's Helm values that matter here (`controller.agent.*`)."""

    apiserver_url: str | None
    resync_seconds: float = 1.0


@dataclass
class _Backoff:
    failures: int = 0
    next_attempt: datetime | None = None
    last_error: str = ""


@dataclass
class CredentialNames:
    service_account: str
    role: str
    secret_prefix: str

    @classmethod
    def for_target(cls, target: str) -> CredentialNames:
        base = f"solar-agent-{target}"
        return cls(service_account=base, role=base, secret_prefix=f"{base}-token-")

    def new_secret(self) -> str:
        return f"{self.secret_prefix}{secrets.token_hex(3)}"


@dataclass
class CredentialController:
    solar: ClusterAPI
    clock: Clock
    contract: Contract
    config: ControllerConfig
    log: Log = print
    _backoff: dict[tuple[str, str], _Backoff] = field(default_factory=dict)
    mint_attempts: list[tuple[datetime, str, bool]] = field(default_factory=list)
    # The Secret each Target's last token was minted into: if reporting it failed, the condition
    # still names the old Secret, and taking that one as current would rotate a second time.
    _minted: dict[tuple[str, str], str] = field(default_factory=dict)
    # The uid of the Target that state belongs to: a Target deleted and made again under the same
    # name between two passes is another Target, and starts afresh.
    _uids: dict[tuple[str, str], str] = field(default_factory=dict)

    def reconcile_all(self) -> float:
        delay = self.config.resync_seconds
        targets = self.solar.list("Target")
        present = {(t["metadata"]["namespace"], t["metadata"]["name"]) for t in targets}
        for namespace, name in self.remembered() - present:
            self.forget(namespace, name)
        for target in targets:
            try:
                delay = min(delay, self.reconcile(target))
            except ApiError as error:  # a conflict or a vanished object: next round sees more
                self.log(f"reconcile {target['metadata']['name']}: {error}")
        return delay

    def remembered(self) -> set[tuple[str, str]]:
        """The Targets this controller keeps state of (last minted Secret, mint backoff)."""
        return set(self._minted) | set(self._backoff) | set(self._uids)

    def forget(self, namespace: str, name: str) -> None:
        """Drop what this controller remembers of a Target that is gone."""
        self._minted.pop((namespace, name), None)
        self._backoff.pop((namespace, name), None)
        self._uids.pop((namespace, name), None)

    def reconcile(self, target: Obj) -> float:
        namespace = target["metadata"]["namespace"]
        name = target["metadata"]["name"]
        uid = str(target["metadata"].get("uid", ""))
        if self._uids.get((namespace, name), uid) != uid:
            self.forget(namespace, name)
        self._uids[(namespace, name)] = uid
        names = CredentialNames.for_target(name)
        labels = self.contract.credential_labels(name)
        self._ensure_access(target, names, labels)
        self._ensure_report(target, labels)
        held = self._credential_secrets(namespace, name)
        if (
            annotations_of(target).get(self.contract.revocation_annotation)
            == self.contract.revoked_value
        ):
            self._delete_secrets(held)
            self._set(
                target,
                "False",
                "Revoked",
                f"the Target carries {self.contract.revocation_annotation}: "
                f"{self.contract.revoked_value}; its token Secret was deleted",
            )
            return self.config.resync_seconds
        if not self.config.apiserver_url:
            self._delete_secrets(held)
            self._set(
                target,
                "False",
                "Disabled",
                f"{self.contract.apiserver_url_setting} is not set; no token is minted",
            )
            return self.config.resync_seconds
        current = self._current(target, held)
        if current is not None and self._expired(current):
            self._delete_secrets([current])
            held = [s for s in held if s is not current]
            current = None
        if current is not None and not self._needs_new_token(target, current):
            self._report_issued(target, current)
            self._delete_secrets([s for s in held if s is not current])
            self._backoff.pop((namespace, name), None)
            return self._next_check(current, self.config.resync_seconds)
        return self._mint(target, names, labels, current, held)

    # --- the objects the agent's credential is made of --------------------------------------
    @staticmethod
    def agent_rules(target: str) -> list[Obj]:
        """Get on its own Target; get, update and patch on its own TargetReport; nothing else."""
        return [
            {
                "apiGroups": [SOLAR_GROUP],
                "resources": ["targets"],
                "resourceNames": [target],
                "verbs": ["get"],
            },
            {
                "apiGroups": [SOLAR_GROUP],
                "resources": ["targetreports"],
                "resourceNames": [target],
                "verbs": ["get", "update", "patch"],
            },
        ]

    def _ensure_access(self, target: Obj, names: CredentialNames, labels: dict[str, str]) -> None:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        rules = self.agent_rules(name)
        self._ensure(
            new_object(
                "ServiceAccount", names.service_account, namespace, labels=labels, owner=target
            )
        )
        self._ensure(
            new_object("Role", names.role, namespace, labels=labels, owner=target, rules=rules),
            compare=("rules",),
        )
        self._ensure(
            new_object(
                "RoleBinding",
                names.role,
                namespace,
                labels=labels,
                owner=target,
                roleRef={
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": names.role,
                },
                subjects=[
                    {
                        "kind": "ServiceAccount",
                        "name": names.service_account,
                        "namespace": namespace,
                    }
                ],
            )
        )

    def _ensure_report(self, target: Obj, labels: dict[str, str]) -> None:
        name = target["metadata"]["name"]
        self._ensure(
            new_object(
                "TargetReport",
                name,
                target["metadata"]["namespace"],
                labels=labels,
                owner=target,
                spec={"targetRef": {"name": name}},
            )
        )

    def _ensure(self, wanted: Obj, compare: tuple[str, ...] = ()) -> None:
        meta = wanted["metadata"]
        try:
            current = self.solar.get(wanted["kind"], meta["name"], meta["namespace"])
        except ApiError as error:
            if error.status != 404:
                raise
            self.solar.create(wanted)
            return
        if any(current.get(key) != wanted.get(key) for key in compare):
            current.update({key: wanted[key] for key in compare})
            self.solar.update(current)

    # --- the token ---------------------------------------------------------------------------
    def _credential_secrets(self, namespace: str, target: str) -> list[Obj]:
        labels = self.contract.credential_labels(target)
        return self.solar.list("Secret", namespace, labels=labels)

    def _current(self, target: Obj, held: list[Obj]) -> Obj | None:
        """The Secret this controller last minted into, else the one the Issued condition names,
        else the newest one holding a token."""
        meta = target["metadata"]
        condition = find_condition(target, self.contract.condition_type) or {}
        named = self.contract.secret_named_in(str(condition.get("message", "")))
        holding = [s for s in held if secret_value(s, self.contract.token_key)]
        for wanted in (self._minted.get((meta["namespace"], meta["name"])), named and named[1]):
            for secret in holding:
                if wanted is not None and secret["metadata"]["name"] == wanted:
                    return secret
        issued = [s for s in holding if self._issued_at(s) is not None]
        return max(issued, key=lambda s: self._issued_at(s) or datetime.min, default=None)

    def _issued_at(self, secret: Obj) -> datetime | None:
        text = annotations_of(secret).get(self.contract.issued_annotation)
        return parse_utc(text) if text else None

    def _lifetime(self, secret: Obj) -> timedelta | None:
        """How long the token lives, from its own claims (`exp` - `iat`, both by the API
        server's clock)."""
        token = secret_value(secret, self.contract.token_key)
        return _claimed_lifetime(token) if token else None

    def _expired(self, secret: Obj) -> bool:
        """Expired by the controller's own clock: minted at `issued-at` (its clock) plus the
        token's lifetime. Comparing the API server's expiry with a clock that runs ahead would
        see every new token as expired and mint in a loop."""
        issued, lifetime = self._issued_at(secret), self._lifetime(secret)
        return issued is None or lifetime is None or self.clock.now() >= issued + lifetime

    def _delete_secrets(self, secrets_: list[Obj]) -> None:
        for secret in secrets_:
            meta = secret["metadata"]
            try:
                self.solar.delete("Secret", meta["name"], meta["namespace"])
                self.log(f"deleted token Secret {meta['namespace']}/{meta['name']}")
            except ApiError as error:
                if error.status != 404:
                    raise

    def _needs_new_token(self, target: Obj, secret: Obj) -> bool:
        issued = self._issued_at(secret)
        if issued is None:
            return True
        # Token age by the controller's own clock: a clock that jumps ahead rotates once, early,
        # instead of minting in a loop (which comparing against the API server's expiry would).
        lifetime = timedelta(seconds=self.contract.token_lifetime_seconds)
        if self.clock.now() - issued >= lifetime * self.contract.rotate_after_fraction:
            return True
        requested = annotations_of(target).get(self.contract.rotation_annotation)
        handled = annotations_of(secret).get(self.contract.rotation_handled_annotation)
        return requested is not None and requested != handled

    def _mint(
        self,
        target: Obj,
        names: CredentialNames,
        labels: dict[str, str],
        current: Obj | None,
        held: list[Obj],
    ) -> float:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        backoff = self._backoff.setdefault((namespace, name), _Backoff())
        now = self.clock.now()
        if backoff.next_attempt is not None and now < backoff.next_attempt:
            self._report_waiting(target, current, backoff)
            return self._next_check(current, (backoff.next_attempt - now).total_seconds())
        secret_name = names.new_secret()
        try:
            secret = self.solar.create(
                new_object(
                    "Secret", secret_name, namespace, labels=labels, owner=target, type="Opaque"
                )
            )
            issued = self.solar.create_token(
                namespace,
                names.service_account,
                expiration_seconds=self.contract.token_lifetime_seconds,
                bound_secret=(secret_name, secret["metadata"]["uid"]),
            )
        except ApiError as error:
            self._delete_secrets(
                [
                    s
                    for s in self._credential_secrets(namespace, name)
                    if s["metadata"]["name"] == secret_name
                ]
            )
            return self._failed(target, current, backoff, error.message)
        self.mint_attempts.append((now, name, True))
        self._backoff.pop((namespace, name), None)
        secret = self.solar.get("Secret", secret_name, namespace)
        notes = secret["metadata"].setdefault("annotations", {})
        notes[self.contract.expiry_annotation] = utc(issued.expires_at)
        notes[self.contract.issued_annotation] = utc(now)
        requested = annotations_of(target).get(self.contract.rotation_annotation)
        if requested is not None:
            notes[self.contract.rotation_handled_annotation] = requested
        secret["stringData"] = {self.contract.token_key: issued.token}
        secret = self.solar.update(secret)
        self._minted[(namespace, name)] = secret_name
        self.log(f"minted a token for {namespace}/{name} into Secret {secret_name}")
        self._report_issued(target, secret)
        # The old token is bound to its Secret: deleting the Secret invalidates it.
        self._delete_secrets([s for s in held if s["metadata"]["name"] != secret_name])
        return self._next_check(secret, self.config.resync_seconds)

    def _failed(self, target: Obj, current: Obj | None, backoff: _Backoff, message: str) -> float:
        now = self.clock.now()
        self.mint_attempts.append((now, target["metadata"]["name"], False))
        backoff.failures += 1
        backoff.last_error = message
        wait: float = min(
            self.contract.mint_backoff_cap_seconds,
            self.contract.mint_backoff_initial_seconds * 2 ** (backoff.failures - 1),
        )
        backoff.next_attempt = now + timedelta(seconds=wait)
        self._event(target, backoff.failures, message)
        self._report_waiting(target, current, backoff)
        return self._next_check(current, wait)

    def _next_check(self, secret: Obj | None, delay: float) -> float:
        """`delay`, or sooner when the token's rotation or expiry comes first (a controller with a
        long resync period must not sleep past them)."""
        if secret is None:
            return delay
        issued, lifetime = self._issued_at(secret), self._lifetime(secret)
        if issued is None or lifetime is None:
            return delay
        rotate_after = timedelta(seconds=self.contract.token_lifetime_seconds)
        now = self.clock.now()
        coming = [
            (due - now).total_seconds()
            for due in (
                issued + lifetime,
                issued + rotate_after * self.contract.rotate_after_fraction,
            )
            if due > now
        ]
        return min([delay, *coming])

    def _report_waiting(self, target: Obj, current: Obj | None, backoff: _Backoff) -> None:
        """While a new token cannot be minted: Issued as long as the old one is valid."""
        if current is not None:
            self._report_issued(target, current)
            return
        wait = (
            (backoff.next_attempt - self.clock.now()).total_seconds()
            if backoff.next_attempt is not None
            else 0.0
        )
        self._set(
            target,
            "False",
            "MintFailed",
            f"minting the agent token failed (attempt {backoff.failures}, next in "
            f"{wait:g}s): {backoff.last_error}",
        )

    def _report_issued(self, target: Obj, secret: Obj) -> None:
        expiry = annotations_of(secret).get(self.contract.expiry_annotation, "?")
        meta = secret["metadata"]
        self._set(
            target,
            "True",
            "Issued",
            f"token in Secret {meta['namespace']}/{meta['name']}, expires at {expiry}",
        )

    def _set(self, target: Obj, status: str, reason: str, message: str) -> None:
        name, namespace = target["metadata"]["name"], target["metadata"]["namespace"]
        for attempt in range(1, STATUS_WRITE_ATTEMPTS + 1):
            fresh = self.solar.get("Target", name, namespace)
            if not set_condition(
                fresh, self.contract.condition_type, status, reason, message, self.clock.now()
            ):
                return
            try:
                self.solar.update_status(fresh)
                return
            except ApiError as error:
                if error.status != 409 or attempt == STATUS_WRITE_ATTEMPTS:
                    raise

    def _event(self, target: Obj, attempt: int, message: str) -> None:
        meta = target["metadata"]
        now = utc(self.clock.now())
        event = new_object(
            "Event",
            f"{meta['name']}.mint-{attempt}-{int(self.clock.now().timestamp())}",
            meta["namespace"],
            involvedObject={
                "apiVersion": target["apiVersion"],
                "kind": "Target",
                "name": meta["name"],
                "namespace": meta["namespace"],
                "uid": meta["uid"],
            },
            reason=self.contract.mint_failed_event_reason,
            message=message,
            type="Warning",
            firstTimestamp=now,
            lastTimestamp=now,
            count=1,
            source={"component": "solar-controller-manager"},
        )
        try:
            self.solar.create(event)
        except ApiError as error:
            self.log(f"could not record event: {error}")


@functools.lru_cache(maxsize=4096)
def _claimed_lifetime(token: str) -> timedelta | None:
    """`exp` - `iat` of a token's claims (a token is read on every pass of its Target)."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
        return timedelta(seconds=int(claims["exp"]) - int(claims["iat"]))
    except (jwt.PyJWTError, KeyError, TypeError, ValueError):
        return None
