"""The picture of the packages in docs/architecture.md (a mermaid flowchart) against the import
rule of tests/test_architecture.py: it draws every unit of the rule, no arrow the rule forbids,
no arrow between two units that no import makes, and every arrow an import makes.

An arrow from or to a box (a mermaid subgraph) stands for one from or to every unit in the box,
and says only what the rule allows ("every unit here may import core"); an arrow between two
units says that an import makes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

from tests.test_architecture import MAY_IMPORT, ROOT, P, edges, unit_of

DOCUMENT = ROOT / "docs" / "architecture.md"
NODE = r"(\w+)(?:\[\"([^\"]+)\"\])?"
SUBGRAPH = re.compile(rf"subgraph {NODE}")
DECLARATION = re.compile(NODE)
IDS = r"\w+(?:\s*&\s*\w+)*"
ARROW = re.compile(rf"({IDS})\s*-->\s*({IDS})")


@dataclass
class Picture:
    units: dict[str, str] = field(default_factory=dict)  # node id -> unit
    boxes: dict[str, set[str]] = field(default_factory=dict)  # box id -> node ids in it
    arrows: list[tuple[str, str, int]] = field(default_factory=list)  # (from, to, line)
    unreadable: list[str] = field(default_factory=list)

    def units_of(self, node: str) -> set[str]:
        if node in self.boxes:
            return {self.units[member] for member in self.boxes[node]}
        return {self.units.get(node, node)}


def _unit_of_label(label: str) -> str:
    return label if label == "features" or label.startswith("tests") else f"{P}.{label}"


def mermaid_block(document: str) -> list[str]:
    found = re.search(r"```mermaid\n(.*?)```", document, re.S)
    assert found, "docs/architecture.md has no mermaid picture"
    return found.group(1).splitlines()


def read_picture(lines: list[str]) -> Picture:
    picture = Picture()
    open_boxes: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith(("%%", "flowchart ")):
            continue
        if line == "end" and open_boxes:
            open_boxes.pop()
        elif subgraph := SUBGRAPH.fullmatch(line):
            open_boxes.append(subgraph.group(1))
            picture.boxes[subgraph.group(1)] = set()
        elif arrow := ARROW.fullmatch(line):
            for source in re.split(r"\s*&\s*", arrow.group(1)):
                for target in re.split(r"\s*&\s*", arrow.group(2)):
                    picture.arrows.append((source, target, number))
        elif declaration := DECLARATION.fullmatch(line):
            node, label = declaration.groups()
            picture.units[node] = _unit_of_label(label or node)
            for box in open_boxes:
                picture.boxes[box].add(node)
        else:
            picture.unreadable.append(f"line {number}: {line}")
    return picture


def picture_problems(lines: list[str]) -> list[str]:
    picture = read_picture(lines)
    problems = [f"cannot read {line}" for line in picture.unreadable]
    drawn = set(picture.units.values())
    problems += [f"draws {unit}, which is no unit of the rule" for unit in drawn - set(MAY_IMPORT)]
    problems += [f"leaves out {unit}" for unit in set(MAY_IMPORT) - drawn]
    made = {(unit_of(module), target): (module, imported) for module, imported, target in edges()}
    pictured = set()
    for source, target, number in picture.arrows:
        unknown = {source, target} - set(picture.units) - set(picture.boxes)
        if unknown:
            problems.append(f"line {number}: {sorted(unknown)} declared nowhere in the picture")
            continue
        between_units = source not in picture.boxes and target not in picture.boxes
        for importer in picture.units_of(source):
            for imported in picture.units_of(target):
                pictured.add((importer, imported))
                if imported not in MAY_IMPORT.get(importer, set()):
                    problems.append(f"draws {importer} --> {imported}, which the rule forbids")
                elif between_units and (importer, imported) not in made:
                    problems.append(f"draws {importer} --> {imported}, which no import makes")
    problems += [
        f"leaves out {importer} --> {imported}, which {module} makes (it imports {name})"
        for (importer, imported), (module, name) in sorted(made.items())
        if (importer, imported) not in pictured
    ]
    return problems


def test_the_picture_draws_the_rule_and_the_imports() -> None:
    problems = picture_problems(mermaid_block(DOCUMENT.read_text()))
    assert not problems, "docs/architecture.md's picture:\n" + "\n".join(problems)


def _changed(old: str, new: str) -> list[str]:
    lines = mermaid_block(DOCUMENT.read_text())
    assert sum(line.strip() == old for line in lines) == 1, f"the picture has no line {old!r}"
    return [line.replace(old, new) if line.strip() == old else line for line in lines]


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        # an arrow the rule forbids
        ("sim --> memory & reference", "sim --> memory & reference & local", "forbids"),
        # an arrow the rule allows and no import makes
        (
            "entry --> plugin & steps & report",
            "entry --> plugin & steps & report & core",
            "no import makes",
        ),
        # an arrow an import makes, left out
        ("sim --> memory & reference", "sim --> memory", "leaves out"),
        # a unit left out
        ('toolchain["provision.toolchain"]', "", "leaves out"),
        # what the check cannot read is a problem, not a pass
        ("sim --> memory & reference", "sim -.-> memory & reference", "cannot read"),
    ],
)
def test_the_check_sees_a_wrong_picture(old: str, new: str, problem: str) -> None:
    problems = picture_problems(_changed(old, new))
    assert any(problem in line for line in problems), problems
