"""Where a token lies (solar_conformance/page/holders.py): every encoding the scans undo, Helm's release
records, and what counts as the one object of an agent release that carries the kubeconfig."""

from __future__ import annotations

import base64
import gzip
import json

from solar_conformance.core import yamlio
from solar_conformance.core.credentials import TokenKubeconfig
from solar_conformance.core.redact import REDACT
from solar_conformance.page.holders import (
    carries_kubeconfig,
    chart_name_of,
    helm_record,
    holds_token,
    how_held,
    outside_kubeconfig_object,
    remember,
)

# A JWT's shape; no issuer made it.
TOKEN = (
    "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJlLW9mLWEtdG9rZW4"
)
KEY = "kubeconfig"


def kubeconfig(token: str = TOKEN) -> str:
    return TokenKubeconfig("https://solar.example:6443", token).render()


def b64(text: str | bytes) -> str:
    raw = text.encode() if isinstance(text, str) else text
    return base64.b64encode(raw).decode()


def secret(name: str, data: dict[str, str], kind: str = "Secret") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "test"},
        "data": {key: b64(value) for key, value in data.items()},
    }


def helm_release_secret(chart: str, manifest: str, templates: dict[str, str]) -> dict[str, object]:
    """As Helm's Secret driver stores a release: JSON, gzipped, base64, in a Secret's data."""
    record = {
        "name": "test-solar-agent",
        "chart": {
            "metadata": {"name": chart, "version": "0.1.0"},
            "templates": [{"name": f"templates/{n}", "data": b64(t)} for n, t in templates.items()],
            "values": {},
        },
        "manifest": manifest,
        "version": 1,
    }
    encoded = b64(gzip.compress(json.dumps(record).encode()))
    found = secret("sh.helm.release.v1.test-solar-agent.v1", {})
    found["type"] = "helm.sh/release.v1"
    found["data"] = {"release": b64(encoded)}
    return found


def test_a_token_is_found_as_it_is_base64_encoded_and_by_its_signature() -> None:
    plain = {"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"t": TOKEN}}
    encoded = secret("b", {"t": TOKEN})
    signed = {"kind": "Event", "metadata": {"name": "c"}, "message": TOKEN.rsplit(".", 1)[1]}
    assert [holds_token(o, TOKEN) for o in (plain, encoded, signed)] == [True, True, True]
    assert [how_held(o, TOKEN) for o in (plain, encoded, signed)] == [
        "as it is",
        "base64-encoded",
        "its signature",
    ]


def test_a_token_under_gzip_and_two_layers_of_base64_is_found() -> None:
    record = helm_release_secret("release-x", f"token: {TOKEN}\n", {})
    assert holds_token(record, TOKEN)
    assert how_held(record, TOKEN) == "under base64 or gzip"


def test_another_token_of_the_same_shape_is_not_this_one() -> None:
    other = TOKEN[:-8] + "AAAAAAAA"
    assert not holds_token({"kind": "ConfigMap", "data": {"t": other[-30:]}}, TOKEN)


def test_helms_release_record_is_read_with_its_chart_name() -> None:
    record = helm_record(helm_release_secret("release-solar-agent-cluster-1", "", {}))
    assert record is not None
    assert chart_name_of(record) == "release-solar-agent-cluster-1"
    assert helm_record(secret("plain", {"release": "not a record"})) is None


def test_the_kubeconfig_carrier_is_found_in_string_data_and_in_data() -> None:
    as_written = {"kind": "Secret", "stringData": {KEY: kubeconfig()}}
    as_stored = secret("s", {KEY: kubeconfig()})
    elsewhere = secret("s", {"other": kubeconfig()})
    another_token = secret("s", {KEY: kubeconfig(TOKEN + "x")})
    assert carries_kubeconfig(as_written, KEY, TOKEN)
    assert carries_kubeconfig(as_stored, KEY, TOKEN)
    assert not carries_kubeconfig(elsewhere, KEY, TOKEN)
    assert not carries_kubeconfig(another_token, KEY, TOKEN)


def _secret_template() -> str:
    return yamlio.dump(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "solar-agent-kubeconfig"},
            "stringData": {KEY: kubeconfig()},
        }
    )


def test_an_agent_release_that_holds_the_token_only_in_its_kubeconfig_secret_passes() -> None:
    files = {
        "Chart.yaml": "name: release-solar-agent-cluster-1\nversion: 0.1.0\n",
        "values.yaml": "{}\n",
        "templates/secret.yaml": _secret_template(),
        "templates/deployment.yaml": "kind: Deployment\nmetadata:\n  name: solar-agent\n",
    }
    assert outside_kubeconfig_object(files, KEY, TOKEN) == (1, [])


def test_every_other_place_in_an_agent_release_is_named() -> None:
    files = {
        "Chart.yaml": f"name: x\nannotations:\n  token: {TOKEN}\n",
        "values.yaml": f"token: {b64(TOKEN)}\n",
        "README.md": f"use {TOKEN}\n",
        "templates/secret.yaml": f"# {TOKEN}\n" + _secret_template(),
        "templates/configmap.yaml": yamlio.dump(
            {"kind": "ConfigMap", "metadata": {"name": "diagnostics"}, "data": {"t": TOKEN}}
        ),
    }
    carriers, elsewhere = outside_kubeconfig_object(files, KEY, TOKEN)
    assert carriers == 1
    assert elsewhere == [
        "Chart.yaml",
        "README.md",
        "templates/configmap.yaml: ConfigMap diagnostics",
        "templates/secret.yaml, outside the objects it renders (a comment)",
        "values.yaml",
    ]


def test_two_objects_that_carry_the_kubeconfig_are_counted() -> None:
    files = {"templates/a.yaml": _secret_template(), "templates/b.yaml": _secret_template()}
    assert outside_kubeconfig_object(files, KEY, TOKEN)[0] == 2


def test_the_redactor_learns_each_form_the_scans_look_for() -> None:
    remember(TOKEN)
    for prefix in ("", "a", "ab"):  # the three byte offsets a token may start at in base64
        encoded = b64(prefix + TOKEN)
        shown = REDACT(encoded)
        # at most the first and last group of four, which mix in bytes that are not the token's
        assert "<redacted>" in shown and len(shown.replace("<redacted>", "")) <= 8, prefix
