"""Every lookup of what SolAr generated relies on a promise of the page (or of the profile, or of
docs/contracts.md), never on a name or a shape the reference SolAr happens to choose: such a
lookup fails every SolAr that chose otherwise, a false alarm.

- each function of solar_conformance/page that reads the SolAr API names its promises (`@lookup`);
- each read of an object SolAr generated, by its kind, in the steps and solar_conformance/model is listed
  below with the promise it relies on; a new one fails here until it is listed;
- no name the reference gives its objects, no internal annotation of the reference's, and no
  field of a Role's rules appears in the steps, solar_conformance/page or solar_conformance/model.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from solar_conformance.page.promises import LOOKUPS, PROMISES
from solar_conformance.simulators.reference import chart_pushes
from solar_conformance.simulators.reference.agent_access import CredentialNames
from solar_conformance.simulators.reference.bindings import PROFILE_LABEL
from solar_conformance.simulators.reference.render_charts import ReleaseCharts

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "solar_conformance"
PAGE_MODULES = sorted((PACKAGE / "page").glob("*.py"))
STEP_MODULES = sorted([*(PACKAGE / "steps").rglob("*.py"), *(PACKAGE / "model").glob("*.py")])
CHECKED = [*PAGE_MODULES, *STEP_MODULES]

# Kinds whose objects SolAr makes (on the SolAr cluster, or Flux from SolAr's charts on the
# target): the Target, Releases, Profiles and Registries are yours or the operator's.
GENERATED = {
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "Secret",
    "TargetReport",
    "ReleaseBinding",
    "Event",
    "ConfigMap",
    "OCIRepository",
    "HelmRelease",
    "Deployment",
}

# (module, function, kind) -> the promise each read of a generated object in the steps and the
# model relies on, and how.
STEP_LOOKUPS: dict[tuple[str, str, str], tuple[str, str]] = {
    ("solar_conformance/steps/agent/tokens.py", "_rejected", "Secret"): (
        "token",
        "the Secret the old token is bound to, by the token's own claim",
    ),
    ("solar_conformance/steps/controller/mint_failures.py", "refusals_are_events", "Event"): (
        "page",
        "Events about the Target, as kubectl describe finds them (kind, name, namespace, uid)",
    ),
    (
        "solar_conformance/steps/controller/bindings.py",
        "bindings_stay_in_namespace",
        "ReleaseBinding",
    ): (
        "solar-api",
        "every ReleaseBinding of the namespace, by its spec.targetRef",
    ),
    ("solar_conformance/steps/flux.py", "agent_installed_within_a_poll", "OCIRepository"): (
        "page",
        "the page's own OCIRepository, solar-bootstrap, that you applied",
    ),
    ("solar_conformance/steps/registry/pulls.py", "source_refused", "OCIRepository"): (
        "page",
        "the page's OCIRepository as you applied it, pointed with another regcred",
    ),
    ("solar_conformance/model/checks.py", "_reports_never_go_back", "TargetReport"): (
        "page",
        "named like its Target",
    ),
    ("solar_conformance/model/checks.py", "_settle", "Secret"): (
        "condition",
        "the Secret the Issued condition names",
    ),
    ("solar_conformance/model/world.py", "token_secrets", "Secret"): (
        "profile",
        "the Secrets with the credential's labels or owned by the Target, holding a token",
    ),
}

# Names the reference gives its objects and notes it keeps for itself, found by asking it: the
# fixed parts of the names it makes for a Target "t0" and a Release "r0".
_TARGET, _RELEASE = "t0", "r0"


def _fixed_parts(*generated: str) -> set[str]:
    pieces = {
        piece
        for name in generated
        for part in name.split(_TARGET)
        for piece in part.split(_RELEASE)
    }
    return {piece for piece in pieces if len(piece.strip("-")) > 2}


REFERENCE_NAMES = {
    *_fixed_parts(
        CredentialNames.for_target(_TARGET).service_account,
        CredentialNames.for_target(_TARGET).role,
        CredentialNames.for_target(_TARGET).secret_prefix,
        ReleaseCharts.agent_chart_name(_RELEASE, _TARGET),
    ),
    "solar-agent-kubeconfig",
    chart_pushes.CONTENT_ANNOTATION,
    chart_pushes.BOOTSTRAP_READY,
    PROFILE_LABEL,
    "checksum/kubeconfig",
}
REFERENCE_INTERNALS = {"expiry_annotation", "issued_annotation", "rotation_handled_annotation"}
# The shape of a Role: what the RBAC authorizer reads (solar_conformance/core/rbac.py), never a lookup.
ROLE_SHAPE = {"rules", "resourceNames"}


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef]]:
    """The module's functions and its classes' methods; a function nested in one (a wait's
    probe) counts as part of it."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield item.name, item


def _reads(function: ast.FunctionDef, clusters: tuple[str, ...]) -> Iterator[tuple[str, ast.Call]]:
    """Calls `<...>.<cluster>.get(...)` or `.list(...)`, and `solar_audit()`, in the function,
    with the kind when it is written out ("" otherwise)."""
    for node in ast.walk(function):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        callee = node.func
        if callee.attr == "solar_audit":
            yield "", node
        owner = callee.value
        reads = callee.attr in ("get", "list")
        if reads and isinstance(owner, ast.Attribute) and owner.attr in clusters:
            first = node.args[0] if node.args else None
            kind = first.value if isinstance(first, ast.Constant) else ""
            yield str(kind), node


def test_the_modules_checked_here_exist() -> None:
    """A check over no module passes whatever the steps do: each list finds its modules."""
    assert len(PAGE_MODULES) > 5, PACKAGE / "page"
    assert {p.relative_to(PACKAGE).parts[0] for p in STEP_MODULES} == {"steps", "model"}
    assert any(len(p.relative_to(PACKAGE).parts) > 2 for p in STEP_MODULES), "no actor package"


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_lookup_of_fixtures_page_names_the_promises_it_relies_on() -> None:
    for path in PAGE_MODULES:
        importlib.import_module(f"solar_conformance.page.{path.stem}")
    unnamed = []
    for path in PAGE_MODULES:
        module = f"solar_conformance.page.{path.stem}"
        tree = ast.parse(path.read_text())
        for name, function in _functions(tree):
            if not any(True for _ in _reads(function, ("solar",))):
                continue
            registered = [
                key
                for key in LOOKUPS
                if key.startswith(f"{module}:")
                and key.rsplit(".", 1)[-1].rsplit(":", 1)[-1] == name
            ]
            if not registered:
                unnamed.append(f"{_relative(path)}:{name}")
    assert unnamed == [], (
        "these read the SolAr API without naming the promise they rely on (decorate them with "
        f"solar_conformance.page.promises.lookup): {unnamed}"
    )


def test_every_registered_lookup_names_known_promises() -> None:
    for path in PAGE_MODULES:
        importlib.import_module(f"solar_conformance.page.{path.stem}")
    assert LOOKUPS, "no lookup is registered"
    wrong = {name: bases for name, bases in LOOKUPS.items() if set(bases) - set(PROMISES)}
    assert wrong == {}


def _step_reads() -> set[tuple[str, str, str]]:
    found = set()
    for path in STEP_MODULES:
        for name, function in _functions(ast.parse(path.read_text())):
            for kind, _ in _reads(function, ("solar", "target")):
                if kind in GENERATED:
                    found.add((_relative(path), name, kind))
    return found


def test_every_read_of_a_generated_object_in_the_steps_is_listed_with_its_promise() -> None:
    found = _step_reads()
    unlisted = sorted(found - set(STEP_LOOKUPS))
    assert unlisted == [], (
        "reads of objects SolAr generated, by kind, that tests/test_lookups.py does not list "
        f"with the promise they rely on (add them to STEP_LOOKUPS, or find the object through a "
        f"lookup of solar_conformance/page): {unlisted}"
    )
    stale = sorted(set(STEP_LOOKUPS) - found)
    assert stale == [], f"STEP_LOOKUPS lists reads that are gone: {stale}"
    unknown = {key: basis for key, (basis, _) in STEP_LOOKUPS.items() if basis not in PROMISES}
    assert unknown == {}, f"promises not in solar_conformance/page/promises.py: {unknown}"


def _strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """String constants, f-strings' literal parts included; docstrings left out."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node.lineno, node.value


# The operator's own Release (solar_conformance/page/setup.py) is named solar-agent by the harness, the
# operator: a name it chooses, not one SolAr generated.
OPERATORS_OWN = {("solar_conformance/page/setup.py", "solar-agent")}


@pytest.mark.parametrize("path", CHECKED, ids=_relative)
def test_no_name_or_shape_of_the_reference_is_relied_on(path: Path) -> None:
    tree = ast.parse(path.read_text())
    names = [
        f"line {line}: {text!r} holds the reference's {name!r}"
        for line, text in _strings(tree)
        for name in REFERENCE_NAMES | {"solar-agent"}
        if (name in text if name != "solar-agent" else text == name)
        and (_relative(path), text) not in OPERATORS_OWN
    ]
    shapes = [
        f"line {line}: reads a Role's {text!r}"
        for line, text in _strings(tree)
        if text in ROLE_SHAPE
    ]
    internals = [
        f"line {node.lineno}: the reference's own note {node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in REFERENCE_INTERNALS
    ]
    assert names + shapes + internals == [], (
        f"{_relative(path)} relies on what the page leaves open: {names + shapes + internals}"
    )


def test_the_scan_would_see_a_lookup_by_the_reference_s_names() -> None:
    """The checks above fail on the lookups they are there to catch."""
    source = """
def agent_account(landscape, namespace, target):
    return landscape.solar.get("ServiceAccount", f"solar-agent-{target}", namespace)

def role_of(role):
    return [r for r in role["rules"] if "targets" in r["resources"]]
"""
    tree = ast.parse(source)
    strings = {text for _, text in _strings(tree)}
    assert any(name in text for text in strings for name in REFERENCE_NAMES)
    assert strings & ROLE_SHAPE
    reads = [kind for _, f in _functions(tree) for kind, _ in _reads(f, ("solar",))]
    assert reads == ["ServiceAccount"]
