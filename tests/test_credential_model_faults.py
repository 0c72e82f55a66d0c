"""The credential model can fail: broken SolAr components and a broken sim API server each make
it fail, with a message that says which promise broke; the reference passes. Each runs the
model exactly as features/test_credential_model.py does (its fixed examples and its drawn ones,
from the same seed, with the project's deadlines), without shrinking."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import Phase

from solar_conformance.core.api import ClusterAPI, Obj, annotations_of, find_condition
from solar_conformance.core.contract import Contract
from solar_conformance.model.coverage import missing
from solar_conformance.model.run import SIM_BUDGET, Figures, run, sim_starter
from solar_conformance.plugin.options import timeouts
from solar_conformance.plugin.waiting import WaitTimeout
from solar_conformance.simulators.memory import cluster
from solar_conformance.simulators.reference.bindings import ProfileController
from solar_conformance.simulators.reference.controller import CredentialController
from solar_conformance.simulators.reference.renderer import Renderer
from solar_conformance.simulators.reference.solar import ReferenceSolar

Patch = Callable[[pytest.MonkeyPatch], None]
LATE = timedelta(seconds=20)  # longer than the authentication cache window and its margin


def keeps_the_secret_on_revoke(monkeypatch: pytest.MonkeyPatch) -> None:
    reconcile = CredentialController.reconcile
    delete = CredentialController.delete_token_secrets
    revoking = [False]

    def noting(self: CredentialController, target: dict[str, Any]) -> float:
        revoking[0] = _revoked(self, target)
        return reconcile(self, target)

    def forgetful(self: CredentialController, secrets_: list[dict[str, Any]]) -> None:
        if not revoking[0]:
            delete(self, secrets_)

    monkeypatch.setattr(CredentialController, "reconcile", noting)
    monkeypatch.setattr(CredentialController, "delete_token_secrets", forgetful)


def _revoked(controller: CredentialController, target: Obj) -> bool:
    contract = controller.contract
    return annotations_of(target).get(contract.revocation_annotation) == contract.revoked_value


def caches_tokens_forever(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster, "AUTH_CACHE_TTL", timedelta(days=1))


def ignores_the_unset_url(monkeypatch: pytest.MonkeyPatch) -> None:
    def only_the_renderer(self: ReferenceSolar, url: str | None) -> None:
        self.renderer.config.apiserver_url = url
        self.wake()

    monkeypatch.setattr(ReferenceSolar, "configure_apiserver_url", only_the_renderer)


def grants_every_target(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = CredentialController.agent_rules

    def broken(target: str) -> list[dict[str, object]]:
        granted = rules(target)
        granted[0].pop("resourceNames")
        return granted

    monkeypatch.setattr(CredentialController, "agent_rules", staticmethod(broken))


def takes_the_namesakes_token_on_revoke(monkeypatch: pytest.MonkeyPatch) -> None:
    """Revoking deletes the token Secrets of every Target of that name, in every namespace."""
    reconcile = CredentialController.reconcile

    def broken(self: CredentialController, target: Obj) -> float:
        if _revoked(self, target):
            labels = self.contract.credential_labels(target["metadata"]["name"])
            self.delete_token_secrets(self.solar.list("Secret", None, labels=labels))
        return reconcile(self, target)

    monkeypatch.setattr(CredentialController, "reconcile", broken)


def never_remints_after_its_secret_went(monkeypatch: pytest.MonkeyPatch) -> None:
    """An Issued Target whose named Secret is gone is left as it is: the controller mints only
    for a Target without a token of its own making, for a rotation or before expiry."""
    reconcile = CredentialController.reconcile

    def broken(self: CredentialController, target: Obj) -> float:
        condition = find_condition(target, self.contract.condition_type) or {}
        named = self.contract.secret_named_in(str(condition.get("message", "")))
        meta = target["metadata"]
        held = {
            s["metadata"]["name"] for s in self.credential_secrets(meta["namespace"], meta["name"])
        }
        gone = condition.get("reason") == "Issued" and named is not None and named[1] not in held
        if gone and not _revoked(self, target) and self.config.apiserver_url:
            return self.config.resync_seconds
        return reconcile(self, target)

    monkeypatch.setattr(CredentialController, "reconcile", broken)


def never_binds_targets_made_before_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Profile controller binds only the Targets created after it first saw the Profile."""
    reconcile = ProfileController.reconcile
    before: dict[str, set[str]] = {}

    def broken(self: ProfileController, profile: Obj) -> None:
        namespace = profile["metadata"]["namespace"]
        present = {t["metadata"]["name"] for t in self.solar.list("Target", namespace)}
        older = before.setdefault(profile["metadata"]["uid"], present)
        solar = self.solar
        self.solar = _Hiding(solar, older)  # type: ignore[assignment]
        try:
            reconcile(self, profile)
        finally:
            self.solar = solar

    monkeypatch.setattr(ProfileController, "reconcile", broken)


class _Hiding:
    """A SolAr client whose Target lists leave out some names."""

    def __init__(self, solar: ClusterAPI, hidden: set[str]) -> None:
        self.solar, self.hidden = solar, hidden

    def list(self, kind: str, namespace: str | None = None, **options: Any) -> list[Obj]:
        found = self.solar.list(kind, namespace, **options)
        if kind != "Target":
            return found
        return [obj for obj in found if obj["metadata"]["name"] not in self.hidden]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.solar, name)


def never_renders_targets_made_before_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    """The renderer never renders a Target it first saw without its Registry."""
    render = Renderer.render_target
    skipped: set[str] = set()

    def broken(self: Renderer, target: Obj) -> None:
        uid = target["metadata"]["uid"]
        if uid not in skipped and self.registry_of(target) is None:
            skipped.add(uid)
        if uid not in skipped:
            render(self, target)

    monkeypatch.setattr(Renderer, "render_target", broken)


def keeps_revoked_after_the_value_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once revoked, a Target stays revoked while the annotation is there, whatever its value."""
    reconcile = CredentialController.reconcile
    revoked: set[str] = set()

    def broken(self: CredentialController, target: Obj) -> float:
        notes = annotations_of(target)
        annotation = self.contract.revocation_annotation
        uid = target["metadata"]["uid"]
        if _revoked(self, target):
            revoked.add(uid)
        elif annotation not in notes:
            revoked.discard(uid)
        elif uid in revoked:
            target = {
                **target,
                "metadata": {
                    **target["metadata"],
                    "annotations": {**notes, annotation: self.contract.revoked_value},
                },
            }
        return reconcile(self, target)

    monkeypatch.setattr(CredentialController, "reconcile", broken)


def deletes_the_old_secret_late(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a new token is named, the old Secret goes only 20 s later."""
    mint = CredentialController.mint_token
    reconcile = CredentialController.reconcile
    delete = CredentialController.delete_token_secrets
    kept_until: dict[str, datetime] = {}  # Secret uid -> not deleted before
    minting = [False]

    def noting(self: CredentialController, *args: Any) -> float:
        minting[0] = True
        try:
            return mint(self, *args)
        finally:
            minting[0] = False

    def later(self: CredentialController, secrets_: list[Obj]) -> None:
        now = self.clock.now()
        if minting[0]:
            for secret in secrets_:
                kept_until.setdefault(secret["metadata"]["uid"], now + LATE)
        due = [s for s in secrets_ if kept_until.get(s["metadata"]["uid"], now) <= now]
        delete(self, due)

    def woken_when_due(self: CredentialController, target: Obj) -> float:
        delay = reconcile(self, target)
        now = self.clock.now()
        waits = [(at - now).total_seconds() for at in kept_until.values() if at > now]
        return min([delay, *waits])

    monkeypatch.setattr(CredentialController, "mint_token", noting)
    monkeypatch.setattr(CredentialController, "delete_token_secrets", later)
    monkeypatch.setattr(CredentialController, "reconcile", woken_when_due)


def revokes_late(monkeypatch: pytest.MonkeyPatch) -> None:
    """The controller acts on the revocation annotation only 20 s after it first saw it."""
    reconcile = CredentialController.reconcile
    seen: dict[str, datetime] = {}

    def broken(self: CredentialController, target: Obj) -> float:
        uid = target["metadata"]["uid"]
        if not _revoked(self, target):
            seen.pop(uid, None)
            return reconcile(self, target)
        first = seen.setdefault(uid, self.clock.now())
        if self.clock.now() < first + LATE:
            notes = {**annotations_of(target)}
            notes.pop(self.contract.revocation_annotation)
            unrevoked = {**target, "metadata": {**target["metadata"], "annotations": notes}}
            delay = reconcile(self, unrevoked)
            return min(delay, (first + LATE - self.clock.now()).total_seconds())
        return reconcile(self, target)

    monkeypatch.setattr(CredentialController, "reconcile", broken)


def makes_the_report_anew_on_revoke(monkeypatch: pytest.MonkeyPatch) -> None:
    """Revoking deletes the TargetReport; the next pass makes it again, empty."""
    reconcile = CredentialController.reconcile
    reset: set[str] = set()

    def broken(self: CredentialController, target: Obj) -> float:
        uid = target["metadata"]["uid"]
        if _revoked(self, target) and uid not in reset:
            reset.add(uid)
            meta = target["metadata"]
            self.solar.delete("TargetReport", meta["name"], meta["namespace"])
        elif not _revoked(self, target):
            reset.discard(uid)
        return reconcile(self, target)

    monkeypatch.setattr(CredentialController, "reconcile", broken)


FAULTS: dict[str, tuple[Patch, str]] = {
    "the controller keeps the token Secret of a revoked Target": (
        keeps_the_secret_on_revoke,
        "beyond the authentication cache window from the annotation set",
    ),
    "the API server accepts a token long after its Secret went": (
        caches_tokens_forever,
        "beyond the authentication cache window",
    ),
    "the controller ignores an unset apiserverURL": (
        ignores_the_unset_url,
        "beyond the authentication cache window from the apiserverURL unset",
    ),
    "the Role lets an agent read every Target of its namespace": (
        grants_every_target,
        "may read the Target of",
    ),
    "revoking a Target takes the token of its namesake in another namespace": (
        takes_the_namesakes_token_on_revoke,
        "though nothing asked for a new one; the step was revoke of",
    ),
    "the controller never mints again after the token Secret was deleted": (
        never_remints_after_its_secret_went,
        "a token Secret exactly when Issued",
    ),
    "a Target made before its namespace was set up is never bound": (
        never_binds_targets_made_before_setup,
        "is bound to the agent Release",
    ),
    "a Target made before its namespace was set up is never rendered": (
        never_renders_targets_made_before_setup,
        "its agent could have had its token",
    ),
    "the controller keeps Revoked after the value changed in place": (
        keeps_revoked_after_the_value_changes,
        "AgentCredentialReady as the page's table says",
    ),
    "the old token Secret goes 20 s after the new one is named": (
        deletes_the_old_secret_late,
        "beyond the authentication cache window from the new Secret named",
    ),
    "the controller acts on a revocation 20 s late": (
        revokes_late,
        "beyond the authentication cache window from the annotation set",
    ),
    "revoking makes the TargetReport anew, empty": (
        makes_the_report_anew_on_revoke,
        "is empty now",
    ),
}


@pytest.fixture
def deadlines(pytestconfig: pytest.Config) -> dict[str, float]:
    return timeouts(pytestconfig)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_the_model_catches(
    monkeypatch: pytest.MonkeyPatch, deadlines: dict[str, float], fault: str
) -> None:
    patch, promise = FAULTS[fault]
    patch(monkeypatch)
    figures = Figures()
    with pytest.raises((AssertionError, WaitTimeout)) as caught:
        # Finding the fault is what counts here; the test below shows the shrinking.
        run(
            sim_starter(Contract(), deadlines, figures),
            SIM_BUDGET,
            figures,
            phases=[Phase.generate],
        )
    assert promise in str(caught.value), str(caught.value)


def test_a_failure_shrinks_to_a_short_readable_sequence(
    monkeypatch: pytest.MonkeyPatch, deadlines: dict[str, float]
) -> None:
    keeps_the_secret_on_revoke(monkeypatch)
    figures = Figures()
    with pytest.raises(AssertionError) as caught:
        run(sim_starter(Contract(), deadlines, figures), SIM_BUDGET, figures, fixed=False)
    steps = [
        line.strip()
        for line in getattr(caught.value, "__notes__", [])
        for line in str(line).splitlines()
        if line.strip().startswith("state.") and "the_page_holds" not in line
    ]
    assert any(step.startswith("state.revoke(") for step in steps), steps
    # set up, create, revoke, teardown; on a loaded machine Hypothesis's shrink budget may leave
    # one harmless step more (seen: a cut link before the Target exists), never a long sequence
    assert len(steps) <= 5, steps


def test_a_fixed_example_names_itself_and_its_steps(
    monkeypatch: pytest.MonkeyPatch, deadlines: dict[str, float]
) -> None:
    keeps_the_secret_on_revoke(monkeypatch)
    figures = Figures()
    with pytest.raises(AssertionError) as caught:
        run(sim_starter(Contract(), deadlines, figures), SIM_BUDGET, figures)
    notes = "\n".join(str(note) for note in getattr(caught.value, "__notes__", []))
    assert "fixed example 'a namesake keeps its credential" in notes, notes
    assert "revoke('alpha/cluster-1')" in notes, notes


def test_the_model_passes_on_the_reference_and_reaches_every_rule_and_state(
    deadlines: dict[str, float],
) -> None:
    figures = Figures()
    run(sim_starter(Contract(), deadlines, figures), SIM_BUDGET, figures)
    assert figures.examples == SIM_BUDGET.examples
    assert not missing(figures.fixed, figures.drawn), figures.table()
    assert len(figures.states) > 100, figures.line("sim")


def test_the_model_passes_a_solar_that_answers_an_early_rotation_request_after_the_first_token(
    monkeypatch: pytest.MonkeyPatch, deadlines: dict[str, float]
) -> None:
    """A rotation requested while the Target has no token named (Disabled, say, or its first
    condition not yet written) may be answered by the first token or by one more right after it.
    This controller keeps the requests it answered by rotating, mints a first token without
    counting it as an answer, and rotates for an open request a few seconds after a mint (the
    fixed example "a rotation requested before the first token is named")."""
    mint = CredentialController.mint_token
    needs = CredentialController.needs_new_token
    reconcile = CredentialController.reconcile
    answered: dict[str, str | None] = {}
    later = timedelta(seconds=5)

    def request_of(self: CredentialController, target: Obj) -> str | None:
        return annotations_of(target).get(self.contract.rotation_annotation)

    def mints(
        self: CredentialController,
        target: Obj,
        names: Any,
        labels: dict[str, str],
        current: Obj | None,
        held: list[Obj],
    ) -> float:
        if current is not None:  # a rotation: it answers the request
            answered[target["metadata"]["uid"]] = request_of(self, target)
        return mint(self, target, names, labels, current, held)

    def needs_new_token(self: CredentialController, target: Obj, secret: Obj) -> bool:
        notes = dict(annotations_of(target))
        notes.pop(self.contract.rotation_annotation, None)
        unasked = {**target, "metadata": {**target["metadata"], "annotations": notes}}
        if needs(self, unasked, secret):  # no token yet, or one due by its age
            return True
        issued = self.issued_at(secret)
        requested = request_of(self, target)
        open_request = (
            requested is not None and answered.get(target["metadata"]["uid"]) != requested
        )
        return open_request and issued is not None and self.clock.now() - issued >= later

    def soon_again(self: CredentialController, target: Obj) -> float:
        return min(reconcile(self, target), later.total_seconds())

    monkeypatch.setattr(CredentialController, "mint_token", mints)
    monkeypatch.setattr(CredentialController, "needs_new_token", needs_new_token)
    monkeypatch.setattr(CredentialController, "reconcile", soon_again)
    figures = Figures()
    run(sim_starter(Contract(), deadlines, figures), SIM_BUDGET, figures, phases=[Phase.generate])
