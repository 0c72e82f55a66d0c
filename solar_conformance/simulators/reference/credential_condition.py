"""What the credential controller says about a Target's credential: the `AgentCredentialReady`
condition (Issued, MintFailed while no token is valid), and a Warning event for each failed
mint."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from solar_conformance.core.api import ApiError, ClusterAPI, Obj, annotations_of, new_object
from solar_conformance.core.clock import Clock, utc
from solar_conformance.core.conditions import set_condition
from solar_conformance.core.contract import Contract

# Another component writes the Target's status too (solar-renderer's BootstrapReady): a write
# that loses the race (409 Conflict) is made again on the Target as it now is.
STATUS_WRITE_ATTEMPTS = 5


@dataclass
class Backoff:
    """The failed mints of one Target, and when the next may be tried."""

    failures: int = 0
    next_attempt: datetime | None = None
    last_error: str = ""


class CredentialCondition:
    """The condition and events of the CredentialController
    (solar_conformance/simulators/reference/controller.py)."""

    solar: ClusterAPI
    clock: Clock
    contract: Contract
    log: Callable[[str], None]

    def report_waiting(self, target: Obj, current: Obj | None, backoff: Backoff) -> None:
        """While a new token cannot be minted: Issued as long as the old one is valid."""
        if current is not None:
            self.report_issued(target, current)
            return
        wait = (
            (backoff.next_attempt - self.clock.now()).total_seconds()
            if backoff.next_attempt is not None
            else 0.0
        )
        self.set_credential_condition(
            target,
            "False",
            "MintFailed",
            f"minting the agent token failed (attempt {backoff.failures}, next in "
            f"{wait:g}s): {backoff.last_error}",
        )

    def report_issued(self, target: Obj, secret: Obj) -> None:
        expiry = annotations_of(secret).get(self.contract.expiry_annotation, "?")
        meta = secret["metadata"]
        self.set_credential_condition(
            target,
            "True",
            "Issued",
            f"token in Secret {meta['namespace']}/{meta['name']}, expires at {expiry}",
        )

    def set_credential_condition(self, target: Obj, status: str, reason: str, message: str) -> None:
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

    def record_mint_failure(self, target: Obj, attempt: int, message: str) -> None:
        """A Warning event on the Target for one failed mint."""
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
