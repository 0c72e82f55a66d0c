"""The real-landscape scale benchmark's own arithmetic: its row, and the memory of a process
tree (figures are never asserted: only that the pieces measure what they say)."""

from __future__ import annotations

import os
import subprocess
import sys

from benchmarks.local_scale import ScaleSample, target_namespace, tree_rss


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
