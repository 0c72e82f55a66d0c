"""What Flux made on the target cluster of a Target's bootstrap chart: a Release's
OCIRepository/HelmRelease pair and what its chart installs, found by the keys the bootstrap chart
gives the Release (its effective uniqueName, else its name) under the profile's release label,
as label or annotation: the rule by which the render registry's chart is read (`keyed_objects`,
solar_conformance/page/charts.py). Each lookup names its promises
(solar_conformance/page/promises.py)."""

from __future__ import annotations

from collections.abc import Iterable

from solar_conformance.core.api import Obj
from solar_conformance.core.landscape import Landscape
from solar_conformance.page.charts import keyed_objects
from solar_conformance.page.lookup import release_keys
from solar_conformance.page.promises import lookup


@lookup("profile", "solar-api")
def keyed_to_release(
    landscape: Landscape, namespace: str, release: str, objects: Iterable[Obj]
) -> list[Obj]:
    """Those of `objects` that carry the key of the Release `release` of `namespace`."""
    keys = release_keys(landscape.solar.get("Release", release, namespace))
    return keyed_objects(objects, keys, landscape.contract.release_label)


@lookup("profile", "solar-api")
def release_pair(landscape: Landscape, namespace: str, release: str) -> list[Obj]:
    """The OCIRepository and HelmRelease of the Target's namespace on the target cluster that
    install the Release: the namespace the bootstrap chart is installed into (the target cluster
    is shared, so objects elsewhere may be another scenario's)."""
    flux = [
        *landscape.target.list("OCIRepository", namespace),
        *landscape.target.list("HelmRelease", namespace),
    ]
    return keyed_to_release(landscape, namespace, release, flux)
