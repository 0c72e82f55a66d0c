"""Input files (the implementation profile, the landscape file, the ini file): each problem is one
line naming the file, the line and the key, what is wrong and what to write instead.

TOML is read with tomllib; the line of each key is found by a small scan of the text (tomllib keeps
no positions), so a problem points at the line to edit.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if (
    TYPE_CHECKING
):  # the agent image imports solar_conformance.core.contract, and carries no pydantic
    from pydantic import ValidationError

Key = tuple[str | int, ...]
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column \d+\)$")
_TOML_END = re.compile(r"\s*\(at end of document\)$")
# pydantic's type errors, said as a person would fix them.
TYPE_WORDS = {
    "string_type": "a string in quotes",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list [...]",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one input: where (a file and line, or an option), the key, what."""

    where: str
    key: str
    message: str

    def __str__(self) -> str:
        return (
            f"{self.where}: {self.key}: {self.message}"
            if self.key
            else (f"{self.where}: {self.message}")
        )


class BadInput(ValueError):
    """Input the harness refuses; str() is one line per problem."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    @property
    def lines(self) -> list[str]:
        return [str(problem) for problem in self.problems]


@dataclass(frozen=True)
class TomlFile:
    path: Path
    data: dict[str, Any]
    key_lines: Mapping[tuple[str, ...], int]

    def where(self, key: Key = ()) -> str:
        """`FILE:LINE` of the key, or of the nearest table that holds it."""
        names = tuple(str(part) for part in key if isinstance(part, str))
        while names and names not in self.key_lines:
            names = names[:-1]
        line = self.key_lines.get(names) if names else None
        return f"{self.path}:{line}" if line else str(self.path)

    def problem(self, key: Key, message: str) -> Problem:
        return Problem(self.where(key), dotted(key), message)


def dotted(key: Key) -> str:
    return ".".join(str(part) if isinstance(part, str) else f"[{part}]" for part in key).replace(
        ".[", "["
    )


def read_toml(path: Path, hint: str) -> TomlFile:
    """The file's data and the line of every key; BadInput when it cannot be read or parsed.
    `hint` says what the file should hold (shown when it is missing or not TOML)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput([Problem(str(path), "", f"no such file; give the path of {hint}")]) from None
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or type(error).__name__
        raise BadInput(
            [Problem(str(path), "", f"cannot read it ({reason}); make it a readable UTF-8 file")]
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        found = _TOML_POSITION.search(message)
        line = found.group(1) if found else str(max(1, len(text.splitlines())))
        message = _TOML_END.sub("", _TOML_POSITION.sub("", message))
        raise BadInput(
            [
                Problem(
                    f"{path}:{line}",
                    "",
                    f"not valid TOML ({message}); write key = value lines, strings in quotes: "
                    'name = "text"',
                )
            ]
        ) from None
    return TomlFile(path, data, key_lines(text))


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The line (1-based) of every table header and key = value line of a TOML text."""
    found: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    depth, closing = 0, ""
    for number, line in enumerate(text.splitlines(), start=1):
        if closing:
            if closing in line:
                closing = ""
            continue
        if depth > 0:
            depth = max(depth + _bracket_balance(line), 0)
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("["):
            inner = stripped.strip("[").split("]", 1)[0]
            table = split_key(inner) or table
            found.setdefault(table, number)
            continue
        head, equals, value = _split_assignment(stripped)
        parts = split_key(head) if equals else None
        if parts is None:
            continue
        found.setdefault((*table, *parts), number)
        for delimiter in ('"""', "'''"):
            if value.lstrip().startswith(delimiter) and value.count(delimiter) == 1:
                closing = delimiter
        if not closing:
            depth = max(_bracket_balance(value), 0)
    return found


def split_key(text: str) -> tuple[str, ...] | None:
    """A dotted TOML key (bare or quoted parts) as its parts; None when it is none."""
    parts: list[str] = []
    rest = text.strip()
    while rest:
        if rest[0] in "\"'":
            end = rest.find(rest[0], 1)
            if end < 0:
                return None
            parts.append(rest[1:end])
            rest = rest[end + 1 :].lstrip()
        else:
            bare = _BARE_KEY.match(rest)
            if not bare:
                return None
            parts.append(bare.group())
            rest = rest[bare.end() :].lstrip()
        if rest.startswith("."):
            rest = rest[1:].lstrip()
        elif rest:
            return None
    return tuple(parts) or None


def _split_assignment(line: str) -> tuple[str, str, str]:
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "=":
            return line[:index], "=", line[index + 1 :]
    return line, "", ""


def _bracket_balance(text: str) -> int:
    balance, quote = 0, ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            break
        elif char in "[{":
            balance += 1
        elif char in "]}":
            balance -= 1
    return balance


def did_you_mean(word: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def schema_problems(
    file: TomlFile,
    error: ValidationError,
    *,
    show_values: bool,
    known_keys: Mapping[tuple[str, ...], Sequence[str]] | None = None,
    examples: Mapping[str, str] | None = None,
    listed_in: str = "",
    reported: Iterable[Key] = (),
) -> list[Problem]:
    """pydantic's errors as problems of the file, one per error. Values are quoted only when
    `show_values` (never for a file that could hold a secret); `examples` (a key's line as it
    should be) are offered where the type is wrong; an unknown key is told the known ones, or the
    document `listed_in` that lists them. Errors under a key already `reported` are left out."""
    problems = []
    details = error.errors(include_url=False)
    misspelt = _missing_keys_written_otherwise(details, known_keys or {})
    reported = list(reported)
    for detail in details:
        key: Key = tuple(detail["loc"])
        kind = detail["type"]
        if kind == "missing" and key in misspelt:
            continue  # the unknown key that was meant as it says so
        if any(key[: len(done)] == done or done[: len(key)] == key for done in reported):
            continue  # said already, or holds what was
        value = f" = {_toml_text(detail['input'])}" if show_values else ""
        if kind == "extra_forbidden":
            table = tuple(str(p) for p in key[:-1])
            known = (known_keys or {}).get(table, ())
            hint = did_you_mean(str(key[-1]), known)
            listed = f"; the keys there are {', '.join(known)}" if known else ""
            listed = f"; {listed_in} lists the keys" if listed_in else listed
            message = f"unknown key{hint}{listed}"
        elif kind == "missing":
            message = "missing; add it"
        elif kind in TYPE_WORDS:
            message = f"{value.removeprefix(' = ') or 'the value'} is not {TYPE_WORDS[kind]}"
            example = (examples or {}).get(dotted(key))
            message += f"; write it like {example}" if example else ""
        elif kind == "literal_error":
            wanted = str(detail.get("ctx", {}).get("expected", ""))
            message = f"must be one of {wanted}"
        else:
            message = str(detail["msg"]).removeprefix("Value error, ")
        problems.append(file.problem(key, message))
    return problems


def _missing_keys_written_otherwise(
    details: Sequence[Any], known_keys: Mapping[tuple[str, ...], Sequence[str]]
) -> set[Key]:
    """Missing keys for which an unknown key of the same table is a near miss (one mistake)."""
    missing = {tuple(d["loc"]) for d in details if d["type"] == "missing"}
    found: set[Key] = set()
    for detail in details:
        key = tuple(detail["loc"])
        if detail["type"] != "extra_forbidden":
            continue
        table = tuple(str(p) for p in key[:-1])
        near = difflib.get_close_matches(str(key[-1]), known_keys.get(table, ()), n=1, cutoff=0.6)
        if near and (*key[:-1], near[0]) in missing:
            found.add((*key[:-1], near[0]))
    return found


def _toml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)
