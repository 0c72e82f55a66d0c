"""Pulls from the render registry (with a Target's regcred, another's, none, a wrong password;
Flux's too) and what the registry does with each: hands it out or refuses it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from solar_conformance.core.api import ApiError, Obj
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.oci import Chart
from solar_conformance.core.redact import REDACT, same_secret
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.charts import bootstrap_chart, kubeconfig_in, pull_chart, rendered
from solar_conformance.page.delivery import agent_delivery
from solar_conformance.page.lookup import token_in, token_secret
from solar_conformance.page.objects import FirstContact
from solar_conformance.page.reads import Pull, each_read, pull
from solar_conformance.plugin.actors import You
from solar_conformance.plugin.helm import CHART_RENDERER
from solar_conformance.plugin.names import Names
from solar_conformance.steps.flux import ready
from solar_conformance.steps.registry._regcred import regcred_client
from solar_conformance.steps.renderer import pusher


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
    located = agent_delivery(landscape, owner, namespace, target, CHART_RENDERER)
    repository, version = located.repository, located.chart.version

    return pull(
        f"{repository}:{version}",
        lambda: rendered(
            CHART_RENDERER, pull_chart(client, repository, version), located.installation
        ),
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
