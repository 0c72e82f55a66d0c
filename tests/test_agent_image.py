"""The agent image carries what the agent process imports: its third-party packages and the
harness's own modules (no engine needed: the import is checked in a fresh interpreter)."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

from solar_conformance.provision.images.workloads import AGENT_REQUIREMENTS, AGENT_SOURCES, ROOT

HARNESS = ("solar_conformance",)
IMPORTS = """
import json, sys
import solar_conformance.components.agent_process
print(json.dumps({name: getattr(module, "__file__", None) for name, module in sys.modules.items()}))
"""


def _agent_imports() -> dict[str, str | None]:
    result = subprocess.run(
        [sys.executable, "-c", IMPORTS], capture_output=True, text=True, check=True, cwd=ROOT
    )
    imported: dict[str, str | None] = json.loads(result.stdout)
    return imported


def test_the_agent_image_installs_exactly_the_packages_the_agent_imports() -> None:
    distributions = importlib.metadata.packages_distributions()
    # "_" names are the interpreter's own hooks (the editable install's finder, setuptools'
    # distutils shim), present whatever the agent imports.
    third_party = {
        distribution
        for name in _agent_imports()
        if "." not in name
        and name not in sys.stdlib_module_names
        and name not in HARNESS
        and not name.startswith("_")
        for distribution in distributions.get(name, [])
    }
    assert third_party == set(AGENT_REQUIREMENTS)


def test_the_agent_image_carries_every_module_of_the_harness_the_agent_imports() -> None:
    sources = [ROOT / source for source in AGENT_SOURCES]
    harness = [
        Path(file)
        for name, file in _agent_imports().items()
        if name.split(".")[0] in HARNESS and file
    ]
    assert harness, "the agent imports nothing of the harness?"
    missing = [
        str(file.relative_to(ROOT))
        for file in harness
        if not any(file == source or source in file.parents for source in sources)
    ]
    assert missing == []
