"""A credential withheld or withdrawn (Disabled, Revoked, MintFailed, the Target deleted): no
token, no token Secret, no Secret holding a dead token, none of a deleted Target's objects."""

from __future__ import annotations

from typing import Any

from pytest_bdd import parsers, then

from solar_conformance.core.api import ApiError
from solar_conformance.core.conditions import secret_value
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.lookup import (
    ObjectRef,
    agent_accounts,
    credential_secrets,
    owned_by_target,
    secrets_with_tokens_of,
    token_in,
)
from solar_conformance.plugin.actors import You
from solar_conformance.steps.controller._credential import missing_parts


@then(
    parsers.parse(
        'no Secret made for "{target}" is left without a token the SolAr API server accepts'
    )
)
def no_dead_secrets(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """Every Secret of the Target (owned by it, or carrying its credential labels) holds a token
    the SolAr API server accepts: a refused TokenRequest leaves no empty Secret behind, a token
    that is gone leaves no Secret holding it."""
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        found = {
            s["metadata"]["name"]: s
            for s in owned_by_target(landscape, "Secret", namespace, target)
            + credential_secrets(landscape, namespace, target)
        }
        dead = []
        for name, secret in sorted(found.items()):
            token = secret_value(secret, landscape.contract.token_key)
            if not token:
                dead.append(f"{name} (no token)")
                continue
            try:
                landscape.solar_as(token).get("Target", target, namespace)
            except ApiError as error:
                if error.status == 401:
                    dead.append(f"{name} (a token the SolAr API server rejects)")
        return dead == [], {"Secrets of the Target": sorted(found), "dead": dead}

    waiter.until(
        f"no Secret of {target} without a token the SolAr API server accepts (a failed mint "
        "leaves none behind)",
        probe,
    )


@then(parsers.parse('no token is minted for "{target}"'))
def no_token(landscape: Landscape, you: You, target: str) -> None:
    """Neither a Secret of the credential holds a token, nor any Secret of the namespace, whatever
    its name or labels, a token of the Target's ServiceAccount."""
    namespace = you.namespace_of(target)
    holding = [
        s["metadata"]["name"]
        for s in credential_secrets(landscape, namespace, target)
        if token_in(landscape, s)
    ]
    assert holding == [], f"Secrets with a token for {target}: {holding}"
    accounts = agent_accounts(landscape, namespace, target)
    anywhere = secrets_with_tokens_of(landscape, namespace, accounts)
    assert anywhere == [], (
        f"Secrets of {namespace} hold a token of the agent of {target} "
        f"({', '.join(sorted(accounts))}): {anywhere}"
    )


@then(parsers.parse('no token Secret of "{target}" exists'))
def no_token_secret(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """Neither a Secret with the credential's labels, nor any Secret of the namespace that holds
    a token of the Target's agent, whatever its name or labels."""
    namespace = you.namespace_of(target)
    accounts = agent_accounts(landscape, namespace, target)

    def probe() -> tuple[bool, Any]:
        left = [s["metadata"]["name"] for s in credential_secrets(landscape, namespace, target)]
        left += secrets_with_tokens_of(landscape, namespace, accounts)
        return left == [], left

    waiter.until(f"the token Secret of {target} is deleted", probe)


@then(
    parsers.parse(
        'the ServiceAccount, Role, RoleBinding, TargetReport and token Secret of "{target}" are gone'
    )
)
def credential_gone(
    landscape: Landscape, waiter: Waiter, deleted_credential: list[ObjectRef]
) -> None:
    lacking = missing_parts(deleted_credential)
    assert lacking == [], (
        f"before the deletion the Target's credential lacked {lacking}, so this check could not "
        "see them go"
    )

    def probe() -> tuple[bool, Any]:
        left = []
        for kind, name, namespace in deleted_credential:
            try:
                landscape.solar.get(kind, name, namespace)
                left.append(f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}")
            except ApiError as error:
                if error.status != 404:
                    raise
        return left == [], left

    waiter.until("the deleted Target's credential objects are gone", probe)
