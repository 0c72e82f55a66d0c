"""The in-memory API server's object store, indexed the way its requests look objects up.

By kind and namespace (lists), by label (label selectors), by owner uid (garbage collection) and
by RBAC subject (authorization): each request visits the objects it concerns, not every object
of the cluster, so the cost of a request does not grow with the number of Targets.
"""

from __future__ import annotations

import marshal
from collections.abc import Hashable, Iterator
from typing import TypeVar

from solar_conformance.core.api import Obj
from solar_conformance.core.rbac import User
from solar_conformance.simulators.memory.objects import key_of, walk_clone

Key = tuple[str, str | None, str]
_K = TypeVar("_K", bound=Hashable)


def subject_keys(binding: Obj) -> set[str]:
    """How a RoleBinding or ClusterRoleBinding names its subjects, as `User.names` spells them."""
    namespace = binding["metadata"].get("namespace")
    keys: set[str] = set()
    for subject in binding.get("subjects") or []:
        kind, name = subject.get("kind"), subject.get("name")
        if kind == "ServiceAccount":
            keys.add(f"user:system:serviceaccount:{subject.get('namespace') or namespace}:{name}")
        elif kind == "User":
            keys.add(f"user:{name}")
        elif kind == "Group":
            keys.add(f"group:{name}")
    return keys


def user_keys(user: User) -> list[str]:
    return [f"user:{user.name}", *(f"group:{group}" for group in user.groups)]


class Store:
    def __init__(self) -> None:
        self._by_key: dict[Key, Obj] = {}
        self._by_kind_namespace: dict[tuple[str, str | None], dict[str, Obj]] = {}
        self._by_label: dict[tuple[str, str, str], set[Key]] = {}
        self._by_owner: dict[str, set[Key]] = {}
        self._by_subject: dict[str, set[Key]] = {}
        self._by_namespace: dict[str, set[Key]] = {}
        # id(stored object) -> its marshalled form, made when it is first copied out. A stored
        # object is never changed in place (a write stores a new one), so the form stays valid
        # until the object leaves the store; readers get copies by unmarshalling alone. Only an
        # object the store holds is remembered: an id outlives nothing, and a form kept for an
        # object already replaced (a watcher wrote again before its writer copied it out) would
        # be handed out for whichever new object later gets the same id.
        self._packed: dict[int, bytes] = {}

    # --- the mapping ---------------------------------------------------------------------------
    def get(self, key: Key) -> Obj | None:
        return self._by_key.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def __len__(self) -> int:
        return len(self._by_key)

    def __iter__(self) -> Iterator[Key]:
        return iter(self._by_key)

    def __setitem__(self, key: Key, obj: Obj) -> None:
        old = self._by_key.get(key)
        if old is not None:
            self._unindex(key, old)
            self._packed.pop(id(old), None)
        self._by_key[key] = obj
        self._index(key, obj)

    def __delitem__(self, key: Key) -> None:
        old = self._by_key.pop(key)
        self._unindex(key, old)
        self._packed.pop(id(old), None)

    def copy(self, obj: Obj) -> Obj:
        """A copy of an object this store holds (got from it, not yet replaced), for a reader."""
        packed = self._packed.get(id(obj))
        if packed is None:
            try:
                packed = marshal.dumps(obj)
            except ValueError:  # not plain data: copy by walking
                return walk_clone(obj)
            if self._by_key.get(key_of(obj)) is obj:
                self._packed[id(obj)] = packed
        copied: Obj = marshal.loads(packed)  # noqa: S302 - bytes this store marshalled itself
        return copied

    # --- lookups -------------------------------------------------------------------------------
    def select(self, kind: str, namespace: str | None, labels: dict[str, str]) -> list[Obj]:
        """The objects of a kind (in a namespace, or in all when None) carrying all `labels`."""
        if labels:
            keys = min(
                (self._by_label.get((kind, k, v), set()) for k, v in labels.items()), key=len
            )
            candidates = (self._by_key[key] for key in keys)
            found = [
                obj
                for obj in candidates
                if (namespace is None or obj["metadata"].get("namespace") == namespace)
                and all(self._labels(obj).get(k) == v for k, v in labels.items())
            ]
        elif namespace is not None:
            found = list(self._by_kind_namespace.get((kind, namespace), {}).values())
        else:
            found = [
                obj
                for (k, _), objects in self._by_kind_namespace.items()
                if k == kind
                for obj in objects.values()
            ]
        return sorted(found, key=_order)

    def of_kind(self, kind: str) -> list[Obj]:
        return self.select(kind, None, {})

    def owned_by(self, uid: str) -> list[Obj]:
        return sorted((self._by_key[k] for k in self._by_owner.get(uid, ())), key=_order)

    def in_namespace(self, namespace: str) -> list[Obj]:
        return sorted((self._by_key[k] for k in self._by_namespace.get(namespace, ())), key=_order)

    def bound_to(self, user: User) -> list[Obj]:
        """RoleBindings and ClusterRoleBindings with a subject naming the user or its groups."""
        keys: set[Key] = set()
        for name in user_keys(user):
            keys |= self._by_subject.get(name, set())
        return sorted((self._by_key[k] for k in keys), key=_order)

    # --- indexes -------------------------------------------------------------------------------
    @staticmethod
    def _labels(obj: Obj) -> dict[str, str]:
        return obj["metadata"].get("labels") or {}

    def _index(self, key: Key, obj: Obj) -> None:
        kind, namespace, name = key
        self._by_kind_namespace.setdefault((kind, namespace), {})[name] = obj
        for label in self._labels(obj).items():
            self._by_label.setdefault((kind, *label), set()).add(key)
        for ref in obj["metadata"].get("ownerReferences") or []:
            if ref.get("uid"):
                self._by_owner.setdefault(ref["uid"], set()).add(key)
        if kind in ("RoleBinding", "ClusterRoleBinding"):
            for subject in subject_keys(obj):
                self._by_subject.setdefault(subject, set()).add(key)
        if namespace is not None:
            self._by_namespace.setdefault(namespace, set()).add(key)

    def _unindex(self, key: Key, obj: Obj) -> None:
        kind, namespace, name = key
        objects = self._by_kind_namespace[(kind, namespace)]
        del objects[name]
        if not objects:
            del self._by_kind_namespace[(kind, namespace)]
        for label in self._labels(obj).items():
            _discard(self._by_label, (kind, *label), key)
        for ref in obj["metadata"].get("ownerReferences") or []:
            if ref.get("uid"):
                _discard(self._by_owner, ref["uid"], key)
        if kind in ("RoleBinding", "ClusterRoleBinding"):
            for subject in subject_keys(obj):
                _discard(self._by_subject, subject, key)
        if namespace is not None:
            _discard(self._by_namespace, namespace, key)


def _discard(index: dict[_K, set[Key]], at: _K, key: Key) -> None:
    keys = index.get(at)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[at]


def _order(obj: Obj) -> tuple[str, str]:
    meta = obj["metadata"]
    return (meta.get("namespace") or "", meta["name"])
