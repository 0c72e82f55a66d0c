"""The agent's log lines that say the SolAr API server rejected its credential: the reports'
steps and the logs' steps read them."""

from __future__ import annotations

from solar_conformance.core.landscape import Landscape


def rejections(landscape: Landscape, namespace: str, target: str) -> list[str]:
    lines = [line for pod in landscape.agent_logs(namespace, target).values() for line in pod]
    return [line for line in lines if "401" in line or "Unauthorized" in line]
