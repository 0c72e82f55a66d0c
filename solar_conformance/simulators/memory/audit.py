"""The in-memory API server's request log as audit events: who it authenticated, with which
credential, for what, and what it answered (solar_conformance/core/audit.py)."""

from __future__ import annotations

from collections.abc import Iterable

from solar_conformance.core.audit import AuditEvent
from solar_conformance.simulators.memory.cluster import RequestRecord


def audit_events(records: Iterable[RequestRecord]) -> list[AuditEvent]:
    return [
        AuditEvent(
            at=record.at,
            user=record.user,
            credential=record.credential_id,
            verb=record.verb,
            group=record.group,
            resource=record.resource,
            subresource=record.subresource,
            namespace=record.namespace,
            name=record.name,
            # the in-memory API server says 200 where kube-apiserver says 201 Created
            code=201 if record.status == 200 and record.verb == "create" else record.status,
            dry_run=record.dry_run,
        )
        for record in records
    ]
