"""The agent's token: minted by TokenRequest into a Secret of its own, bound to that Secret;
rotated before it expires or when the Target asks; deleted with its Secret once expired (by the
controller's own clock); a failed mint retried with exponential backoff."""

from __future__ import annotations

import functools
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import jwt

from solar_conformance.core.api import ApiError, Obj, annotations_of, find_condition, new_object
from solar_conformance.core.clock import parse_utc, utc
from solar_conformance.core.conditions import secret_value
from solar_conformance.simulators.reference.agent_access import CredentialNames
from solar_conformance.simulators.reference.credential_condition import (
    Backoff,
    CredentialCondition,
)

if TYPE_CHECKING:
    from solar_conformance.simulators.reference.controller import ControllerConfig


class AgentToken(CredentialCondition):
    """The token of the CredentialController
    (solar_conformance/simulators/reference/controller.py)."""

    config: ControllerConfig
    _backoff: dict[tuple[str, str], Backoff]
    mint_attempts: list[tuple[datetime, str, bool]]
    _minted: dict[tuple[str, str], str]

    def credential_secrets(self, namespace: str, target: str) -> list[Obj]:
        labels = self.contract.credential_labels(target)
        return self.solar.list("Secret", namespace, labels=labels)

    def current_secret(self, target: Obj, held: list[Obj]) -> Obj | None:
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
        issued = [s for s in holding if self.issued_at(s) is not None]
        return max(issued, key=lambda s: self.issued_at(s) or datetime.min, default=None)

    def issued_at(self, secret: Obj) -> datetime | None:
        text = annotations_of(secret).get(self.contract.issued_annotation)
        return parse_utc(text) if text else None

    def token_lifetime(self, secret: Obj) -> timedelta | None:
        """How long the token lives, from its own claims (`exp` - `iat`, both by the API
        server's clock)."""
        token = secret_value(secret, self.contract.token_key)
        return claimed_lifetime(token) if token else None

    def token_expired(self, secret: Obj) -> bool:
        """Expired by the controller's own clock: minted at `issued-at` (its clock) plus the
        token's lifetime. Comparing the API server's expiry with a clock that runs ahead would
        see every new token as expired and mint in a loop."""
        issued, lifetime = self.issued_at(secret), self.token_lifetime(secret)
        return issued is None or lifetime is None or self.clock.now() >= issued + lifetime

    def delete_token_secrets(self, secrets_: list[Obj]) -> None:
        for secret in secrets_:
            meta = secret["metadata"]
            try:
                self.solar.delete("Secret", meta["name"], meta["namespace"])
                self.log(f"deleted token Secret {meta['namespace']}/{meta['name']}")
            except ApiError as error:
                if error.status != 404:
                    raise

    def needs_new_token(self, target: Obj, secret: Obj) -> bool:
        issued = self.issued_at(secret)
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

    def mint_token(
        self,
        target: Obj,
        names: CredentialNames,
        labels: dict[str, str],
        current: Obj | None,
        held: list[Obj],
    ) -> float:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        backoff = self._backoff.setdefault((namespace, name), Backoff())
        now = self.clock.now()
        if backoff.next_attempt is not None and now < backoff.next_attempt:
            self.report_waiting(target, current, backoff)
            return self.next_check(current, (backoff.next_attempt - now).total_seconds())
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
            self.delete_token_secrets(
                [
                    s
                    for s in self.credential_secrets(namespace, name)
                    if s["metadata"]["name"] == secret_name
                ]
            )
            return self.mint_failed(target, current, backoff, error.message)
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
        self.report_issued(target, secret)
        # The old token is bound to its Secret: deleting the Secret invalidates it.
        self.delete_token_secrets([s for s in held if s["metadata"]["name"] != secret_name])
        return self.next_check(secret, self.config.resync_seconds)

    def mint_failed(
        self, target: Obj, current: Obj | None, backoff: Backoff, message: str
    ) -> float:
        now = self.clock.now()
        self.mint_attempts.append((now, target["metadata"]["name"], False))
        backoff.failures += 1
        backoff.last_error = message
        wait: float = min(
            self.contract.mint_backoff_cap_seconds,
            self.contract.mint_backoff_initial_seconds * 2 ** (backoff.failures - 1),
        )
        backoff.next_attempt = now + timedelta(seconds=wait)
        self.record_mint_failure(target, backoff.failures, message)
        self.report_waiting(target, current, backoff)
        return self.next_check(current, wait)

    def next_check(self, secret: Obj | None, delay: float) -> float:
        """`delay`, or sooner when the token's rotation or expiry comes first (a controller with a
        long resync period must not sleep past them)."""
        if secret is None:
            return delay
        issued, lifetime = self.issued_at(secret), self.token_lifetime(secret)
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


@functools.lru_cache(maxsize=4096)
def claimed_lifetime(token: str) -> timedelta | None:
    """`exp` - `iat` of a token's claims (a token is read on every pass of its Target)."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
        return timedelta(seconds=int(claims["exp"]) - int(claims["iat"]))
    except (jwt.PyJWTError, KeyError, TypeError, ValueError):
        return None
