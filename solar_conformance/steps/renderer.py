"""solar-renderer: the agent release and the bootstrap chart in the render registry."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, parsers, then, when

from solar_conformance.core.credentials import same_server
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.oci import RegistryClient
from solar_conformance.core.redact import same_secret
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.charts import carried_releases, kubeconfig_in, rendered_bootstrap
from solar_conformance.page.delivery import agent_chart, agent_source
from solar_conformance.page.holders import (
    artifact_files,
    found_in,
    outside_kubeconfig_object,
    remember,
)
from solar_conformance.page.lookup import (
    agent_release_name,
    deliverable_releases,
    token_in,
    token_secret,
)
from solar_conformance.plugin.actors import You
from solar_conformance.plugin.helm import CHART_RENDERER
from solar_conformance.plugin.names import Names
from solar_conformance.steps.common import quoted_names
from solar_conformance.steps.you.first_contact import WrittenHelmRelease


def pusher(landscape: Landscape) -> RegistryClient:
    return landscape.registry_as(*landscape.push_credentials())


def _agent_kubeconfig_probe(landscape: Landscape, namespace: str, target: str) -> tuple[bool, Any]:
    chart = agent_chart(landscape, pusher(landscape), namespace, target, CHART_RENDERER)
    kubeconfig = kubeconfig_in(chart, landscape.contract.agent_kubeconfig_key)
    return kubeconfig is not None, {
        "chart": f"{chart.name}:{chart.version}",
        "templates": sorted(chart.templates),
    }


@given(parsers.parse('solar-renderer has pushed the agent release of "{target}"'))
@then(parsers.parse('solar-renderer pushes the agent release of "{target}" to the render registry'))
def agent_release_pushed(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)
    waiter.until(
        f"the agent release of {target} in the render registry",
        lambda: _agent_kubeconfig_probe(landscape, namespace, target),
    )


@given(parsers.re(r"solar-renderer has pushed the agent releases of (?P<targets>.+)"))
def agent_releases_pushed(landscape: Landscape, you: You, waiter: Waiter, targets: str) -> None:
    for target in quoted_names(targets):
        agent_release_pushed(landscape, you, waiter, target)


@then(
    parsers.parse(
        'the agent release of "{target}" holds a kubeconfig for the SolAr API with the token from '
        "its Secret"
    )
)
def agent_release_holds_credential(landscape: Landscape, you: You, target: str) -> None:
    namespace = you.namespace_of(target)
    chart = agent_chart(landscape, pusher(landscape), namespace, target, CHART_RENDERER)
    kubeconfig = kubeconfig_in(chart, landscape.contract.agent_kubeconfig_key)
    secret = token_secret(landscape, namespace, target)
    assert kubeconfig is not None, f"no kubeconfig in {chart.name}:{chart.version}"
    assert secret is not None, f"{target} has no token Secret"
    assert same_server(kubeconfig.server, landscape.solar_api_url), (
        f"the kubeconfig points at {kubeconfig.server}, not at {landscape.solar_api_url}"
    )
    assert same_secret(kubeconfig.token, token_in(landscape, secret)), (
        "the kubeconfig's token is not the one in the Target's token Secret"
    )


@then(parsers.parse('the agent release of "{target}" in the render registry carries the new token'))
def agent_release_new_token(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)
    old = you.noted_token(target)

    def probe() -> tuple[bool, Any]:
        chart = agent_chart(landscape, pusher(landscape), namespace, target, CHART_RENDERER)
        kubeconfig = kubeconfig_in(chart, landscape.contract.agent_kubeconfig_key)
        secret = token_secret(landscape, namespace, target)
        current = token_in(landscape, secret) if secret else None
        carried = kubeconfig.token if kubeconfig else None
        fresh = (
            carried is not None and not same_secret(carried, old) and same_secret(carried, current)
        )
        return fresh, {
            "chart": f"{chart.name}:{chart.version}",
            "carries": "the new token" if fresh else "an old or no token",
        }

    waiter.until(f"the agent release of {target} carries the new token", probe)


def _bootstrap_probe(landscape: Landscape, namespace: str, target: str) -> tuple[bool, Any]:
    chart = rendered_bootstrap(pusher(landscape), namespace, target, CHART_RENDERER)
    kinds = sorted(f"{o['kind']}/{o['metadata']['name']}" for o in chart.manifests())
    return bool(kinds), {"chart": f"{chart.name}:{chart.version}", "objects": kinds}


@given(parsers.parse('solar-renderer has pushed the bootstrap chart of "{target}"'))
@when(parsers.parse('solar-renderer has pushed the bootstrap chart of "{target}"'))
def bootstrap_pushed(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)
    waiter.until(
        f"the bootstrap chart of {target} with its Releases",
        lambda: _bootstrap_probe(landscape, namespace, target),
    )


@then(
    parsers.parse('solar-renderer has pushed the bootstrap chart of "{target}" to exactly that URL')
)
def bootstrap_at_url(
    landscape: Landscape,
    you: You,
    waiter: Waiter,
    names: Names,
    page_helmrelease: WrittenHelmRelease,
    target: str,
) -> None:
    bootstrap_pushed(landscape, you, waiter, target)
    url = page_helmrelease.source["spec"]["url"]
    host, _, repository = url.removeprefix("oci://").partition("/")
    assert host == landscape.registry.host, f"{url} is not on the render registry"
    tags = pusher(landscape).tags(repository)
    assert tags, f"nothing was pushed to {url}"


@given(
    parsers.parse(
        'solar-renderer has pushed a bootstrap chart of "{target}" that carries the Release '
        '"{release}"'
    )
)
@then(
    parsers.parse(
        'solar-renderer pushes a bootstrap chart of "{target}" that carries the Release "{release}"'
    )
)
def bootstrap_carries(
    landscape: Landscape, you: You, names: Names, waiter: Waiter, target: str, release: str
) -> None:
    namespace = you.namespace_of(target)
    wanted = names.release(release)

    def probe() -> tuple[bool, Any]:
        chart = rendered_bootstrap(pusher(landscape), namespace, target, CHART_RENDERER)
        carried = carried_releases(landscape, namespace, chart)
        return wanted in carried, {"chart": f"{chart.name}:{chart.version}", "releases": carried}

    waiter.until(f"the bootstrap chart of {target} carries the Release {wanted}", probe)


@then(
    parsers.re(r"the bootstrap charts of (?P<targets>.+) carry exactly the Releases bound to each")
)
def bootstraps_carry_their_bindings(
    landscape: Landscape, you: You, waiter: Waiter, targets: str
) -> None:
    """Read from the render registry, as Flux on each target will: every Release bound to the
    Target, and none bound only to another Target."""
    for target in quoted_names(targets):
        namespace = you.namespace_of(target)

        def probe(namespace: str = namespace, target: str = target) -> tuple[bool, Any]:
            chart = rendered_bootstrap(pusher(landscape), namespace, target, CHART_RENDERER)
            carried = carried_releases(landscape, namespace, chart)
            bound = deliverable_releases(landscape, namespace, target)
            return set(bound) <= set(carried), {"bound": bound, "carried": carried}

        seen = waiter.until(f"the bootstrap chart of {target} carries its bound Releases", probe)
        extra = sorted(set(seen["carried"]) - set(seen["bound"]))
        assert extra == [], (
            f"the bootstrap chart of {target} carries Releases not bound to it: {extra}"
        )


@then(
    parsers.parse(
        'the bootstrap chart of "{target}" points Flux at the render registry the Target '
        "references, with its pull Secret"
    )
)
def bootstrap_points_at_own_registry(
    landscape: Landscape, you: You, waiter: Waiter, target: str
) -> None:
    """The Target's render registry is the Registry its spec.renderRegistryRef names: every
    source of its bootstrap chart pulls from that Registry's hostname with its
    targetPullSecretName, whatever other Registries the namespace holds."""
    namespace = you.namespace_of(target)
    reference = landscape.solar.get("Target", target, namespace)["spec"]["renderRegistryRef"]
    registry = landscape.solar.get("Registry", reference["name"], namespace)["spec"]
    host, pull_secret = registry["hostname"], registry.get("targetPullSecretName")

    def probe() -> tuple[bool, Any]:
        chart = rendered_bootstrap(pusher(landscape), namespace, target, CHART_RENDERER)
        sources = {
            str(o["metadata"].get("name")): (
                str(o["spec"]["url"]).removeprefix("oci://").split("/", 1)[0],
                (o["spec"].get("secretRef") or {}).get("name"),
            )
            for o in chart.manifests()
            if o.get("kind") == "OCIRepository"
        }
        return bool(sources), sources

    seen = waiter.until(
        f"the bootstrap chart of {target} in the render registry its Registry "
        f"{reference['name']} names",
        probe,
    )
    wrong = {
        name: f"host {source_host}, pull Secret {secret}"
        for name, (source_host, secret) in seen.items()
        if (source_host, secret) != (host, pull_secret)
    }
    assert wrong == {}, (
        f"the bootstrap chart of {target} points Flux elsewhere than at its render registry, the "
        f"Registry {reference['name']} (host {host}, pull Secret {pull_secret}): {wrong}"
    )


@then(
    parsers.parse(
        'the bootstrap chart of "{target}" in the render registry no longer carries the Release '
        '"{release}"'
    )
)
def bootstrap_drops(
    landscape: Landscape, you: You, names: Names, waiter: Waiter, target: str, release: str
) -> None:
    """What Flux on the target pulls at its next poll: a Release no longer bound to the Target
    is no longer delivered (Flux then uninstalls it), and every Release still bound is."""
    namespace = you.namespace_of(target)
    gone = names.release(release)

    def probe() -> tuple[bool, Any]:
        chart = rendered_bootstrap(pusher(landscape), namespace, target, CHART_RENDERER)
        carried = carried_releases(landscape, namespace, chart)
        bound = deliverable_releases(landscape, namespace, target)
        done = gone not in bound and set(carried) == set(bound)
        return done, {"chart": f"{chart.name}:{chart.version}", "carried": carried, "bound": bound}

    waiter.until(
        f"the bootstrap chart of {target} carries exactly the Releases bound to it, no longer "
        f"{gone}",
        probe,
    )


@then(
    parsers.parse(
        'the bootstrap chart of "{target}" in the render registry still carries the agent release'
    )
)
def bootstrap_keeps_agent(landscape: Landscape, you: You, target: str) -> None:
    """What Flux on the target will pull at its next poll: the agent stays delivered."""
    namespace = you.namespace_of(target)
    release = agent_release_name(landscape, namespace)
    assert release is not None, f"namespace {namespace} has no agent Release"
    chart = rendered_bootstrap(pusher(landscape), namespace, target, CHART_RENDERER)
    carried = carried_releases(landscape, namespace, chart)
    assert release in carried, (
        f"the bootstrap chart {chart.name}:{chart.version} no longer carries the agent release "
        f"{release}: {carried}"
    )


@then(
    "that kubeconfig trusts the SolAr API server's certificate authority and does not skip "
    "verification"
)
def kubeconfig_verifies_server(landscape: Landscape, you: You) -> None:
    for target, namespace in you.namespaces.items():
        chart = agent_chart(landscape, pusher(landscape), namespace, target, CHART_RENDERER)
        kubeconfig = kubeconfig_in(chart, landscape.contract.agent_kubeconfig_key)
        assert kubeconfig is not None, f"no kubeconfig in {chart.name}:{chart.version}"
        assert not kubeconfig.insecure, (
            f"the kubeconfig of {target} skips verifying the SolAr API server's certificate"
        )
        assert kubeconfig.ca_pem.strip() == landscape.solar_ca_pem.strip(), (
            f"the kubeconfig of {target} does not carry the SolAr API server's CA"
        )


@then(
    parsers.re(
        r"the render registry holds the token of (?P<targets>.+) only in the kubeconfig Secret "
        r"of (?:its|their) agent releases?"
    )
)
def token_only_in_agent_release(landscape: Landscape, you: You, names: Names, targets: str) -> None:
    """Every repository SolAr's push user reads, every tag, its manifest, config and the files
    of every layer: a Target's current token (as it is, base64-encoded, or its signature) only in
    the repository of its own agent release, which its bootstrap chart points at, and there only
    in the one object that carries the agent's kubeconfig: not in Chart.yaml, values.yaml, a
    README, another template, another object of the same template or a comment. The registry's
    repositories of other scenarios' namespaces are left out."""
    client = pusher(landscape)
    key = landscape.contract.agent_kubeconfig_key
    wanted = quoted_names(targets)
    tokens: dict[str, str] = {}
    homes: dict[str, str] = {}
    for target in wanted:
        namespace = you.namespace_of(target)
        secret = token_secret(landscape, namespace, target)
        token = token_in(landscape, secret) if secret is not None else None
        assert token, f"{target} has no token, so this check could not fail"
        remember(token)
        tokens[target] = token
        homes[target] = agent_source(landscape, client, namespace, target, CHART_RENDERER)[0]
    found: dict[str, list[str]] = {target: [] for target in wanted}
    at_home: dict[tuple[str, str], dict[str, str]] = {}  # (Target, tag) -> its files
    holders: set[str] = set()
    for repository in client.catalog():
        if names.of_another_scenario(repository.split("/", 1)[0]):
            continue
        for tag, path, text in artifact_files(client, repository):
            for target, token in tokens.items():
                if repository == homes[target]:
                    at_home.setdefault((target, tag), {})[path] = text
                elif found_in(text, token):
                    found[target].append(f"{repository}:{tag}")
    for (target, tag), files in sorted(at_home.items()):
        carriers, outside = outside_kubeconfig_object(files, key, tokens[target])
        holders |= {target} if carriers else set()
        found[target] += [f"{homes[target]}:{tag} {where}" for where in outside]
        assert carriers <= 1, (
            f"the agent release {homes[target]}:{tag} carries the kubeconfig of {target} in "
            f"{carriers} objects, not in one"
        )
    missing = sorted(set(wanted) - holders)
    assert missing == [], (
        f"no object of the agent release of {missing} carries the kubeconfig with its token "
        f"under {key!r}: nothing was scanned"
    )
    elsewhere = {t: sorted(set(where)) for t, where in found.items() if where}
    assert elsewhere == {}, (
        "the render registry holds an agent token outside the kubeconfig Secret of that "
        "Target's agent release: "
        + "; ".join(f"{t} in {', '.join(w)}" for t, w in elsewhere.items())
    )
