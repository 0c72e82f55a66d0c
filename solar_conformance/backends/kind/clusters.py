"""The two clusters of a kind landscape and the node images they run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import docker

from solar_conformance.backends.kind.cluster import KindCluster
from solar_conformance.components.lifecycle import Teardown
from solar_conformance.provision.images.loaded_node import node_image_with
from solar_conformance.provision.images.node import build_node_image
from solar_conformance.provision.images.workloads import ONLINE_NODE_IMAGE, WorkloadImages, pull
from solar_conformance.provision.toolchain.toolchain import Toolchain

REUSED_NAMES = ("solar-conformance-solar", "solar-conformance-target")


@dataclass(frozen=True)
class NodeImages:
    solar: str
    target: str
    target_carries: tuple[str, ...]  # images already in the target node's containerd


def landscape_node_images(
    client: docker.DockerClient,
    toolchain: Toolchain,
    images: WorkloadImages,
    online: bool,
    report: Callable[[str], None],
) -> NodeImages:
    """The SolAr node's image, the target node's, and the images the target's carries.

    Offline, the target node's image carries Flux's images (they change with the toolchain
    only); the agent's image, which changes with the harness's code, is loaded at each start
    while Flux's controllers start."""
    if online:
        node_image = pull(client, ONLINE_NODE_IMAGE, report)
        return NodeImages(node_image, node_image, ())
    node_image = build_node_image(client, toolchain, report)
    flux = (images.source_controller, images.helm_controller)
    return NodeImages(node_image, node_image_with(client, node_image, flux, report), flux)


def landscape_clusters(
    run_id: str,
    node_images: NodeImages,
    toolchain: Toolchain,
    report: Callable[[str], None],
    teardown: Teardown,
    *,
    reuse: bool,
    upstream_node: bool,
) -> tuple[KindCluster, KindCluster]:
    """Both clusters, to be entered side by side: each waits mostly on its own node; each is
    deleted with `teardown`."""
    names = REUSED_NAMES if reuse else (f"solar-{run_id}", f"target-{run_id}")
    clusters = [
        KindCluster(
            name,
            image,
            toolchain,
            report,
            reuse=reuse,
            upstream_node=upstream_node,
            settle_later=True,
            preloaded=carried,
        )
        for name, image, carried in (
            (names[0], node_images.solar, ()),
            (names[1], node_images.target, node_images.target_carries),
        )
    ]
    for cluster in clusters:
        # Registered first: an interrupted start still deletes what kind made by then.
        teardown.add(f"delete kind cluster {cluster.name}", cluster.stop)
    return clusters[0], clusters[1]
