"""The pieces the input checks are built from: the line of each TOML key, the secret shapes (and
what is no secret: the values a landscape file holds), the profile's schema beside Contract."""

from __future__ import annotations

import base64
from dataclasses import fields
from pathlib import Path

import pytest

from solar_conformance.backends.existing.publish import granted
from solar_conformance.core.capabilities import Capability
from solar_conformance.core.contract import Contract
from solar_conformance.core.contract_schema import ProfileValues
from solar_conformance.core.inputs import BadInput, key_lines, read_toml
from solar_conformance.core.secret_shapes import is_secret_key, secret_shape


def test_every_key_and_table_has_its_line() -> None:
    text = """top = 1
# a comment = 2
[registry]
push_host = "h:5000"
"quoted key" = "x = y"
doc = \"\"\"
inner = 3
\"\"\"
command = [
  "a",
  "b = c",
]
after = true

[registry.pull_users]
provider = "command"
dotted.key = 1
"""
    lines = key_lines(text)
    assert lines[("top",)] == 1
    assert ("a comment",) not in lines
    assert lines[("registry",)] == 3
    assert lines[("registry", "push_host")] == 4
    assert lines[("registry", "quoted key")] == 5
    assert lines[("registry", "doc")] == 6
    assert ("registry", "inner") not in lines, "a multi-line string holds no key"
    assert lines[("registry", "command")] == 9
    assert ("registry", "b") not in lines, "an array's items are no keys"
    assert lines[("registry", "after")] == 13
    assert lines[("registry", "pull_users")] == 15
    assert lines[("registry", "pull_users", "dotted", "key")] == 17


def test_a_toml_error_is_named_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('a = 1\nb = "unterminated\n')
    with pytest.raises(BadInput) as raised:
        read_toml(path, "a file")
    assert str(raised.value).startswith(f"{path}:2: not valid TOML (")


SECRETS = {
    "a password in a URL": "https://admin:s3cret@registry.example:5000/v2",
    "a password in a host": "solar:s3cret@registry.example:5000",
    "--password=": "--password=s3cret",
    "--password VALUE": "make-user --password s3cret",
    "--registry-token=": "--registry-token=abc123",
    "an assignment": "REGISTRY_PASSWORD=s3cret ./make-user",
    "a query parameter": "https://example/?access_token=abc123",
    "a JWT": "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln",
    "a base64 auth": base64.b64encode(b"solar:s3cret-password").decode(),
    "a dockerconfig auth field": '{"auths": {"r": {"auth": "xyz12345"}}}',
    "a PEM private key": "-----BEGIN OPENSSH PRIVATE KEY-----",
    "a bearer token": "Authorization: Bearer abcdefgh12345678",
    "a basic credential": "Authorization: Basic c29sYXI6cHc=",
    "a kubeconfig key": "client-key-data: LS0tLS1CRUdJTi",
    "a GitHub token": "ghp_" + "a1B2" * 9,
    "an AWS key id": "AKIAIOSFODNN7EXAMPLE",
    "a random token": "k8Jd92nFq0LzPq7RtY3wX1vB",
}
NO_SECRETS = [
    "solar.kubeconfig",
    "/home/Alice/Projects2024/solar-landscape/landscape.toml",
    "landscapes/solar-landscape-k2j3_x9a/push-password",
    "https://solar-api.staging.example:6443",
    "registry.staging.example:5000",
    "[::1]:5000",
    "http://127.0.0.1:41234",
    "STAGING_REGISTRY_PUSH_PASSWORD",
    "push-password",
    "control-token",
    "./make-pull-user",
    "--token-file=/run/token",
    "--password-stdin",
    "v2.1.20-25-g6d19b445",
    "6d19b445aa1234567890abcdef1234567890abcd",
    "sha256:" + "0123456789abcdef" * 4,
    "distribution+token-service",
    "kind-solar-conformance-solar",
    "admission-policy",
    "git@github.com:org/repo.git",
]


@pytest.mark.parametrize("case", sorted(SECRETS))
def test_a_secret_is_seen_in_any_shape(case: str) -> None:
    assert secret_shape(SECRETS[case]) is not None, SECRETS[case]


@pytest.mark.parametrize("text", NO_SECRETS)
def test_what_a_landscape_file_holds_is_no_secret(text: str) -> None:
    assert secret_shape(text) is None


def test_keys_named_like_secrets() -> None:
    named = ["password", "push_password", "registry-token", "api_key", "client-key-data", "auth"]
    assert all(is_secret_key(name) for name in named)
    harmless = ["push_password_env", "token_file", "deny-token-requests", "push_user", "kind"]
    assert not any(is_secret_key(name) for name in harmless if not name.endswith(("_env", "_file")))
    assert not is_secret_key("deny-token-requests")


def test_the_published_landscape_file_holds_no_secret_shape() -> None:
    """What `up` writes (solar_conformance/backends/existing/publish.py) passes its own check: capabilities named
    like tokens are not secrets."""
    assert all(secret_shape(name) is None for name in granted(frozenset(Capability)))


def test_the_profile_schema_knows_every_key_of_the_contract() -> None:
    assert set(ProfileValues.model_fields) == {f.name for f in fields(Contract)}
