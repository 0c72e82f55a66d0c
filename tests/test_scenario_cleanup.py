"""A scenario's namespaces go newest first, are waited for, and every error but NotFound is told."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from solar_conformance.core.api import ApiError, ClusterAPI, new_object
from solar_conformance.core.clock import VirtualClock
from solar_conformance.core.namespace_sweep import ReleasesHeld, scenario_namespaces
from solar_conformance.core.waiting import Waiter
from solar_conformance.plugin import landscapes
from solar_conformance.plugin.names import Names
from solar_conformance.plugin.scenario_cleanup import (
    HELD_GRACE_SECONDS,
    CleanupFailed,
    delete_scenario_namespaces,
    keep_for_inspection,
)
from solar_conformance.simulators.memory.cluster import SYSTEM_NAMESPACES, InMemoryCluster


class Recording:
    """A cluster client that records deletions and can refuse or keep chosen namespaces."""

    def __init__(self, api: ClusterAPI, refuse: str = "", keep: str = "") -> None:
        self.api = api
        self.refuse = refuse
        self.keep = keep
        self.deleted: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        if name == self.refuse:
            raise ApiError(403, "Forbidden", f"namespaces {name!r} is forbidden")
        self.deleted.append(name)
        if name != self.keep:
            self.api.delete(kind, name, namespace)


@dataclass
class Clusters:
    solar: Any
    target: Any


def _cluster(clock: VirtualClock, *namespaces: str) -> ClusterAPI:
    api = InMemoryCluster("c", clock).admin()
    for name in namespaces:
        api.create(new_object("Namespace", name))
        clock.advance(1)  # creation times one second apart
    return api


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


def test_newest_first_target_before_solar_and_only_the_scenarios(clock: VirtualClock) -> None:
    solar = Recording(_cluster(clock, "ops-abcde", "test-abcde", "test-other", "team-abcde"))
    target = Recording(_cluster(clock, "test-abcde", "flux-abcde"))
    waiter = Waiter(clock, {"reconcile": 5})
    delete_scenario_namespaces(Clusters(solar, target), "abcde", waiter)  # type: ignore[arg-type]
    assert target.deleted == ["flux-abcde", "test-abcde"]
    assert solar.deleted == ["team-abcde", "test-abcde", "ops-abcde"]
    assert scenario_namespaces(solar.api, "abcde") == []
    left = [n["metadata"]["name"] for n in solar.api.list("Namespace")]
    assert [name for name in left if name not in SYSTEM_NAMESPACES] == ["test-other"]


def test_every_error_is_reported_and_the_rest_still_goes(clock: VirtualClock) -> None:
    solar = Recording(_cluster(clock, "a-abcde", "b-abcde", "c-abcde"), refuse="b-abcde")
    target = Recording(_cluster(clock, "t-abcde"), keep="t-abcde")
    waiter = Waiter(clock, {"reconcile": 3})
    with pytest.raises(CleanupFailed) as failure:
        delete_scenario_namespaces(Clusters(solar, target), "abcde", waiter)  # type: ignore[arg-type]
    message = str(failure.value)
    assert "namespace b-abcde on the SolAr cluster: 403 Forbidden" in message
    assert "namespace t-abcde on the target cluster: namespace t-abcde to be deleted" in message
    assert "last seen" in message
    assert solar.deleted == ["c-abcde", "a-abcde"]
    assert scenario_namespaces(solar.api, "abcde") == ["b-abcde"]


def test_a_namespace_already_gone_is_not_an_error(clock: VirtualClock) -> None:
    solar = _cluster(clock, "a-abcde")

    class Vanishing(Recording):
        def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
            self.api.delete(kind, name, namespace)
            raise ApiError(404, "NotFound", "gone meanwhile")

    delete_scenario_namespaces(
        Clusters(Vanishing(solar), _cluster(clock)),  # type: ignore[arg-type]
        "abcde",
        Waiter(clock, {"reconcile": 3}),
    )


class Holding(Recording):
    """A real API server's client: the kept namespace stays in deletion until what holds it is
    released, or goes by itself `goes_after` seconds after its deletion."""

    def __init__(self, api: ClusterAPI, clock: VirtualClock, keep: str, goes_after: float) -> None:
        super().__init__(api, keep=keep)
        self.clock = clock
        self.goes_after = goes_after
        self.deleted_at = 0.0
        self.released_at: list[float] = []

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        self.deleted_at = self.clock.now().timestamp()
        super().delete(kind, name, namespace)

    def get(self, kind: str, name: str, namespace: str | None = None) -> Any:
        if name == self.keep and self.clock.now().timestamp() >= self.deleted_at + self.goes_after:
            self._let_go()
        return self.api.get(kind, name, namespace)

    def release_held(self, namespace: str) -> list[str]:
        self.released_at.append(self.clock.now().timestamp())
        if namespace != self.keep:
            return []
        self._let_go()
        return [f"RenderArtifact chart-{namespace} (solar.example/tag)"]

    def _let_go(self) -> None:
        if self.keep:
            self.api.delete("Namespace", self.keep)
            self.keep = ""


def test_a_namespace_held_past_the_grace_is_released_and_that_is_said(
    clock: VirtualClock,
) -> None:
    solar = Holding(_cluster(clock, "test-abcde"), clock, "test-abcde", goes_after=float("inf"))
    assert isinstance(solar, ReleasesHeld)
    waiter = Waiter(clock, {"reconcile": 60})
    delete_scenario_namespaces(Clusters(solar, _cluster(clock)), "abcde", waiter)  # type: ignore[arg-type]
    assert scenario_namespaces(solar.api, "abcde") == []
    assert solar.released_at == [solar.deleted_at + HELD_GRACE_SECONDS]
    released = "namespace test-abcde: released what held it: RenderArtifact chart-test-abcde"
    assert any(line.startswith(released) for line in waiter.history)


def test_a_namespace_gone_within_the_grace_is_not_released(clock: VirtualClock) -> None:
    solar = Holding(_cluster(clock, "test-abcde"), clock, "test-abcde", goes_after=5)
    waiter = Waiter(clock, {"reconcile": 60})
    delete_scenario_namespaces(Clusters(solar, _cluster(clock)), "abcde", waiter)  # type: ignore[arg-type]
    assert scenario_namespaces(solar.api, "abcde") == []
    assert solar.released_at == []
    assert not any("released what held it" in line for line in waiter.history)


def test_a_client_that_cannot_release_waits_the_whole_timeout_and_fails(
    clock: VirtualClock,
) -> None:
    solar = Recording(_cluster(clock, "test-abcde"), keep="test-abcde")
    assert not isinstance(solar, ReleasesHeld)
    waiter = Waiter(clock, {"reconcile": HELD_GRACE_SECONDS * 2})
    started = clock.now()
    with pytest.raises(CleanupFailed) as failure:
        delete_scenario_namespaces(Clusters(solar, _cluster(clock)), "abcde", waiter)  # type: ignore[arg-type]
    assert "namespace test-abcde on the SolAr cluster: namespace test-abcde to be deleted" in str(
        failure.value
    )
    assert (clock.now() - started).total_seconds() >= HELD_GRACE_SECONDS * 2
    assert not any("released what held it" in line for line in waiter.history)


class FakeConfig:
    def __init__(self, keep: bool) -> None:
        self.stash = pytest.Stash()
        self.keep = keep
        self.pluginmanager = self

    def getoption(self, name: str) -> object:
        return {"--solar-keep-on-failure": self.keep}[name]

    def getini(self, name: str) -> str:
        return "3"

    def get_plugin(self, name: str) -> None:
        return None


@dataclass
class FakeItem:
    config: FakeConfig
    nodeid: str = "features/x.feature::test_y"
    stash: pytest.Stash = field(default_factory=pytest.Stash)


@dataclass
class KubeconfigOwner:
    kubeconfig_path: Path


class SharedLandscape(Clusters):
    def __init__(self, solar: Any, target: Any, directory: Path) -> None:
        super().__init__(solar, target)
        self.solar_plane = KubeconfigOwner(directory / "solar.kubeconfig")
        self.target_plane = KubeconfigOwner(directory / "target.kubeconfig")
        self.ended: list[str] = []

    def end_scenario(self, suffix: str) -> None:
        self.ended.append(suffix)

    def kubeconfig_paths(self) -> dict[str, Path]:
        return {
            "SolAr": self.solar_plane.kubeconfig_path,
            "target": self.target_plane.kubeconfig_path,
        }


@pytest.mark.parametrize("keep", [True, False])
def test_keep_on_failure_leaves_a_failed_scenarios_namespaces(
    clock: VirtualClock, tmp_path: Path, keep: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Waiter, "on_real_clock", lambda *a, **k: Waiter(clock, {"reconcile": 3}))
    solar, target = _cluster(clock, "test-abcde"), _cluster(clock, "test-abcde")
    landscape = SharedLandscape(solar, target, tmp_path)
    item = FakeItem(FakeConfig(keep))
    item.stash[landscapes.FAILED_KEY] = True
    landscapes._end_scenario(item, landscape, Names("abcde"))  # type: ignore[arg-type]
    left = scenario_namespaces(solar, "abcde") + scenario_namespaces(target, "abcde")
    assert left == (["test-abcde", "test-abcde"] if keep else [])
    kept = item.config.stash.get(landscapes.KEPT_KEY, [])
    if not keep:
        assert kept == []
        assert landscape.ended == ["abcde"]
        return
    assert kept == ["features/x.feature::test_y: SolAr: test-abcde; target: test-abcde"]
    lines: list[str] = []
    keep_for_inspection(item.config, landscape, kept, lines.append)  # type: ignore[arg-type]
    shown = "\n".join(lines)
    assert f"kubectl --kubeconfig {tmp_path / 'solar.kubeconfig'} -n NAMESPACE" in shown
    assert f"kubectl --kubeconfig {tmp_path / 'target.kubeconfig'} -n NAMESPACE" in shown
    assert "SolAr: test-abcde; target: test-abcde" in shown
