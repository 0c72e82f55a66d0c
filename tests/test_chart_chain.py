"""From the bootstrap chart to the chart that holds the agent's kubeconfig, as Flux follows it,
without helm: the reference's single hop, a Release found by its effective uniqueName before
its name, a chain that loops or never ends, and the one line a chart of Helm templates gives
when the harness has no helm (docs/backends/upstream.md, rows 16 and 17). The chain through
charts of Helm templates, which needs helm: tests/local/test_upstream_chart_chain.py."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from solar_conformance.core.api import Obj, new_object
from solar_conformance.core.helm_render import (
    HELM_BUILD_COMMAND,
    ChartRenderer,
    HelmMissing,
    Installation,
    needs_helm,
    rendered_templates,
)
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.oci import Chart
from solar_conformance.page.charts import carried_releases, kubeconfig_in, release_label_value
from solar_conformance.page.delivery import MAX_HOPS, agent_delivery
from solar_conformance.page.lookup import deliverable_releases, release_keys
from solar_conformance.page.reading import NotAsPromised
from solar_conformance.plugin.helm import toolchain_helm
from solar_conformance.provision.toolchain.layout import BUILD_COMMAND
from tests.chart_chain import (
    BOOTSTRAP,
    CONTRACT,
    NAMESPACE,
    SERVER,
    TARGET,
    ChartRegistry,
    agent_release,
    agent_secret,
    installer,
    kubeconfig,
    landscape_with,
    plain_chart,
    source,
)

AGENT_REPOSITORY = f"{NAMESPACE}/agent-of-{TARGET}"
WITHOUT_HELM = ChartRenderer()


def _reference_bootstrap(*entries: tuple[str, str, str]) -> Chart:
    """The reference's shape: per Release an OCIRepository named after the Helm release and
    labelled with the Release's name, pinned by `ref.semver`, and its HelmRelease."""
    objects = []
    for release, repository, version in entries:
        name = f"{{{{ .Release.Name }}}}-{release}"
        objects += [
            source(name, repository, {"semver": version}, label=release),
            installer(name, targetNamespace=NAMESPACE),
        ]
    return plain_chart(f"bootstrap-{TARGET}", "v0.0.0", *objects)


def test_the_references_single_hop_needs_no_helm() -> None:
    registry = ChartRegistry()
    registry.push(BOOTSTRAP, _reference_bootstrap(("solar-agent", AGENT_REPOSITORY, "v0.0.1-0")))
    registry.push(AGENT_REPOSITORY, plain_chart("agent", "v0.0.1-0", agent_secret(kubeconfig())))
    landscape = landscape_with(agent_release())
    delivery = agent_delivery(landscape, registry.as_client(), NAMESPACE, TARGET, WITHOUT_HELM)
    assert (delivery.repository, delivery.ref) == (AGENT_REPOSITORY, {"semver": "v0.0.1-0"})
    found = kubeconfig_in(delivery.chart, CONTRACT.agent_kubeconfig_key)
    assert found is not None
    assert found.server == SERVER


def test_an_agent_release_without_the_kubeconfig_is_the_end_of_the_chain() -> None:
    """What the steps then report as "no kubeconfig in the agent release", as before."""
    registry = ChartRegistry()
    registry.push(BOOTSTRAP, _reference_bootstrap(("solar-agent", AGENT_REPOSITORY, "v0.0.1-0")))
    registry.push(AGENT_REPOSITORY, plain_chart("agent", "v0.0.1-0", {"kind": "ConfigMap"}))
    delivery = agent_delivery(
        landscape_with(agent_release()), registry.as_client(), NAMESPACE, TARGET, WITHOUT_HELM
    )
    assert delivery.repository == AGENT_REPOSITORY
    assert kubeconfig_in(delivery.chart, CONTRACT.agent_kubeconfig_key) is None


def test_the_bootstrap_chart_is_read_as_the_pages_helmrelease_installs_it() -> None:
    """`.Release.Name` is the page's HelmRelease's name, `.Release.Namespace` the Target's
    namespace; the next chart's release name is Flux's `<targetNamespace>-<name>`."""
    installation = Installation.of(installer("solar-bootstrap-solar-agent", targetNamespace="a"))
    assert (installation.release_name, installation.namespace) == (
        "a-solar-bootstrap-solar-agent",
        "a",
    )
    chart = _reference_bootstrap(("solar-agent", AGENT_REPOSITORY, "v0.0.1-0"))
    assert not needs_helm(chart)
    page = Installation("solar-bootstrap", NAMESPACE, {"userdata": {}})
    names = {o["metadata"]["name"] for o in WITHOUT_HELM.render(chart, page).manifests()}
    assert names == {"solar-bootstrap-solar-agent"}


@pytest.mark.parametrize(
    ("spec", "status", "label"),
    [
        ({"uniqueName": "agent-unique"}, {}, "agent-unique"),
        ({}, {"effectiveUniqueName": "solar-agent-component"}, "solar-agent-component"),
        ({"uniqueName": "u" * 70}, {}, release_label_value("u" * 70)),
    ],
    ids=["spec.uniqueName", "status.effectiveUniqueName", "shortened beyond 63 characters"],
)
def test_a_release_is_found_by_its_effective_unique_name_before_its_name(
    spec: dict[str, str], status: dict[str, str], label: str
) -> None:
    """An entry labelled with the Release's name points at a chart without the kubeconfig; the
    one labelled with its effective uniqueName (as upstream labels it) is the one followed."""
    release = agent_release(**spec)
    release["status"] = status
    registry = ChartRegistry()
    decoy, unique = f"{NAMESPACE}/by-name", f"{NAMESPACE}/by-unique-name"
    registry.push(
        BOOTSTRAP,
        plain_chart(
            f"bootstrap-{TARGET}",
            "v0.0.0",
            source("by-name", decoy, {"tag": "v1"}, label="solar-agent"),
            source("by-unique-name", unique, {"tag": "v1"}, label=label),
        ),
    )
    registry.push(decoy, plain_chart("decoy", "v1", {"kind": "ConfigMap"}))
    registry.push(unique, plain_chart("agent", "v1", agent_secret(kubeconfig())))
    delivery = agent_delivery(
        landscape_with(release), registry.as_client(), NAMESPACE, TARGET, WITHOUT_HELM
    )
    assert delivery.repository == unique
    assert len(release_label_value("u" * 70)) == 63


def test_the_releases_a_bootstrap_chart_carries_are_named_by_their_releases() -> None:
    """An entry keyed by a Release's uniqueName counts as that Release; a key no Release of the
    namespace has is listed as written."""
    chart = plain_chart(
        f"bootstrap-{TARGET}",
        "v0.0.0",
        source("a", "x/a", {"tag": "v1"}, label="agent-unique"),
        source("b", "x/b", {"tag": "v1"}, label="nobodys"),
    )
    landscape = landscape_with(agent_release(uniqueName="agent-unique"))
    assert carried_releases(landscape, NAMESPACE, chart) == ["nobodys", "solar-agent"]


def test_the_release_keys_are_the_unique_name_then_the_name() -> None:
    assert release_keys(agent_release(uniqueName="u")) == ("u", "solar-agent")
    assert release_keys(agent_release()) == ("solar-agent",)
    assert release_keys(agent_release(uniqueName="solar-agent")) == ("solar-agent",)


HOP_VERSION = "v0.0.1"


def _hop(name: str, to: str) -> Chart:
    """A chart that delivers only the next one, `to`, through an OCIRepository it installs."""
    next_one = source("next", to, {"tag": HOP_VERSION})
    return plain_chart(name, HOP_VERSION, next_one, installer("next"))


def test_a_chain_that_comes_back_is_a_loop() -> None:
    registry = ChartRegistry()
    first, second = f"{NAMESPACE}/first", f"{NAMESPACE}/second"
    registry.push(BOOTSTRAP, _reference_bootstrap(("solar-agent", first, HOP_VERSION)))
    registry.push(first, _hop("first", second))
    registry.push(second, _hop("second", first))
    with pytest.raises(NotAsPromised, match=f"point back at {first}:{HOP_VERSION}, a loop"):
        agent_delivery(
            landscape_with(agent_release()), registry.as_client(), NAMESPACE, TARGET, WITHOUT_HELM
        )


def test_a_chain_longer_than_the_hop_limit_is_not_followed_to_its_end() -> None:
    registry = ChartRegistry()
    hops = [f"{NAMESPACE}/hop-{i}" for i in range(MAX_HOPS + 1)]
    registry.push(BOOTSTRAP, _reference_bootstrap(("solar-agent", hops[0], HOP_VERSION)))
    for here, there in itertools.pairwise(hops):
        registry.push(here, _hop(here.rsplit("/", 1)[1], there))
    registry.push(hops[-1], plain_chart("agent", HOP_VERSION, agent_secret(kubeconfig())))
    with pytest.raises(NotAsPromised, match=f"more than {MAX_HOPS} hops"):
        agent_delivery(
            landscape_with(agent_release()), registry.as_client(), NAMESPACE, TARGET, WITHOUT_HELM
        )


def test_a_chart_of_helm_templates_without_helm_names_the_build_command() -> None:
    templated = Chart("bootstrap", "v0.0.1", {"r.yaml": "{{- range .Values.releases }}\n"})
    assert needs_helm(templated)
    with pytest.raises(HelmMissing) as missing:
        WITHOUT_HELM.render(templated, Installation("solar-bootstrap", NAMESPACE))
    assert "\n" not in str(missing.value)
    assert str(missing.value).endswith(f"build it with: {HELM_BUILD_COMMAND}")


def test_the_toolchains_missing_helm_is_one_line_with_the_build_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SOLAR_CONFORMANCE_CACHE", str(tmp_path))
    templated = Chart("bootstrap", "v0.0.1", {"r.yaml": "{{- range .Values.releases }}\n"})
    with pytest.raises(HelmMissing) as missing:
        ChartRenderer(helm=toolchain_helm).render(
            templated, Installation("solar-bootstrap", NAMESPACE)
        )
    assert "\n" not in str(missing.value)
    assert str(missing.value).startswith("bootstrap:v0.0.1 holds Helm templates")
    assert f"build it with: {HELM_BUILD_COMMAND}" in str(missing.value)
    assert f"{BUILD_COMMAND} --only helm" == HELM_BUILD_COMMAND


def test_helms_output_becomes_templates_again() -> None:
    output = (
        "---\n# Source: c/templates/a.yaml\nkind: A\n"
        "---\n# Source: c/templates/b.yaml\nkind: B1\n"
        "---\n# Source: c/templates/b.yaml\nkind: B2\n"
    )
    chart = Chart("c", "v1", rendered_templates(output))
    assert sorted(chart.templates) == ["a.yaml", "b.yaml"]
    assert [o["kind"] for o in chart.manifests()] == ["A", "B1", "B2"]


class _SolarWith:
    """The SolAr API of a namespace that holds only these Releases and ReleaseBindings."""

    def __init__(self, releases: list[Obj], bound: list[str]) -> None:
        self._objects = {
            "Release": releases,
            "ReleaseBinding": [
                new_object(
                    "ReleaseBinding",
                    f"{name}-{TARGET}",
                    NAMESPACE,
                    spec={"targetRef": {"name": TARGET}, "releaseRef": {"name": name}},
                )
                for name in bound
            ],
        }

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return self._objects[kind]


def _deliverable(releases: list[Obj], bound: list[str]) -> list[str]:
    landscape = cast(Landscape, SimpleNamespace(solar=_SolarWith(releases, bound)))
    return deliverable_releases(landscape, NAMESPACE, TARGET)


def test_bound_releases_that_share_a_unique_name_are_one_entry_named_as_carried() -> None:
    """SolAr delivers one of the Releases that share an effective uniqueName: both bound count as
    the one entry a bootstrap chart keyed by that name carries, named by the first by name."""
    page_agent = agent_release(uniqueName="agent-unique")
    per_target = agent_release("solar-agent-cluster-1-agent", uniqueName="agent-unique")
    chart = plain_chart(
        f"bootstrap-{TARGET}", "v0.0.0", source("a", "x/a", {"tag": "v1"}, label="agent-unique")
    )
    releases = [per_target, page_agent]
    landscape = cast(Landscape, SimpleNamespace(solar=_SolarWith(releases, []), contract=CONTRACT))
    carried = carried_releases(landscape, NAMESPACE, chart)
    bound = [str(r["metadata"]["name"]) for r in releases]
    assert _deliverable(releases, bound) == carried == ["solar-agent"]


def test_bound_releases_with_their_own_names_stay_apart() -> None:
    """Without a shared uniqueName (the reference keys by name) every bound Release is its own
    entry, and one bound Release that no Release object backs is listed by its name."""
    releases = [agent_release(), agent_release("podinfo")]
    assert _deliverable(releases, ["podinfo", "solar-agent", "gone"]) == [
        "gone",
        "podinfo",
        "solar-agent",
    ]
