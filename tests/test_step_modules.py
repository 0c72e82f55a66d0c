"""The entry point names every module of solar_conformance/steps/ that defines steps, and no other:
a module left out would leave its steps unbound, so its scenarios would fail for no fault of
SolAr's."""

from __future__ import annotations

import importlib
import pkgutil

from pytest_bdd.steps import step_function_context_registry

import solar_conformance.plugin
import solar_conformance.steps

PACKAGE = "solar_conformance.steps"


def _modules_with_steps() -> set[str]:
    for info in pkgutil.walk_packages(solar_conformance.steps.__path__, f"{PACKAGE}."):
        importlib.import_module(info.name)
    return {
        context.step_func.__module__
        for context in step_function_context_registry.values()
        if context.step_func.__module__.startswith(f"{PACKAGE}.")
    }


def test_every_module_with_steps_is_loaded_and_no_other() -> None:
    named = {m for m in solar_conformance.plugin.pytest_plugins if m.startswith(f"{PACKAGE}.")}
    found = _modules_with_steps()
    assert found, "no module of the steps defines a step, so this check could not fail"
    unnamed, stepless = sorted(found - named), sorted(named - found)
    assert unnamed == [], (
        f"modules with steps that solar_conformance/plugin/__init__.py does not name: {unnamed}"
    )
    assert stepless == [], (
        f"modules solar_conformance/plugin/__init__.py names that define no step: {stepless}"
    )
