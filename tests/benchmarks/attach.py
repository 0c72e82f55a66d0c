"""The landscape a real benchmark measures: the one a landscape file names."""

from __future__ import annotations

import sys
from pathlib import Path

from solar_conformance.core.contract import Contract
from solar_conformance.core.landscape import Landscape


def attach(landscape_file: Path) -> Landscape | None:
    """The landscape of the file, or None after one line saying what is wrong with the file."""
    from solar_conformance.backends.existing.landscape import ExistingLandscape
    from solar_conformance.backends.existing.landscape_file import BadLandscapeFile, load

    try:
        return ExistingLandscape(load(landscape_file), Contract.load(None))
    except BadLandscapeFile as problem:
        print(problem, file=sys.stderr)
        return None
