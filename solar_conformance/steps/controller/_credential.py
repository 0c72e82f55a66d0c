"""What several of solar-controller-manager's step modules share: the parts of a credential,
the probe of a token in the Secret the condition names, the expiry's granularity."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from solar_conformance.core.landscape import Landscape
from solar_conformance.page.lookup import ObjectRef, credential_condition, token_in, token_secret

# The parts of a credential the page's table names. A ClusterRole that a RoleBinding of the
# Target's namespace binds grants in that namespace only, as a Role does: it counts as the Role
# (docs/contracts.md, "The credential").
CREDENTIAL_PARTS = ("ServiceAccount", "Role", "RoleBinding", "TargetReport", "Secret")


def missing_parts(objects: list[ObjectRef]) -> list[str]:
    kinds = {"Role" if kind == "ClusterRole" else kind for kind, _, _ in objects}
    return sorted(set(CREDENTIAL_PARTS) - kinds)


def token_probe(landscape: Landscape, namespace: str, target: str) -> tuple[bool, Any]:
    secret = token_secret(landscape, namespace, target)
    condition = credential_condition(landscape, namespace, target)
    if secret is None:
        return False, {"condition": condition, "secret": None}
    token = token_in(landscape, secret)
    return bool(token), {"condition": condition, "secret": secret["metadata"]["name"]}


# kube-apiserver takes a TokenRequest's status.expirationTimestamp and the token's `exp` claim
# at two moments and truncates both to seconds: seen one second apart on a loaded machine.
EXPIRY_GRANULARITY = timedelta(seconds=1)
