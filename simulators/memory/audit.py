"""The in-memory API server's request log as audit events: who it authenticated, with which
credential, for what, and what it answered (core/audit.py)."""

from __future__ import annotations

from collections.abc import Iterable

from core.audit import AuditEvent
from simulators.memory.cluster import RequestRecord


def audit_events(records: Iterable[RequestRecord]) -> list[AuditEvent]:
    return [
        AuditEvent(
            time=record.at,
            user=record.user,
            credential_id=record.credential_id,
            verb=record.verb,
            group=record.group,
            resource=record.resource,
            subresource=record.subresource,
            namespace=record.namespace,
            name=record.name,
            code=record.status,
            dry_run=record.dry_run,
        )
        for record in records
    ]
