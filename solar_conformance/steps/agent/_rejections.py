"""What the agent's log lines say, in any agent's words: that the SolAr API server rejected its
credential, or that a report failed because the server could not be reached. The reports'
steps, the logs' steps and the failure a wait shows read them."""

from __future__ import annotations

from solar_conformance.core.landscape import Landscape


def rejections(landscape: Landscape, namespace: str, target: str) -> list[str]:
    lines = [line for pod in landscape.agent_logs(namespace, target).values() for line in pod]
    return [line for line in lines if says_rejected(line)]


FAILURE_WORDS = ("fail", "error", "unable", "cannot", "could not", "can't")
UNREACHABLE_WORDS = (
    "connection refused",
    "connection reset",
    "unreachable",
    "timed out",
    "timeout",
    "deadline exceeded",
    "no route to host",
    "no such host",
)


def says_rejected(line: str) -> bool:
    return "401" in line or "unauthorized" in line.lower()


def says_unreachable(line: str) -> bool:
    """A failure, and a reason that the server could not be reached."""
    lower = line.lower()
    return any(w in lower for w in FAILURE_WORDS) and any(w in lower for w in UNREACHABLE_WORDS)
