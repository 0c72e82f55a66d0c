"""The page's regcred for a Target as a registry client, which the pulls, the writes and the
catalog's steps act with."""

from __future__ import annotations

from solar_conformance.core.credentials import credentials_for
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.oci import RegistryClient
from solar_conformance.page.objects import FirstContact
from solar_conformance.plugin.actors import You


def regcred_client(landscape: Landscape, you: You, target: str) -> RegistryClient:
    """A registry client with the credentials of the page's regcred for this Target."""
    namespace = you.namespace_of(target)
    user, password = landscape.reader_credentials(namespace)
    page = FirstContact(landscape.registry.host, namespace, target, user, password)
    found = credentials_for(page.regcred()["stringData"][".dockerconfigjson"], page.registry_host)
    assert found is not None, "the page's regcred holds no credentials for the render registry"
    return landscape.registry_as(*found)
