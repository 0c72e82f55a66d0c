from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solar_conformance.core.credentials import (
    TokenKubeconfig,
    basic_auth,
    credentials_for,
    dockerconfigjson,
    same_server,
)

users = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters=":"),
    min_size=1,
    max_size=40,
)
passwords = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=60)
hosts = st.from_regex(r"[a-z0-9]([-a-z0-9.]{0,30}[a-z0-9])?(:[0-9]{1,5})?", fullmatch=True)


@given(users, passwords)
def test_auth_field_is_base64_of_user_colon_password(user: str, password: str) -> None:
    decoded = base64.b64decode(basic_auth(user, password)).decode()
    assert decoded == f"{user}:{password}"


@given(hosts, users, passwords)
def test_flux_reads_back_what_the_pull_secret_holds(host: str, user: str, password: str) -> None:
    config = dockerconfigjson(host, user, password)
    assert credentials_for(config, host) == (user, password)
    assert credentials_for(config, host + "x") is None


def test_auth_field_wins_over_username_and_password() -> None:
    config = json.dumps(
        {"auths": {"h": {"username": "u", "password": "p", "auth": basic_auth("a", "b")}}}
    )
    assert credentials_for(config, "h") == ("a", "b")


def test_broken_pull_secrets_give_no_credentials() -> None:
    assert credentials_for("not json", "h") is None
    assert credentials_for(json.dumps({"auths": {"h": {"auth": "%%%"}}}), "h") is None
    assert (
        credentials_for(json.dumps({"auths": {"h": {"auth": basic_auth("", "x")[:-2]}}}), "h")
        is None
    )


@given(st.from_regex(r"[A-Za-z0-9._-]{16,80}", fullmatch=True))
def test_kubeconfig_round_trips(token: str) -> None:
    kubeconfig = TokenKubeconfig("https://solar:6443", token, "-----BEGIN CERTIFICATE-----\n")
    back = TokenKubeconfig.parse(kubeconfig.render())
    assert back == kubeconfig
    assert token not in repr(back)


@pytest.mark.parametrize(
    "written",
    [
        "https://solar.example:6443",
        "https://solar.example:6443/",
        "HTTPS://Solar.Example:6443",
        "https://SOLAR.EXAMPLE:6443//",
    ],
)
def test_a_server_url_is_the_same_with_a_trailing_slash_or_in_capitals(written: str) -> None:
    assert same_server(written, "https://solar.example:6443")
    assert same_server("https://solar.example:6443/", written)


@pytest.mark.parametrize(
    "written",
    [
        "https://solar.example",  # the default port is not filled in
        "https://solar.example:443",
        "https://solar.example:6444",
        "http://solar.example:6443",
        "https://other.example:6443",
        "https://solar.example.evil:6443",
        "https://solar.example:6443/prefix",
        "https://user@solar.example:6443",
    ],
)
def test_another_host_port_scheme_or_path_is_another_server(written: str) -> None:
    assert not same_server(written, "https://solar.example:6443")


def test_a_path_counts_without_its_trailing_slash() -> None:
    assert same_server("https://solar.example/k8s/", "https://solar.example/k8s")
    assert not same_server("https://solar.example/K8S", "https://solar.example/k8s")
