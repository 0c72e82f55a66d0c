"""Flux on the target cluster: the page's OCIRepository and HelmRelease, and what they install."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, parsers, then

from solar_conformance.core.api import ApiError, Obj, find_condition
from solar_conformance.core.clock import parse_duration
from solar_conformance.core.helm_records import recorded_release
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.redact import same_secret
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.charts import kubeconfig_from_secret
from solar_conformance.page.delivery import agent_chart
from solar_conformance.page.holders import (
    Inventory,
    carries_kubeconfig,
    chart_name_of,
    describe,
    helm_record,
    holds_token,
    how_held,
    remember,
)
from solar_conformance.page.installed import keyed_to_release, ref, release_installers
from solar_conformance.page.lookup import agent_release_name, bound_releases, token_in, token_secret
from solar_conformance.page.reach import scenario_traces
from solar_conformance.plugin.actors import You
from solar_conformance.plugin.helm import CHART_RENDERER
from solar_conformance.plugin.names import Names
from solar_conformance.steps.renderer import pusher

# What a SolAr reaching into the target cluster would write; the check that nothing of a
# scenario is there fails where one of them cannot be listed (others are named in its message).
RESOURCES_SOLAR_WOULD_WRITE = frozenset(
    {
        "namespaces",
        "secrets",
        "configmaps",
        "serviceaccounts",
        "roles",
        "rolebindings",
        "clusterroles",
        "clusterrolebindings",
        "deployments",
        "pods",
        "ocirepositories",
        "helmreleases",
    }
)


def ready(obj: Obj) -> tuple[bool, Any]:
    condition = find_condition(obj, "Ready") or {}
    return condition.get("status") == "True", {
        "Ready": condition.get("status"),
        "reason": condition.get("reason"),
        "message": condition.get("message"),
    }


def _installed(
    landscape: Landscape,
    waiter: Waiter,
    namespace: str,
    release: str,
    what: str,
    timeout: float | None = None,
) -> None:
    """The Release's pair is Ready and so is every OCIRepository and HelmRelease it installed
    (a release chart's inner pair), then `_into_target_namespace`."""

    def probe() -> tuple[bool, Any]:
        installers = release_installers(landscape, namespace, release)
        states = {ref(o): ready(o)[1] for o in installers.flux}
        done = installers.pair_complete and all(ready(o)[0] for o in installers.flux)
        return done, states or "no Flux objects yet"

    waiter.until(what, probe, kind="flux", timeout=timeout)
    _into_target_namespace(landscape, namespace, release)


def _into_target_namespace(landscape: Landscape, namespace: str, release: str) -> None:
    """A bound Release is installed where the Release says: its targetNamespace, or, where it
    names none, the namespace of the Flux objects that install it (the bootstrap chart's pair,
    in the Target's namespace). What installs it is the innermost HelmRelease below that pair,
    and where it installs is the namespace of the Helm release it recorded."""
    wanted = (
        landscape.solar.get("Release", release, namespace).get("spec", {}).get("targetNamespace")
    )
    installers = release_installers(landscape, namespace, release)
    assert installers.innermost, (
        f"the Flux objects that install the Release {release} of {namespace} are no longer all "
        f"Ready: {[ref(o) for o in installers.flux]}"
    )
    where = f"its targetNamespace {wanted}" if wanted else f"the Target's namespace {namespace}"
    for helm_release in installers.innermost:
        into = recorded_release(helm_release).namespace
        chain = installers.chain(helm_release)
        by = f" (installed by {' -> '.join(chain[:-1])})" if len(chain) > 1 else ""
        assert into == (wanted or namespace), (
            f"{ref(helm_release)}{by} installs the Release {release} into namespace {into}, "
            f"not into {where}"
        )


def scenario_objects(landscape: Landscape, names: Names, kind: str) -> list[Obj]:
    """Objects of this scenario on the (possibly shared) target cluster."""
    return [
        o
        for o in landscape.target.list(kind)
        if o["metadata"].get("namespace", "").endswith(f"-{names.suffix}")
    ]


@given(parsers.parse('Flux on the target has installed the agent release of "{target}"'))
@then(parsers.parse('Flux on the target installs the agent release of "{target}"'))
def agent_installed(
    landscape: Landscape, you: You, names: Names, waiter: Waiter, target: str
) -> None:
    namespace = you.namespace_of(target)
    release = agent_release_name(landscape, namespace)
    assert release is not None, f"namespace {namespace} has no agent Release"
    _installed(
        landscape,
        waiter,
        namespace,
        release,
        f"Flux installs the agent release {release} of {target}",
    )
    deployments = keyed_to_release(
        landscape, namespace, release, scenario_objects(landscape, names, "Deployment")
    )
    assert deployments, f"the agent release {release} installed no Deployment"


@then(parsers.parse('Flux on the target installs the release "{release}" of "{target}"'))
def release_installed(
    landscape: Landscape, you: You, waiter: Waiter, release: str, target: str
) -> None:
    _installed(
        landscape,
        waiter,
        you.namespace_of(target),
        release,
        f"Flux installs the release {release} of {target}",
    )


@then(parsers.parse('Flux on the target reports every bound Release of "{target}" as Ready'))
def all_bound_ready(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)
    releases = bound_releases(landscape, namespace, target)
    assert releases, f"{target} is bound to no Release"
    for release in releases:
        _installed(landscape, waiter, namespace, release, f"the release {release} is Ready")


@then(parsers.parse('the {kind} "{name}" on the target becomes Ready'))
def page_object_ready(landscape: Landscape, you: You, waiter: Waiter, kind: str, name: str) -> None:
    for namespace in sorted(set(you.namespaces.values())):

        def probe(ns: str = namespace) -> tuple[bool, Any]:
            return ready(landscape.target.get(kind, name, ns))

        waiter.until(f"{kind} {namespace}/{name} is Ready", probe, kind="flux")


@then(parsers.parse('the target cluster holds nothing of "{target}"'))
def target_untouched(landscape: Landscape, you: You, names: Names, target: str) -> None:
    """Every object of every resource the target cluster serves, wherever it lies: none may
    belong to this scenario (solar_conformance/page/reach.py), except what the harness wrote
    there itself. The Target's namespace carries the scenario's tag, so does whatever names it."""
    assert names.named_in(you.namespace_of(target)), f"{target}'s namespace carries no tag"
    inventory = Inventory.read(landscape.target, lambda _namespace: True)
    created = {(w.kind, w.namespace, w.name) for w in you.target.writes if w.verb == "create"}
    found = scenario_traces((obj for _, obj in inventory.objects), names.named_in, created)
    assert found == [], (
        f"the target cluster holds objects of this scenario ({target}'s) that the harness did not "
        f"create there: {[str(t) for t in found]} (not listed: {inventory.unlisted or 'none'})"
    )
    assert inventory.objects, (
        f"the target cluster listed no object at all (not listed: {inventory.unlisted or 'none'}), "
        "so this check could not fail"
    )
    unlisted_writable = [
        r for r in inventory.unlisted if r.split(" ", 1)[0] in RESOURCES_SOLAR_WOULD_WRITE
    ]
    assert not unlisted_writable, (
        f"the target cluster would not list {unlisted_writable}, so this check cannot say that "
        "nothing of this scenario is there"
    )


@then(parsers.parse('Flux on the target upgrades the agent release of "{target}"'))
def agent_upgraded(
    landscape: Landscape, you: You, names: Names, waiter: Waiter, target: str
) -> None:
    namespace = you.namespace_of(target)
    release = agent_release_name(landscape, namespace)
    assert release is not None
    old = you.noted_token(target)

    def probe() -> tuple[bool, Any]:
        try:
            installers = release_installers(landscape, namespace, release)
            secrets = keyed_to_release(
                landscape, namespace, release, scenario_objects(landscape, names, "Secret")
            )
        except ApiError as error:
            return False, error
        # The agent release's Secrets that hold a kubeconfig under the profile's key (it may
        # install other Secrets too: a CA bundle, say).
        key = landscape.contract.agent_kubeconfig_key
        kubeconfigs = [
            kubeconfig_from_secret(s, key) for s in secrets if key in (s.get("data") or {})
        ]
        fresh = bool(kubeconfigs) and all(
            k is not None and not same_secret(k.token, old) for k in kubeconfigs
        )
        return fresh and all(ready(o)[0] for o in installers.flux), {
            "objects": {ref(o): ready(o)[1] for o in installers.flux},
            "agent Secret on the target": "carries a new token" if fresh else "old or none",
        }

    waiter.until(
        f"Flux upgrades the agent release of {target} to the new token", probe, kind="flux"
    )


@then(
    parsers.parse(
        'Flux on the target installs the agent release of "{target}" before the OCIRepository '
        "polls again"
    )
)
def agent_installed_within_a_poll(
    landscape: Landscape, you: You, waiter: Waiter, target: str
) -> None:
    """Not by the next poll of the page's OCIRepository: its first pull carried the agent."""
    namespace = you.namespace_of(target)
    release = agent_release_name(landscape, namespace)
    assert release is not None, f"namespace {namespace} has no agent Release"
    source = landscape.target.get("OCIRepository", "solar-bootstrap", namespace)
    poll = parse_duration(source["spec"]["interval"]).total_seconds()
    _installed(
        landscape,
        waiter,
        namespace,
        release,
        f"Flux installs the agent release of {target} sooner than one poll ({poll:g}s)",
        timeout=poll * 0.8,
    )


@then(
    parsers.parse(
        'the target cluster holds the token of "{target}" only in the kubeconfig Secret of its '
        "agent release"
    )
)
def token_on_target_only_in_agent_secret(
    landscape: Landscape, you: You, names: Names, target: str
) -> None:
    """Every object of every resource the target cluster's discovery serves, read as its
    administrator, as it is and under base64 and gzip: the Target's current token lies only in
    the one Secret of its agent release, in the Release's targetNamespace, that carries the
    agent's kubeconfig, and in Helm's own records of installing that release (Helm keeps the
    chart it installed). Not in a ConfigMap, an environment variable, an annotation, an Event,
    a Flux object, another namespace's Secret or another release's record."""
    namespace = you.namespace_of(target)
    secret = token_secret(landscape, namespace, target)
    token = token_in(landscape, secret) if secret is not None else None
    assert token, f"{target} has no token, so this check could not fail"
    remember(token)
    release = agent_release_name(landscape, namespace)
    assert release is not None, f"namespace {namespace} has no agent Release"
    into = (
        landscape.solar.get("Release", release, namespace).get("spec", {}).get("targetNamespace")
        or namespace
    )
    chart = agent_chart(landscape, pusher(landscape), namespace, target, CHART_RENDERER).name
    key = landscape.contract.agent_kubeconfig_key
    inventory = Inventory.read(landscape.target, lambda ns: not names.of_another_scenario(ns))
    carriers: list[str] = []
    elsewhere: list[str] = []
    for _resource, obj in inventory.objects:
        if not holds_token(obj, token):
            continue
        record = helm_record(obj)
        if record is not None and chart_name_of(record) == chart:
            continue  # Helm's record of installing the agent release
        in_place = obj.get("metadata", {}).get("namespace") == into
        if in_place and carries_kubeconfig(obj, key, token):
            carriers.append(describe(obj))
            continue
        what = f"Helm's record of {chart_name_of(record)}" if record is not None else ""
        elsewhere.append(f"{describe(obj)} ({what or how_held(obj, token)})")
    assert elsewhere == [], (
        f"the target cluster holds the token of {target} outside the kubeconfig Secret of its "
        f"agent release (in namespace {into}): {sorted(elsewhere)}"
    )
    assert len(carriers) == 1, (
        f"the target cluster should hold exactly one Secret in namespace {into} that carries the "
        f"kubeconfig of {target}'s agent under {key!r}; found {carriers or 'none'} (of "
        f"{len(inventory.objects)} objects; not listed: {inventory.unlisted or 'none'})"
    )
