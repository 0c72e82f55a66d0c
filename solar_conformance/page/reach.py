"""What of one scenario a target cluster holds: "SolAr cannot reach into the target cluster".

The target cluster may be shared by scenarios that run at the same time, so an object counts as
the scenario's only where it carries the scenario's tag (solar_conformance/plugin/names.py): it
lies in one of the scenario's namespaces, or its name, a label or an annotation (key or value)
carries the tag (as `<namespace>`, `<namespace>/<target>` and names made from one do). What the
harness itself created there, by its own record of writes, is not SolAr's reach.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from solar_conformance.core.api import Obj
from solar_conformance.page.holders import describe

ObjectKey = tuple[str, str | None, str]  # kind, namespace (None: cluster-scoped), name


@dataclass(frozen=True)
class Trace:
    """An object of the scenario on the target cluster, and what ties it to the scenario."""

    obj: Obj
    why: str

    def __str__(self) -> str:
        return f"{describe(self.obj)} ({self.why})"


def key_of(obj: Obj) -> ObjectKey:
    meta = obj.get("metadata", {})
    return str(obj.get("kind", "")), meta.get("namespace") or None, str(meta.get("name", ""))


def tie(obj: Obj, tagged: Callable[[str], bool]) -> str | None:
    """What in `obj` carries the scenario's tag (`tagged` says whether a text does), in words;
    None where nothing does."""
    meta = obj.get("metadata", {})
    if tagged(str(meta.get("namespace") or "")):
        return "in the scenario's namespace"
    if tagged(str(meta.get("name", ""))):
        return "its name"
    for field in ("labels", "annotations"):
        for key, value in (meta.get(field) or {}).items():
            if tagged(str(key)) or tagged(str(value)):
                return f"its {field[:-1]} {key}"
    return None


def scenario_traces(
    objects: Iterable[Obj], tagged: Callable[[str], bool], created: set[ObjectKey]
) -> list[Trace]:
    """Every object of `objects` that belongs to the scenario, except those in `created` (what
    the harness wrote there itself)."""
    found = []
    for obj in objects:
        why = tie(obj, tagged)
        if why is not None and key_of(obj) not in created:
            found.append(Trace(obj, why))
    return sorted(found, key=str)
