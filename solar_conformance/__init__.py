"""SolAr agent-registration conformance: the page as feature files, their steps, the reference
simulators and the backends they run on, as a pytest plugin (solar_conformance.plugin)."""
