"""What regcred can list and read: the repositories of its own namespace, and nothing that holds
SolAr's push credentials."""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from solar_conformance.core.landscape import Landscape
from solar_conformance.core.oci import RegistryError
from solar_conformance.core.redact import holds
from solar_conformance.page.charts import artifact_texts
from solar_conformance.plugin.actors import You
from solar_conformance.plugin.names import Names
from solar_conformance.steps.registry._regcred import regcred_client
from solar_conformance.steps.renderer import pusher


@when(
    parsers.parse('I ask for the catalog with the regcred of "{reader}"'), target_fixture="listing"
)
def catalog_with_regcred(landscape: Landscape, you: You, reader: str) -> list[str] | RegistryError:
    try:
        return regcred_client(landscape, you, reader).catalog()
    except RegistryError as error:
        return error


@then(
    parsers.parse(
        'the render registry lists the repositories of namespace "{namespace}" and none of '
        "another namespace"
    )
)
def catalog_limited(
    landscape: Landscape, names: Names, listing: list[str] | RegistryError, namespace: str
) -> None:
    """As zot answers: the catalog filtered to what regcred may read, which is `<namespace>/**`."""
    assert not isinstance(listing, RegistryError), f"regcred's catalog was refused: {listing}"
    everything = pusher(landscape).catalog()
    own = f"{names.namespace(namespace)}/"
    assert any(not r.startswith(own) for r in everything), (
        f"the registry holds nothing outside {own}, so this check could not fail: {everything}"
    )
    foreign = [r for r in listing if not r.startswith(own)]
    assert foreign == [], f"regcred's catalog lists repositories of other namespaces: {foreign}"
    unlisted = [r for r in everything if r.startswith(own) and r not in listing]
    assert listing and not unlisted, f"regcred's catalog leaves out {unlisted or 'everything'}"


@then(parsers.parse('nothing the regcred of "{reader}" can read holds SolAr\'s push credentials'))
def regcred_reads_no_push_credentials(
    landscape: Landscape, you: You, names: Names, reader: str
) -> None:
    """Every repository regcred may read (its catalog), every tag, its manifest, config and the
    files of every layer: none holds the push user's password, as it is or base64-encoded (a
    dockerconfigjson's auth), or regcred could write wherever SolAr writes."""
    client = regcred_client(landscape, you, reader)
    _, password = landscape.push_credentials()
    listing = [r for r in client.catalog() if not names.of_another_scenario(r.split("/", 1)[0])]
    assert listing, f"the regcred of {reader} reads no repository, so this check could not fail"
    holding = sorted(
        {
            f"{repository}:{tag}"
            for repository in listing
            for tag, text in artifact_texts(client, repository)
            if holds(text, password)
        }
    )
    assert holding == [], f"regcred of {reader} reads SolAr's push password in {holding}"
