"""The sim's pieces that keep the cost per Target flat: the indexed store, the per-object work
queues, and a loop guard that tells many busy loops from one that never lets time move."""

from __future__ import annotations

from solar_conformance.core.api import new_object
from solar_conformance.core.clock import VirtualClock
from solar_conformance.core.rbac import User
from solar_conformance.core.workqueue import KeyedLoop
from solar_conformance.simulators.memory.store import Store


def _secret(name: str, labels: dict[str, str], owner: str = "") -> dict[str, object]:
    obj = new_object("Secret", name, "ns", labels=labels)
    if owner:
        obj["metadata"]["ownerReferences"] = [{"kind": "Target", "name": owner, "uid": owner}]
    return obj


def test_the_store_finds_by_label_owner_and_subject_and_forgets_on_change() -> None:
    store = Store()
    store[("Secret", "ns", "a")] = _secret("a", {"t": "1"}, owner="u1")
    store[("Secret", "ns", "b")] = _secret("b", {"t": "2"})
    binding = new_object(
        "RoleBinding",
        "rb",
        "ns",
        subjects=[{"kind": "ServiceAccount", "name": "sa"}],
        roleRef={"kind": "Role", "name": "r"},
    )
    store[("RoleBinding", "ns", "rb")] = binding
    assert [o["metadata"]["name"] for o in store.select("Secret", "ns", {"t": "1"})] == ["a"]
    assert [o["metadata"]["name"] for o in store.owned_by("u1")] == ["a"]
    assert store.bound_to(User.service_account("ns", "sa")) == [binding]
    assert store.bound_to(User.service_account("other", "sa")) == []
    store[("Secret", "ns", "a")] = _secret("a", {"t": "2"})  # relabelled, owner gone
    assert [o["metadata"]["name"] for o in store.select("Secret", "ns", {"t": "2"})] == ["a", "b"]
    assert store.owned_by("u1") == []
    del store[("Secret", "ns", "b")]
    assert [o["metadata"]["name"] for o in store.select("Secret", None, {})] == ["a"]
    assert [o["metadata"]["name"] for o in store.in_namespace("ns")] == ["a", "rb"]


def test_a_keyed_loop_runs_only_the_keys_that_are_due() -> None:
    clock = VirtualClock()
    ran: list[list[str]] = []

    def work(keys: list[str]) -> list[tuple[str, float | None]]:
        ran.append(sorted(keys))
        return [(key, 10.0 if key == "slow" else None) for key in keys]

    loop: KeyedLoop[str] = KeyedLoop(clock, "work", work)
    loop.add("slow")
    loop.add("once")
    clock.advance(1)
    assert ran == [["once", "slow"]]
    clock.advance(5)
    assert ran == [["once", "slow"]], "nothing was due"
    clock.advance(5)
    assert ran == [["once", "slow"], ["slow"]], "only the key whose time came"
    loop.wake()
    clock.advance(0)
    assert ran[-1] == ["slow"], "a forgotten key stays forgotten until an event names it"


def test_an_event_during_the_work_on_a_key_runs_it_again_instead_of_being_lost() -> None:
    """On a real backend a watch event can arrive while the key is being worked on (a token
    issued while its render ran): the work's own delay must not push that event back."""
    clock = VirtualClock()
    ran: list[list[str]] = []
    loop: KeyedLoop[str]

    def work(keys: list[str]) -> list[tuple[str, float | None]]:
        ran.append(sorted(keys))
        if len(ran) == 1:
            loop.add("a")  # the event, while "a" is worked on
        return [(key, 30.0) for key in keys]

    loop = KeyedLoop(clock, "work", work)
    loop.add("a")
    loop.add("b")
    clock.advance(1)
    assert ran == [["a", "b"], ["a"]], "the event ran a again at once; b waits its 30 s"
    clock.advance(20)
    assert ran == [["a", "b"], ["a"]]
    clock.advance(20)
    assert ran == [["a", "b"], ["a"], ["a", "b"]]


def test_many_loops_busy_at_one_instant_are_progress_not_livelock() -> None:
    clock = VirtualClock()
    runs = [0]
    loops = []

    def body() -> float:
        runs[0] += 1
        return 5.0

    for index in range(3 * VirtualClock.MAX_RUNS_PER_LOOP_PER_INSTANT):
        loops.append(clock.start_loop(f"agent {index}", body))
    clock.advance(0)
    assert runs[0] == len(loops)
