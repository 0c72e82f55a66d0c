"""Reference Profile controller: one ReleaseBinding per Target that a Profile's selector matches.

Upstream SolAr ships this behaviour; the reference copy lets the sim and local backends run
without it. A Profile only ever looks at Targets in its own namespace; an empty `targetSelector`
matches all of them, a missing one matches none (the Kubernetes label-selector convention).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from solar_conformance.core.api import ApiError, ClusterAPI, Obj, labels_of, new_object

PROFILE_LABEL = "solar.opendefense.cloud/profile"


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


@dataclass
class ProfileController:
    solar: ClusterAPI
    log: Callable[[str], None] = print
    resync_seconds: float = 1.0

    def reconcile_all(self) -> float:
        for profile in self.solar.list("Profile"):
            try:
                self.reconcile(profile)
            except ApiError as error:
                self.log(f"reconcile Profile {profile['metadata']['name']}: {error}")
        return self.resync_seconds

    def reconcile(self, profile: Obj) -> None:
        namespace, name = profile["metadata"]["namespace"], profile["metadata"]["name"]
        selector = profile.get("spec", {}).get("targetSelector")
        release = profile.get("spec", {}).get("releaseRef", {}).get("name")
        matched = [
            t["metadata"]["name"]
            for t in self.solar.list("Target", namespace)
            if selector_matches(selector, labels_of(t))
        ]
        existing = {
            b["metadata"]["name"]: b
            for b in self.solar.list("ReleaseBinding", namespace, labels={PROFILE_LABEL: name})
        }
        wanted = {f"{name}-{target}": target for target in matched}
        for binding_name, target in wanted.items():
            if binding_name not in existing:
                self.solar.create(
                    new_object(
                        "ReleaseBinding",
                        binding_name,
                        namespace,
                        labels={PROFILE_LABEL: name},
                        owner=profile,
                        spec={"targetRef": {"name": target}, "releaseRef": {"name": release}},
                    )
                )
        for binding_name in set(existing) - set(wanted):
            self.solar.delete("ReleaseBinding", binding_name, namespace)
        if profile.get("status", {}).get("matchedTargets") != len(matched):
            fresh = self.solar.get("Profile", name, namespace)
            fresh.setdefault("status", {})["matchedTargets"] = len(matched)
            self.solar.update_status(fresh)
