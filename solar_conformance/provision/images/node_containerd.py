"""The containerd of the build container: it imports each image a node needs under the name the
node's CRI looks up, and pins it, so kubelet's image garbage collection never removes it."""

from __future__ import annotations

import subprocess

from docker.models.containers import Container

from solar_conformance.core.waiting import Waiter, WaitTimeout
from solar_conformance.provision.images.common import ImageBuildError, Report
from solar_conformance.provision.images.node_build import run_step

CONTAINERD_NAMESPACE = "k8s.io"
PIN_LABEL = "io.cri-containerd.pinned=pinned"
STEP_TIMEOUT_SECONDS = 300.0
CONTAINERD_START_SECONDS = 30.0
# containerd's minimal configuration while images are imported during the build: no CRI plugin,
# which would try to set up snapshotters and networking inside the build container.
BUILD_CONTAINERD_CONFIG = 'version = 2\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
# In the build container's /run (a tmpfs), so they stay out of the image.
BUILD_CONTAINERD_CONFIG_PATH = "/run/build-containerd.toml"
BUILD_CONTAINERD_LOG = "/run/build-containerd.log"
BUILD_CONTAINERD_PID = "/run/build-containerd.pid"


def preload(node: Container, images: dict[str, str], report: Report) -> None:
    run_step(
        node,
        [
            "sh",
            "-c",
            f'printf "%s" "$1" > {BUILD_CONTAINERD_CONFIG_PATH}',
            "sh",
            BUILD_CONTAINERD_CONFIG,
        ],
        "writing containerd's build configuration",
    )
    run_step(
        node,
        [
            "sh",
            "-c",
            f"containerd --config {BUILD_CONTAINERD_CONFIG_PATH} >{BUILD_CONTAINERD_LOG} 2>&1 & "
            f"echo $! > {BUILD_CONTAINERD_PID}",
        ],
        "starting containerd in the build container",
    )
    _wait_for_containerd(node)
    for private, upstream in images.items():
        import_image(node.id, private, upstream)
    report(f"  {len(images)} images preloaded and pinned")
    # A clean stop, so containerd's metadata database is consistent in the committed image. The
    # build container's `sleep` never reaps it: it stays a zombie, which counts as stopped.
    run_step(
        node,
        [
            "sh",
            "-c",
            f'pid=$(cat {BUILD_CONTAINERD_PID}); kill "$pid"; '
            'while [ -e /proc/$pid ] && ! grep -q "^State:.*Z" /proc/$pid/status; do sleep 0.1; done',
        ],
        "stopping containerd in the build container",
    )


def _wait_for_containerd(node: Container) -> None:
    def answers() -> tuple[bool, str]:
        code, raw = node.exec_run(["ctr", "version"])
        return code == 0, raw.decode(errors="replace").strip()

    try:
        Waiter.on_real_clock().until(
            "containerd in the build container", answers, timeout=CONTAINERD_START_SECONDS
        )
    except WaitTimeout as timeout:
        _, log = node.exec_run(["tail", "-n", "20", BUILD_CONTAINERD_LOG])
        raise ImageBuildError(f"{timeout}\n{log.decode(errors='replace')}") from None


def import_image(container: str, reference: str, known_as: str | None = None) -> None:
    """`docker save | ctr images import` into `container`'s containerd, then pins the image
    (renamed to `known_as` in the node when given)."""
    ctr = ["docker", "exec", "-i", container, "ctr", "-n", CONTAINERD_NAMESPACE, "images"]
    with subprocess.Popen(["docker", "save", reference], stdout=subprocess.PIPE) as save:
        imported = subprocess.run(
            [*ctr, "import", "--all-platforms", "--no-unpack", "--digests", "-"],
            stdin=save.stdout,
            capture_output=True,
            text=True,
            check=False,
            timeout=STEP_TIMEOUT_SECONDS,
        )
        if save.stdout is not None:
            save.stdout.close()
        saved = save.wait()
    if saved != 0 or imported.returncode != 0:
        raise ImageBuildError(
            f"importing {reference} into {container} failed (docker save exit {saved}): "
            f"{imported.stderr.strip()}"
        )
    name = containerd_name(reference)
    if known_as is not None:
        for step in (["tag", name, known_as], ["rm", name]):
            renamed = subprocess.run([*ctr, *step], capture_output=True, text=True, check=False)
            if renamed.returncode != 0:
                raise ImageBuildError(
                    f"renaming {name} to {known_as} in {container} failed: {renamed.stderr.strip()}"
                )
        name = known_as
    labelled = subprocess.run(
        [*ctr, "label", name, PIN_LABEL], capture_output=True, text=True, check=False
    )
    if labelled.returncode != 0:
        raise ImageBuildError(f"pinning {name} in {container} failed: {labelled.stderr.strip()}")


def containerd_name(reference: str) -> str:
    """The name `ctr images import` gives a `docker save`d image (Docker's implicit docker.io)."""
    first = reference.split("/", 1)[0]
    if "/" in reference and ("." in first or ":" in first or first == "localhost"):
        return reference
    if "/" not in reference:
        return f"docker.io/library/{reference}"
    return f"docker.io/{reference}"
