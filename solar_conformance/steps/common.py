"""Parsing helpers shared by the step modules."""

from __future__ import annotations

import re

from solar_conformance.plugin.names import BadName

_QUOTED = re.compile(r'"([^"]*)"')


def quoted_names(text: str) -> list[str]:
    """`"a", "b" and "c"` -> ["a", "b", "c"]."""
    names = _QUOTED.findall(text)
    rest = _QUOTED.sub("", text).replace(",", " ").replace(" and ", " ").strip()
    if not names or rest:
        raise BadName(f'expected a list of quoted names like "a", "b" and "c", got: {text}')
    return names


def annotation(text: str) -> tuple[str, str]:
    """`key: value` as the page writes an annotation."""
    key, sep, value = text.partition(":")
    if not sep or not key.strip() or " " in key.strip():
        raise BadName(f'expected an annotation as "key: value", got: "{text}"')
    return key.strip(), value.strip()


def label_pairs(text: str) -> dict[str, str]:
    """`tier=edge,zone=b` as a Kubernetes label set."""
    pairs: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.strip().partition("=")
        if not sep or not key or " " in key or " " in value:
            raise BadName(f'expected labels as "key=value,key=value", got: "{text}"')
        pairs[key] = value
    return pairs
