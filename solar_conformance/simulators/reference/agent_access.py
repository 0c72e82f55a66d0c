"""The objects the agent's credential is made of, besides its token: a ServiceAccount, a Role
that allows `get` on its Target and get/update/patch on its TargetReport (by resourceName,
nothing else), a RoleBinding, and the empty TargetReport the agent fills."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from solar_conformance.core.api import SOLAR_GROUP, ApiError, ClusterAPI, Obj, new_object


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


class AgentAccess:
    """The access objects of the CredentialController
    (solar_conformance/simulators/reference/controller.py)."""

    solar: ClusterAPI

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

    def ensure_access(self, target: Obj, names: CredentialNames, labels: dict[str, str]) -> None:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        rules = self.agent_rules(name)
        self.ensure_object(
            new_object(
                "ServiceAccount", names.service_account, namespace, labels=labels, owner=target
            )
        )
        self.ensure_object(
            new_object("Role", names.role, namespace, labels=labels, owner=target, rules=rules),
            compare=("rules",),
        )
        self.ensure_object(
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

    def ensure_report(self, target: Obj, labels: dict[str, str]) -> None:
        name = target["metadata"]["name"]
        self.ensure_object(
            new_object(
                "TargetReport",
                name,
                target["metadata"]["namespace"],
                labels=labels,
                owner=target,
                spec={"targetRef": {"name": name}},
            )
        )

    def ensure_object(self, wanted: Obj, compare: tuple[str, ...] = ()) -> None:
        """Create `wanted` if it is missing; make its `compare` keys as wanted if they differ."""
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
