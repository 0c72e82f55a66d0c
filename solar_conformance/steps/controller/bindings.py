"""The Profile controller (part of solar-controller-manager): which Releases a Target is bound to."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, parsers, then

from solar_conformance.core.landscape import Landscape
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.lookup import agent_release_name, bound_releases
from solar_conformance.plugin.actors import You
from solar_conformance.plugin.names import Names
from solar_conformance.steps.common import quoted_names


def _bound_to_agent(landscape: Landscape, waiter: Waiter, namespace: str, target: str) -> None:
    agent = agent_release_name(landscape, namespace)
    assert agent is not None, f"namespace {namespace} has no agent Release"

    def probe() -> tuple[bool, Any]:
        releases = bound_releases(landscape, namespace, target)
        return agent in releases, {"bound Releases": releases}

    waiter.until(f"{target} is bound to the agent Release {agent}", probe)


@given(parsers.parse('"{target}" is bound to the agent Release'))
@then(parsers.parse('"{target}" is bound to the agent Release'))
def bound_to_agent(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    _bound_to_agent(landscape, waiter, you.namespace_of(target), target)


@then(parsers.re(r"each of (?P<targets>.+) is bound to the agent Release"))
def each_bound(landscape: Landscape, you: You, waiter: Waiter, targets: str) -> None:
    for target in quoted_names(targets):
        _bound_to_agent(landscape, waiter, you.namespace_of(target), target)


@given(parsers.parse('"{target}" is bound to the Release "{release}"'))
@then(parsers.parse('"{target}" is bound to the Release "{release}"'))
def bound_to_release(
    landscape: Landscape, you: You, names: Names, waiter: Waiter, target: str, release: str
) -> None:
    namespace, wanted = you.namespace_of(target), names.release(release)

    def probe() -> tuple[bool, Any]:
        releases = bound_releases(landscape, namespace, target)
        return wanted in releases, {"bound Releases": releases}

    waiter.until(f"{target} is bound to the Release {wanted}", probe)


@then(parsers.parse('"{target}" is not bound to the Release "{release}"'))
def not_bound_to_release(
    landscape: Landscape, you: You, names: Names, target: str, release: str
) -> None:
    releases = bound_releases(landscape, you.namespace_of(target), target)
    assert names.release(release) not in releases, f"{target} is bound to {releases}"


@then(parsers.parse('"{target}" is no longer bound to the Release "{release}"'))
def no_longer_bound(
    landscape: Landscape, you: You, waiter: Waiter, names: Names, target: str, release: str
) -> None:
    namespace, wanted = you.namespace_of(target), names.release(release)

    def probe() -> tuple[bool, Any]:
        releases = bound_releases(landscape, namespace, target)
        return wanted not in releases, releases

    waiter.until(f"{target} is no longer bound to {wanted}", probe)


@then(parsers.parse('"{target}" is bound to no Release'))
def bound_to_nothing(landscape: Landscape, you: You, target: str) -> None:
    releases = bound_releases(landscape, you.namespace_of(target), target)
    assert releases == [], f"{target} is bound to {releases}"


@then(
    parsers.parse(
        'every ReleaseBinding in namespace "{namespace}" is for a Target of that namespace'
    )
)
def bindings_stay_in_namespace(landscape: Landscape, names: Names, namespace: str) -> None:
    """A ReleaseBinding names its Target by name within its own namespace: one that names a Target
    the namespace does not hold binds a Target of another namespace, or none."""
    ns = names.namespace(namespace)
    targets = {t["metadata"]["name"] for t in landscape.solar.list("Target", ns)}
    stray = sorted(
        f"{b['metadata']['name']} -> {b.get('spec', {}).get('targetRef', {}).get('name')}"
        for b in landscape.solar.list("ReleaseBinding", ns)
        if b.get("spec", {}).get("targetRef", {}).get("name") not in targets
    )
    assert stray == [], f"ReleaseBindings of {ns} for Targets it does not hold: {stray}"


@then(
    parsers.parse('no ReleaseBinding binds a Target "{target}" in namespace "{namespace}" any more')
)
def no_bindings_left(
    landscape: Landscape, names: Names, waiter: Waiter, target: str, namespace: str
) -> None:
    """A deleted Target's ReleaseBindings go with it: none would bind a Target made again under
    its name before a Profile selects it."""
    ns = names.namespace(namespace)

    def probe() -> tuple[bool, Any]:
        left = bound_releases(landscape, ns, target)
        return left == [], {"ReleaseBindings still naming it, by Release": left}

    waiter.until(f"the ReleaseBindings of the deleted Target {ns}/{target} are gone", probe)
