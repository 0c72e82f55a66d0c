"""The first-report benchmark's arithmetic: nearest-rank percentiles and stages left unrecorded."""

from __future__ import annotations

from tests.benchmarks.first_report import STAGES, Sample, percentile, table


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]
    assert percentile(values, 0.5) == 10.0
    assert percentile(values, 0.95) == 19.0
    assert percentile([3.0], 0.95) == 3.0


def test_a_stage_no_system_recorded_is_named_not_guessed() -> None:
    samples = [
        Sample(
            "t",
            5.0 + i,
            {"credential Issued": 1.0, "first report": 4.0 + i},
            {"first report": 4.5 + i},
        )
        for i in range(4)
    ]
    lines = table(samples)
    assert lines[0].startswith("4 Targets: creation to first lastReportTime p50 6.50 s, p95 8.00 s")
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines[4:-1]}
    assert set(rows) == set(STAGES)
    assert rows["first report"] == "| first report | 5.5 | 7.0 | 6.00 | 7.50 | 4 |"
    assert rows["credential Issued"] == "| credential Issued | 1.0 | 1.0 | - | - | 4 |"
    assert "not recorded" in rows["agent container started"]
