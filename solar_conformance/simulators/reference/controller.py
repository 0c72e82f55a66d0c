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

The access objects are in agent_access.py, the token in agent_token.py, the condition and the
events in credential_condition.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from solar_conformance.core.api import ApiError, ClusterAPI, Obj, annotations_of
from solar_conformance.core.clock import Clock
from solar_conformance.core.contract import Contract
from solar_conformance.simulators.reference.agent_access import AgentAccess, CredentialNames
from solar_conformance.simulators.reference.agent_token import AgentToken
from solar_conformance.simulators.reference.credential_condition import Backoff

Log = Callable[[str], None]


@dataclass
class ControllerConfig:
    """The controller's Helm values that matter here (`controller.agent.*`)."""

    apiserver_url: str | None
    resync_seconds: float = 1.0


@dataclass
class CredentialController(AgentAccess, AgentToken):
    solar: ClusterAPI
    clock: Clock
    contract: Contract
    config: ControllerConfig
    log: Log = print
    _backoff: dict[tuple[str, str], Backoff] = field(default_factory=dict)
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
        self.ensure_access(target, names, labels)
        self.ensure_report(target, labels)
        held = self.credential_secrets(namespace, name)
        if (
            annotations_of(target).get(self.contract.revocation_annotation)
            == self.contract.revoked_value
        ):
            self.delete_token_secrets(held)
            self.set_credential_condition(
                target,
                "False",
                "Revoked",
                f"the Target carries {self.contract.revocation_annotation}: "
                f"{self.contract.revoked_value}; its token Secret was deleted",
            )
            return self.config.resync_seconds
        if not self.config.apiserver_url:
            self.delete_token_secrets(held)
            self.set_credential_condition(
                target,
                "False",
                "Disabled",
                f"{self.contract.apiserver_url_setting} is not set; no token is minted",
            )
            return self.config.resync_seconds
        current = self.current_secret(target, held)
        if current is not None and self.token_expired(current):
            self.delete_token_secrets([current])
            held = [s for s in held if s is not current]
            current = None
        if current is not None and not self.needs_new_token(target, current):
            self.report_issued(target, current)
            self.delete_token_secrets([s for s in held if s is not current])
            self._backoff.pop((namespace, name), None)
            return self.next_check(current, self.config.resync_seconds)
        return self.mint_token(target, names, labels, current, held)
