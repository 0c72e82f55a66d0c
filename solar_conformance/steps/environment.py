"""The systems every scenario starts from."""

from __future__ import annotations

from pytest_bdd import given

from solar_conformance.core.landscape import Landscape
from solar_conformance.core.oci import RegistryError


@given("a SolAr cluster, a render registry and a target cluster")
def systems_answer(landscape: Landscape) -> None:
    assert landscape.solar.list("Namespace") is not None, "the SolAr API server does not answer"
    assert landscape.target.list("Namespace") is not None, "the target API server does not answer"
    pusher = landscape.registry_as(*landscape.push_credentials())
    try:
        pusher.tags("conformance/probe")
    except RegistryError as error:
        assert error.status == 404, f"the render registry does not answer as a registry: {error}"
