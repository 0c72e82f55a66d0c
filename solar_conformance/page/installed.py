"""What Flux made on the target cluster of a Target's bootstrap chart: a Release's
OCIRepository/HelmRelease pair and what its chart installs, found by the keys the bootstrap chart
gives the Release (its effective uniqueName, else its name) under the profile's release label,
as label or annotation: the rule by which the render registry's chart is read (`keyed_objects`,
solar_conformance/page/charts.py). Where that pair's chart installs Flux objects in turn (a
release chart that wraps another OCIRepository/HelmRelease pair, as upstream SolAr's does), the
Release is installed by those, found by what Flux and Helm record of each install
(solar_conformance/core/helm_records.py), never by their names. Each lookup names its promises
(solar_conformance/page/promises.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from solar_conformance.core.api import Obj, find_condition
from solar_conformance.core.helm_records import installed_by
from solar_conformance.core.landscape import Landscape
from solar_conformance.page.charts import keyed_objects
from solar_conformance.page.lookup import release_keys
from solar_conformance.page.promises import lookup
from solar_conformance.page.reading import NotAsPromised

# HelmReleases installed by HelmReleases below the bootstrap chart's pair: upstream's release
# chart is one level; deeper than this is taken for a loop.
MAX_NESTING = 3
FLUX_KINDS = ("OCIRepository", "HelmRelease")


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
    flux = [o for kind in FLUX_KINDS for o in landscape.target.list(kind, namespace)]
    return keyed_to_release(landscape, namespace, release, flux)


def _ready(obj: Obj) -> bool:
    return (find_condition(obj, "Ready") or {}).get("status") == "True"


def ref(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{obj.get('kind')} {meta.get('namespace')}/{meta.get('name')}"


@dataclass(frozen=True)
class Installers:
    """The Flux objects that install a Release on the target cluster: the bootstrap chart's pair
    for it, the OCIRepositories and HelmReleases its HelmRelease installed (and theirs, at any
    depth up to MAX_NESTING), and the innermost HelmReleases, which install the Release's own
    objects; `installer_of` names, for each nested HelmRelease, the HelmRelease that installed
    it."""

    pair: tuple[Obj, ...]
    nested: tuple[Obj, ...] = ()
    innermost: tuple[Obj, ...] = ()
    installer_of: dict[str, str] = field(default_factory=dict)

    @property
    def flux(self) -> tuple[Obj, ...]:
        return (*self.pair, *self.nested)

    @property
    def pair_complete(self) -> bool:
        return {o["kind"] for o in self.pair} == set(FLUX_KINDS)

    def chain(self, helm_release: Obj) -> list[str]:
        """From the bootstrap chart's HelmRelease down to `helm_release`."""
        links = [ref(helm_release)]
        while links[-1] in self.installer_of:
            links.append(self.installer_of[links[-1]])
        return list(reversed(links))


@lookup("profile", "solar-api", "flux")
def release_installers(landscape: Landscape, namespace: str, release: str) -> Installers:
    """The Release's pair, and the Flux objects each of its HelmReleases installed, followed
    down until a HelmRelease installs no HelmRelease: that one installs the Release."""
    pair = release_pair(landscape, namespace, release)
    level = [o for o in pair if o["kind"] == "HelmRelease"]
    if not level or not all(_ready(o) for o in pair):
        # Until the pair is Ready what it installed is not all there yet; waits probe often.
        return Installers(tuple(pair))
    on_target = {kind: landscape.target.list(kind) for kind in FLUX_KINDS}
    nested: list[Obj] = []
    innermost: list[Obj] = []
    installer_of: dict[str, str] = {}
    depth = 0
    while True:
        deeper: list[Obj] = []
        for helm_release in level:
            sources = [o for o in on_target["OCIRepository"] if installed_by(helm_release, o)]
            inner = [
                o
                for o in on_target["HelmRelease"]
                if installed_by(helm_release, o) and ref(o) not in installer_of
            ]
            nested += [*sources, *inner]
            installer_of.update({ref(o): ref(helm_release) for o in inner})
            deeper += inner
            if not inner:
                innermost.append(helm_release)
        installers = Installers(tuple(pair), tuple(nested), tuple(innermost), installer_of)
        if not deeper:
            return installers
        if depth == MAX_NESTING:
            raise NotAsPromised(
                f"the HelmReleases that install the Release {release} of {namespace} install "
                f"HelmReleases more than {MAX_NESTING} levels deep: "
                + " -> ".join(installers.chain(deeper[0]))
            )
        level, depth = deeper, depth + 1
