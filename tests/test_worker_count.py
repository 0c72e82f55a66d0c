"""`-n auto`: workers by the CPU the last run on the backend measured."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from solar_conformance.plugin import worker_count
from solar_conformance.plugin.measurements import MeasuredCost, keep_cost, measured_cost
from solar_conformance.provision.toolchain.layout import CACHE_ENV_VAR


@pytest.fixture(autouse=True)
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    return tmp_path


def _config(backend: str) -> pytest.Config:
    options = {"--solar-env": backend, "--solar-impl": None}
    lines: list[str] = []
    reporter = SimpleNamespace(write_line=lines.append, lines=lines)
    return SimpleNamespace(  # type: ignore[return-value]
        getoption=lambda name, default=None: options[name],
        pluginmanager=SimpleNamespace(get_plugin=lambda name: reporter),
        reporter=reporter,
        stash=pytest.Stash(),
    )


def _said(config: pytest.Config) -> list[str]:
    worker_count.pytest_sessionstart(SimpleNamespace(config=config))  # type: ignore[arg-type]
    lines: list[str] = config.reporter.lines  # type: ignore[attr-defined]
    return lines


@pytest.mark.parametrize(
    ("cores_per_scenario", "cores", "workers"),
    [
        (None, 2, worker_count.UNMEASURED),
        (0.25, 2, 6),  # 2 cores at 75 % hold six scenarios that keep a quarter core busy each
        (0.1, 2, 15),
        (0.01, 2, worker_count.MOST),
        (3.0, 2, 1),
        (0.0, 2, worker_count.MOST),
    ],
)
def test_workers_keep_the_cores_at_their_headroom(
    cores_per_scenario: float | None, cores: int, workers: int
) -> None:
    assert worker_count.workers_for(cores_per_scenario, cores) == workers


def test_on_sim_and_existing_auto_is_pytest_xdists_own() -> None:
    for backend in ("sim", "existing"):
        assert worker_count.pytest_xdist_auto_num_workers(_config(backend)) is None


def test_on_a_real_backend_auto_reads_the_cost_the_last_run_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker_count, "available_cores", lambda: 2)
    config = _config("local")
    assert worker_count.pytest_xdist_auto_num_workers(config) == worker_count.UNMEASURED
    assert _said(config) == [
        "-n auto: 4 workers (no run on this backend has measured its CPU yet, 2 cores)"
    ]
    keep_cost(config, MeasuredCost(cpu_seconds=85.0, scenario_seconds=347.0))
    assert measured_cost(config) == MeasuredCost(85.0, 347.0)
    assert measured_cost(_config("kind")) is None
    again = _config("local")
    assert worker_count.pytest_xdist_auto_num_workers(again) == 6
    assert _said(again) == [
        "-n auto: 6 workers (the last run kept 0.24 cores busy per running scenario, 2 cores)"
    ]


def test_without_auto_nothing_is_said() -> None:
    assert _said(_config("local")) == []
