"""Root of the harness: the plugin (options, landscape, reporting) and the step library."""

pytest_plugins = [
    "fixtures.plugin.actors",
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
