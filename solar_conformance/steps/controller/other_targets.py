"""One Target's lifecycle leaves every other Target's credential as it was: the tokens noted
before, the same Secrets and tokens after."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_bdd import given, parsers, then

from solar_conformance.core.api import ApiError
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.redact import same_secret
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.lookup import token_in, token_secret
from solar_conformance.plugin.names import Names

HELD_CREDENTIALS = pytest.StashKey[dict[tuple[str, str], tuple[str, str]]]()


@given("every Target I have created holds a token")
def every_target_holds_a_token(
    request: pytest.FixtureRequest, landscape: Landscape, names: Names, waiter: Waiter
) -> None:
    """Note, for every Target of the scenario's namespaces (namesakes in other namespaces
    included), the Secret its condition names and the token in it."""
    held: dict[tuple[str, str], tuple[str, str]] = {}

    def probe() -> tuple[bool, Any]:
        held.clear()
        missing = []
        for target in landscape.solar.list("Target"):
            namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
            if not names.of_this_scenario(namespace):
                continue
            secret = token_secret(landscape, namespace, name)
            token = token_in(landscape, secret) if secret is not None else None
            if secret is None or not token:
                missing.append(f"{namespace}/{name}")
                continue
            held[(namespace, name)] = (secret["metadata"]["name"], token)
        return missing == [] and held != {}, {"without a token": missing}

    waiter.until("every Target of the scenario holds a token", probe)
    request.node.stash[HELD_CREDENTIALS] = dict(held)


@then(
    parsers.parse(
        'every Target but "{target}" in namespace "{namespace}" keeps the Secret and the token it '
        "held, and the SolAr API server accepts that token"
    )
)
def others_keep_their_tokens(
    request: pytest.FixtureRequest, landscape: Landscape, names: Names, target: str, namespace: str
) -> None:
    """After one Target's lifecycle step, by what the cluster stores and authenticates: each other
    Target noted (a namesake in another namespace, a sibling) is there, its condition names the
    same Secret, holding the same token, which still reads its Target."""
    held = request.node.stash.get(HELD_CREDENTIALS, None)
    assert held, "no tokens were noted (add: Given every Target I have created holds a token)"
    acted_on = (names.namespace(namespace), target)
    others = {key: value for key, value in held.items() if key != acted_on}
    assert others, (
        f"the scenario noted no Target but {namespace}/{target}: this check could not fail"
    )
    changed = []
    for (ns, name), (secret_name, token) in sorted(others.items()):
        try:
            secret = token_secret(landscape, ns, name)
        except ApiError as error:
            changed.append(f"{ns}/{name}: the Target is gone ({error.status})")
            continue
        now = token_in(landscape, secret) if secret is not None else None
        if secret is None or secret["metadata"]["name"] != secret_name:
            named = secret["metadata"]["name"] if secret is not None else "none that exists"
            changed.append(f"{ns}/{name}: its condition named {secret_name}, now {named}")
            continue
        if not same_secret(now or "", token):
            changed.append(f"{ns}/{name}: its Secret {secret_name} holds another token now")
            continue
        try:
            landscape.solar_as(token).get("Target", name, ns)
        except ApiError as error:
            changed.append(f"{ns}/{name}: its token is refused ({error.status})")
    assert changed == [], (
        f"what was done to {acted_on[0]}/{target} withdrew or replaced the token of other Targets: "
        f"{changed}"
    )
