"""Reference solar-controller-manager, the credential part: the page's third table row.

For every Target: a ServiceAccount, a Role that allows `get` on this Target and get/update/patch
on its TargetReport (by resourceName, nothing else), a RoleBinding, an empty TargetReport, and a
TokenRequest token bound to the Secret that holds it. It keeps `AgentCredentialReady` current:
Issued, Disabled (no `controller.agent.apiserverURL`), Revoked (annotation), MintFailed (with the
API server's error; retried with exponential backoff).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core.api import (
    SOLAR_GROUP,
    ApiError,
    ClusterAPI,
    Obj,
    annotations_of,
    new_object,
)
from core.clock import Clock, parse_utc, utc
from core.conditions import secret_value, set_condition
from core.contract import Contract

Log = Callable[[str], None]


@dataclass
class ControllerConfig:
    """The controller's Helm values that matter here (`controller.agent.*`)."""

    apiserver_url: str | None
    resync_seconds: float = 1.0
    backoff_base_seconds: float = 1.0
    backoff_cap_seconds: float = 30.0


@dataclass
class _Backoff:
    failures: int = 0
    next_attempt: datetime | None = None


@dataclass
class CredentialNames:
    service_account: str
    role: str
    secret: str

    @classmethod
    def for_target(cls, target: str) -> CredentialNames:
        base = f"solar-agent-{target}"
        return cls(service_account=base, role=base, secret=f"{base}-token")


@dataclass
class CredentialController:
    solar: ClusterAPI
    clock: Clock
    contract: Contract
    config: ControllerConfig
    log: Log = print
    _backoff: dict[tuple[str, str], _Backoff] = field(default_factory=dict)
    mint_attempts: list[tuple[datetime, str, bool]] = field(default_factory=list)

    def reconcile_all(self) -> float:
        delay = self.config.resync_seconds
        for target in self.solar.list("Target"):
            try:
                delay = min(delay, self.reconcile(target))
            except ApiError as error:  # a conflict or a vanished object: next round sees more
                self.log(f"reconcile {target['metadata']['name']}: {error}")
        return delay

    def reconcile(self, target: Obj) -> float:
        namespace = target["metadata"]["namespace"]
        name = target["metadata"]["name"]
        names = CredentialNames.for_target(name)
        labels = self.contract.credential_labels(name)
        self._ensure_access(target, names, labels)
        self._ensure_report(target, labels)
        if (
            annotations_of(target).get(self.contract.revocation_annotation)
            == self.contract.revoked_value
        ):
            self._delete_secret(namespace, names.secret)
            self._set(
                target,
                "False",
                "Revoked",
                f"the Target carries {self.contract.revocation_annotation}: "
                f"{self.contract.revoked_value}; its token Secret was deleted",
            )
            return self.config.resync_seconds
        if not self.config.apiserver_url:
            self._set(
                target,
                "False",
                "Disabled",
                f"{self.contract.apiserver_url_setting} is not set; no token is minted",
            )
            return self.config.resync_seconds
        secret = self._get_secret(namespace, names.secret)
        if secret is not None and not self._needs_new_token(target, secret):
            self._report_issued(target, secret)
            return self.config.resync_seconds
        return self._mint(target, names, labels, secret)

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
    def _get_secret(self, namespace: str, name: str) -> Obj | None:
        try:
            return self.solar.get("Secret", name, namespace)
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    def _delete_secret(self, namespace: str, name: str) -> None:
        try:
            self.solar.delete("Secret", name, namespace)
            self.log(f"deleted token Secret {namespace}/{name}")
        except ApiError as error:
            if error.status != 404:
                raise

    def _needs_new_token(self, target: Obj, secret: Obj) -> bool:
        if not secret_value(secret, self.contract.token_key):
            return True
        notes = annotations_of(secret)
        expiry_text = notes.get(self.contract.expiry_annotation)
        if expiry_text is None:
            return True
        issued_text = notes.get(self.contract.issued_annotation)
        if issued_text is None:
            return True
        # Token age by the controller's own clock: a clock that jumps ahead rotates once, early,
        # instead of minting in a loop (which comparing against the API server's expiry would).
        lifetime = timedelta(seconds=self.contract.token_lifetime_seconds)
        if (
            self.clock.now() - parse_utc(issued_text)
            >= lifetime * self.contract.rotate_after_fraction
        ):
            return True
        requested = annotations_of(target).get(self.contract.rotation_annotation)
        handled = notes.get(self.contract.rotation_handled_annotation)
        return requested is not None and requested != handled

    def _mint(
        self, target: Obj, names: CredentialNames, labels: dict[str, str], old: Obj | None
    ) -> float:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        key = (namespace, name)
        backoff = self._backoff.setdefault(key, _Backoff())
        now = self.clock.now()
        if backoff.next_attempt is not None and now < backoff.next_attempt:
            return (backoff.next_attempt - now).total_seconds()
        if old is not None and secret_value(old, self.contract.token_key):
            # A new Secret (new uid) for the new token: deleting the old one invalidates the
            # old token, which is bound to it.
            self._delete_secret(namespace, names.secret)
            old = None
        try:
            secret = old or self.solar.create(
                new_object(
                    "Secret", names.secret, namespace, labels=labels, owner=target, type="Opaque"
                )
            )
            issued = self.solar.create_token(
                namespace,
                names.service_account,
                expiration_seconds=self.contract.token_lifetime_seconds,
                bound_secret=(names.secret, secret["metadata"]["uid"]),
            )
        except ApiError as error:
            self.mint_attempts.append((now, name, False))
            backoff.failures += 1
            wait: float = min(
                self.config.backoff_cap_seconds,
                self.config.backoff_base_seconds * 2 ** (backoff.failures - 1),
            )
            backoff.next_attempt = now + timedelta(seconds=wait)
            self._set(
                target,
                "False",
                "MintFailed",
                f"minting the agent token failed (attempt {backoff.failures}, next in "
                f"{wait:g}s): {error.message}",
            )
            self._event(target, backoff.failures, error.message)
            return wait
        self.mint_attempts.append((now, name, True))
        self._backoff.pop(key, None)
        secret = self.solar.get("Secret", names.secret, namespace)
        notes = secret["metadata"].setdefault("annotations", {})
        notes[self.contract.expiry_annotation] = utc(issued.expires_at)
        notes[self.contract.issued_annotation] = utc(now)
        requested = annotations_of(target).get(self.contract.rotation_annotation)
        if requested is not None:
            notes[self.contract.rotation_handled_annotation] = requested
        secret["stringData"] = {self.contract.token_key: issued.token}
        secret = self.solar.update(secret)
        self.log(f"minted a token for {namespace}/{name} into Secret {names.secret}")
        self._report_issued(target, secret)
        return self.config.resync_seconds

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
        fresh = self.solar.get(
            "Target", target["metadata"]["name"], target["metadata"]["namespace"]
        )
        if set_condition(
            fresh, self.contract.condition_type, status, reason, message, self.clock.now()
        ):
            self.solar.update_status(fresh)

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
