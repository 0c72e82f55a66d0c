"""The agent of a Target is found by image and by the arguments naming it, not by pod name."""

from __future__ import annotations

from typing import Any

from solar_conformance.components.agent_pods import AgentContainer, agent_containers


def pod(namespace: str, name: str, image: str, args: list[str]) -> dict[str, Any]:
    container = {"name": "agent", "image": image, "args": args}
    return {"metadata": {"namespace": namespace, "name": name}, "spec": {"containers": [container]}}


def test_only_the_agent_image_naming_the_target_and_its_namespace() -> None:
    mine = ["--target=cluster-1", "--namespace=test", "--interval=5"]
    pods = [
        pod("test", "a", "solar-agent:0.1.0", mine),
        pod("test", "b", "other:1", mine),
        pod("test", "c", "solar-agent:0.1.0", ["--target=cluster-1", "--namespace=other"]),
        pod("test", "d", "solar-agent:0.1.0", ["--target=cluster-2", "--namespace=test"]),
    ]
    found = list(agent_containers(pods, "solar-agent", "test", "cluster-1"))
    assert found == [AgentContainer("test", "a", "agent")]
    assert found[0].key == "test/a"


def test_the_agent_image_from_a_registry_with_a_port_or_pinned_by_digest() -> None:
    mine = ["--target=cluster-1", "--namespace=test"]
    image = "registry.example:5000/solar-agent"
    digest = "sha256:" + "ab" * 32
    pods = [
        pod("test", "a", f"{image}:0.1.0", mine),
        pod("test", "b", f"{image}@{digest}", mine),
        pod("test", "c", f"{image}:0.1.0@{digest}", mine),
        pod("test", "d", "registry.example:5000/other:0.1.0", mine),
        pod("test", "e", "registry.example:5001/solar-agent:0.1.0", mine),
    ]
    found = [c.pod for c in agent_containers(pods, image, "test", "cluster-1")]
    assert found == ["a", "b", "c"]
