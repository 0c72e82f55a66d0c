"""The sim's Flux renders the template values SolAr's charts use, as Helm does, and refuses others."""

from __future__ import annotations

import pytest

from solar_conformance.core.helm_records import shortened_release_name
from solar_conformance.core.oci import Chart
from solar_conformance.simulators.memory.flux import _rendered

TEMPLATE = (
    "metadata:\n  name: '{{ .Release.Name }}-agent'\n  namespace: '{{ .Release.Namespace }}'\n"
)


def release(name: str, namespace: str = "test", **spec: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": spec}


@pytest.mark.parametrize(
    ("helm_release", "name", "namespace"),
    [
        (release("solar-bootstrap"), "solar-bootstrap-agent", "test"),
        (release("b", targetNamespace="apps"), "apps-b-agent", "apps"),
        (release("b", releaseName="mine", targetNamespace="apps"), "mine-agent", "apps"),
    ],
)
def test_the_release_name_and_namespace_are_helms(
    helm_release: dict[str, object], name: str, namespace: str
) -> None:
    chart = _rendered(Chart("c", "v0.0.0", {"a.yaml": TEMPLATE}), helm_release)
    assert chart.manifests() == [{"metadata": {"name": name, "namespace": namespace}}]


def test_a_chart_without_template_actions_is_kept_as_it_is() -> None:
    chart = Chart("c", "v0.0.0", {"a.yaml": "kind: ConfigMap\n"})
    assert _rendered(chart, release("r")) == chart


def test_other_template_actions_fail_the_install() -> None:
    with pytest.raises(ValueError, match="no template action"):
        _rendered(Chart("c", "v0.0.0", {"a.yaml": "x: '{{ .Values.a }}'\n"}), release("r"))


def test_a_release_name_past_53_characters_is_cut_as_helm_controller_cuts_it() -> None:
    chart = _rendered(Chart("c", "v0.0.0", {"a.yaml": TEMPLATE}), release("r" * 54))
    name = chart.manifests()[0]["metadata"]["name"]
    assert name == f"{shortened_release_name('r' * 54)}-agent"
    assert len(name.removesuffix("-agent")) == 53
