"""First contact (manual): you apply the page's regcred.yaml and helmrelease.yaml on the target
cluster, changed only where the page says; the page's objects as it writes them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pytest_bdd import given, parsers, then, when

from solar_conformance.core.api import ApiError, Obj, new_object
from solar_conformance.core.credentials import basic_auth
from solar_conformance.core.landscape import Landscape
from solar_conformance.page.objects import FirstContact, differences, page_objects
from solar_conformance.plugin.actors import You


@dataclass(frozen=True)
class WrittenHelmRelease:
    """The page's helmrelease.yaml as written out for one Target."""

    target: str
    source: Obj
    release: Obj


def first_contact_for(landscape: Landscape, you: You, target: str) -> FirstContact:
    namespace = you.namespace_of(target)
    user, password = landscape.reader_credentials(namespace)
    return FirstContact(
        landscape.registry.host, namespace, target, user, password, landscape.registry.plain_http
    )


@given(parsers.parse('I have run the first-contact step for "{target}"'))
@when(parsers.parse('I run the first-contact step for "{target}"'))
def first_contact(landscape: Landscape, you: You, target: str) -> None:
    """kubectl apply -n <ns> -f regcred.yaml; kubectl apply -n <ns> -f helmrelease.yaml"""
    page = first_contact_for(landscape, you, target)
    try:
        you.target.create(new_object("Namespace", page.namespace))
    except ApiError as error:
        if error.status != 409:
            raise
    objects = [page.regcred(), *page.helmrelease()]
    for obj in objects:
        you.target.create(obj)
    you.first_contact_objects[target] = objects
    you.first_contact_writes = len(you.target.writes)


@when(parsers.parse('I write the page\'s regcred for "{target}"'), target_fixture="page_regcred")
def write_regcred(landscape: Landscape, you: You, target: str) -> Obj:
    return first_contact_for(landscape, you, target).regcred()


@when(
    parsers.parse('I write the page\'s helmrelease.yaml for "{target}"'),
    target_fixture="page_helmrelease",
)
def write_helmrelease(landscape: Landscape, you: You, target: str) -> WrittenHelmRelease:
    objects = first_contact_for(landscape, you, target).helmrelease()
    by_kind = {o["kind"]: o for o in objects}
    return WrittenHelmRelease(target, by_kind["OCIRepository"], by_kind["HelmRelease"])


# What the page's sentence lets differ: "Replace the registry host, the namespace and the Target
# name with your values" (and the pull user, which is the operator's); plain HTTP adds `insecure`.
REPLACEABLE = {
    ("Secret", "metadata.namespace"),
    ("Secret", "stringData..dockerconfigjson"),
    ("OCIRepository", "metadata.namespace"),
    ("OCIRepository", "spec.url"),
    ("HelmRelease", "metadata.namespace"),
}


@then(
    parsers.parse(
        "the objects I applied differ from the page's only in the registry host, the namespace, "
        "the Target name and the pull credentials"
    )
)
def only_placeholders_replaced(landscape: Landscape, you: You) -> None:
    assert you.first_contact_objects, "the scenario made no first contact"
    allowed = set(REPLACEABLE)
    if landscape.registry.plain_http:
        allowed.add(("OCIRepository", "spec.insecure"))
    page = {o["kind"]: o for o in page_objects()}
    for target, applied in you.first_contact_objects.items():
        assert sorted(o["kind"] for o in applied) == sorted(page), f"{target}: applied {applied}"
        extra = [
            f"{obj['kind']}: {path}"
            for obj in applied
            for path in differences(page[obj["kind"]], obj)
            if (obj["kind"], path) not in allowed
        ]
        assert extra == [], f"first contact for {target} changed more than the page allows: {extra}"
        source = next(o for o in applied if o["kind"] == "OCIRepository")
        expected = f"oci://{landscape.registry.host}/{you.namespace_of(target)}/bootstrap-{target}"
        assert source["spec"]["url"] == expected, source["spec"]["url"]


@then("I have written nothing to the target cluster since first contact")
def nothing_written_since(you: You) -> None:
    assert you.first_contact_writes is not None, "the scenario made no first contact"
    later = [str(w) for w in you.target.writes[you.first_contact_writes :]]
    assert later == [], f"you wrote to the target cluster after first contact: {later}"


@then(parsers.parse('it is a Secret "{name}" of type "{secret_type}"'))
def regcred_is_secret(page_regcred: Obj, name: str, secret_type: str) -> None:
    seen = (page_regcred["kind"], page_regcred["metadata"]["name"], page_regcred.get("type"))
    assert seen == ("Secret", name, secret_type), f"the page's regcred is {seen}"


def _auths(page_regcred: Obj) -> dict[str, Any]:
    config = json.loads(page_regcred["stringData"][".dockerconfigjson"])
    return dict(config["auths"])


@then("its only entry is for the render registry host")
def regcred_host(landscape: Landscape, page_regcred: Obj) -> None:
    hosts = sorted(_auths(page_regcred))
    assert hosts == [landscape.registry.host], f"regcred has entries for {hosts}"


@then("its auth field is the base64 of its username and password")
def regcred_auth(page_regcred: Obj) -> None:
    for host, entry in _auths(page_regcred).items():
        expected = basic_auth(entry["username"], entry["password"])
        assert entry["auth"] == expected, f"the auth field for {host} does not match its user"


def expand_url(template: str, landscape: Landscape, you: You, target: str) -> str:
    """oci://<render-registry>/<namespace>/bootstrap-<target>, with page names made actual."""
    host, namespace, chart = template.removeprefix("oci://").split("/", 2)
    host = landscape.registry.host if host == "<render-registry>" else host
    namespace = (
        you.namespace_of(target) if namespace == "<namespace>" else you.names.namespace(namespace)
    )
    chart = chart.replace("<target>", target)
    return f"oci://{host}/{namespace}/{chart}"


@then(parsers.parse('the OCIRepository "{name}" has the URL {template}'))
def source_url(
    landscape: Landscape, you: You, page_helmrelease: WrittenHelmRelease, name: str, template: str
) -> None:
    source = page_helmrelease.source
    expected = expand_url(template, landscape, you, page_helmrelease.target)
    assert source["metadata"]["name"] == name, source["metadata"]
    assert source["spec"]["url"] == expected, f"URL {source['spec']['url']}, expected {expected}"


@then(
    parsers.parse('the OCIRepository selects the layer "{media_type}" with operation "{operation}"')
)
def source_layer(page_helmrelease: WrittenHelmRelease, media_type: str, operation: str) -> None:
    selector = page_helmrelease.source["spec"]["layerSelector"]
    assert selector == {"mediaType": media_type, "operation": operation}, selector


@then(
    parsers.parse(
        'the OCIRepository follows the semver range "{semver}" with the pull Secret "{secret}"'
    )
)
def source_ref(page_helmrelease: WrittenHelmRelease, semver: str, secret: str) -> None:
    spec = page_helmrelease.source["spec"]
    assert spec["ref"] == {"semver": semver}, spec["ref"]
    assert spec["secretRef"] == {"name": secret}, spec["secretRef"]


@then(parsers.parse('the HelmRelease "{name}" installs the chart of the OCIRepository "{source}"'))
def release_chart(page_helmrelease: WrittenHelmRelease, name: str, source: str) -> None:
    release = page_helmrelease.release
    assert release["metadata"]["name"] == name, release["metadata"]
    assert release["spec"]["chartRef"] == {"kind": "OCIRepository", "name": source}, release[
        "spec"
    ]["chartRef"]
