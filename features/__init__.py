"""The agent-registration page and its feature files, shipped with the harness as
solar_conformance.features."""
