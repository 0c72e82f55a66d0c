"""The render registry as the page's regcred sees it: what it hands out, what it refuses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from solar_conformance.core.api import ApiError, Obj
from solar_conformance.core.credentials import credentials_for
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.oci import Chart, RegistryClient, RegistryError
from solar_conformance.core.redact import REDACT, holds, same_secret
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.charts import (
    agent_source,
    artifact_texts,
    bootstrap_chart,
    kubeconfig_in,
    pull_chart,
    pull_source,
)
from solar_conformance.page.lookup import token_in, token_secret
from solar_conformance.page.objects import FirstContact
from solar_conformance.page.reads import Pull, each_read, pull
from solar_conformance.plugin.actors import You
from solar_conformance.plugin.names import Names
from solar_conformance.steps.flux import ready
from solar_conformance.steps.renderer import pusher


def regcred_client(landscape: Landscape, you: You, target: str) -> RegistryClient:
    """A registry client with the credentials of the page's regcred for this Target."""
    namespace = you.namespace_of(target)
    user, password = landscape.reader_credentials(namespace)
    page = FirstContact(landscape.registry.host, namespace, target, user, password)
    found = credentials_for(page.regcred()["stringData"][".dockerconfigjson"], page.registry_host)
    assert found is not None, "the page's regcred holds no credentials for the render registry"
    return landscape.registry_as(*found)


@when(
    parsers.parse('I pull the bootstrap chart of "{target}" with the regcred of "{reader}"'),
    target_fixture="pull",
)
def pull_bootstrap(landscape: Landscape, you: You, target: str, reader: str) -> Pull:
    client = regcred_client(landscape, you, reader)
    namespace = you.namespace_of(target)
    reads = each_read(pusher(landscape), client, f"{namespace}/bootstrap-{target}")
    return pull(f"bootstrap-{target}", lambda: bootstrap_chart(client, namespace, target), reads)


@when(
    parsers.parse('I pull the agent release of "{target}" with the regcred of "{reader}"'),
    target_fixture="pull",
)
def pull_agent(landscape: Landscape, you: You, target: str, reader: str) -> Pull:
    client = regcred_client(landscape, you, reader)
    owner = pusher(landscape)
    namespace = you.namespace_of(target)
    # Where the agent release is, as the bootstrap chart says (read with SolAr's own rights).
    repository, ref = agent_source(landscape, owner, namespace, target)
    located = pull_source(owner, repository, ref)

    return pull(
        f"{repository}:{located.version}",
        lambda: pull_chart(client, repository, located.version),
        each_read(owner, client, repository),
    )


@given(
    parsers.parse(
        "SolAr's push user has pushed a chart to a repository whose path begins with the name of "
        'namespace "{namespace}"'
    ),
    target_fixture="pushed_repository",
)
def push_lookalike(landscape: Landscape, names: Names, namespace: str) -> str:
    repository = f"{names.namespace(namespace)}-shadow/conformance-probe"
    chart = Chart("conformance-probe", "0.0.1", templates={"probe.yaml": "kind: List\n"})
    pusher(landscape).push_chart(repository, chart)
    return repository


@when(parsers.parse('I pull that chart with the regcred of "{reader}"'), target_fixture="pull")
def pull_lookalike(landscape: Landscape, you: You, pushed_repository: str, reader: str) -> Pull:
    client = regcred_client(landscape, you, reader)
    return pull(
        pushed_repository,
        lambda: pull_chart(client, pushed_repository),
        each_read(pusher(landscape), client, pushed_repository),
    )


@when(
    parsers.parse('I pull the bootstrap chart of "{target}" without credentials'),
    target_fixture="pull",
)
def pull_anonymously(landscape: Landscape, you: You, target: str) -> Pull:
    client = landscape.registry_as(None, None)
    namespace = you.namespace_of(target)
    return pull(
        f"bootstrap-{target} without credentials",
        lambda: bootstrap_chart(client, namespace, target),
        each_read(pusher(landscape), client, f"{namespace}/bootstrap-{target}"),
    )


@when(
    parsers.parse(
        'I pull the bootstrap chart of "{target}" with a wrong password for regcred\'s user'
    ),
    target_fixture="pull",
)
def pull_with_wrong_password(landscape: Landscape, you: You, target: str) -> Pull:
    return _pull_with_password(landscape, you, target, lambda password: password + "-wrong")


# Near misses of the pull user's password: a registry that compares passwords loosely (without
# regard to case, or only as far as one of the two goes) lets each of them in.
NEAR_MISSES: dict[str, Callable[[str], str]] = {
    "in another case": lambda password: password.swapcase(),
    "one character short": lambda password: password[:-1],
    "and one character more": lambda password: password + password[-1],
}


@when(
    parsers.parse('I pull the bootstrap chart of "{target}" with regcred\'s password {near_miss}'),
    target_fixture="pull",
)
def pull_with_near_miss(landscape: Landscape, you: You, target: str, near_miss: str) -> Pull:
    if near_miss not in NEAR_MISSES:
        pytest.fail(
            f"unknown near miss {near_miss!r}; known: {', '.join(NEAR_MISSES)}", pytrace=False
        )
    return _pull_with_password(landscape, you, target, NEAR_MISSES[near_miss])


def _pull_with_password(
    landscape: Landscape, you: You, target: str, change: Callable[[str], str]
) -> Pull:
    """The pull and every read on its own, as regcred's user with a password that is not its own
    (compared with same_secret: neither password reaches a message)."""
    namespace = you.namespace_of(target)
    user, password = landscape.reader_credentials(namespace)
    wrong = change(password)
    assert not same_secret(wrong, password), (
        "the changed password is the password itself, so this check could not fail"
    )
    REDACT.register(wrong)
    client = landscape.registry_as(user, wrong)
    repository = f"{namespace}/bootstrap-{target}"
    return pull(
        f"bootstrap-{target} as {user} with a password that is not its own",
        lambda: bootstrap_chart(client, namespace, target),
        each_read(pusher(landscape), client, repository),
    )


@when(
    parsers.parse(
        'I pull the bootstrap chart of "{target}" with regcred\'s user and the password of the '
        'pull user of namespace "{other}"'
    ),
    target_fixture="pull",
)
def pull_with_foreign_password(
    landscape: Landscape, you: You, names: Names, target: str, other: str
) -> Pull:
    namespace = you.namespace_of(target)
    user, password = landscape.reader_credentials(namespace)
    foreign_user, foreign_password = landscape.reader_credentials(names.namespace(other))
    assert (foreign_user, foreign_password) != (user, password) and foreign_password != password, (
        f"the pull users of {namespace} and {names.namespace(other)} share a password, so this "
        "check could not fail"
    )
    client = landscape.registry_as(user, foreign_password)
    repository = f"{namespace}/bootstrap-{target}"
    return pull(
        f"bootstrap-{target}",
        lambda: bootstrap_chart(client, namespace, target),
        each_read(pusher(landscape), client, repository),
    )


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
            repository, ref = agent_source(landscape, client_of_solar, namespace, target)
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


@when(
    parsers.parse('I ask for the catalog with the regcred of "{reader}"'), target_fixture="listing"
)
def catalog_with_regcred(landscape: Landscape, you: You, reader: str) -> list[str] | RegistryError:
    try:
        return regcred_client(landscape, you, reader).catalog()
    except RegistryError as error:
        return error


@then(
    parsers.parse(
        'the render registry lists the repositories of namespace "{namespace}" and none of '
        "another namespace"
    )
)
def catalog_limited(
    landscape: Landscape, names: Names, listing: list[str] | RegistryError, namespace: str
) -> None:
    """As zot answers: the catalog filtered to what regcred may read, which is `<namespace>/**`."""
    assert not isinstance(listing, RegistryError), f"regcred's catalog was refused: {listing}"
    everything = pusher(landscape).catalog()
    own = f"{names.namespace(namespace)}/"
    assert any(not r.startswith(own) for r in everything), (
        f"the registry holds nothing outside {own}, so this check could not fail: {everything}"
    )
    foreign = [r for r in listing if not r.startswith(own)]
    assert foreign == [], f"regcred's catalog lists repositories of other namespaces: {foreign}"
    unlisted = [r for r in everything if r.startswith(own) and r not in listing]
    assert listing and not unlisted, f"regcred's catalog leaves out {unlisted or 'everything'}"


@then("the render registry hands it out")
def handed_out(pull: Pull) -> None:
    assert pull.error is None, f"{pull.what}: {pull.error}"
    assert pull.chart is not None and pull.chart.templates, f"{pull.what}: empty chart"


@then("the render registry refuses it")
def refused(pull: Pull) -> None:
    """The pull, and each read of the repository on its own (tag list, manifests by tag and by
    digest, blobs; GET and HEAD)."""
    reads = [("the pull", pull.error), *pull.reads]
    let_through = [
        f"{what}: {'allowed' if error is None else error}"
        for what, error in reads
        if error is None or error.status not in (401, 403)
    ]
    assert let_through == [], (
        f"the render registry should refuse {pull.what} and each read of it on its own (401 or "
        f"403); it let through: {let_through}"
    )


@then(parsers.parse('it holds the agent token of "{target}"'))
def holds_token(landscape: Landscape, you: You, pull: Pull, target: str) -> None:
    assert pull.chart is not None, f"{pull.what}: nothing was pulled"
    kubeconfig = kubeconfig_in(pull.chart, landscape.contract.agent_kubeconfig_key)
    secret = token_secret(landscape, you.namespace_of(target), target)
    assert kubeconfig is not None
    assert secret is not None
    assert same_secret(kubeconfig.token, token_in(landscape, secret)), (
        f"{pull.what} does not hold the current agent token of {target}"
    )


@when(
    parsers.parse(
        'I point an OCIRepository with the regcred of "{reader}" at the bootstrap chart of "{target}"'
    ),
    target_fixture="probe_source",
)
def point_source(landscape: Landscape, you: You, reader: str, target: str) -> Obj:
    namespace = you.namespace_of(reader)
    page = FirstContact(
        landscape.registry.host,
        you.namespace_of(target),
        target,
        "-",
        "-",
        landscape.registry.plain_http,
    )
    source = next(o for o in page.helmrelease() if o["kind"] == "OCIRepository")
    source["metadata"] = {"name": "conformance-foreign-bootstrap", "namespace": namespace}
    return you.target.create(source)


@then("that OCIRepository on the target is not Ready and says the registry refused it")
def source_refused(landscape: Landscape, waiter: Waiter, probe_source: Obj) -> None:
    meta = probe_source["metadata"]

    def probe() -> tuple[bool, Any]:
        try:
            obj = landscape.target.get("OCIRepository", meta["name"], meta["namespace"])
        except ApiError as error:
            return False, error
        ok, seen = ready(obj)
        message = str(seen.get("message") or "")
        refused = seen.get("Ready") == "False" and any(
            word in message.upper() for word in ("UNAUTHORIZED", "DENIED", "401", "403")
        )
        return refused and not ok, seen

    waiter.until("the OCIRepository reports the registry's refusal", probe, kind="flux")


@then(parsers.parse('nothing the regcred of "{reader}" can read holds SolAr\'s push credentials'))
def regcred_reads_no_push_credentials(
    landscape: Landscape, you: You, names: Names, reader: str
) -> None:
    """Every repository regcred may read (its catalog), every tag, its manifest, config and the
    files of every layer: none holds the push user's password, as it is or base64-encoded (a
    dockerconfigjson's auth), or regcred could write wherever SolAr writes."""
    client = regcred_client(landscape, you, reader)
    _, password = landscape.push_credentials()
    listing = [r for r in client.catalog() if not names.of_another_scenario(r.split("/", 1)[0])]
    assert listing, f"the regcred of {reader} reads no repository, so this check could not fail"
    holding = sorted(
        {
            f"{repository}:{tag}"
            for repository in listing
            for tag, text in artifact_texts(client, repository)
            if holds(text, password)
        }
    )
    assert holding == [], f"regcred of {reader} reads SolAr's push password in {holding}"
