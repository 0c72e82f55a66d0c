"""The configuration `kind create cluster` is given, and where a reused cluster keeps its audit
log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from solar_conformance.backends.kind import audit
from solar_conformance.provision.images.node_components import ETCD_IMAGE_TAG
from solar_conformance.provision.toolchain.layout import default_cache_root

POD_SUBNET = "10.244.0.0/16"  # the node's CNI conflist hands out 10.244.0.0/24 (first node)


def kind_config(audit_dir: Path, upstream_node: bool, api_server_port: int) -> dict[str, Any]:
    """kind's own node image (`upstream_node`) brings kindnetd and the etcd image kubeadm
    expects; the offline one brings its own CNI conflist and etcd under a tag of its own. The
    API server is published on 127.0.0.1 at `api_server_port` (api_ports.py)."""
    node = {"role": "control-plane", "extraMounts": [audit.node_mount(audit_dir)]}
    api_server = {"apiServerAddress": "127.0.0.1", "apiServerPort": api_server_port}
    if upstream_node:
        return {
            "kind": "Cluster",
            "apiVersion": "kind.x-k8s.io/v1alpha4",
            "networking": api_server,
            "nodes": [node],
            "kubeadmConfigPatches": [audit.kubeadm_patch()],
        }
    # No apiVersion: kind then applies the patch to whichever kubeadm API version it writes.
    etcd_patch = {
        "kind": "ClusterConfiguration",
        "etcd": {"local": {"imageTag": ETCD_IMAGE_TAG}},
    }
    return {
        "kind": "Cluster",
        "apiVersion": "kind.x-k8s.io/v1alpha4",
        "networking": {**api_server, "disableDefaultCNI": True, "podSubnet": POD_SUBNET},
        "nodes": [node],
        "kubeadmConfigPatches": [
            yaml.safe_dump(etcd_patch, sort_keys=False),
            audit.kubeadm_patch(),
        ],
    }


def reused_audit_dir(name: str) -> Path:
    return default_cache_root() / "kind-audit" / name
