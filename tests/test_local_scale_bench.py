"""The real-landscape scale benchmark's own arithmetic: its row, and the memory of a process
tree (figures are never asserted: only that the pieces measure what they say)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchmarks import local_scale
from tests.benchmarks.local_scale import (
    Holder,
    ScaleSample,
    container_working_set,
    default_sizes,
    read_holder,
    target_namespace,
    tree_rss,
)


def test_a_row_gives_wall_time_and_memory_per_target() -> None:
    assert ScaleSample(50, 80.0, 100 * 2**20).row() == "| 50 | 80.0 | 1600 | 2.0 MiB |"
    assert ScaleSample(1, 3.0, None).row() == "| 1 | 3.0 | 3000 | not measured |"


def test_the_memory_of_a_tree_counts_its_children() -> None:
    alone = tree_rss(os.getpid())
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        assert alone > 0
        deadline_reads = [tree_rss(os.getpid()) for _ in range(50)]
        assert max(deadline_reads) > alone
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)


def test_target_namespaces_end_like_the_solar_namespace() -> None:
    assert target_namespace("scale-ab12-50", "t7") == "t7-scale-ab12-50"


def test_the_sizes_default_to_the_issues_sizes_of_the_landscapes_backend(tmp_path: Path) -> None:
    landscape = tmp_path / "landscape.toml"
    for backend, sizes in (("local", [1, 10, 50]), ("kind", [1, 10]), ("existing", [1, 10])):
        landscape.write_text(f'backend = "{backend}"\n')
        assert default_sizes(landscape) == sizes


def test_a_kind_holder_counts_its_containers_beside_its_process_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = {"pid": os.getpid(), "landscape": "x", "containers": ["node-a", "registry-b"]}
    (tmp_path / "state.json").write_text(json.dumps(state))
    holder = read_holder(tmp_path / "landscape.toml")
    assert holder == Holder(os.getpid(), ("node-a", "registry-b"))
    cgroup = tmp_path / "cgroup" / "{id}"
    monkeypatch.setattr(local_scale, "CGROUP_DIRS", (str(cgroup),))
    for container, usage, inactive in (("node-a", 5000, 1000), ("registry-b", 700, 200)):
        directory = tmp_path / "cgroup" / container
        directory.mkdir(parents=True)
        (directory / "memory.usage_in_bytes").write_text(f"{usage}\n")
        (directory / "memory.stat").write_text(f"cache 9\ntotal_inactive_file {inactive}\n")
    assert container_working_set("node-a") == 4000
    resident = holder.resident_bytes()
    assert resident is not None and resident >= 4500 + tree_rss(os.getpid()) // 2


def test_memory_is_not_measured_when_a_containers_cgroup_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_scale, "CGROUP_DIRS", (str(tmp_path / "{id}"),))
    assert container_working_set("gone") is None
    assert Holder(os.getpid(), ("gone",)).resident_bytes() is None
    assert Holder(os.getpid(), ()).resident_bytes() == pytest.approx(tree_rss(os.getpid()), rel=0.5)


def test_a_local_holder_has_no_containers(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text(json.dumps({"pid": 42, "landscape": "x"}))
    assert read_holder(tmp_path / "landscape.toml") == Holder(42, ())
    assert read_holder(tmp_path / "elsewhere" / "landscape.toml") is None
