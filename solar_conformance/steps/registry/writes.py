"""Writes to the render registry: regcred's are refused and change nothing, SolAr's push user's
are accepted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from pytest_bdd import parsers, then, when

from solar_conformance.core.landscape import Landscape
from solar_conformance.core.oci import Chart, RegistryClient, RegistryError
from solar_conformance.page.charts import pull_source
from solar_conformance.page.delivery import agent_source
from solar_conformance.page.reads import Pull
from solar_conformance.plugin.actors import You
from solar_conformance.plugin.helm import CHART_RENDERER
from solar_conformance.plugin.names import Names
from solar_conformance.steps.registry._regcred import regcred_client
from solar_conformance.steps.renderer import pusher


@dataclass(frozen=True)
class Contents:
    """What the push user sees in the registry: every repository with its tags and digests."""

    repositories: dict[str, dict[str, str]]

    @classmethod
    def read(cls, landscape: Landscape) -> Contents:
        client = pusher(landscape)
        seen: dict[str, dict[str, str]] = {}
        for repository in client.catalog():
            seen[repository] = {
                tag: client.manifest(repository, tag)[1] for tag in client.tags(repository)
            }
        return cls(seen)


def _write_actions(
    landscape: Landscape, you: You, names: Names, client: RegistryClient
) -> dict[str, Callable[[], object]]:
    """The writes a registry user may try, by the words of the feature files."""
    probe = Chart("conformance-probe", "0.0.1", templates={"probe.yaml": "kind: List\n"})

    def overwrite_agent_release(target: str) -> Callable[[], object]:
        def act() -> object:
            namespace, client_of_solar = you.namespace_of(target), pusher(landscape)
            repository, ref = agent_source(
                landscape, client_of_solar, namespace, target, CHART_RENDERER
            )
            located = pull_source(client_of_solar, repository, ref)
            forged = Chart(located.name, located.version, {"forged.yaml": "kind: List\n"})
            return client.push_chart(repository, forged)

        return act

    def push_to(namespace: str | None) -> Callable[[], object]:
        repository = (
            f"{names.namespace(namespace)}/conformance-probe"
            if namespace
            else (f"conformance-probe-{names.suffix}")
        )
        return lambda: client.push_chart(repository, probe)

    def delete_bootstrap(target: str) -> Callable[[], object]:
        namespace = you.namespace_of(target)
        repository = f"{namespace}/bootstrap-{target}"

        def act() -> object:
            tags = pusher(landscape).tags(repository)
            assert tags, f"{repository} holds no chart to delete"
            client.delete_manifest(repository, tags[-1])
            return None

        return act

    actions: dict[str, Callable[[], object]] = {
        "push a new chart outside any namespace": push_to(None),
    }
    for target in sorted(you.namespaces):
        actions[f'overwrite the agent release of "{target}"'] = overwrite_agent_release(target)
        actions[f'delete the bootstrap chart of "{target}"'] = delete_bootstrap(target)
    for page_namespace in ("test", "other"):
        actions[f'push a new chart to namespace "{page_namespace}"'] = push_to(page_namespace)
    return actions


def _attempt(
    landscape: Landscape, you: You, names: Names, client: RegistryClient, action: str
) -> Pull:
    actions = _write_actions(landscape, you, names, client)
    if action not in actions:
        pytest.fail(
            f"unknown registry action {action!r}; known: {', '.join(actions)}", pytrace=False
        )
    try:
        actions[action]()
    except RegistryError as error:
        return Pull(action, None, error)
    return Pull(action, None, None)


@when(parsers.parse('I try to {action} with the regcred of "{reader}"'), target_fixture="pull")
def regcred_tries(
    landscape: Landscape,
    you: You,
    names: Names,
    registry_before: list[Contents],
    action: str,
    reader: str,
) -> Pull:
    registry_before.append(Contents.read(landscape))
    return _attempt(landscape, you, names, regcred_client(landscape, you, reader), action)


@when(parsers.parse("SolAr's push user tries to {action}"), target_fixture="pull")
def pusher_tries(landscape: Landscape, you: You, names: Names, action: str) -> Pull:
    return _attempt(landscape, you, names, pusher(landscape), action)


@pytest.fixture
def registry_before() -> list[Contents]:
    """The registry's contents as the push user saw them before a write was tried."""
    return []


@then("the render registry still holds what it held")
def registry_unchanged(landscape: Landscape, names: Names, registry_before: list[Contents]) -> None:
    assert registry_before, "the scenario did not look at the registry before its attempt"
    before, after = registry_before[-1].repositories, Contents.read(landscape).repositories
    # Scenarios running beside this one write only under their own namespaces.
    changed = sorted(
        repository
        for repository in set(before) | set(after)
        if before.get(repository) != after.get(repository)
        and not names.of_another_scenario(repository.split("/")[0])
    )
    assert changed == [], f"the refused attempt changed the registry: {changed}"


@then("the render registry accepts it")
def accepted(pull: Pull) -> None:
    assert pull.error is None, f"{pull.what}: {pull.error}"
