"""An image reference's repository, whatever registry, port, tag or digest it names."""

from __future__ import annotations

import pytest

from solar_conformance.core.images import image_repository

DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("reference", "repository"),
    [
        ("solar-agent", "solar-agent"),
        ("solar-agent:0.1.0", "solar-agent"),
        (f"solar-agent@{DIGEST}", "solar-agent"),
        (f"solar-agent:0.1.0@{DIGEST}", "solar-agent"),
        ("registry.example/solar/agent:0.1.0", "registry.example/solar/agent"),
        ("registry.example:5000/solar-agent", "registry.example:5000/solar-agent"),
        ("registry.example:5000/solar-agent:0.1.0", "registry.example:5000/solar-agent"),
        (f"registry.example:5000/solar-agent@{DIGEST}", "registry.example:5000/solar-agent"),
        (f"registry.example:5000/solar/agent:v1@{DIGEST}", "registry.example:5000/solar/agent"),
        ("[::1]:5000/solar-agent:0.1.0", "[::1]:5000/solar-agent"),
        ("localhost:5000/solar-agent", "localhost:5000/solar-agent"),
    ],
)
def test_the_repository_is_the_reference_without_its_tag_and_digest(
    reference: str, repository: str
) -> None:
    assert image_repository(reference) == repository


def test_a_registry_port_is_not_a_tag() -> None:
    assert image_repository("registry.example:5000/solar-agent") != "registry.example"
