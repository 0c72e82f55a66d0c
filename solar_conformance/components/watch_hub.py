"""One watch per kind and API server, however many parts of the harness listen to it.

The change feed that wakes scenarios' waits, the reference SolAr's work queues and the local
kubelet all want the events of the same kinds on the same clusters. Each listens through
`Listening`, which joins the hub of each API server (one per server URL in this process); the
hub opens one long-lived watch request per kind (the kubernetes client's `Watch`, all
namespaces) and hands every event to each listener of that kind. The watch stops when its last listener leaves, and the hub is forgotten when its last
watch stops, so a landscape that closes leaves no stream behind. A listener that joins a
running watch hears the events from then on, not the objects listed when it opened.

Each watch ends on the server's side after `RESYNC_SECONDS` and starts again; a watch that
breaks (410 Gone, the server restarting) starts again after `RETRY_SECONDS`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from kubernetes.watch import Watch
from urllib3.response import HTTPResponse

from solar_conformance.components.kube import KubeClusterAPI
from solar_conformance.core.api import kind_of

RESYNC_SECONDS = 300
RETRY_SECONDS = 1.0
JOIN_SECONDS = 5.0

# An event as the watch delivers it: its type (ADDED, MODIFIED, DELETED) and the object.
OnEvent = Callable[[str, dict[str, Any]], None]


class KindWatch:
    """One kind, all namespaces, on one API server: each event goes to every listener."""

    def __init__(self, api: KubeClusterAPI, kind: str) -> None:
        self.api = api
        self.kind = kind_of(kind)
        self.events = 0
        self.error: str | None = None  # the last reason a watch broke, for diagnostics
        self._listeners: list[OnEvent] = []
        self._listeners_lock = threading.Lock()
        self._stopped = threading.Event()
        self._response: HTTPResponse | None = None
        self._thread = threading.Thread(
            target=self._run, name=f"watch {self.kind.plural} {api.server}", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def add(self, listener: OnEvent) -> None:
        with self._listeners_lock:
            self._listeners.append(listener)

    def remove(self, listener: OnEvent) -> int:
        """Takes one listener away; returns how many are left."""
        with self._listeners_lock:
            self._listeners.remove(listener)
            return len(self._listeners)

    def _open(self, **params: Any) -> HTTPResponse:
        """The watch request; `Watch.stream` passes watch, resource_version, timeout_seconds."""
        query = [("watch", "true"), ("allowWatchBookmarks", "false")]
        if params.get("resource_version"):
            query.append(("resourceVersion", str(params["resource_version"])))
        query.append(("timeoutSeconds", str(params.get("timeout_seconds", RESYNC_SECONDS))))
        response = self.api.open_stream(self.api.path_of_all(self.kind), query)
        self._response = response
        if self._stopped.is_set():  # stopped while the request was on its way
            response.shutdown()
        return response

    def _run(self) -> None:
        while not self._stopped.is_set():
            watch = Watch()  # type: ignore[no-untyped-call]
            try:
                events = watch.stream(self._open, timeout_seconds=RESYNC_SECONDS)  # type: ignore[no-untyped-call]
                for event in events:
                    self.events += 1
                    obj = event.get("object")
                    self._hand_out(str(event.get("type")), obj if isinstance(obj, dict) else {})
                    if self._stopped.is_set():
                        watch.stop()  # type: ignore[no-untyped-call]
            except Exception as error:  # a broken watch starts again, whatever broke it
                if self._stopped.is_set():
                    return
                self.error = f"{type(error).__name__}: {error}"
                self._stopped.wait(RETRY_SECONDS)

    def _hand_out(self, type_: str, obj: dict[str, Any]) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(type_, obj)

    def stop(self) -> None:
        self._stopped.set()
        response = self._response
        if response is not None:
            response.shutdown()  # unblocks the read the thread waits in

    def join(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def describe(self) -> str:
        return f"{self.kind.plural} on {self.api.server}: {self.events} events" + (
            f", last error {self.error}" if self.error else ""
        )


class WatchHub:
    """The watches of one API server, keyed by kind."""

    def __init__(self, api: KubeClusterAPI) -> None:
        self.api = api
        self._watches: dict[str, KindWatch] = {}

    def listen(self, kind: str, listener: OnEvent) -> KindWatch:
        watch = self._watches.get(kind)
        if watch is None:
            watch = self._watches[kind] = KindWatch(self.api, kind)
            watch.add(listener)
            watch.start()
        else:
            watch.add(listener)
        return watch

    def leave(self, kind: str, listener: OnEvent) -> KindWatch | None:
        """Takes a listener away; returns the watch if that was its last listener (stopped,
        to be joined), else None."""
        watch = self._watches[kind]
        if watch.remove(listener):
            return None
        del self._watches[kind]
        watch.stop()
        return watch

    def __len__(self) -> int:
        return len(self._watches)


_hubs: dict[str, WatchHub] = {}
_hubs_lock = threading.Lock()


class Listening:
    """One listener's watches on one or more API servers; `close` leaves them all."""

    def __init__(
        self, sources: Iterable[tuple[KubeClusterAPI, Iterable[str]]], listener: OnEvent
    ) -> None:
        self._listener = listener
        self._joined: list[tuple[str, str]] = []  # (server, kind)
        self.watches: list[KindWatch] = []
        with _hubs_lock:
            for api, kinds in sources:
                hub = _hubs.setdefault(api.server, WatchHub(api))
                for kind in dict.fromkeys(kinds):
                    self.watches.append(hub.listen(kind, listener))
                    self._joined.append((api.server, kind))

    def close(self) -> None:
        stopped: list[KindWatch] = []
        with _hubs_lock:
            for server, kind in self._joined:
                hub = _hubs[server]
                last = hub.leave(kind, self._listener)
                if last is not None:
                    stopped.append(last)
                if not hub:
                    del _hubs[server]
            self._joined = []
        for watch in stopped:
            watch.join(JOIN_SECONDS)

    def describe(self) -> str:
        return "\n".join(watch.describe() for watch in self.watches)


def open_watches() -> int:
    """How many watch streams this process holds, for tests and diagnostics."""
    with _hubs_lock:
        return sum(len(hub) for hub in _hubs.values())
