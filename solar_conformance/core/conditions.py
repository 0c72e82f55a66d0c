"""Kubernetes conditions and Secret data, shared by the reference components."""

from __future__ import annotations

import base64
from datetime import datetime

from solar_conformance.core.api import Obj
from solar_conformance.core.clock import utc


def set_condition(
    obj: Obj, condition_type: str, status: str, reason: str, message: str, now: datetime
) -> bool:
    """Set a condition the way apimachinery's SetStatusCondition does; True if anything changed."""
    conditions: list[Obj] = obj.setdefault("status", {}).setdefault("conditions", [])
    wanted = {
        "type": condition_type,
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": obj["metadata"].get("generation", 0),
    }
    for condition in conditions:
        if condition.get("type") != condition_type:
            continue
        if all(condition.get(k) == v for k, v in wanted.items()):
            return False
        if condition.get("status") != status:
            condition["lastTransitionTime"] = utc(now)
        condition.update(wanted)
        return True
    conditions.append({**wanted, "lastTransitionTime": utc(now)})
    return True


def secret_value(secret: Obj, key: str) -> str | None:
    raw = (secret.get("data") or {}).get(key)
    if raw is None:
        return None
    return base64.b64decode(raw).decode()
