"""Who may import whom (docs/architecture.md), checked by walking every import of every module.

Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Every Python file of the checkout: the product, the page's own test module, the self-tests.
SCANNED = ("solar_conformance", "features", "tests")
P = "solar_conformance"

# unit -> the units it may import (besides itself and third-party libraries). A unit is a package
# of solar_conformance (each backend and simulator is one of its own), features, the mutation
# catalogue, the benchmarks, and the rest of tests/.
MAY_IMPORT: dict[str, set[str]] = {
    f"{P}.core": set(),
    f"{P}.simulators.reference": {f"{P}.core"},
    f"{P}.simulators.memory": {f"{P}.core", f"{P}.simulators.reference"},
    f"{P}.provision": {f"{P}.core", f"{P}.simulators.reference"},
    f"{P}.components": {f"{P}.core", f"{P}.provision", f"{P}.simulators.reference"},
    f"{P}.page": {f"{P}.core"},
    f"{P}.backends.sim": {f"{P}.core", f"{P}.simulators.memory", f"{P}.simulators.reference"},
    f"{P}.backends.existing": {f"{P}.core", f"{P}.components", f"{P}.provision", f"{P}.page"},
    # `up` writes the landscape file that `existing` reads
    f"{P}.backends.local": {
        f"{P}.core",
        f"{P}.components",
        f"{P}.provision",
        f"{P}.page",
        f"{P}.backends.existing",
    },
    f"{P}.backends.kind": {
        f"{P}.core",
        f"{P}.components",
        f"{P}.provision",
        f"{P}.page",
        f"{P}.backends.existing",
    },
    f"{P}.plugin": {
        f"{P}.core",
        f"{P}.page",
        f"{P}.provision",  # the prerequisite check before anything starts
        f"{P}.backends.sim",  # landscape selection: one backend, imported when chosen
        f"{P}.backends.local",
        f"{P}.backends.kind",
        f"{P}.backends.existing",  # attaching to a landscape another process holds
        f"{P}.components",  # a concurrent run's controlling process holds the landscapes
    },
    f"{P}.report": {f"{P}.core", f"{P}.plugin"},
    f"{P}.model": {f"{P}.core", f"{P}.page", f"{P}.backends.sim"},
    f"{P}.steps": {f"{P}.core", f"{P}.page", f"{P}.plugin"},
    f"{P}.cli": set(),  # names its commands' modules; pytest loads the plugin
    "features": {f"{P}.core", f"{P}.model", f"{P}.plugin"},
    # The self-tests reach the product through its modules; nothing of the product reaches them.
    "tests.mutants": {f"{P}.core", f"{P}.plugin", f"{P}.simulators.reference"},
    "tests.benchmarks": {
        f"{P}.core",
        f"{P}.page",
        f"{P}.plugin",
        f"{P}.provision",
        f"{P}.components",
        f"{P}.backends.sim",
        f"{P}.backends.local",
        f"{P}.backends.existing",
    },
}
PRODUCT = {unit for unit in MAY_IMPORT if unit.startswith(P)}
# The harness's own tests may import every unit of the product and the self-test tools.
MAY_IMPORT["tests"] = PRODUCT | {"tests.mutants", "tests.benchmarks"}


def package_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] == P and len(parts) > 2 and parts[1] in ("backends", "simulators"):
        return ".".join(parts[:3])
    if parts[0] == P and len(parts) > 1:
        return ".".join(parts[:2])
    if parts[0] == "tests" and len(parts) > 1 and parts[1] in ("mutants", "benchmarks"):
        return ".".join(parts[:2])
    return parts[0]


def modules() -> Iterator[tuple[str, Path]]:
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
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
            if imported.split(".")[0] in SCANNED:
                yield module, imported


def test_every_import_follows_the_rule() -> None:
    broken = []
    for module, imported in edges():
        source, target = package_of(module), package_of(imported)
        if source == target:
            continue
        if source not in MAY_IMPORT:
            broken.append(f"{module}: its package {source} is not in the rule")
        elif target not in MAY_IMPORT[source]:
            broken.append(f"{module} imports {imported} ({source} may not import {target})")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize(
    ("module", "imported", "allowed"),
    [
        ("solar_conformance.core.api", "solar_conformance.components.kube", False),
        (
            "solar_conformance.simulators.memory.flux",
            "solar_conformance.backends.local.flux",
            False,
        ),
        (
            "solar_conformance.backends.kind.cluster",
            "solar_conformance.backends.local.controlplane",
            False,
        ),
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
