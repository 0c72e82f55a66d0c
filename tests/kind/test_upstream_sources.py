"""Upstream SolAr's chart and images that cannot be had stop a kind run before any cluster is
made, in one line and exit code 4: a chart reference nothing answers, a version the registry
lacks, an image not in the engine. The chart is a small one written here, served by the
toolchain's Distribution registry on the loopback and pushed with the toolchain's helm."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from solar_conformance.backends.kind.upstream_source import PROGRAMS, helm_env
from solar_conformance.components.distribution import answers_registry_api
from solar_conformance.components.probes import free_loopback_ports
from solar_conformance.components.processes import ManagedProcess
from solar_conformance.components.waiting import Deadline, wait_until
from solar_conformance.core import yamlio
from solar_conformance.provision import engine
from solar_conformance.provision.toolchain.toolchain import MissingTool, Toolchain
from tests.project_runs import USAGE_ERROR, Run, project_folder, run_pytest

pytestmark = pytest.mark.kind

ABSENT = ",".join(f"localhost/solar-conformance-absent/{p}:none" for p in PROGRAMS)


def _tool(name: str) -> Path:
    try:
        return Toolchain.from_env().path(name)
    except MissingTool as problem:
        pytest.skip(str(problem))


@pytest.fixture(scope="module")
def chart_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`oci://127.0.0.1:PORT/charts/solar` at version 0.3.0, in a registry without auth."""
    try:
        engine.client().close()
    except engine.EngineUnavailable as problem:
        pytest.skip(str(problem))
    helm, registry = _tool("helm"), _tool("registry")
    where = tmp_path_factory.mktemp("chart-registry")
    (port,) = free_loopback_ports(1)
    config = {
        "version": "0.1",
        "storage": {"filesystem": {"rootdirectory": str(where / "storage")}},
        "http": {"addr": f"127.0.0.1:{port}"},
    }
    (where / "config.yml").write_text(yamlio.dump(config))
    process = ManagedProcess(
        "registry", [str(registry), "serve", str(where / "config.yml")], where / "registry.log"
    )
    process.start()
    try:
        wait_until(
            "the chart registry to answer",
            answers_registry_api(f"http://127.0.0.1:{port}/v2/"),
            Deadline.after(30),
            process,
        )
        chart = where / "solar"
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: solar\nversion: 0.3.0\n")
        env = helm_env(where)
        subprocess.run([str(helm), "package", str(chart), "-d", str(where)], check=True, env=env)
        subprocess.run(
            [
                str(helm),
                "push",
                str(where / "solar-0.3.0.tgz"),
                f"oci://127.0.0.1:{port}/charts",
                "--plain-http",
            ],
            check=True,
            env=env,
            capture_output=True,
        )
        yield f"oci://127.0.0.1:{port}/charts/solar"
    finally:
        process.stop(5)


def one_line_exit_4(run: Run, *words: str) -> str:
    """Stopped at the landscape's start: exit code 4, the one line pytest prints for it, no
    scenario run and nothing left behind."""
    assert run.returncode == USAGE_ERROR, run.stdout + run.stderr
    lines = [line for line in run.stdout.splitlines() if line.startswith("! _pytest.outcomes.Exit")]
    assert len(lines) == 1, run.stdout
    assert "Traceback" not in run.stdout + run.stderr
    assert "no tests ran" in run.stdout.splitlines()[-2], run.stdout
    assert not run.left_behind, f"the run left {run.left_behind}"
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _run(where: Path, *args: str) -> Run:
    return run_pytest(
        project_folder(where),
        "features/create_target.feature",
        "--solar-env=kind",
        "--solar-impl=upstream",
        *args,
    )


def test_a_chart_reference_nothing_answers_stops_the_run(tmp_path: Path) -> None:
    (port,) = free_loopback_ports(1)
    result = _run(tmp_path, f"--solar-upstream-chart=oci://127.0.0.1:{port}/charts/solar")
    one_line_exit_4(result, "cannot be pulled", f"127.0.0.1:{port}")


def test_a_chart_version_the_registry_lacks_stops_the_run(
    tmp_path: Path, chart_registry: str
) -> None:
    result = _run(
        tmp_path, f"--solar-upstream-chart={chart_registry}", "--solar-upstream-version=9.9.9"
    )
    one_line_exit_4(result, f"{chart_registry}:9.9.9 cannot be pulled")


def test_an_image_not_in_the_engine_stops_the_run(tmp_path: Path, chart_registry: str) -> None:
    """The chart is pulled, then the first image is looked for in the engine (offline)."""
    result = _run(
        tmp_path,
        f"--solar-upstream-chart={chart_registry}",
        f"--solar-upstream-images={ABSENT}",
    )
    one_line_exit_4(result, "localhost/solar-conformance-absent/solar-apiserver:none")


def test_an_image_that_cannot_be_pulled_stops_the_run(tmp_path: Path, chart_registry: str) -> None:
    """Online, the images are pulled: a registry that does not answer is said in one line."""
    (port,) = free_loopback_ports(1)
    images = ",".join(f"127.0.0.1:{port}/absent/{p}:none" for p in PROGRAMS)
    result = _run(
        tmp_path,
        f"--solar-upstream-chart={chart_registry}",
        f"--solar-upstream-images={images}",
        "--solar-kind-images=online",
    )
    one_line_exit_4(result, f"127.0.0.1:{port}/absent/solar-apiserver:none cannot be pulled")
