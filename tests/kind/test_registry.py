"""The kind backend's render registry container (zot when a `zot` binary is on PATH, otherwise
Distribution behind the token service) on a Docker network of its own: users and policies
changed while it runs take effect, each reader sees its namespace and nothing else, and the
container is gone afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack

import docker
import pytest

from solar_conformance.backends.kind.registry import KindRegistry, use_ryuk_if_available
from solar_conformance.components.registry_client import HttpRegistryClient
from solar_conformance.core.accounts import PUSH_USER, RegistryAccounts
from solar_conformance.core.oci import Chart, RegistryClient, RegistryError
from solar_conformance.core.policy import AccessPolicy
from solar_conformance.provision import engine
from solar_conformance.provision.images.workloads import registry_image
from solar_conformance.provision.toolchain.toolchain import MissingTool, Toolchain

pytestmark = pytest.mark.kind

CHART = Chart("agent", "0.1.0", templates={"a.yaml": "kind: ConfigMap\n"}, values={"a": 1})
REPOSITORIES = ("test/agent", "other/agent")


@pytest.fixture(scope="module")
def docker_client() -> Iterator[docker.DockerClient]:
    try:
        client = engine.client()
    except engine.EngineUnavailable as problem:
        pytest.skip(str(problem))
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="module")
def network(docker_client: docker.DockerClient) -> Iterator[str]:
    created = docker_client.networks.create(f"solar-registry-test-{uuid.uuid4().hex[:6]}")
    try:
        yield str(created.name)
    finally:
        created.remove()


def _image(docker_client: docker.DockerClient) -> tuple[str, bool]:
    try:
        return registry_image(docker_client, Toolchain.from_env(), print)
    except MissingTool as problem:
        pytest.skip(str(problem))


def _refusal(client: RegistryClient, repository: str) -> int:
    with pytest.raises(RegistryError) as refused:
        client.tags(repository)
    return refused.value.status


def test_users_and_policies_changed_while_it_runs_take_effect(
    docker_client: docker.DockerClient, network: str
) -> None:
    image, is_zot = _image(docker_client)
    use_ryuk_if_available(docker_client)
    start = AccessPolicy.for_namespaces(PUSH_USER, {})
    with (
        KindRegistry(docker_client, image, network, start, zot=is_zot) as registry,
        ExitStack() as clients,
    ):
        assert len(_containers_on(docker_client, network)) == 1
        assert registry.kind == ("zot" if is_zot else "distribution+token-service")
        accounts = RegistryAccounts(registry.add_user, registry.set_policy)

        def connect(user: str | None, password: str | None) -> RegistryClient:
            return clients.enter_context(HttpRegistryClient(registry.host, user, password))

        pusher = connect(*accounts.push())
        for repository in REPOSITORIES:
            pusher.push_chart(repository, CHART)
        assert pusher.catalog() == sorted(REPOSITORIES)

        test_reader = connect(*accounts.reader("test"))  # a user and a policy, both at run time
        assert test_reader.tags("test/agent") == [CHART.version]
        assert _refusal(test_reader, "other/agent") == 403
        assert test_reader.catalog() == ["test/agent"]

        other_reader = connect(*accounts.reader("other"))
        assert other_reader.tags("other/agent") == [CHART.version]
        assert _refusal(other_reader, "test/agent") == 403
        assert test_reader.tags("test/agent") == [CHART.version]  # the earlier reader still reads

        assert _refusal(connect(None, None), "test/agent") == 401
        user, _ = accounts.reader("test")
        assert _refusal(connect(user, "not-the-password"), "test/agent") == 401
    assert _containers_on(docker_client, network) == []


def _containers_on(docker_client: docker.DockerClient, network: str) -> list[str]:
    found = docker_client.containers.list(all=True, filters={"network": network})
    return [str(container.name) for container in found]
