"""The packages: solar_conformance and its sub-packages, and the page's feature files (the
checkout's features/ folder) as solar_conformance.features, so an installed harness carries them."""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["solar_conformance", "solar_conformance.*"]),
        "solar_conformance.features",
    ],
    package_dir={"solar_conformance.features": "features"},
)
