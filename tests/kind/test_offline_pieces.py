"""The kind backend's pieces that need no engine: the runc wrapper, the Flux manifests and the
kind configuration of both node images."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from solar_conformance.backends.kind import audit
from solar_conformance.backends.kind import cluster as cluster_module
from solar_conformance.backends.kind.cluster import KindCluster
from solar_conformance.backends.kind.cluster_config import kind_config
from solar_conformance.backends.kind.flux import CONTROLLERS, flux_manifests
from solar_conformance.components.flux_flags import helm_controller_flags, source_controller_flags
from solar_conformance.provision.engine import WRAPPER, installed_wrapper
from solar_conformance.provision.images.node_components import ETCD_IMAGE_TAG
from solar_conformance.provision.toolchain.toolchain import Toolchain

PRIVILEGED = ["CAP_SYS_ADMIN", "CAP_SYS_RESOURCE", "CAP_NET_ADMIN"]


def _run_wrapper(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SOLAR_REAL_RUNC": "/bin/echo"}
    return subprocess.run(
        [sys.executable, str(WRAPPER), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )


def test_the_wrapper_drops_sys_resource_from_a_new_container(tmp_path: Path) -> None:
    spec = {"process": {"capabilities": {"bounding": PRIVILEGED, "effective": PRIVILEGED}}}
    (tmp_path / "config.json").write_text(json.dumps(spec))
    result = _run_wrapper(["--root", "/run/x", "create", "--bundle", str(tmp_path), "c1"], tmp_path)
    rewritten = json.loads((tmp_path / "config.json").read_text())
    for names in rewritten["process"]["capabilities"].values():
        assert names == ["CAP_SYS_ADMIN", "CAP_NET_ADMIN"]
    assert result.stdout.split() == ["--root", "/run/x", "create", "--bundle", str(tmp_path), "c1"]


def test_the_wrapper_drops_sys_resource_from_an_exec(tmp_path: Path) -> None:
    process = tmp_path / "process.json"
    process.write_text(json.dumps({"capabilities": {"bounding": PRIVILEGED}}))
    _run_wrapper(["exec", "--process", str(process), "c1"], tmp_path)
    assert json.loads(process.read_text())["capabilities"]["bounding"] == [
        "CAP_SYS_ADMIN",
        "CAP_NET_ADMIN",
    ]


def test_the_wrapper_leaves_other_commands_alone(tmp_path: Path) -> None:
    spec = {"process": {"capabilities": {"bounding": PRIVILEGED}}}
    (tmp_path / "config.json").write_text(json.dumps(spec))
    _run_wrapper(["state", "c1"], tmp_path)
    assert json.loads((tmp_path / "config.json").read_text()) == spec


def test_dockerd_runs_a_copy_of_the_wrapper_that_outlives_the_checkout(tmp_path: Path) -> None:
    installed = installed_wrapper(tmp_path)
    assert installed.parent == tmp_path
    assert installed.read_bytes() == WRAPPER.read_bytes()
    assert os.access(installed, os.X_OK)
    installed.write_text("stale")
    assert installed_wrapper(tmp_path).read_bytes() == WRAPPER.read_bytes()
    assert [path.name for path in tmp_path.iterdir()] == [WRAPPER.name]


def test_flux_runs_the_given_images_and_serves_artifacts_in_cluster() -> None:
    images = {name: f"example/{name}:v1" for name in CONTROLLERS}
    documents = flux_manifests(images)
    deployments = {d["metadata"]["name"]: d for d in documents if d["kind"] == "Deployment"}
    assert set(deployments) == set(CONTROLLERS)
    for name, deployment in deployments.items():
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        assert container["image"] == images[name]
        assert container["imagePullPolicy"] == "Never"  # nothing can be pulled offline
    source_args = deployments["source-controller"]["spec"]["template"]["spec"]["containers"][0][
        "args"
    ]
    advertised = [a for a in source_args if a.startswith("--storage-adv-addr=")]
    assert advertised == ["--storage-adv-addr=source-controller.flux-system.svc.cluster.local."]
    services = [d for d in documents if d["kind"] == "Service"]
    assert services[0]["spec"]["ports"][0]["targetPort"] == 9090


def test_flux_on_kind_gets_the_retry_and_concurrency_flags_local_flux_gets() -> None:
    documents = flux_manifests({name: f"example/{name}:v1" for name in CONTROLLERS})
    args = {
        d["metadata"]["name"]: d["spec"]["template"]["spec"]["containers"][0]["args"]
        for d in documents
        if d["kind"] == "Deployment"
    }
    expected = {
        "source-controller": source_controller_flags(),
        "helm-controller": helm_controller_flags(),
    }
    for name, flags in expected.items():
        assert set(flags) <= set(args[name]), f"{name} runs with {args[name]}"
    assert "--concurrent=10" in args["helm-controller"]
    assert "--min-retry-delay=100ms" in args["source-controller"]


class _ToolchainWithKind:
    def path(self, artifact: str) -> Path:
        return Path("/nonexistent") / artifact


AUDIT_DIR = Path("/somewhere/audit")
API_PORT = 43210


def _config(upstream_node: bool) -> dict[str, Any]:
    return kind_config(AUDIT_DIR, upstream_node, API_PORT)


def test_the_offline_node_brings_its_own_cni_and_etcd_tag() -> None:
    config = _config(upstream_node=False)
    assert config["networking"]["disableDefaultCNI"] is True
    assert ETCD_IMAGE_TAG in config["kubeadmConfigPatches"][0]


def test_kinds_own_node_image_keeps_kindnetd_and_kubeadms_defaults() -> None:
    config = _config(upstream_node=True)
    assert set(config["networking"]) == {"apiServerAddress", "apiServerPort"}  # CNI: kind's own
    assert config["kubeadmConfigPatches"] == [audit.kubeadm_patch()]
    assert [node["role"] for node in config["nodes"]] == ["control-plane"]


@pytest.mark.parametrize("upstream_node", [False, True])
def test_both_node_images_keep_an_audit_log_on_this_machine(upstream_node: bool) -> None:
    config = _config(upstream_node)
    mount = {"hostPath": str(AUDIT_DIR), "containerPath": audit.NODE_DIR}
    assert config["nodes"][0]["extraMounts"] == [mount]
    patch = yaml.safe_load(config["kubeadmConfigPatches"][-1])
    flags = patch["apiServer"]["extraArgs"]
    assert flags["audit-policy-file"] == f"{audit.NODE_DIR}/{audit.POLICY}"
    assert flags["audit-log-path"] == f"{audit.NODE_DIR}/{audit.LOG}"
    volume = patch["apiServer"]["extraVolumes"][0]
    assert volume["hostPath"] == volume["mountPath"] == audit.NODE_DIR


class _Node:
    def __init__(self, image: str) -> None:
        self.id = "0123abcd"
        self.attrs = {
            "Config": {"Image": image},
            "NetworkSettings": {"Networks": {"kind": {"IPAddress": "172.18.0.2"}}},
        }


@pytest.mark.parametrize(
    ("node_runs", "imported"), [("node:loaded", ["agent:1"]), ("node:other", ["flux:1", "agent:1"])]
)
def test_images_the_node_image_carries_are_not_imported_again(
    monkeypatch: pytest.MonkeyPatch, node_runs: str, imported: list[str]
) -> None:
    toolchain = cast(Toolchain, _ToolchainWithKind())
    cluster = KindCluster("c", "node:loaded", toolchain, preloaded=("flux:1",))
    loaded: list[str] = []
    monkeypatch.setattr(cluster_module, "load_image", lambda _c, _n, image: loaded.append(image))
    monkeypatch.setattr(cluster, "_client", lambda: _Engine(_Node(node_runs)))
    entry = {"certificate-authority-data": "", "server": "https://127.0.0.1:6443"}
    monkeypatch.setattr(cluster, "_kubeconfig_entry", lambda *_: entry)
    monkeypatch.setattr(cluster_module, "check_certificate_covers", lambda *_: None)
    cluster._describe_node()
    cluster.load_image("flux:1")
    cluster.load_image("agent:1")
    assert loaded == imported


class _Engine:
    def __init__(self, node: _Node) -> None:
        self.containers = self
        self._node = node

    def get(self, _name: str) -> _Node:
        return self._node


@pytest.mark.parametrize("upstream_node", [False, True])
def test_the_api_server_is_published_on_loopback_at_the_port_the_harness_chose(
    upstream_node: bool,
) -> None:
    networking = _config(upstream_node)["networking"]
    assert networking["apiServerAddress"] == "127.0.0.1"
    assert networking["apiServerPort"] == API_PORT
