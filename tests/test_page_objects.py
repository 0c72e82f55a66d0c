"""The page's first-contact objects keep their shape for any valid names (property-based)."""

from __future__ import annotations

import json
from urllib.parse import urlparse

from hypothesis import given
from hypothesis import strategies as st

from solar_conformance.core.credentials import credentials_for
from solar_conformance.core.oci import HELM_CHART_LAYER
from solar_conformance.page.objects import FirstContact
from solar_conformance.plugin.names import Names, check_name

labels = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?", fullmatch=True)
hosts = st.from_regex(r"[a-z0-9]([-a-z0-9.]{0,30}[a-z0-9])?(:[1-9][0-9]{1,4})?", fullmatch=True)
secrets_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=30)


@given(hosts, labels, labels, labels, secrets_text, st.booleans())
def test_the_url_has_the_page_form(
    host: str, namespace: str, target: str, user: str, password: str, plain_http: bool
) -> None:
    page = FirstContact(host, namespace, target, user, password, plain_http)
    source = next(o for o in page.helmrelease() if o["kind"] == "OCIRepository")
    url = urlparse(source["spec"]["url"])
    assert (url.scheme, url.netloc, url.path) == ("oci", host, f"/{namespace}/bootstrap-{target}")
    assert source["spec"]["layerSelector"] == {"mediaType": HELM_CHART_LAYER, "operation": "copy"}
    assert source["spec"]["ref"] == {"semver": ">=0.0.0"}
    assert source["spec"].get("insecure", False) is plain_http
    assert all(o["metadata"]["namespace"] == namespace for o in page.helmrelease())


@given(hosts, labels, labels, secrets_text, secrets_text)
def test_regcred_holds_the_reader_for_exactly_the_registry(
    host: str, namespace: str, target: str, user: str, password: str
) -> None:
    user = user.replace(":", "") or "u"
    secret = FirstContact(host, namespace, target, user, password).regcred()
    config = secret["stringData"][".dockerconfigjson"]
    assert list(json.loads(config)["auths"]) == [host]
    assert credentials_for(config, host) == (user, password)
    assert (secret["type"], secret["metadata"]["name"]) == (
        "kubernetes.io/dockerconfigjson",
        "regcred",
    )


@given(labels.filter(lambda n: len(n) <= 40), st.text(min_size=1, max_size=20))
def test_scenario_names_stay_valid_namespaces(page_name: str, node_id: str) -> None:
    actual = Names.for_scenario(node_id, "run").namespace(page_name)
    assert check_name("namespace", actual, limit=63) == actual
    assert actual.startswith(f"{page_name}-")
