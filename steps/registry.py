"""The render registry as the page's regcred sees it: what it hands out, what it refuses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_bdd import parsers, then, when

from core.api import ApiError, Obj
from core.credentials import credentials_for
from core.landscape import Landscape
from core.oci import Chart, RegistryClient, RegistryError
from fixtures.page.lookup import (
    agent_chart,
    bootstrap_chart,
    kubeconfig_in,
    pull_chart,
    token_in,
    token_secret,
)
from fixtures.page.objects import FirstContact
from fixtures.plugin.actors import You
from fixtures.plugin.names import Names
from fixtures.plugin.waiting import Waiter
from steps.flux import ready


@dataclass(frozen=True)
class Pull:
    what: str
    chart: Chart | None
    error: RegistryError | None


def regcred_client(landscape: Landscape, you: You, target: str) -> RegistryClient:
    """A registry client with the credentials of the page's regcred for this Target."""
    namespace = you.namespace_of(target)
    user, password = landscape.reader_credentials(namespace)
    page = FirstContact(landscape.registry.host, namespace, target, user, password)
    found = credentials_for(page.regcred()["stringData"][".dockerconfigjson"], page.registry_host)
    assert found is not None, "the page's regcred holds no credentials for the render registry"
    return landscape.registry_as(*found)


def _pull(what: str, fetch: Any) -> Pull:
    try:
        return Pull(what, fetch(), None)
    except RegistryError as error:
        return Pull(what, None, error)


@when(
    parsers.parse('I pull the bootstrap chart of "{target}" with the regcred of "{reader}"'),
    target_fixture="pull",
)
def pull_bootstrap(landscape: Landscape, you: You, target: str, reader: str) -> Pull:
    client = regcred_client(landscape, you, reader)
    namespace = you.namespace_of(target)
    return _pull(f"bootstrap-{target}", lambda: bootstrap_chart(client, namespace, target))


@when(
    parsers.parse('I pull the agent release of "{target}" with the regcred of "{reader}"'),
    target_fixture="pull",
)
def pull_agent(landscape: Landscape, you: You, target: str, reader: str) -> Pull:
    client = regcred_client(landscape, you, reader)
    pusher = landscape.registry_as(*landscape.push_credentials())
    namespace = you.namespace_of(target)
    # Where the agent release is, as the bootstrap chart says (read with SolAr's own rights).
    located = agent_chart(landscape, pusher, namespace, target)
    repository = f"{namespace}/{located.name}"

    return _pull(
        f"{repository}:{located.version}", lambda: pull_chart(client, repository, located.version)
    )


@when(
    parsers.parse('I push a chart to namespace "{namespace}" with the regcred of "{reader}"'),
    target_fixture="pull",
)
def push_with_regcred(
    landscape: Landscape, you: You, names: Names, namespace: str, reader: str
) -> Pull:
    client = regcred_client(landscape, you, reader)
    chart = Chart("conformance-probe", "0.0.1", templates={})
    repository = f"{names.namespace(namespace)}/conformance-probe"

    def push() -> Chart:
        client.push_chart(repository, chart)
        return chart

    return _pull(f"push {repository}", push)


@then("the render registry hands it out")
def handed_out(pull: Pull) -> None:
    assert pull.error is None, f"{pull.what}: {pull.error}"
    assert pull.chart is not None and pull.chart.templates, f"{pull.what}: empty chart"


@then("the render registry refuses it")
def refused(pull: Pull) -> None:
    assert pull.error is not None, f"{pull.what} was allowed"
    assert pull.error.status in (401, 403), f"{pull.what}: expected 401/403, got {pull.error}"


@then(parsers.parse('it holds the agent token of "{target}"'))
def holds_token(landscape: Landscape, you: You, pull: Pull, target: str) -> None:
    assert pull.chart is not None, f"{pull.what}: nothing was pulled"
    kubeconfig = kubeconfig_in(pull.chart, landscape.contract.agent_kubeconfig_key)
    secret = token_secret(landscape, you.namespace_of(target), target)
    assert kubeconfig is not None
    assert secret is not None
    assert kubeconfig.token == token_in(landscape, secret), (
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
