"""The images `kubeadm init` runs, built `FROM scratch` from the toolchain's static binaries
(etcd, the control plane, CoreDNS, pause compiled here) and kube-proxy with the node's own
iptables tools, each under a private engine name until it is preloaded into the node."""

from __future__ import annotations

import subprocess
import tarfile
import uuid
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import docker
from docker.models.containers import Container

from solar_conformance.provision.images.common import (
    ImageBuildError,
    Report,
    ScratchImage,
    add_directory,
    build_scratch_image,
    executable_entry,
    import_rootfs,
    untag,
)
from solar_conformance.provision.toolchain import versions
from solar_conformance.provision.toolchain.toolchain import Toolchain

STAGING_REPOSITORY = "solar-conformance/kind-node-parts"
REGISTRY = "registry.k8s.io"
PAUSE_VERSION = "3.10.1"
PAUSE_IMAGE = f"{REGISTRY}/pause:{PAUSE_VERSION}"
# Tagged with the version it really is; the cluster configuration points kubeadm at this tag
# (kubeadm v1.34.4 would ask for 3.6.5-0).
ETCD_IMAGE_TAG = f"{versions.ETCD.removeprefix('v')}-0"
SEARCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CONTROL_PLANE_BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
KUBE_PROXY_CLOSURE_SCRIPT = Path(__file__).with_name("files") / "kube-proxy-closure.sh"


def staging_name(upstream: str, build: str) -> str:
    """A private engine name for an image the node knows as `upstream` (the engine's own
    `registry.k8s.io/...` images, if it has any, are never retagged)."""
    name = upstream.split("/", 1)[1].replace("/", "-")
    return f"{STAGING_REPOSITORY}/{build}/{name}"


def component_images(
    client: docker.DockerClient,
    node: Container,
    toolchain: Toolchain,
    scratch: Path,
    report: Report,
    cleanup: ExitStack,
) -> dict[str, str]:
    """Builds every image kubeadm runs; returns {private engine name: the tag kubeadm asks for}."""
    k8s = versions.KUBERNETES
    build = uuid.uuid4().hex[:8]
    upstream_images = [
        ScratchImage(
            reference=f"{REGISTRY}/{binary}:{k8s}",
            files={f"/usr/local/bin/{binary}": toolchain.path(binary)},
            entrypoint=(f"/usr/local/bin/{binary}",),
        )
        for binary in CONTROL_PLANE_BINARIES
    ]
    upstream_images += [
        ScratchImage(
            reference=f"{REGISTRY}/etcd:{ETCD_IMAGE_TAG}",
            files={"/usr/local/bin/etcd": toolchain.path("etcd")},
            entrypoint=("/usr/local/bin/etcd",),
        ),
        ScratchImage(
            reference=f"{REGISTRY}/coredns/coredns:{versions.COREDNS}",
            files={"/coredns": toolchain.path("coredns")},
            entrypoint=("/coredns",),
        ),
        ScratchImage(
            reference=PAUSE_IMAGE,
            files={"/pause": _compile_pause(toolchain.path("pause-source"), scratch)},
            entrypoint=("/pause",),
            user="65535:65535",
        ),
    ]
    staged: dict[str, str] = {}
    for image in upstream_images:
        report(f"  image {image.reference}")
        private = staging_name(image.reference, build)
        cleanup.callback(untag, client, private)  # before the build: a failed one leaves none
        build_scratch_image(client, replace(image, reference=private))
        staged[private] = image.reference
    kube_proxy = f"{REGISTRY}/kube-proxy:{k8s}"
    report(f"  image {kube_proxy}")
    private = staging_name(kube_proxy, build)
    cleanup.callback(untag, client, private)
    _build_kube_proxy_image(client, node, toolchain.path("kube-proxy"), private, scratch)
    staged[private] = kube_proxy
    return staged


def _compile_pause(source: Path, scratch: Path) -> Path:
    output = scratch / "pause"
    result = subprocess.run(
        [
            "gcc",
            "-static",
            "-Os",
            f"-DVERSION=v{PAUSE_VERSION}",
            "-o",
            str(output),
            str(source / "pause.c"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise ImageBuildError(
            f"compiling pause.c with `gcc -static` failed: {result.stderr.strip()}"
        )
    subprocess.run(["strip", str(output)], check=False)
    return output


def _build_kube_proxy_image(
    client: docker.DockerClient, node: Container, binary: Path, reference: str, scratch: Path
) -> None:
    # The packet filter tools come from the node's own root, so both use one iptables version.
    archive = scratch / "kube-proxy.tar"
    with archive.open("wb") as output:
        result = subprocess.run(
            ["docker", "exec", node.id, "sh", "-c", KUBE_PROXY_CLOSURE_SCRIPT.read_text()],
            stdout=output,
            stderr=subprocess.PIPE,
            check=False,
        )
    if result.returncode != 0:
        raise ImageBuildError(
            f"collecting kube-proxy's iptables tools failed: {result.stderr.decode().strip()}"
        )
    with tarfile.open(archive, "a") as tar:
        tar.add(str(binary), arcname="usr/local/bin/kube-proxy", filter=executable_entry)
        add_directory(tar, "tmp", 0o1777)
    import_rootfs(
        client,
        archive,
        reference,
        [f"ENV PATH={SEARCH_PATH}", 'ENTRYPOINT ["/usr/local/bin/kube-proxy"]'],
    )
