"""A mutant: a deliberately broken variant of the reference SolAr or of the sim landscape; and its
other half, a conforming variant: a SolAr that differs from the reference only where the page
leaves a choice open, which every scenario must pass.

Either replaces one function or method (or a few) at a named seam, `package.module:Name` or
`package.module:Class.attribute`, for the length of one pytest run, through pytest's
MonkeyPatch; no file is edited. The replacement is built from the original, so most are one
small change around the real behaviour. A variant may also come with a profile (the keys of
solar_conformance/core/contract.py it sets), with which it runs as a real installation would.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

Replace = Callable[[Any], Any]  # the original -> the broken replacement
# Modules a module-level seam is also patched in when they imported it by name
# (`from solar_conformance.core.rbac import allowed`): the components under test, never the harness's steps.
COMPONENT_PACKAGES = (
    "solar_conformance.core.",
    "solar_conformance.simulators.",
    "solar_conformance.backends.sim.",
)
MEMORY_PACKAGE = "solar_conformance.simulators.memory."


class SeamMissing(LookupError):
    """The function a mutant patches no longer exists where the catalogue says."""


@dataclass(frozen=True)
class Patch:
    seam: str
    replace: Replace
    # Where a module-level seam is rebound; None: every component module that imported it.
    rebind: tuple[str, ...] | None = None

    @property
    def module(self) -> str:
        return self.seam.partition(":")[0]

    def apply(self, monkeypatch: pytest.MonkeyPatch) -> None:
        module_name, _, path = self.seam.partition(":")
        try:
            owner: Any = importlib.import_module(module_name)
        except ImportError as error:
            raise SeamMissing(f"{self.seam}: module {module_name} is gone ({error})") from None
        *parents, attribute = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent, None)
            if owner is None:
                raise SeamMissing(f"{self.seam}: {module_name} has no {parent}")
        if isinstance(owner, type):
            self._patch_class(monkeypatch, owner, attribute)
        else:
            self._patch_module(monkeypatch, owner, attribute)

    def _patch_class(self, monkeypatch: pytest.MonkeyPatch, owner: type, attribute: str) -> None:
        raw = next((k.__dict__[attribute] for k in owner.__mro__ if attribute in k.__dict__), None)
        if raw is None:
            raise SeamMissing(f"{self.seam}: {owner.__name__} has no {attribute}")
        if isinstance(raw, staticmethod):
            replacement: Any = staticmethod(self.replace(raw.__func__))
        elif isinstance(raw, classmethod):
            replacement = classmethod(self.replace(raw.__func__))
        else:
            replacement = self.replace(raw)
        monkeypatch.setattr(owner, attribute, replacement)

    def _patch_module(self, monkeypatch: pytest.MonkeyPatch, module: Any, attribute: str) -> None:
        if not hasattr(module, attribute):
            raise SeamMissing(f"{self.seam}: {module.__name__} has no {attribute}")
        original = getattr(module, attribute)
        replacement = self.replace(original)
        monkeypatch.setattr(module, attribute, replacement)
        for name in self._importers(module.__name__, attribute, original):
            monkeypatch.setattr(sys.modules[name], attribute, replacement)

    def _importers(self, home: str, attribute: str, original: Any) -> list[str]:
        if self.rebind is not None:
            for name in self.rebind:
                importlib.import_module(name)
                if getattr(sys.modules[name], attribute, None) is not original:
                    raise SeamMissing(f"{self.seam}: {name} does not use it by that name")
            return list(self.rebind)
        return sorted(
            name
            for name, module in list(sys.modules.items())
            if name != home
            and name.startswith(COMPONENT_PACKAGES)
            and getattr(module, attribute, None) is original
        )


@dataclass(frozen=True)
class Mutant:
    id: str
    rows: tuple[str, ...]  # the entries of features/traceability.yaml it breaks
    description: str
    patches: tuple[Patch, ...]
    # Scenarios most likely to kill it, run first (a hint for speed; every scenario still runs).
    killers: tuple[str, ...] = ()
    equivalent: str | None = None  # why no scenario can tell it from the reference, if so
    # Relies on how the in-memory landscape works inside, beyond its public methods.
    internal: bool = False
    # A conforming variant: it keeps every promise of the page, so every scenario must pass.
    conforming: bool = False
    # The implementation profile it runs with (keys of solar_conformance/core/contract.py's Contract).
    profile: tuple[tuple[str, Any], ...] = ()

    @property
    def seams(self) -> tuple[str, ...]:
        return tuple(p.seam for p in self.patches)

    @property
    def memory_internal(self) -> bool:
        """Depends on solar_conformance/simulators/memory beyond the public methods of its classes: a private
        name, a module-level function or constant there, or an inner working it relies on."""
        return self.internal or any(_private_memory_seam(p.seam) for p in self.patches)

    def apply(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # Every component module is loaded first, so a module-level seam is found where used.
        importlib.import_module("solar_conformance.backends.sim.landscape")
        for patch in self.patches:
            patch.apply(monkeypatch)


def _private_memory_seam(seam: str) -> bool:
    module, _, path = seam.partition(":")
    if not module.startswith(MEMORY_PACKAGE):
        return False
    parts = path.split(".")
    return len(parts) < 2 or any(part.startswith("_") for part in parts)


CATALOGUE: list[Mutant] = []


def mutant(
    id: str,
    rows: tuple[str, ...] | str,
    description: str,
    seam: str,
    *,
    equivalent: str | None = None,
    rebind: tuple[str, ...] | None = None,
    also: tuple[Patch, ...] = (),
    internal: bool = False,
) -> Callable[[Replace], Replace]:
    """Register the decorated `original -> replacement` function as a mutant of `seam`."""

    def register(replace: Replace) -> Replace:
        CATALOGUE.append(
            Mutant(
                id,
                (rows,) if isinstance(rows, str) else rows,
                description,
                (Patch(seam, replace, rebind), *also),
                equivalent=equivalent,
                internal=internal,
            )
        )
        return replace

    return register


def patch(seam: str, *, rebind: tuple[str, ...] | None = None) -> Callable[[Replace], Patch]:
    """The decorated `original -> replacement` function as a Patch of `seam` (for variants,
    which are registered with all their patches at once)."""

    def make(replace: Replace) -> Patch:
        return Patch(seam, replace, rebind)

    return make


def variant(
    id: str,
    rows: tuple[str, ...] | str,
    description: str,
    *patches: Patch,
    profile: dict[str, Any] | None = None,
) -> Mutant:
    """Register a conforming variant: `patches` at their seams, run with `profile`."""
    found = Mutant(
        id,
        (rows,) if isinstance(rows, str) else rows,
        description,
        patches,
        conforming=True,
        profile=tuple(sorted((profile or {}).items())),
    )
    CATALOGUE.append(found)
    return found


class Wrapped:
    """Answers like `inner`, except for the attributes given: a component's API client with one
    call changed, handed to the component for the length of one call."""

    def __init__(self, inner: Any, **overrides: Any) -> None:
        self._inner = inner
        self.__dict__.update(overrides)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def with_solar_changed(original: Any, changes: Callable[[Any], dict[str, Any]]) -> Any:
    """`original`, a component's method, calling the SolAr API through `Wrapped(real,
    **changes(real))` for the length of each call, then through its own client again."""

    def method(self: Any, *args: Any) -> Any:
        real = self.solar
        self.solar = Wrapped(real, **changes(real))
        try:
            return original(self, *args)
        finally:
            self.solar = real

    return method
