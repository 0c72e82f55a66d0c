"""YAML with libyaml's C parser and emitter where present (several times faster).

A sim with thousands of Targets dumps and parses the same shapes again and again: every Target's
charts are rendered to YAML by the renderer and parsed back by Flux. Both directions are pure
functions of their input, so they are remembered by content: a dump by the marshalled value, a
parse by the exact text. A text this module dumped parses back to the value it was dumped from
(the safe dumper quotes whatever would resolve to another type), so a dump also remembers the
parse of its text. Results are handed out as fresh copies; the memory is bounded.
"""

from __future__ import annotations

import marshal
import re
import threading
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
YAMLError = yaml.YAMLError

# Entries, not bytes: a sim Target's charts and kubeconfig make about eight, and the renderer
# renders every Target of a batch before Flux parses them, so 10 000 Targets need about 80 000.
MAX_ENTRIES = 1 << 17
_DOCUMENT_START = re.compile(r"(?m)^---\n")
_K = TypeVar("_K")
_V = TypeVar("_V")


class _Memo(Generic[_K, _V]):
    """A bounded map that drops its oldest entry first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: dict[_K, _V] = {}
        self._lock = threading.Lock()

    def get(self, key: _K) -> _V | None:
        return self._entries.get(key)

    def put(self, key: _K, value: _V) -> None:
        with self._lock:
            if key not in self._entries and len(self._entries) >= self.limit:
                del self._entries[next(iter(self._entries))]
            self._entries[key] = value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_PARSED: _Memo[str, bytes] = _Memo(MAX_ENTRIES)  # text -> its one document, marshalled
_DUMPED: _Memo[tuple[bool, bytes], str] = _Memo(MAX_ENTRIES)  # (sort_keys, marshalled) -> text


def _marshal(value: Any) -> bytes | None:
    try:
        return marshal.dumps(value)
    except ValueError:  # not plain data (a date, a custom type): not remembered
        return None


def _text(text: str | bytes) -> str | None:
    if isinstance(text, str):
        return text
    try:
        return text.decode()
    except UnicodeDecodeError:  # another encoding: the parser finds out which
        return None


def load(text: str | bytes) -> Any:
    key = _text(text)
    known = _PARSED.get(key) if key is not None else None
    if known is not None:
        return marshal.loads(known)  # noqa: S302 - bytes this module marshalled itself
    value = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    packed = _marshal(value)
    if key is not None and packed is not None:
        _PARSED.put(key, packed)
    return value


def load_all(text: str | bytes) -> Iterator[Any]:
    """The documents of a stream. A stream of documents this module dumped, joined by `---`
    lines, is answered from memory: a `---` line at column 0 always ends a document."""
    key = _text(text)
    pieces = _DOCUMENT_START.split(key) if key is not None else []
    if pieces and pieces[0] == "":
        pieces = pieces[1:]
    known = [_PARSED.get(piece) for piece in pieces if piece]
    if pieces and len(known) == len(pieces) and all(k is not None for k in known):
        return iter([marshal.loads(k) for k in known if k is not None])  # noqa: S302
    return iter(yaml.load_all(text, Loader=_LOADER))


def dump(value: Any, *, sort_keys: bool = False) -> str:
    packed = _marshal(value)
    if packed is None:
        return str(yaml.dump(value, Dumper=_DUMPER, sort_keys=sort_keys))
    known = _DUMPED.get((sort_keys, packed))
    if known is not None:
        return known
    text = str(yaml.dump(value, Dumper=_DUMPER, sort_keys=sort_keys))
    _DUMPED.put((sort_keys, packed), text)
    _PARSED.put(text, packed)
    return text


def forget() -> None:
    """Drop what was remembered (for tests that count parses)."""
    _PARSED.clear()
    _DUMPED.clear()
