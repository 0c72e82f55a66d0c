"""What the sim remembers by content gives what computing it again would: a YAML dump parses
back to its value, a chart archive unpacks to its chart, and a stored object's older version
stays as it was when a newer one shares parts of it."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from solar_conformance.core import yamlio
from solar_conformance.core.clock import VirtualClock
from solar_conformance.core.oci import Chart
from solar_conformance.simulators.memory.cluster import InMemoryCluster

_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(), st.floats(allow_nan=False))
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(_values)
def test_a_remembered_parse_of_a_dump_is_what_the_parser_makes_of_it(value: Any) -> None:
    text = yamlio.dump(value)
    parsed = yaml.load(text, Loader=yaml.SafeLoader)  # the safe loader, not remembered
    assert yamlio.load(text) == parsed == value
    assert list(yamlio.load_all(text)) == [parsed]
    assert list(yamlio.load_all(text + "---\n" + text)) == [parsed, parsed]


def test_a_remembered_parse_is_a_copy() -> None:
    text = yamlio.dump({"a": {"b": [1]}})
    first = yamlio.load(text)
    first["a"]["b"].append(2)
    assert yamlio.load(text) == {"a": {"b": [1]}}


def test_a_stream_not_dumped_here_is_parsed() -> None:
    yamlio.forget()
    text = "a: 1\n---\nb: [2, 3]\n---\n"
    assert list(yamlio.load_all(text)) == [{"a": 1}, {"b": [2, 3]}, None]


def test_an_archive_unpacks_to_its_chart_from_memory_and_from_the_bytes() -> None:
    chart = Chart("c", "0.1.0", {"cm.yaml": "kind: ConfigMap\n"}, {"x": [1]}, {"k": "v"})
    archive = chart.package()
    assert Chart.unpack(archive) == chart
    assert Chart._unpack(archive) == chart
    unpacked = Chart.unpack(archive)
    unpacked.values["x"].append(2)
    assert Chart.unpack(archive).values == {"x": [1]}


def test_an_older_version_of_a_stored_object_stays_as_it_was() -> None:
    cluster = InMemoryCluster("c", VirtualClock())
    admin = cluster.admin()
    admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}})
    seen: list[str] = []
    cluster.watch(lambda _event, obj: seen.append(json.dumps(obj, sort_keys=True)))
    created = admin.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "n"},
            "spec": {"replicas": 1},
        }
    )
    admin.update_status({**created, "status": {"replicas": 1}})
    admin.field_manager = "other"
    current = admin.get("Deployment", "d", "n")
    admin.update_status({**current, "status": {"replicas": 2}})
    current = admin.get("Deployment", "d", "n")
    admin.update({**current, "spec": {"replicas": 3}})
    # every event's object, as it was when the event came, is unchanged by the later writes
    assert [json.loads(s).get("status") for s in seen] == [
        None,
        {"replicas": 1},
        {"replicas": 2},
        {"replicas": 2},
    ]
    managers = [e["manager"] for e in json.loads(seen[1])["metadata"]["managedFields"]]
    assert managers == ["kubectl", "kubectl"]
