"""The build container a node image is put together in (privileged, for the containerd that takes
the images), the steps run in it, and its commit as a node image kind can start."""

from __future__ import annotations

import io
import tarfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import docker
from docker.models.containers import Container

from solar_conformance.provision.images.common import ImageBuildError, add_text, untag

NODE_ENTRYPOINT = '["/usr/local/bin/entrypoint", "/sbin/init"]'


@contextmanager
def build_container(client: docker.DockerClient, base: str) -> Iterator[Container]:
    # Privileged, because containerd runs in it to take the images; /run is a tmpfs so that
    # containerd's state and the build's scratch files never reach the committed image.
    container = client.containers.run(
        base,
        ["infinity"],
        entrypoint=["sleep"],
        name=f"solar-kind-node-build-{uuid.uuid4().hex[:8]}",
        detach=True,
        privileged=True,
        tmpfs={"/run": ""},
    )
    try:
        yield container
    finally:
        container.remove(force=True)


def run_step(node: Container, argv: list[str], step: str) -> str:
    code, raw = node.exec_run(argv)
    output: str = raw.decode(errors="replace")
    if code != 0:
        raise ImageBuildError(f"{step} failed (exit {code}): {output.strip()[-2000:]}")
    return output


def commit_node(client: docker.DockerClient, node: Container, reference: str) -> None:
    repository, tag = reference.rsplit(":", 1)
    stage = f"{tag}-stage"
    node.commit(repository=repository, tag=stage)
    # `docker commit` cannot set STOPSIGNAL; a build FROM the commit sets it (and resets the
    # build container's `sleep` command by setting the entrypoint).
    dockerfile = "\n".join(
        [
            f"FROM {repository}:{stage}",
            "ENV container=docker",
            "STOPSIGNAL SIGRTMIN+3",
            f"ENTRYPOINT {NODE_ENTRYPOINT}",
            "",
        ]
    )
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        add_text(tar, "Dockerfile", dockerfile, 0o644)
    context.seek(0)
    try:
        client.images.build(fileobj=context, custom_context=True, tag=reference, rm=True)
    except docker.errors.BuildError as error:
        raise ImageBuildError(f"finishing {reference} failed: {error.msg}") from None
    finally:
        untag(client, f"{repository}:{stage}")
