"""The in-memory store hands every reader a copy of what it holds now, whatever Python's ids."""

from __future__ import annotations

import gc

from solar_conformance.core.api import Obj
from solar_conformance.simulators.memory.store import Store

KEY = ("ConfigMap", "test", "settings")


def _config_map(name: str, value: str) -> Obj:
    return {
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "test"},
        "data": {"value": value},
    }


def test_a_copy_of_a_replaced_object_is_not_handed_out_for_a_new_one() -> None:
    """A writer copies out what it stored after a watcher already replaced it; that object is
    freed and its id goes to a new object, which a reader must see as it is."""
    store = Store()
    first = _config_map("settings", "first")
    store[KEY] = first
    store[KEY] = _config_map("settings", "second")  # a watcher wrote again
    assert store.copy(first)["data"] == {"value": "first"}  # the writer's late copy
    freed = id(first)
    metadata, data = {"name": "other", "namespace": "test"}, {"value": "new"}
    del first
    gc.collect()
    kept: list[Obj] = []  # kept alive, so that each new candidate takes another id
    newest: Obj = {}
    while not kept or id(newest) != freed:
        assert len(kept) < 10_000, "no new object took the freed id"
        newest = {"kind": "ConfigMap", "metadata": metadata, "data": data}
        kept.append(newest)
    store[("ConfigMap", "test", "other")] = newest
    assert store.copy(newest)["data"] == {"value": "new"}


def test_a_stored_object_is_copied_as_stored_and_again_after_it_changes() -> None:
    store = Store()
    store[KEY] = _config_map("settings", "first")
    held = store.get(KEY)
    assert held is not None
    assert store.copy(held)["data"] == {"value": "first"}
    store[KEY] = _config_map("settings", "second")
    current = store.get(KEY)
    assert current is not None
    assert store.copy(current)["data"] == {"value": "second"}
