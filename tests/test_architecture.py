"""Who may import whom (docs/architecture.md), checked by walking every import of every module.

Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("core", "fixtures", "simulators", "steps")

# package -> the packages it may import (besides itself and third-party libraries)
MAY_IMPORT: dict[str, set[str]] = {
    "core": set(),
    "solar_conformance.simulators.reference": {"core"},
    "solar_conformance.simulators.memory": {"core", "solar_conformance.simulators.reference"},
    "solar_conformance.provision": {"core", "solar_conformance.simulators.reference"},
    "solar_conformance.components": {"core", "solar_conformance.provision", "solar_conformance.simulators.reference"},
    "solar_conformance.backends.sim": {"core", "solar_conformance.simulators.memory", "solar_conformance.simulators.reference"},
    "solar_conformance.backends.local": {
        "core",
        "solar_conformance.components",
        "solar_conformance.provision",
        "solar_conformance.page",
        "solar_conformance.backends.existing",  # `up` writes the landscape file
    },
    "solar_conformance.backends.kind": {
        "core",
        "solar_conformance.components",
        "solar_conformance.provision",
        "solar_conformance.page",
        "solar_conformance.backends.existing",
    },
    "solar_conformance.backends.existing": {"core", "solar_conformance.components", "solar_conformance.provision", "solar_conformance.page"},
    "solar_conformance.page": {"core"},
    "solar_conformance.plugin": {
        "core",
        "solar_conformance.page",
        "solar_conformance.provision",  # the prerequisite check before anything starts
        "solar_conformance.backends.sim",  # landscape selection: one backend, imported when chosen
        "solar_conformance.backends.local",
        "solar_conformance.backends.kind",
        "solar_conformance.backends.existing",  # attaching to a landscape another process holds
        "solar_conformance.components",  # a concurrent run's controlling process holds the landscapes
    },
    "solar_conformance.report": {"core", "solar_conformance.plugin"},
    "solar_conformance.model": {"core", "solar_conformance.page", "solar_conformance.backends.sim"},
    "steps": {"core", "solar_conformance.page", "solar_conformance.plugin"},
}

# Imports that break the rule today and are being moved; each must still exist (remove it here
# when it goes), so the list only shrinks.
PENDING: set[tuple[str, str]] = {
    # the registry configuration shared by both backends still lives in local/registry.py
    ("solar_conformance.backends.kind.registry", "solar_conformance.backends.local.registry"),
    # the node image's recipe digest covers node.py's own text: its start-up wait (already the
    # Waiter, through solar_conformance/components/waiting.py) moves to solar_conformance.core.waiting with the next image change
    ("solar_conformance.provision.images.node", "solar_conformance.components.waiting"),
}


def package_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] in ("fixtures", "simulators") and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def modules() -> Iterator[tuple[str, Path]]:
    for top in OURS:
        for path in sorted((ROOT / top).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            yield module.removesuffix(".__init__"), path


def imports_of(path: Path, module: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = module.split(".")[: -node.level]
                yield ".".join([*base, node.module] if node.module else base)
            elif node.module:
                yield node.module


def edges() -> Iterator[tuple[str, str]]:
    for module, path in modules():
        for imported in imports_of(path, module):
            if imported.split(".")[0] in OURS:
                yield module, imported


def test_every_import_follows_the_rule() -> None:
    broken = []
    for module, imported in edges():
        source, target = package_of(module), package_of(imported)
        if source == target or (module, imported) in PENDING:
            continue
        if source not in MAY_IMPORT:
            broken.append(f"{module}: its package {source} is not in the rule")
        elif target not in MAY_IMPORT[source]:
            broken.append(f"{module} imports {imported} ({source} may not import {target})")
    assert not broken, "\n".join(broken)


def test_pending_exceptions_are_still_needed() -> None:
    assert not PENDING - set(edges()), "an exception is no longer needed: remove it from PENDING"


@pytest.mark.parametrize(
    ("module", "imported", "allowed"),
    [
        ("solar_conformance.core.api", "solar_conformance.components.kube", False),
        ("solar_conformance.simulators.memory.flux", "solar_conformance.backends.local.flux", False),
        ("solar_conformance.backends.kind.cluster", "solar_conformance.backends.local.controlplane", False),
        ("solar_conformance.backends.local.flux", "solar_conformance.backends.kind.flux", False),
        ("solar_conformance.backends.kind.flux", "solar_conformance.components.crds", True),
    ],
)
def test_the_rule_itself(module: str, imported: str, allowed: bool) -> None:
    """The rule says what docs/architecture.md says (kind never imports local, and so on)."""
    source, target = package_of(module), package_of(imported)
    assert (target in MAY_IMPORT[source]) is allowed


def test_every_package_is_documented() -> None:
    document = (ROOT / "docs" / "architecture.md").read_text()
    missing = [package for package in MAY_IMPORT if f"`{package}`" not in document]
    assert not missing, f"docs/architecture.md does not describe {missing}"
