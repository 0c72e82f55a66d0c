"""Root of the harness: the plugin (options, landscape, reporting) and the step library."""

pytest_plugins = [
    "fixtures.plugin.actors",
    "fixtures.plugin.implementation",
    "fixtures.plugin.failure_output",  # before hooks: its one-line errors and redaction come after
    "fixtures.plugin.concurrent",
    "fixtures.plugin.hooks",
    "fixtures.report.plugin",
    "steps.environment",
    "steps.operator",
    "steps.you",
    "steps.controller",
    "steps.renderer",
    "steps.flux",
    "steps.agent",
    "steps.scope",
    "steps.registry",
    "steps.faults",
]
# The mutation catalogue's plugin is not the product's: `python -m mutants` and
# `pytest -p mutants.plugin --solar-mutant=ID` load it (docs/mutants.md).
