"""The throw-away PKI of a local control plane: its certificate authorities, the service-account
signing key, and a key pair for each component and for the harness's admin, written to the
instance's files."""

from __future__ import annotations

from solar_conformance.backends.local import components
from solar_conformance.backends.local.components import InstanceFiles
from solar_conformance.components.pki import (
    CertificateAuthority,
    KeyPair,
    SigningKey,
    write_private,
    write_public,
)

ADMIN_USER = "solar-conformance-admin"


def write_pki(files: InstanceFiles) -> dict[str, KeyPair]:
    authority = CertificateAuthority("solar-conformance-ca")
    write_public(files.ca_certificate, authority.certificate_pem)
    front_proxy_authority = CertificateAuthority("solar-conformance-front-proxy-ca")
    write_public(files.front_proxy_ca_certificate, front_proxy_authority.certificate_pem)
    signing_key = SigningKey.generate()
    write_private(files.service_account_private_key, signing_key.private_key_pem)
    write_public(files.service_account_public_key, signing_key.public_key_pem)
    pairs = {
        "apiserver": authority.issue_server(
            "kube-apiserver",
            components.APISERVER_DNS_NAMES,
            ["127.0.0.1", components.KUBERNETES_SERVICE_IP],
        ),
        "controller-manager-serving": authority.issue_server(
            "kube-controller-manager", ["localhost"], ["127.0.0.1"]
        ),
        "scheduler-serving": authority.issue_server("kube-scheduler", ["localhost"], ["127.0.0.1"]),
        # system:masters: the group every RBAC check lets through.
        "admin": authority.issue_client(ADMIN_USER, ["system:masters"]),
        # User names the default RBAC bindings know.
        "controller-manager": authority.issue_client("system:kube-controller-manager"),
        "scheduler": authority.issue_client("system:kube-scheduler"),
        components.FRONT_PROXY_CLIENT: front_proxy_authority.issue_client(
            components.FRONT_PROXY_CLIENT
        ),
    }
    for name, pair in pairs.items():
        write_public(files.certificate(name), pair.certificate_pem)
        write_private(files.private_key(name), pair.private_key_pem)
    return pairs
