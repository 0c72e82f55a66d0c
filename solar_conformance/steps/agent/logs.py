"""The agent pods on the target cluster and what their logs say: a rejected credential, an
unreachable SolAr API server, never a token."""

from __future__ import annotations

from typing import Any

from pytest_bdd import parsers, then

from solar_conformance.core.capabilities import Capability, needs
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.redact import leaks_encoded
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.lookup import token_in, token_secret
from solar_conformance.plugin.actors import You
from solar_conformance.steps.agent._rejections import rejections, says_unreachable
from solar_conformance.steps.common import quoted_names


@then("the agent's log says that the SolAr API server rejects its credential")
@needs(Capability.AGENT_LOGS)
def agent_logs_rejection(landscape: Landscape, you: You, waiter: Waiter) -> None:
    for target, namespace in you.namespaces.items():

        def probe(ns: str = namespace, t: str = target) -> tuple[bool, Any]:
            rejected = rejections(landscape, ns, t)
            return bool(rejected), rejected[-5:] or "no rejection logged yet"

        waiter.until(f"the agent of {target} logs 401 Unauthorized", probe, kind="report")


@then(
    parsers.parse(
        'the agent pod of "{target}" on the target cluster logs {count:d} failed reports that say '
        "it cannot reach the SolAr API server"
    )
)
@needs(Capability.AGENT_LOGS)
def agent_logs_unreachable(
    landscape: Landscape, you: You, waiter: Waiter, target: str, count: int
) -> None:
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        lines = [line for pod in landscape.agent_logs(namespace, target).values() for line in pod]
        failed = [line for line in lines if says_unreachable(line)]
        return len(failed) >= count, lines[-5:] or "no agent pod of this Target yet"

    waiter.until(
        f"{count} failed reports in the log of the agent pod of {target}", probe, kind="flux"
    )


@then(
    parsers.re(
        r"an agent pod of (?P<first>\"[^\"]+\") and an agent pod of (?P<second>\"[^\"]+\") run on the target cluster"
    )
)
@needs(Capability.AGENT_LOGS)
def agents_run(landscape: Landscape, you: You, waiter: Waiter, first: str, second: str) -> None:
    for target in quoted_names(f"{first} and {second}"):
        namespace = you.namespace_of(target)

        def probe(ns: str = namespace, t: str = target) -> tuple[bool, Any]:
            pods = {pod: lines[-1:] for pod, lines in landscape.agent_logs(ns, t).items() if lines}
            return bool(pods), pods or "no agent pod of this Target on the target cluster"

        waiter.until(f"an agent pod of {target} runs on the target cluster", probe, kind="flux")


@then(parsers.parse('the agent pod logs of "{target}" on the target cluster show no token'))
@needs(Capability.AGENT_LOGS)
def agent_logs_hold_no_token(landscape: Landscape, you: You, target: str) -> None:
    namespace = you.namespace_of(target)
    secret = token_secret(landscape, namespace, target)
    token = token_in(landscape, secret) if secret else None
    assert token, f"{target} has no token, so this check could not fail"
    pods = landscape.agent_logs(namespace, target)
    assert pods, f"no agent pod of {target} on the target cluster"
    showing = sorted(pod for pod, lines in pods.items() if leaks_encoded("\n".join(lines), token))
    assert showing == [], f"the log of {showing} shows the agent's token, or a piece of it"
