"""Who the SolAr API server authenticated for a request: its audit events, as every backend has them.

On the real backends this is kube-apiserver's audit log (policy: `AUDIT_POLICY`, at `Metadata`
level, so no request or response body and never a token); on `sim` the in-memory API server
records the same facts for every request.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

# kube-apiserver puts the identity of a ServiceAccount token (its `jti` claim) into the
# authenticated user's extra under this key, as `JTI=<jti>`.
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"

# At least every write to SolAr's kinds and every TokenRequest; at Metadata level. Backends may
# record more.
AUDIT_POLICY: dict[str, Any] = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {
            "level": "Metadata",
            "verbs": ["create", "update", "patch", "delete", "deletecollection"],
            "resources": [{"group": "solar.opendefense.cloud"}],
        },
        {
            "level": "Metadata",
            "verbs": ["create"],
            "resources": [{"group": "", "resources": ["serviceaccounts/token"]}],
        },
        {"level": "None"},
    ],
}


@dataclass(frozen=True)
class AuditEvent:
    """One request as the SolAr API server authenticated and answered it (its audit log)."""

    at: datetime  # when the API server received it
    user: str  # the authenticated user, e.g. system:serviceaccount:<ns>:<name>
    credential: str | None  # "JTI=<jti>" for a ServiceAccount token, as kube-apiserver logs it
    verb: str  # get, list, watch, create, update, patch, delete, deletecollection
    resource: str  # plural, e.g. "targetreports", "serviceaccounts"
    subresource: str | None  # e.g. "status", "token"
    namespace: str | None
    name: str | None
    code: int  # the HTTP status of the answer
    group: str = ""  # the API group ("" for the core group)
    dry_run: bool = False  # sent with dryRun=All: nothing was written

    @property
    def jti(self) -> str | None:
        """The id of the ServiceAccount token the request was authenticated with."""
        if self.credential and self.credential.startswith("JTI="):
            return self.credential.removeprefix("JTI=")
        return None

    @property
    def succeeded(self) -> bool:
        return 200 <= self.code < 300

    def describe(self) -> str:
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        where = f"{self.namespace}/{self.name}" if self.namespace else str(self.name)
        return f"{self.verb} {resource} {where} by {self.user} ({self.code})"
