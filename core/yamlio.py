"""YAML with libyaml's C parser and emitter where present (several times faster)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
YAMLError = yaml.YAMLError


def load(text: str | bytes) -> Any:
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader


def load_all(text: str | bytes) -> Iterator[Any]:
    return iter(yaml.load_all(text, Loader=_LOADER))


def dump(value: Any, *, sort_keys: bool = False) -> str:
    return str(yaml.dump(value, Dumper=_DUMPER, sort_keys=sort_keys))
