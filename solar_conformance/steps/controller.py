"""solar-controller-manager: the credential objects, the token, the condition, the bindings."""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from solar_conformance.core.api import SOLAR_GROUP, ApiError, Obj, is_owned_by
from solar_conformance.core.capabilities import Capability, needs
from solar_conformance.core.conditions import secret_value
from solar_conformance.core.landscape import AuditEvent, Landscape
from solar_conformance.core.rbac import Request, User, allowed
from solar_conformance.core.redact import same_secret
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.holders import Inventory, describe, holds_token, how_held, remember
from solar_conformance.page.lookup import (
    ObjectRef,
    TokenFacts,
    agent_accounts,
    agent_release_name,
    bound_releases,
    credential_condition,
    credential_objects,
    credential_secrets,
    owned_by_target,
    secrets_with_tokens_of,
    target_report,
    token_in,
    token_requests,
    token_secret,
)
from solar_conformance.page.reading import issued_expiry
from solar_conformance.plugin.actors import You
from solar_conformance.plugin.names import Names
from solar_conformance.steps.common import quoted_names

# The parts of a credential the page's table names. A ClusterRole that a RoleBinding of the
# Target's namespace binds grants in that namespace only, as a Role does: it counts as the Role
# (docs/contracts.md, "The credential").
CREDENTIAL_PARTS = ("ServiceAccount", "Role", "RoleBinding", "TargetReport", "Secret")


def _lacking(objects: list[ObjectRef]) -> list[str]:
    kinds = {"Role" if kind == "ClusterRole" else kind for kind, _, _ in objects}
    return sorted(set(CREDENTIAL_PARTS) - kinds)


def _issued_token(landscape: Landscape, namespace: str, target: str) -> str:
    secret = token_secret(landscape, namespace, target)
    token = token_in(landscape, secret) if secret is not None else None
    assert token, f"{target} has no token in the Secret its condition names"
    return token


@then(
    parsers.parse(
        'the token authenticates as a ServiceAccount that a RoleBinding binds to a Role for "{target}"'
    )
)
def access_objects(landscape: Landscape, you: You, target: str) -> None:
    """Found through what the cluster stores: the token's subject, the bindings naming it."""
    namespace = you.namespace_of(target)
    facts = TokenFacts.read(_issued_token(landscape, namespace, target))
    account_namespace, account = facts.service_account
    assert account_namespace == namespace, f"the token is for {facts.subject}"
    _stored(landscape, ("ServiceAccount", account, namespace))
    objects = credential_objects(landscape, _issued_token(landscape, namespace, target), target)
    bindings = [_stored(landscape, ref) for ref in objects if ref[0] == "RoleBinding"]
    roles = [_stored(landscape, ref) for ref in objects if ref[0] == "Role"]
    cluster_roles = [_stored(landscape, ref) for ref in objects if ref[0] == "ClusterRole"]
    assert bindings and (roles or cluster_roles), (
        f"no RoleBinding binds {facts.subject} to a Role: {objects}"
    )
    request = Request("get", SOLAR_GROUP, "targets", namespace, target)
    user = User.service_account(namespace, account)
    assert allowed(user, request, roles, bindings, cluster_roles, []), (
        f"no Role bound to {facts.subject} grants get on the Target {target}"
    )


def _stored(landscape: Landscape, ref: ObjectRef) -> Obj:
    """An object of a credential as the SolAr API server stores it (its absence is a verdict)."""
    kind, name, namespace = ref
    try:
        return landscape.solar.get(kind, name, namespace)
    except ApiError as error:
        if error.status != 404:
            raise
        where = f"{namespace}/{name}" if namespace else name
        raise AssertionError(f"the credential names {kind} {where}, which does not exist") from None


@then(
    parsers.parse(
        'the ServiceAccount, Role, RoleBinding, TargetReport and token Secret of "{target}" are '
        "owned by the Target"
    )
)
def owned_by_the_target(landscape: Landscape, you: You, target: str) -> None:
    namespace = you.namespace_of(target)
    owner = landscape.solar.get("Target", target, namespace)
    objects = credential_objects(landscape, _issued_token(landscape, namespace, target), target)
    assert _lacking(objects) == [], f"the credential of {target} lacks {_lacking(objects)}"
    # A cluster-scoped object cannot be owned by a namespaced one (Kubernetes' garbage collector
    # ignores such a reference): a ClusterRole must go with the Target in other ways, which the
    # deletion scenario checks.
    orphans = [
        f"{kind} {name}"
        for kind, name, ns in objects
        if ns is not None and not is_owned_by(_stored(landscape, (kind, name, ns)), owner)
    ]
    assert orphans == [], f"not owned by the Target {target}: {orphans}"


@then(parsers.parse('solar-controller-manager creates an empty TargetReport "{target}"'))
def empty_report(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """`kubectl get targetreport <target>`: the page names the TargetReport like the Target."""
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        return True, target_report(landscape, namespace, target).get("spec", {})

    spec = waiter.until(f"the TargetReport {target}", probe)
    assert not spec.get("lastReportTime"), f"not empty: {spec}"


def _token_probe(landscape: Landscape, namespace: str, target: str) -> tuple[bool, Any]:
    secret = token_secret(landscape, namespace, target)
    condition = credential_condition(landscape, namespace, target)
    if secret is None:
        return False, {"condition": condition, "secret": None}
    token = token_in(landscape, secret)
    return bool(token), {"condition": condition, "secret": secret["metadata"]["name"]}


@then(parsers.parse('solar-controller-manager mints a token for "{target}" into a Secret'))
def token_minted(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """A ServiceAccount token of the Target's namespace, bound to the Secret that holds it."""
    namespace = you.namespace_of(target)
    waiter.until(
        f"a token for {target} in the Secret the condition names",
        lambda: _token_probe(landscape, namespace, target),
    )
    secret = token_secret(landscape, namespace, target)
    assert secret is not None
    facts = TokenFacts.read(_issued_token(landscape, namespace, target))
    account_namespace, account = facts.service_account
    assert account_namespace == namespace, f"the token is for {facts.subject}"
    _stored(landscape, ("ServiceAccount", account, namespace))
    assert facts.bound_secret == secret["metadata"]["name"], (
        f"the token is bound to {facts.bound_secret}, not to its Secret"
    )


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


@then("the condition message names the token's Secret and its expiry")
def message_names_secret_and_expiry(landscape: Landscape, you: You) -> None:
    for target, namespace in you.namespaces.items():
        condition = credential_condition(landscape, namespace, target) or {}
        message = condition.get("message", "")
        named = landscape.contract.secret_named_in(message, namespace)
        assert named is not None, f"the message names no Secret: {message!r}"
        assert issued_expiry(landscape.contract, message, target) is not None, (
            f"the message names no expiry: {message!r}"
        )
        assert token_secret(landscape, namespace, target) is not None, (
            f"the Secret the message names does not exist: {named}"
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


@then(parsers.parse('the condition message of "{target}" comes to have the error "{error}"'))
def message_comes_to_have_error(
    landscape: Landscape, you: You, waiter: Waiter, target: str, error: str
) -> None:
    """The message carries the error of the latest attempt: wait for the next retry."""
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        condition = credential_condition(landscape, namespace, target) or {}
        return error in str(condition.get("message", "")), condition

    waiter.until(f"the condition message of {target} has the error {error!r}", probe)


@then(parsers.parse('the condition message has the error "{error}"'))
def message_has_error(landscape: Landscape, you: You, error: str) -> None:
    for target, namespace in you.namespaces.items():
        message = (credential_condition(landscape, namespace, target) or {}).get("message", "")
        assert error in message, f"the condition of {target} does not carry {error!r}: {message!r}"


@then(
    parsers.parse(
        'the Secret named in the condition message holds a token for the agent of "{target}"'
    )
)
def named_secret_holds_token(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)
    waiter.until(
        f"a token for {target} in the Secret the condition names",
        lambda: _token_probe(landscape, namespace, target),
    )


@then(
    parsers.parse(
        'the Secret named in the condition message holds a new token for the agent of "{target}"'
    )
)
def named_secret_holds_new_token(
    landscape: Landscape, you: You, waiter: Waiter, target: str
) -> None:
    namespace = you.namespace_of(target)
    old = you.noted_token(target)

    def probe() -> tuple[bool, Any]:
        ok, seen = _token_probe(landscape, namespace, target)
        secret = token_secret(landscape, namespace, target)
        fresh = ok and secret is not None and not same_secret(token_in(landscape, secret), old)
        return fresh, {**seen, "token": "the old one" if ok and not fresh else seen.get("secret")}

    waiter.until(f"a new token for {target}", probe)


@given(
    parsers.parse(
        'the condition message names the Secret that now holds the new token of "{target}" and '
        "that token's expiry"
    )
)
@then(
    parsers.parse(
        'the condition message names the Secret that now holds the new token of "{target}" and '
        "that token's expiry"
    )
)
def message_names_new_token(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)
    old = you.noted_token(target)

    def probe() -> tuple[bool, Any]:
        condition = credential_condition(landscape, namespace, target) or {}
        message = str(condition.get("message", ""))
        secret = token_secret(landscape, namespace, target)
        token = token_in(landscape, secret) if secret is not None else None
        seen: dict[str, Any] = {"reason": condition.get("reason"), "message": message}
        if token is None or same_secret(token, old):
            return False, {**seen, "named Secret holds": "the old token" if token else "none"}
        named = issued_expiry(landscape.contract, message, target)
        expires = TokenFacts.read(token).expires_at
        seen["token expires"] = str(expires)
        agree = named is not None and abs(expires - named) <= EXPIRY_GRANULARITY
        return agree and expires > landscape.clock.now(), seen

    waiter.until(
        f"the Issued message of {target} names the Secret with the new token and its expiry", probe
    )
    you.retired(target, "the condition named the new Secret", landscape.clock.now())


@then(parsers.parse('solar-controller-manager has minted exactly one new token for "{target}"'))
@needs(Capability.AUDIT_LOG)
def exactly_one_new_token(landscape: Landscape, you: You, target: str) -> None:
    namespace, account = TokenFacts.read(you.noted_token(target)).service_account
    minted = [e for e in token_requests(landscape, namespace, account) if e.code < 300]
    before = you.mints_when_noted.get(target)
    assert before is not None, f"the scenario noted no token of {target}"
    later = [e.at.isoformat() for e in minted[before:]]
    assert len(later) == 1, (
        f"{len(later)} TokenRequests for {account} succeeded since its token was noted "
        f"(expected exactly one for the new token): {later}"
    )


def _wait_for_token_age(
    landscape: Landscape, waiter: Waiter, target: str, token: str, fraction: float
) -> None:
    facts = TokenFacts.read(token)
    moment = facts.issued_at + (facts.expires_at - facts.issued_at) * fraction
    remaining = max(0.0, (moment - landscape.clock.now()).total_seconds())
    waiter.until(
        f"the token of {target} to reach {fraction:.0%} of its lifetime ({moment:%H:%M:%S})",
        lambda: (landscape.clock.now() >= moment, f"now {landscape.clock.now():%H:%M:%S}"),
        timeout=remaining + waiter.timeout("margin"),
    )


@when(parsers.parse('the token of "{target}" has lived past the age at which it is rotated'))
def token_ages(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """The profile's rotate_after_fraction of its lifetime."""
    fraction = landscape.contract.rotate_after_fraction
    _wait_for_token_age(landscape, waiter, target, you.noted_token(target), fraction)


@when(parsers.parse('the token of "{target}" expires'))
def token_expires(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    _wait_for_token_age(landscape, waiter, target, you.noted_token(target), 1.0)


@then(
    parsers.parse(
        'the ServiceAccount, Role, RoleBinding, TargetReport and token Secret of "{target}" are gone'
    )
)
def credential_gone(
    landscape: Landscape, waiter: Waiter, deleted_credential: list[ObjectRef]
) -> None:
    lacking = _lacking(deleted_credential)
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


# kube-apiserver takes a TokenRequest's status.expirationTimestamp and the token's `exp` claim
# at two moments and truncates both to seconds: seen one second apart on a loaded machine.
EXPIRY_GRANULARITY = timedelta(seconds=1)


@then("that token expires at the time the condition message names")
def expiry_matches(landscape: Landscape, you: You, waiter: Waiter) -> None:
    """The condition and the Secret are written one after the other: they must come to agree."""
    for target, namespace in you.namespaces.items():

        def probe(namespace: str = namespace, target: str = target) -> tuple[bool, Any]:
            message = (credential_condition(landscape, namespace, target) or {}).get("message", "")
            named = issued_expiry(landscape.contract, message, target)
            secret = token_secret(landscape, namespace, target)
            if named is None or secret is None:
                return False, {"message": message, "secret": secret is not None}
            expires = TokenFacts.read(token_in(landscape, secret) or "").expires_at
            seen = {"message says": str(named), "token expires": str(expires)}
            agree = abs(expires - named) <= EXPIRY_GRANULARITY
            return agree and expires > landscape.clock.now(), seen

        waiter.until(f"the token of {target} to expire when its condition message says", probe)


@then("the new token lives for the profile's token lifetime")
def lives_for_the_lifetime(landscape: Landscape, you: You) -> None:
    """`exp` - `iat` of the token itself: what the API server issued, not what SolAr asked."""
    wanted = timedelta(seconds=landscape.contract.token_lifetime_seconds)
    for target, namespace in you.namespaces.items():
        secret = token_secret(landscape, namespace, target)
        assert secret is not None, f"{target} has no token Secret"
        facts = TokenFacts.read(token_in(landscape, secret) or "")
        lifetime = facts.expires_at - facts.issued_at
        assert abs(lifetime - wanted) <= EXPIRY_GRANULARITY, (
            f"the token of {target} lives {lifetime.total_seconds():g}s, not the profile's "
            f"token lifetime of {wanted.total_seconds():g}s"
        )


@then("the new token expires later than the old one")
def expires_later(landscape: Landscape, you: You) -> None:
    for target, namespace in you.namespaces.items():
        secret = token_secret(landscape, namespace, target)
        assert secret is not None, f"{target} has no token Secret"
        new = TokenFacts.read(token_in(landscape, secret) or "")
        old = TokenFacts.read(you.noted_token(target))
        assert new.expires_at > old.expires_at, f"new {new.expires_at}, old {old.expires_at}"


def _agent_accounts(landscape: Landscape, waiter: Waiter, namespace: str, target: str) -> set[str]:
    """The ServiceAccounts that may be the agent's of `target`, once the controller made one."""

    def probe() -> tuple[bool, Any]:
        found = agent_accounts(landscape, namespace, target)
        return bool(found), found or "none yet"

    return set(waiter.until(f"a ServiceAccount for the agent of {target}", probe))


def _refused_token_requests(
    landscape: Landscape, namespace: str, accounts: set[str]
) -> list[AuditEvent]:
    return [e for e in token_requests(landscape, namespace, accounts) if e.code >= 400]


@given(
    parsers.parse(
        'the SolAr API server has refused {count:d} token requests for the agent of "{target}"'
    ),
    target_fixture="refused_token_requests",
)
@when(
    parsers.parse(
        'the SolAr API server has refused {count:d} token requests for the agent of "{target}"'
    ),
    target_fixture="refused_token_requests",
)
@then(
    parsers.parse(
        'the SolAr API server has refused {count:d} token requests for the agent of "{target}"'
    ),
    target_fixture="refused_token_requests",
)
@needs(Capability.AUDIT_LOG)
def refused_requests(
    landscape: Landscape, you: You, waiter: Waiter, target: str, count: int
) -> list[AuditEvent]:
    namespace = you.namespace_of(target)
    cap = landscape.contract.mint_backoff_cap_seconds
    initial = landscape.contract.mint_backoff_initial_seconds
    budget = sum(min(cap, initial * 2**i) for i in range(count)) + waiter.timeout("reconcile")
    accounts = _agent_accounts(landscape, waiter, namespace, target)

    def probe() -> tuple[bool, Any]:
        refused = _refused_token_requests(landscape, namespace, accounts)
        return len(refused) >= count, [f"{e.at:%H:%M:%S.%f} {e.code}" for e in refused]

    waiter.until(f"{count} refused TokenRequests for the agent of {target}", probe, timeout=budget)
    return _refused_token_requests(landscape, namespace, accounts)[:count]


@then("the waits between those requests grow up to the profile's cap and stay there")
def waits_grow_to_cap(landscape: Landscape, refused_token_requests: list[AuditEvent]) -> None:
    cap = landscape.contract.mint_backoff_cap_seconds
    tolerance = max(2.0, cap / 10)
    gaps = [
        round((b.at - a.at).total_seconds(), 1)
        for a, b in itertools.pairwise(refused_token_requests)
    ]
    assert len(gaps) >= 4, f"too few attempts to see a backoff: {gaps}"
    assert all(b >= a - tolerance for a, b in itertools.pairwise(gaps)), f"waits shrink: {gaps}"
    assert gaps[-1] > gaps[0] + tolerance, f"the waits do not grow (a hot loop?): {gaps}"
    at_cap = [g for g in gaps if abs(g - cap) <= tolerance]
    assert len(at_cap) >= 2, (
        f"the waits do not settle at the profile's cap of {cap:g}s (or the retries stop): {gaps}"
    )
    assert max(gaps) <= cap + tolerance, f"a wait exceeds the cap of {cap:g}s: {gaps}"


@then(
    parsers.parse(
        "after the success, the first wait between refused token requests for the agent of "
        '"{target}" is the profile\'s initial wait'
    )
)
@needs(Capability.AUDIT_LOG)
def backoff_starts_afresh(
    landscape: Landscape,
    you: You,
    waiter: Waiter,
    refused_token_requests: list[AuditEvent],
    target: str,
) -> None:
    """A success ends the backoff: the next failures start again from the initial wait (the
    refusals counted from the last TokenRequest that succeeded)."""
    namespace = you.namespace_of(target)
    accounts = _agent_accounts(landscape, waiter, namespace, target)
    initial = landscape.contract.mint_backoff_initial_seconds
    tolerance = max(2.0, landscape.contract.mint_backoff_cap_seconds / 10)
    budget = landscape.contract.mint_backoff_cap_seconds * 2 + waiter.timeout("reconcile")
    assert refused_token_requests, "no token request was refused before the success"

    def after_success() -> list[AuditEvent]:
        requests = token_requests(landscape, namespace, accounts)
        last_success = max((i for i, e in enumerate(requests) if e.code < 400), default=-1)
        return [e for e in requests[last_success + 1 :] if e.code >= 400]

    def probe() -> tuple[bool, Any]:
        refused = after_success()
        return len(refused) >= 2, [f"{e.at:%H:%M:%S.%f}" for e in refused]

    waiter.until(f"two refused TokenRequests for {target} after a success", probe, timeout=budget)
    first, second = after_success()[:2]
    gap = (second.at - first.at).total_seconds()
    assert gap <= initial + tolerance, (
        f"after a successful mint the first retry came {gap:.1f}s after the refusal; the "
        f"profile's initial wait is {initial:g}s: the backoff did not start afresh"
    )


@then(parsers.parse('every refused token request is a Warning event on the Target "{target}"'))
@needs(Capability.AUDIT_LOG)
def refusals_are_events(
    landscape: Landscape,
    you: You,
    waiter: Waiter,
    target: str,
) -> None:
    """On the Target as `kubectl describe target` finds its events: by kind, name, namespace
    and uid (an event with another object's uid is not shown with the Target)."""
    namespace = you.namespace_of(target)
    uid = landscape.solar.get("Target", target, namespace)["metadata"]["uid"]
    accounts = _agent_accounts(landscape, waiter, namespace, target)

    def about_the_target(event: Any) -> bool:
        involved = event.get("involvedObject") or {}
        return (
            involved.get("kind") == "Target"
            and involved.get("name") == target
            and involved.get("namespace", namespace) == namespace
            and involved.get("uid") == uid
        )

    def probe() -> tuple[bool, Any]:
        refused = len(_refused_token_requests(landscape, namespace, accounts))
        events = [
            e
            for e in landscape.solar.list("Event", namespace)
            if about_the_target(e)
            and e.get("type") == "Warning"
            and e.get("reason") == landscape.contract.mint_failed_event_reason
        ]
        recorded = sum(int(e.get("count") or 1) for e in events)
        return recorded == refused, {"refused TokenRequests": refused, "Warning events": recorded}

    waiter.until(f"one Warning event per refused TokenRequest of {target}", probe)


# --- bindings (the Profile controller is part of solar-controller-manager) ----------------------
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


@then(parsers.parse('the token of "{target}" is in no other object on the SolAr API server'))
def token_only_in_its_secret(landscape: Landscape, you: You, names: Names, target: str) -> None:
    """Every object of every resource the SolAr API server's discovery serves, read as its
    administrator (the namespaces of other scenarios left out): the Target's current token, as
    it is, base64-encoded, under layers of base64 and gzip, or its signature, which no other
    token shares, in the Secret its condition names and nowhere else: not in an Event, a
    ConfigMap, an annotation, a status."""
    namespace = you.namespace_of(target)
    secret = token_secret(landscape, namespace, target)
    token = token_in(landscape, secret) if secret is not None else None
    assert secret is not None and token, f"{target} has no token, so this check could not fail"
    remember(token)
    home = (secret["metadata"]["namespace"], secret["metadata"]["name"])
    holding: list[str] = []
    seen_home = False
    inventory = Inventory.read(landscape.solar, lambda ns: not names.of_another_scenario(ns))
    for _resource, obj in inventory.objects:
        if not holds_token(obj, token):
            continue
        meta = obj.get("metadata", {})
        if obj.get("kind") == "Secret" and (meta.get("namespace"), meta.get("name")) == home:
            seen_home = True
        else:
            holding.append(f"{describe(obj)} ({how_held(obj, token)})")
    assert seen_home, f"the scan did not find the token of {target} in its own Secret"
    assert holding == [], f"the token of {target} is also held by: {sorted(holding)}"
