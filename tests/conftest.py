from hypothesis import HealthCheck, Phase, settings

pytest_plugins = ["pytester"]

# Bounded and quick: the harness's own tests run in CI on two cores next to the feature files.
settings.register_profile(
    "harness",
    max_examples=60,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("harness")
