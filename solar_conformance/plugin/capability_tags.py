"""A scenario's `@needs-*` tags say exactly what its steps need, so they cannot drift apart.

The step definitions declare what they need (`needs`, solar_conformance/core/capabilities.py); a
scenario that uses such a step (in its Background too; an outline in any row of its Examples)
carries the capability's tag on itself, its Rule or its Feature, and carries no such tag none of
its steps needs (it would be skipped for nothing). One line per mistake, at the scenario's line.
An outline's tag stands for the rows that need it: the plugin skips only those
(solar_conformance/plugin/capabilities.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pytest_bdd.scenario import scenario_wrapper_template_registry
from pytest_bdd.steps import step_function_context_registry

from solar_conformance.core.capabilities import STEP_NEEDS, Capability

Node = dict[str, Any]
BDD_EXAMPLE = "_pytest_bdd_example"  # pytest-bdd's parameter: the row of an outline's Examples


def _step_needs() -> list[tuple[Any, frozenset[Capability]]]:
    """Each declared step's parser with what it needs."""
    return [
        (context.parser, STEP_NEEDS[context.step_func])
        for context in list(step_function_context_registry.values())
        if context.step_func in STEP_NEEDS
    ]


def steps_need(texts: list[str]) -> dict[Capability, str]:
    """What these step texts need, each capability with the first step that needs it."""
    declared = _step_needs()
    needed: dict[Capability, str] = {}
    for text in texts:
        for parser, capabilities in declared:
            if parser.is_matching(text):
                for capability in capabilities:
                    needed.setdefault(capability, text)
    return needed


def _tags(node: Node) -> set[str]:
    return {str(tag["name"]).removeprefix("@") for tag in node.get("tags") or []}


def _texts(node: Node) -> list[str]:
    return [str(step.get("text", "")) for step in node.get("steps") or []]


def _scenarios(
    node: Node, tags: set[str], texts: list[str]
) -> Iterator[tuple[Node, set[str], list[str]]]:
    """Every scenario under `node` with its inherited tags and the Background steps it runs."""
    own = list(texts)
    for child in node.get("children") or []:
        if "background" in child:
            own += _texts(child["background"])
    for child in node.get("children") or []:
        if "rule" in child:
            yield from _scenarios(child["rule"], tags | _tags(child["rule"]), own)
        elif "scenario" in child:
            scenario = child["scenario"]
            yield scenario, tags | _tags(scenario), own + _texts(scenario)


def _rendered(scenario: Node, texts: list[str]) -> list[str] | None:
    """The step texts as they run: an outline's once per row of its Examples (None when it has
    none)."""
    rows: list[dict[str, str]] = []
    for table in scenario.get("examples") or []:
        header = [
            str(cell["value"]) for cell in (table.get("tableHeader") or {}).get("cells") or []
        ]
        for row in table.get("tableBody") or []:
            rows.append(dict(zip(header, (str(c["value"]) for c in row["cells"]), strict=False)))
    if not rows:
        outline = str(scenario.get("keyword", "")).strip() in (
            "Scenario Outline",
            "Scenario Template",
        )
        return None if outline else texts
    rendered = []
    for row in rows:
        for text in texts:
            for column, value in row.items():
                text = text.replace(f"<{column}>", value)
            rendered.append(text)
    return rendered


def capability_tag_problems(feature: Node) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for scenario, tags, texts in _scenarios(feature, _tags(feature), []):
        name, line = str(scenario.get("name", "")), int(scenario["location"]["line"])
        rendered = _rendered(scenario, texts)
        if rendered is None:  # an outline without rows: that is the mistake to report
            continue
        needed = steps_need(rendered)
        tagged = {capability for capability in Capability if capability.tag in tags}
        for capability in sorted(set(needed) - tagged):
            found.append(
                (
                    line,
                    f"scenario {name!r} uses `{needed[capability]}`, which needs "
                    f"{capability.human_name}: tag it (or its Rule) @{capability.tag}",
                )
            )
        for capability in sorted(tagged - set(needed)):
            found.append(
                (
                    line,
                    f"scenario {name!r} is tagged @{capability.tag}, but none of its steps needs "
                    f"{capability.human_name}: remove the tag, or it is skipped for nothing",
                )
            )
    return found


def needed(item: pytest.Item) -> list[Capability]:
    """The capabilities a test's tags (or a plain test's marks) say it needs; for a row of a
    Scenario Outline, those of its tags that its own steps need (the Disabled row of a table
    needs controller.agent.apiserverURL changed, the Issued row does not)."""
    tagged = [c for c in Capability if item.get_closest_marker(c.tag) is not None]
    callspec = getattr(item, "callspec", None)
    example = callspec.params.get(BDD_EXAMPLE) if callspec is not None else None
    if not tagged or not example:
        return tagged
    function: Any = getattr(item, "obj", None)
    try:
        template = scenario_wrapper_template_registry.get(function)
    except TypeError:  # no weak key: no scenario
        return tagged
    if template is None:
        return tagged
    own = steps_need([step.name for step in template.render(example).steps])
    return [c for c in tagged if c in own]
