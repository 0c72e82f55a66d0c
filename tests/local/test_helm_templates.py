"""The sim's Flux renders a bootstrap chart as the real Helm does: SolAr's tags as chart versions,
the objects named after the Helm release (`{{ .Release.Name }}`) and put in its namespace."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from solar_conformance.core import yamlio
from solar_conformance.core.oci import Chart
from solar_conformance.provision.toolchain import MissingTool, Toolchain
from solar_conformance.simulators.memory.flux import _rendered

pytestmark = [pytest.mark.local]

SOURCE = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "OCIRepository",
    "metadata": {
        "name": "{{ .Release.Name }}-web",
        "namespace": "{{ .Release.Namespace }}",
        "labels": {"solar.opendefense.cloud/release": "web"},
    },
    "spec": {"interval": "10m", "ref": {"semver": "v0.0.1-e3b0c442"}},
}


def _helm() -> Path:
    try:
        return Toolchain.from_env().path("helm")
    except MissingTool as missing:
        pytest.skip(str(missing))


@pytest.mark.parametrize("version", ["v0.0.0", "v0.0.12", "v0.0.3-e3b0c442", "v0.0.1-0"])
def test_helm_renders_the_bootstrap_chart_as_the_sim_does(version: str, tmp_path: Path) -> None:
    helm = _helm()
    chart = Chart("bootstrap-cluster-1", version, {"web.yaml": yamlio.dump(SOURCE)})
    archive = tmp_path / "chart.tgz"
    archive.write_bytes(chart.package())
    finished = subprocess.run(
        [str(helm), "template", "solar-bootstrap", str(archive), "--namespace", "test"],
        capture_output=True,
        text=True,
        env={"HOME": str(tmp_path), "PATH": ""},
        timeout=60,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    by_helm = [doc for doc in yamlio.load_all(finished.stdout) if doc]
    page_release = {"metadata": {"name": "solar-bootstrap", "namespace": "test"}, "spec": {}}
    assert by_helm == _rendered(chart, page_release).manifests()
    assert by_helm[0]["metadata"]["name"] == "solar-bootstrap-web"
