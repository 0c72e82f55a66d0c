"""Who may import whom, checked by walking every import of every module; and the picture of it in
docs/architecture.md, checked against the rule and the imports.

A dependency counts however it is written: an import inside a function (a lazy import is still a
dependency), and a module named in a string that something loads by that name (`pytest_plugins`,
`importlib.import_module`, `python -m ...`, `-p ...`, a mutant's seam `module:Name`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Every Python file of the checkout: the product, the page's own test module, the self-tests.
SCANNED = ("solar_conformance", "features", "tests")
P = "solar_conformance"
CORE = f"{P}.core"
# Packages that only group units and hold no code of their own.
GROUPS = (P, f"{P}.backends", f"{P}.simulators")

# unit -> the units it may import besides itself, core and third-party libraries. A unit is a
# package of solar_conformance (each backend and simulator is one of its own; the toolchain is
# apart from the rest of provision; the plugin's entry point apart from its modules), features,
# the mutation catalogue, the benchmarks, and the rest of tests/.
MAY_IMPORT: dict[str, set[str]] = {
    CORE: set(),
    f"{P}.simulators.reference": set(),
    f"{P}.simulators.memory": {f"{P}.simulators.reference"},
    f"{P}.provision.toolchain": set(),
    f"{P}.components": {f"{P}.provision.toolchain", f"{P}.simulators.reference"},
    # the agent image packs the agent program of components
    f"{P}.provision": {f"{P}.provision.toolchain", f"{P}.components", f"{P}.simulators.reference"},
    f"{P}.page": set(),
    f"{P}.backends.sim": {f"{P}.simulators.memory", f"{P}.simulators.reference"},
    # the hand walk writes the page's objects for a held landscape
    f"{P}.backends.existing": {f"{P}.components", f"{P}.page"},
    # `up` writes the landscape file `existing` reads and prepares the walk
    f"{P}.backends.local": {
        f"{P}.components",
        f"{P}.provision",
        f"{P}.provision.toolchain",
        f"{P}.backends.existing",
    },
    f"{P}.backends.kind": {
        f"{P}.components",
        f"{P}.provision",
        f"{P}.provision.toolchain",
        f"{P}.backends.existing",
    },
    f"{P}.plugin": {
        f"{P}.provision",  # the prerequisite check before anything starts
        f"{P}.provision.toolchain",
        f"{P}.backends.sim",  # landscape selection: one backend, imported when chosen
        f"{P}.backends.local",
        f"{P}.backends.kind",
        f"{P}.backends.existing",  # attaching to a landscape another process holds
        f"{P}.components",  # a concurrent run's controlling process holds the landscapes
    },
    # The pytest11 entry point (plugin/__init__.py) names what pytest loads.
    f"{P}.plugin.__init__": {f"{P}.plugin", f"{P}.report", f"{P}.steps"},
    f"{P}.report": {f"{P}.plugin"},
    f"{P}.model": {f"{P}.page", f"{P}.backends.sim"},
    f"{P}.steps": {f"{P}.page", f"{P}.plugin"},
    # names its commands' modules
    f"{P}.cli": {f"{P}.backends.local", f"{P}.backends.kind", f"{P}.report", f"{P}.provision"},
    "features": {f"{P}.model", f"{P}.plugin"},
    # The self-tests reach the product through its modules; nothing of the product reaches them.
    # The catalogue patches seams of the reference SolAr and of the sim landscape.
    "tests.mutants": {
        f"{P}.plugin",
        f"{P}.simulators.reference",
        f"{P}.simulators.memory",
        f"{P}.backends.sim",
    },
    "tests.benchmarks": {
        f"{P}.page",
        f"{P}.plugin",
        f"{P}.provision",
        f"{P}.components",
        f"{P}.backends.sim",
        f"{P}.backends.local",
        f"{P}.backends.existing",
    },
}
for _unit, _allowed in MAY_IMPORT.items():
    if _unit != CORE:
        _allowed.add(CORE)  # every unit may import core, which imports none
# The harness's own tests may import every other unit.
MAY_IMPORT["tests"] = set(MAY_IMPORT)
# A dotted module name, or its package's prefix ("solar_conformance.page."), or a seam.
MODULE_NAME = re.compile(r"(?:solar_conformance|tests|features)(?:\.\w+)+\.?(?::[\w.]+)?")
# A module's or package's file path (what an image is built from).
MODULE_PATH = re.compile(r"(?:solar_conformance|tests|features)(?:/\w+)+(?:\.py)?")


def unit_of(module: str) -> str:
    parts = module.removesuffix(".__init__").split(".")
    if module.removesuffix(".__init__") == f"{P}.plugin":
        return f"{P}.plugin.__init__"
    if parts[0] == P and len(parts) > 2 and parts[1:3] == ["provision", "toolchain"]:
        return f"{P}.provision.toolchain"
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


KNOWN = {module for module, _ in modules()} | {
    ".".join(module.split(".")[:depth])
    for module, _ in modules()
    for depth in range(1, module.count(".") + 1)
}


def named_in(path: Path, module: str) -> Iterator[str]:
    """Every module the file imports or names for loading, as far as it is a module of the checkout."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = module.split(".")[: -node.level]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for alias in node.names:  # `from package import module` imports that module
                submodule = f"{source}.{alias.name}"
                yield submodule if submodule in KNOWN else source
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if MODULE_NAME.fullmatch(node.value):
                name = node.value.partition(":")[0].rstrip(".")
            elif MODULE_PATH.fullmatch(node.value):
                name = node.value.removesuffix(".py").replace("/", ".")
            else:
                continue
            if name.removesuffix(".__init__") in KNOWN:
                yield name


def units_named(module: str) -> set[str]:
    if module.removesuffix(".__init__") in GROUPS:
        if module.endswith(".__init__"):  # a group's own file, which holds no code
            return set()
        # naming a group names every unit in it
        return {unit for unit in MAY_IMPORT if unit.startswith(f"{module}.")}
    return {unit_of(module)}


@cache
def edges() -> tuple[tuple[str, str, str], ...]:
    """(importing module, imported module, imported unit) for every import across units."""
    return tuple(
        (module, imported, target)
        for module, path in modules()
        for imported in named_in(path, module)
        if imported.split(".")[0] in SCANNED
        for target in units_named(imported)
        if target != unit_of(module)
    )


def test_every_module_is_in_a_unit_of_the_rule() -> None:
    outside = [m for m, _ in modules() if unit_of(m) not in MAY_IMPORT and m not in GROUPS]
    assert not outside, f"modules in no unit of the rule: {outside}"


def test_the_grouping_packages_hold_no_code() -> None:
    for group in GROUPS:
        path = ROOT.joinpath(*group.split("."), "__init__.py")
        body = ast.parse(path.read_text()).body
        assert all(isinstance(n, ast.Expr) for n in body), f"{path} holds more than a docstring"


def test_every_import_follows_the_rule() -> None:
    broken = [
        f"{module} imports {imported} ({unit_of(module)} may not import {target})"
        for module, imported, target in edges()
        if unit_of(module) in MAY_IMPORT and target not in MAY_IMPORT[unit_of(module)]
    ]
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize(
    ("source", "target", "found"),
    [
        ("cli.py", "solar_conformance.backends.kind.__main__", f"{P}.backends.kind"),
        ("tests/mutants/model.py", "solar_conformance.simulators", f"{P}.simulators.memory"),
        (
            "tests/mutants/catalogue/registry.py",
            "solar_conformance.simulators.memory.flux",
            f"{P}.simulators.memory",
        ),
        ("plugin/__init__.py", "solar_conformance.steps.you.targets", f"{P}.steps"),
    ],
)
def test_a_module_named_for_loading_counts(source: str, target: str, found: str) -> None:
    module = source.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    module = module if module.startswith("tests") else f"{P}.{module}"
    assert (module, target, found) in set(edges())


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
        ("solar_conformance.components.crds", "solar_conformance.provision.images.node", False),
        ("solar_conformance.steps.you.targets", "solar_conformance.plugin", False),
    ],
)
def test_the_rule_itself(module: str, imported: str, allowed: bool) -> None:
    """The rule says what docs/architecture.md says (kind never imports local, and so on)."""
    assert (unit_of(imported) in MAY_IMPORT[unit_of(module)]) is allowed


def test_every_package_is_documented() -> None:
    document = (ROOT / "docs" / "architecture.md").read_text()
    missing = [unit for unit in MAY_IMPORT if f"`{unit}`" not in document]
    assert not missing, f"docs/architecture.md does not describe {missing}"


MOST_LINES = 400


def test_every_module_of_the_package_stays_under_its_size() -> None:
    over = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / P).rglob("*.py"))
        if (lines := len(path.read_text().splitlines())) > MOST_LINES
    }
    assert not over, f"modules over {MOST_LINES} lines (split them by what their parts do): {over}"
