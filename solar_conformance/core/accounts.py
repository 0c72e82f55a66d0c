"""The render registry's users, kept the same way on every backend: SolAr's push user, and one
pull user per namespace that the access policy limits to `<namespace>/**`."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from solar_conformance.core.policy import AccessPolicy
from solar_conformance.core.redact import REDACT

PUSH_USER = "solar"


class RegistryAccounts:
    def __init__(
        self,
        add_user: Callable[[str, str], None],
        set_policy: Callable[[AccessPolicy], None],
    ) -> None:
        self._add_user = add_user
        self._set_policy = set_policy
        self._readers: dict[str, str] = {}  # user -> namespace
        self._passwords: dict[str, str] = {PUSH_USER: _new_password()}
        add_user(PUSH_USER, self._passwords[PUSH_USER])
        set_policy(self.policy())

    def policy(self) -> AccessPolicy:
        return AccessPolicy.for_namespaces(PUSH_USER, self._readers)

    def push(self) -> tuple[str, str]:
        return PUSH_USER, self._passwords[PUSH_USER]

    def reader(self, namespace: str) -> tuple[str, str]:
        """The namespace's pull user, created (and let into the policy) on first use."""
        user = f"pull-{namespace}"
        if user not in self._readers:
            self._passwords[user] = _new_password()
            self._readers[user] = namespace
            self._add_user(user, self._passwords[user])
            self._set_policy(self.policy())
        return user, self._passwords[user]


def _new_password() -> str:
    password = secrets.token_urlsafe(16)
    REDACT.register(password)
    return password
