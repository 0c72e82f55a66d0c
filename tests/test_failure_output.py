"""A failed scenario's output starts with the step's own message, in the terminal's failure
section and in its one-line summary; `--tb` still chooses another style."""

from __future__ import annotations

from pathlib import Path

from tests.cucumber_feature import run_lamps

OWN_MESSAGE = "the lamp did not go dark: last seen lit"


def test_the_failure_starts_with_the_steps_own_message(tmp_path: Path) -> None:
    done = run_lamps(tmp_path, tmp_path / "report", "-rf")
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if "test_the_lamp_goes_dark _" in line)
    assert lines[header + 1] == OWN_MESSAGE, lines[header : header + 4]
    summary = next(line for line in lines if line.startswith("FAILED"))
    # Cut to the terminal's width, which leaves more or less of it as the checkout's path is
    # shorter or longer: what is left must be the start of the step's own message.
    shown = summary.partition(" - ")[2].removesuffix("...")
    assert len(shown) >= 5 and OWN_MESSAGE.startswith(shown), summary
    assert "_pytest/fixtures.py" not in done.stdout.split(OWN_MESSAGE, 2)[1].split("lamp_steps")[0]


def test_tb_long_still_gives_the_whole_traceback(tmp_path: Path) -> None:
    done = run_lamps(tmp_path, tmp_path / "report", "--tb=long")
    assert "def dark():" in done.stdout
    assert "_pytest/fixtures.py" in done.stdout or "fixturefunc" in done.stdout
