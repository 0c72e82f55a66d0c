"""--solar-impl=upstream without a cluster: its options and their bad input, and the adjustments the
harness makes to upstream's rendered chart (who the report says answered: tests/test_answered.py)."""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import pytest

from solar_conformance.backends.kind.upstream import (
    APISERVICE,
    SERVING_SECRET,
    adjust,
    chart_values,
    serving_names,
)
from solar_conformance.backends.kind.upstream_source import PROGRAMS, BadUpstream, UpstreamSolar
from tests.project_runs import Run, one_line_exit_4, project_folder, run_pytest


def _binaries(folder: Path, programs: tuple[str, ...] = PROGRAMS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for program in programs:
        path = folder / program
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    return folder


def _chart(folder: Path) -> Path:
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text("apiVersion: v2\nname: solar\nversion: 0.0.1\n")
    return folder


# --- options -----------------------------------------------------------------------------------
def _run(project: Path, *args: str) -> Run:
    return run_pytest(project, "features/check_it_worked.feature", *args)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return project_folder(tmp_path)


def test_upstream_is_refused_outside_kind(project: Path) -> None:
    line = one_line_exit_4(_run(project, "--solar-impl=upstream"), "--solar-env=kind")
    assert "not on sim" in line


def test_upstream_without_its_chart_names_the_option(project: Path) -> None:
    result = _run(project, "--solar-impl=upstream", "--solar-env=kind")
    one_line_exit_4(result, "--solar-upstream-chart", "oci://")


def test_upstream_with_a_program_missing_names_it(project: Path) -> None:
    binaries = _binaries(project / "bin", PROGRAMS[:2])
    chart = _chart(project / "chart")
    result = _run(
        project,
        "--solar-impl=upstream",
        "--solar-env=kind",
        f"--solar-upstream-bin={binaries}",
        f"--solar-upstream-chart={chart}",
    )
    one_line_exit_4(result, "solar-renderer", "no executable")


def test_upstream_with_a_folder_that_is_no_chart(project: Path) -> None:
    binaries = _binaries(project / "bin")
    result = _run(
        project,
        "--solar-impl=upstream",
        "--solar-env=kind",
        f"--solar-upstream-bin={binaries}",
        f"--solar-upstream-chart={project}",
    )
    one_line_exit_4(result, "not a Helm chart", "--solar-upstream-chart")


def test_usable_binaries_and_chart_are_taken(tmp_path: Path) -> None:
    upstream = UpstreamSolar.from_options(_binaries(tmp_path / "bin"), _chart(tmp_path / "c"))
    assert sorted(upstream.binaries) == sorted(PROGRAMS)
    assert upstream.source_commit() is None, "no git checkout: said so, not invented"


def test_a_binary_that_is_not_executable_is_refused(tmp_path: Path) -> None:
    binaries = _binaries(tmp_path / "bin")
    (binaries / "solar-apiserver").chmod(0o644)
    with pytest.raises(BadUpstream, match="no executable solar-apiserver"):
        UpstreamSolar.from_options(binaries, _chart(tmp_path / "c"))


# --- the chart, adjusted -----------------------------------------------------------------------
def _deployment(name: str, command: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "solar-system"},
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "c", "command": [command], "args": ["--x=1"]}]}
            }
        },
    }


def _rendered() -> list[dict[str, Any]]:
    """The shape of what a chart like upstream's renders (written here, not copied)."""
    return [
        _deployment("solar-apiserver", "/solar-apiserver"),
        _deployment("solar-controller-manager", "/solar-controller-manager"),
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "solar-etcd"},
            "spec": {
                "template": {"spec": {"containers": [{"name": "etcd"}]}},
                "volumes": [{"name": "data", "emptyDir": {}}],
            },
        },
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": APISERVICE, "annotations": {"cert-manager.io/inject": "x"}},
            "spec": {"service": {"name": "solar-apiserver", "namespace": "solar-system"}},
        },
        {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c"}},
        {"apiVersion": "cert-manager.io/v1", "kind": "Issuer", "metadata": {"name": "i"}},
    ]


def test_the_chart_is_adjusted_to_run_without_cert_manager() -> None:
    documents = _rendered()
    installation = adjust(copy.deepcopy(documents), b"CA", (b"CERT", b"KEY"))
    kinds = [d["kind"] for d in installation.first]
    assert "Certificate" not in kinds and "Issuer" not in kinds
    assert installation.apiservice["spec"]["caBundle"] == base64.b64encode(b"CA").decode()
    assert "annotations" not in installation.apiservice["metadata"]
    assert installation.controller["metadata"]["name"] == "solar-controller-manager"
    assert installation.controller not in installation.first, "applied once the API is up"
    secret = installation.first[0]
    assert secret["metadata"]["name"] == SERVING_SECRET
    assert base64.b64decode(secret["data"]["tls.key"]) == b"KEY"
    apiserver = next(d for d in installation.first if d["metadata"]["name"] == "solar-apiserver")
    pod = apiserver["spec"]["template"]["spec"]
    assert "--x=1" in pod["containers"][0]["args"]
    assert any(a.startswith("--tls-cert-file=") for a in pod["containers"][0]["args"])
    assert pod["volumes"] == [{"name": "serving-cert", "secret": {"secretName": SERVING_SECRET}}]
    etcd = next(d for d in installation.first if d["kind"] == "StatefulSet")
    assert "volumes" not in etcd["spec"]
    assert etcd["spec"]["template"]["spec"]["volumes"] == [{"name": "data", "emptyDir": {}}]


def test_the_serving_certificate_names_the_apiservices_service() -> None:
    names = serving_names(_rendered())
    assert "solar-apiserver.solar-system.svc" in names


def test_a_chart_without_an_apiservice_is_refused() -> None:
    with pytest.raises(BadUpstream, match="0 APIServices"):
        adjust(_rendered()[:3], b"CA", (b"C", b"K"))


def test_the_values_use_the_harness_images_and_no_cert_manager() -> None:
    images = {p: f"solar-conformance/{p}:abc" for p in PROGRAMS}
    values = chart_values(images, "registry.k8s.io/etcd:3.6.5-0")
    assert "certManager.enabled=false" in values
    assert "renderer.image.tag=abc" in values
    assert "etcd.image.pullPolicy=Never" in values
