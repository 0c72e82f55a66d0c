"""Semantic versions and constraints as Flux's OCIRepository `ref.semver` reads them.

source-controller uses Masterminds' semver: `||` between alternatives, `,` or spaces between the
comparators of one alternative, `^` and `~`, hyphen ranges (`1.2 - 1.4`), wildcards (`1.x`,
`*`), `!=`, and a leading `v` on tags. A pre-release tag matches only an alternative that names a
pre-release itself; inside such an alternative it is compared like any version. semantic_version
parses and orders the versions (pre-release precedence included); the comparators are expanded
as Masterminds documents them (`^1.2` is `>=1.2.0 <2.0.0`, `~1.2.3` is `>=1.2.3 <1.3.0`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import semantic_version

Version = tuple[int, int, int, tuple[tuple[int, int | str], ...]]

_TAG = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_SPACE_AFTER_OPERATOR = re.compile(r"(>=|<=|!=|>|<|=|~>|~|\^)\s+")


def parse_version(text: str) -> Version | None:
    """A tag as a sortable tuple (major, minor, patch, pre-release ids); None if not a version."""
    found = _TAG.match(text)
    if found is None:
        return None
    major, minor, patch, pre = found.groups()
    ids: tuple[tuple[int, int | str], ...] = (
        tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split(".")) if pre else ()
    )
    return (int(major), int(minor), int(patch), ids)


def _version(text: str) -> semantic_version.Version | None:
    if _TAG.match(text) is None:
        return None
    try:
        return semantic_version.Version(text.removeprefix("v"))
    except ValueError:  # e.g. a numeric pre-release with a leading zero: Flux skips such tags
        return None


Comparator = tuple[str, semantic_version.Version]
_TOKEN = re.compile(
    r"^(>=|<=|!=|>|<|=|~>|~|\^)?v?([0-9xX*]+(?:\.[0-9xX*]+){0,2}(?:-[0-9A-Za-z.-]+)?)$"
)
_OPERATORS = {
    ">=": lambda v, t: v >= t,
    ">": lambda v, t: v > t,
    "<=": lambda v, t: v <= t,
    "<": lambda v, t: v < t,
    "=": lambda v, t: v == t,
    "!=": lambda v, t: v != t,
}


def _parts(text: str) -> tuple[list[int], str]:
    """Numbers given (a wildcard ends them) and the pre-release."""
    core, _, pre = text.partition("-")
    numbers: list[int] = []
    for part in core.split("."):
        if part in ("x", "X", "*"):
            break
        numbers.append(int(part))
    return numbers, pre


def _at(numbers: list[int], pre: str = "") -> semantic_version.Version:
    major, minor, patch = [*numbers, 0, 0, 0][:3]
    return semantic_version.Version(f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else ""))


def _next(numbers: list[int], position: int) -> semantic_version.Version:
    """The first version past `numbers` at `position` (0 major, 1 minor, 2 patch)."""
    bumped = [*numbers, 0, 0, 0][: position + 1]
    bumped[position] += 1
    return _at(bumped)


def _expand(token: str) -> list[Comparator]:
    """One Masterminds comparator as plain ones (>=, <, ...), as its documentation defines them."""
    found = _TOKEN.match(token)
    if found is None:
        raise ValueError(f"invalid semver constraint: {token!r}")
    operator, version = found.group(1) or "", found.group(2)
    numbers, pre = _parts(version)
    low = _at(numbers, pre)
    if operator in ("", "=") and len(numbers) < 3:  # 1.2, 1.x, *: a wildcard range
        return [(">=", low), ("<", _next(numbers, len(numbers) - 1))] if numbers else []
    if operator in ("~", "~>"):
        return [(">=", low), ("<", _next(numbers, 0 if len(numbers) == 1 else 1))]
    if operator == "^":
        significant = next((i for i, n in enumerate(numbers) if n != 0), len(numbers) - 1)
        return [(">=", low), ("<", _next(numbers, max(significant, 0)))]
    if len(numbers) < 3 and operator in (">", "<="):  # >1.2 means past every 1.2.x
        return [(">=" if operator == ">" else "<", _next(numbers, len(numbers) - 1))]
    return [(operator or "=", low)]


class _Alternative:
    """One `||`-separated part: comparators that must all hold."""

    def __init__(self, text: str) -> None:
        normal = _SPACE_AFTER_OPERATOR.sub(lambda m: m.group(1), text.replace(",", " "))
        tokens = normal.split()
        self.comparators: list[Comparator] = []
        index = 0
        while index < len(tokens):
            if index + 2 < len(tokens) and tokens[index + 1] == "-":  # a hyphen range
                low_numbers, low_pre = _parts(tokens[index].removeprefix("v"))
                numbers, pre = _parts(tokens[index + 2].removeprefix("v"))
                upper: Comparator = (
                    ("<=", _at(numbers, pre))
                    if len(numbers) == 3
                    else ("<", _next(numbers, len(numbers) - 1))
                )
                self.comparators += [(">=", _at(low_numbers, low_pre)), upper]
                index += 3
                continue
            if tokens[index] == "-":
                raise ValueError(f"invalid semver constraint: {text.strip()!r}")
            self.comparators += _expand(tokens[index])
            index += 1
        # A pre-release named anywhere in the alternative lets pre-releases in.
        self.allows_pre = any(target.prerelease for _, target in self.comparators)

    def matches(self, version: semantic_version.Version) -> bool:
        if version.prerelease and not self.allows_pre:
            return False
        return all(_OPERATORS[op](version, target) for op, target in self.comparators)


def constraint(text: str) -> list[_Alternative]:
    """Parses a constraint; ValueError names what is wrong."""
    if not text.strip():
        raise ValueError("empty semver constraint")
    return [_Alternative(part) for part in text.split("||")]


def matches_constraint(tag: str, text: str) -> bool:
    version = _version(tag)
    return version is not None and any(a.matches(version) for a in constraint(text))


def highest_matching(tags: list[str], text: str) -> str | None:
    """The highest tag that satisfies the constraint (as source-controller picks), or None."""
    alternatives = constraint(text)
    candidates = [
        (version, tag)
        for tag in tags
        if (version := _version(tag)) is not None and any(a.matches(version) for a in alternatives)
    ]
    return max(candidates)[1] if candidates else None


def highest(tags: list[str]) -> str | None:
    """The highest tag that is a version, pre-releases included; None if there is none."""
    candidates = [(version, tag) for tag in tags if (version := _version(tag)) is not None]
    return max(candidates)[1] if candidates else None


def tag_for_ref(tags: list[str], ref: Mapping[str, object]) -> str:
    """The tag an OCIRepository's `spec.ref` selects, as source-controller picks it: `semver`
    (the highest match) takes precedence over `tag`; neither means `latest`."""
    wanted = ref.get("semver")
    if not wanted:
        return str(ref.get("tag") or "latest")
    tag = highest_matching(tags, str(wanted))
    if tag is None:
        raise ValueError(f"no match found for semver: {wanted}")
    return tag
