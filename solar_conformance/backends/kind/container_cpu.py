"""CPU seconds the Docker engine counted for containers (kind's nodes with everything in them,
the render registry), for the cost of a run."""

from __future__ import annotations

from collections.abc import Iterable

import docker
from docker.errors import DockerException

NANOSECONDS = 1e9


def container_cpu_seconds(client: docker.DockerClient, containers: Iterable[str]) -> float:
    """The CPU of these containers since each started; one that is gone counts nothing."""
    total = 0.0
    for container in containers:
        if not container:
            continue
        try:
            stats = client.containers.get(container).stats(stream=False, one_shot=True)
        except DockerException:
            continue
        total += float(stats.get("cpu_stats", {}).get("cpu_usage", {}).get("total_usage", 0))
    return total / NANOSECONDS
