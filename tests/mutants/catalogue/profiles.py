"""Broken Profile controllers (solar_conformance/simulators/reference/bindings.py) and a controller that misses a
later controller.agent.apiserverURL (solar_conformance/simulators/reference/solar.py)."""

from __future__ import annotations

from typing import Any

from tests.mutants.model import mutant, with_solar_changed

P = "solar_conformance.simulators.reference.bindings:ProfileController"


# --- the Profile controller ----------------------------------------------------------------------
@mutant(
    "profile-binds-other-namespaces",
    ("table-operator", "setup-page"),
    "a Profile also binds the Targets of every other namespace",
    f"{P}.reconcile",
)
def _all_namespaces(original: Any) -> Any:
    def changes(real: Any) -> dict[str, Any]:
        def list_(kind: str, namespace: str | None = None, labels: Any = None) -> Any:
            return real.list(kind, None if kind == "Target" else namespace, labels)

        return {"list": list_}

    return with_solar_changed(original, changes)


@mutant(
    "profile-empty-selector-matches-nothing",
    ("empty-selector", "bound-without-steps", "intro-setup-once"),
    "an empty targetSelector matches no Target",
    "solar_conformance.simulators.reference.bindings:selector_matches",
    rebind=("solar_conformance.simulators.reference.renderer",),
)
def _empty_matches_nothing(original: Any) -> Any:
    def selector_matches(selector: Any, labels: Any) -> bool:
        return bool(selector) and bool(original(selector, labels))

    return selector_matches


@mutant(
    "profile-empty-selector-matches-only-unlabelled",
    ("empty-selector",),
    "an empty targetSelector matches only the Targets that carry no labels",
    "solar_conformance.simulators.reference.bindings:selector_matches",
    rebind=("solar_conformance.simulators.reference.renderer",),
)
def _empty_matches_unlabelled(original: Any) -> Any:
    def selector_matches(selector: Any, labels: Any) -> bool:
        requires = selector and (selector.get("matchLabels") or selector.get("matchExpressions"))
        if selector is not None and not requires:
            return not labels
        return bool(original(selector, labels))

    return selector_matches


@mutant(
    "profile-ignores-selector",
    "setup-page",
    "a Profile binds every Target of its namespace, whatever its targetSelector says",
    "solar_conformance.simulators.reference.bindings:selector_matches",
    rebind=("solar_conformance.simulators.reference.renderer",),
)
def _ignores_selector(original: Any) -> Any:
    return lambda selector, labels: selector is not None


@mutant(
    "profile-binds-first-target-only",
    ("intro-setup-once", "empty-selector"),
    "a Profile binds only the first Target it matches",
    f"{P}.reconcile",
)
def _first_only(original: Any) -> Any:
    def changes(real: Any) -> dict[str, Any]:
        def list_(kind: str, namespace: str | None = None, labels: Any = None) -> Any:
            found = real.list(kind, namespace, labels)
            if kind != "Target":
                return found
            return sorted(found, key=lambda t: str(t["metadata"]["creationTimestamp"]))[:1]

        return {"list": list_}

    return with_solar_changed(original, changes)


@mutant(
    "profile-status-not-counted",
    "setup-page",
    "a Profile's status.matchedTargets is never written",
    f"{P}.reconcile",
)
def _no_status(original: Any) -> Any:
    return with_solar_changed(original, lambda real: {"update_status": lambda obj: obj})


@mutant(
    "solar-apiserver-url-read-once",
    "setup-page",
    "setting controller.agent.apiserverURL later reaches the renderer but not the controller",
    "solar_conformance.simulators.reference.solar:ReferenceSolar.configure_apiserver_url",
)
def _read_once(original: Any) -> Any:
    def configure(self: Any, url: str | None) -> None:
        before = self.controller.config.apiserver_url
        original(self, url)
        if before is None:
            self.controller.config.apiserver_url = None

    return configure
