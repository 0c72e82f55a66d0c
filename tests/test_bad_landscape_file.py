"""A landscape file that cannot be used stops the run before any scenario: one line naming the
file, the line and the key, exit code 4, nothing written, and never the secret it found."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project_runs import project_folder
from tests.test_bad_input import refused


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return project_folder(tmp_path)


# --- the landscape file --------------------------------------------------------------------------
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: not-a-real-token}}]
contexts: [{name: solar, context: {cluster: c, user: u}}]
current-context: solar
"""
LANDSCAPE = """backend = "existing"
implementation = "external"

[solar]
kubeconfig = "kubeconfig"
context = "solar"

[target]
kubeconfig = "kubeconfig"
context = "solar"

[registry]
push_host = "127.0.0.1:5000"
pull_host = "127.0.0.1:5000"
plain_http = true
kind = "zot"
push_user = "solar"
push_password_file = "push-password"

[registry.pull_users]
provider = "command"
command = ["./make-pull-user"]

[agent]
apiserver_url = "https://solar.example:6443"

[capabilities]
deny-token-requests = "admission-policy"
"""
JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJl"
LANDSCAPE_MISTAKES = {
    "a password under another key": (
        ('kind = "zot"', 'kind = "zot"\nregistry_password = "hunter2"'),
        ":17: registry.registry_password: a secret is written in the file",
    ),
    "the push password itself": (
        ('push_password_file = "push-password"', 'push_password = "hunter2"'),
        ":18: registry.push_password: a secret is written in the file",
    ),
    "a password option in the pull-user command": (
        ('["./make-pull-user"]', '["./make-pull-user", "--password=hunter2"]'),
        ":22: registry.pull_users.command[1]: holds what looks like a secret given as a "
        "command-line option",
    ),
    "a password argument in the pull-user command": (
        ('["./make-pull-user"]', '["./make-pull-user", "--password", "hunter2"]'),
        ":22: registry.pull_users.command: holds what looks like a secret given as a command-line",
    ),
    "a password in a URL": (
        ("https://solar.example", "https://admin:hunter2@solar.example"),
        ":25: agent.apiserver_url: holds what looks like a password in a URL",
    ),
    "a JWT in a nested table": (
        (
            'deny-token-requests = "admission-policy"',
            f'deny-token-requests = "admission-policy"\n[registry.extra.deeper]\nnote = "{JWT}"',
        ),
        ":30: registry.extra.deeper.note: holds what looks like a JWT",
    ),
    "a base64 auth blob": (
        ('push_user = "solar"', 'push_user = "c29sYXI6aHVudGVyMg=="'),
        ":17: registry.push_user: holds what looks like a base64 user:password",
    ),
    "a PEM private key": (
        ('kind = "zot"', 'kind = """\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n"""'),
        ":16: registry.kind: holds what looks like a PEM private key",
    ),
    "a bearer token in the command": (
        ('["./make-pull-user"]', '["curl", "-H", "Authorization: Bearer abcdefgh12345678"]'),
        "registry.pull_users.command[2]: holds what looks like a bearer or basic credential",
    ),
    "an unknown key": (
        ('kind = "zot"', 'kind = "zot"\npull_password_file = "x"'),
        ":17: registry.pull_password_file: unknown key (did you mean push_password_file?)",
    ),
    "an unknown implementation": (
        ('implementation = "external"', 'implementation = "mine"'),
        ":2: implementation: must be one of 'reference', 'external' or 'upstream'",
    ),
    "an unknown capability": (
        ('deny-token-requests = "admission-policy"', 'teleport = "control"'),
        ":28: capabilities.teleport: unknown capability 'teleport'",
    ),
    "a capability through a control endpoint that is not there": (
        ('deny-token-requests = "admission-policy"', 'cut-agent-link = "control"'),
        ":28: capabilities.cut-agent-link: mechanism 'control' needs a [control] table",
    ),
    "a missing table": (
        ('[agent]\napiserver_url = "https://solar.example:6443"\n', ""),
        "landscape.toml: agent: missing; add it",
    ),
    "a misspelt table": (
        ("[agent]\napiserver_url", "[agentt]\napiserver_url"),
        ":24: agentt: unknown key (did you mean agent?)",
    ),
    "a host with a scheme": (
        ('push_host = "127.0.0.1:5000"', 'push_host = "https://127.0.0.1:5000"'),
        ":13: registry.push_host: must be host or host:port",
    ),
    "a context the kubeconfig does not have": (
        ('context = "solar"\n\n[registry]', 'context = "elsewhere"\n\n[registry]'),
        ":10: target.context: context 'elsewhere' is not in",
    ),
    "not TOML": (("[agent]", "[agent"), "landscape.toml:24: not valid TOML"),
}


def _landscape(project: Path, change: tuple[str, str]) -> Path:
    (project / "kubeconfig").write_text(KUBECONFIG)
    (project / "push-password").write_text("a-push-password-for-tests")
    old, new = change
    assert old in LANDSCAPE, old
    (project / "landscape.toml").write_text(LANDSCAPE.replace(old, new, 1))
    return project / "landscape.toml"


@pytest.mark.parametrize("case", sorted(LANDSCAPE_MISTAKES))
def test_a_bad_landscape_file(project: Path, case: str) -> None:
    change, said = LANDSCAPE_MISTAKES[case]
    _landscape(project, change)
    line = refused(
        project, "--solar-env=existing", "--solar-landscape=landscape.toml", words=(said,)
    )
    assert "hunter2" not in line and "aHVudGVy" not in line and JWT[:20] not in line, line


def test_a_missing_landscape_file(project: Path) -> None:
    refused(
        project,
        "--solar-env=existing",
        "--solar-landscape=none.toml",
        words=("none.toml: no such file",),
    )
