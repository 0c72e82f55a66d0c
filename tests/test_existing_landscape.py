"""The `existing` backend's input: a landscape file that cannot be used stops the run in one line
with exit code 4, before any scenario; its control endpoint answers only its token's holder; the
run lock lets a global fault wait until the landscape is its own."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from solar_conformance.backends.existing.control import ControlClient, ControlError, ControlServer
from solar_conformance.backends.existing.exclusive import (
    LandscapeLock,
    lock_path_for,
    remove_lock_files,
)
from solar_conformance.backends.existing.landscape_file import BadLandscapeFile, dump, load
from solar_conformance.core.audit import AuditEvent
from solar_conformance.core.landscape import MissingCapability
from solar_conformance.core.redact import REDACT

ROOT = Path(__file__).resolve().parents[1]
USAGE_ERROR = 4


def _kubeconfig(path: Path, server: str, context: str) -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c, cluster: {{server: '{server}', insecure-skip-tls-verify: true}}}}]\n"
        "users: [{name: u, user: {token: not-a-real-token}}]\n"
        f"contexts: [{{name: {context}, context: {{cluster: c, user: u}}}}]\n"
        f"current-context: {context}\n"
    )
    return path


def _landscape(folder: Path, **changes: Any) -> Path:
    kubeconfig = _kubeconfig(folder / "kubeconfig", "https://127.0.0.1:1", "solar")
    (folder / "push-password").write_text("a-push-password-for-tests")
    sections: dict[str, Any] = {
        "solar": {"kubeconfig": str(kubeconfig), "context": "solar"},
        "target": {"kubeconfig": str(kubeconfig), "context": "solar"},
        "registry": {
            "push_host": "127.0.0.1:5000",
            "pull_host": "127.0.0.1:5000",
            "plain_http": True,
            "kind": "zot",
            "push_user": "solar",
            "push_password_file": "push-password",
            "pull_users": {"provider": "command", "command": ["make-pull-user"]},
        },
        "agent": {"apiserver_url": "https://solar.example:6443"},
        "capabilities": {"deny-token-requests": "admission-policy"},
    }
    for key, value in changes.items():
        table, _, field = key.partition("__")
        if field:
            sections[table][field] = value
        else:
            sections[table] = value
    file = folder / "landscape.toml"
    file.write_text(dump(sections))
    return file


def _run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "features/", "-p", "no:randomly", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == USAGE_ERROR, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "passed" not in result.stdout and "failed" not in result.stdout
    return lines[0]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"solar__kubeconfig": "/nonexistent/kubeconfig"}, "No such file"),
        ({"target__context": "elsewhere"}, "context 'elsewhere' is not in"),
        ({}, "does not answer"),
        ({"registry__push_password_file": "missing-password"}, "cannot read"),
        ({"capabilities": {"cut-agent-link": "control"}}, "needs a [control] table"),
        ({"capabilities": {"teleport": "control"}}, "unknown capability 'teleport'"),
    ],
)
def test_an_unusable_landscape_file_stops_the_run_in_one_line(
    tmp_path: Path, change: dict[str, Any], said: str
) -> None:
    file = _landscape(tmp_path, **change)
    line = _one_line_error(_run("--solar-env=existing", f"--solar-landscape={file}"))
    assert said in line


def test_a_missing_landscape_file_stops_the_run_in_one_line(tmp_path: Path) -> None:
    line = _one_line_error(
        _run("--solar-env=existing", f"--solar-landscape={tmp_path / 'none.toml'}")
    )
    assert "none.toml: no such file" in line


def test_the_landscape_for_global_faults_must_be_another_and_usable(tmp_path: Path) -> None:
    file = _landscape(tmp_path)
    same = _run(
        "--solar-env=existing", f"--solar-landscape={file}", f"--solar-landscape-alone={file}"
    )
    assert "another landscape" in _one_line_error(same)
    missing = _run(
        "--solar-env=existing",
        f"--solar-landscape={file}",
        f"--solar-landscape-alone={tmp_path / 'none.toml'}",
    )
    assert "none.toml: no such file" in _one_line_error(missing)


def test_existing_without_a_landscape_file_says_which_option_is_missing() -> None:
    assert "--solar-landscape" in _one_line_error(_run("--solar-env=existing"))


def test_secrets_are_named_never_written(tmp_path: Path) -> None:
    file = _landscape(tmp_path, registry__push_password="in-the-file")
    with pytest.raises(BadLandscapeFile, match="push_password_file"):
        load(file)
    loaded = load(_landscape(tmp_path))
    assert loaded.push_password.read() == "a-push-password-for-tests"
    assert "a-push-password" not in file.read_text()


class _Landscape:
    """Just what the control endpoint serves in these tests."""

    def __init__(self) -> None:
        self.url: str | None = "https://solar:6443"
        self.audit: list[AuditEvent] = []

    def solar_audit(self) -> list[AuditEvent]:
        return list(self.audit)

    def reader_credentials(self, namespace: str) -> tuple[str, str]:
        password = f"pw-for-{namespace}-0123456789"
        REDACT.register(password)
        return f"pull-{namespace}", password

    def configure_apiserver_url(self, url: str | None) -> None:
        if url == "refused":
            raise MissingCapability("this SolAr's values are not the harness's")
        self.url = url


def _event(name: str) -> AuditEvent:
    return AuditEvent(
        at=datetime(2026, 12, 3, tzinfo=UTC),
        user="system:serviceaccount:a-1:agent",
        credential="JTI=1",
        verb="patch",
        group="solar.opendefense.cloud",
        resource="targetreports",
        subresource=None,
        namespace="a-1",
        name=name,
        code=200,
        dry_run=False,
    )


def test_the_audit_log_crosses_the_control_endpoint_once_per_event() -> None:
    landscape = _Landscape()
    server = ControlServer(landscape)  # type: ignore[arg-type]
    try:
        client = ControlClient(server.url, server.token)
        landscape.audit = [_event("one"), _event("two")]
        assert client.audit() == landscape.audit
        landscape.audit.append(_event("three"))
        asked: list[int] = []
        call = client.call

        def spy(operation: str, **arguments: Any) -> Any:
            asked.append(arguments["since"])
            return call(operation, **arguments)

        client.call = spy  # type: ignore[method-assign]
        assert client.audit() == landscape.audit
        assert asked == [2]  # only what was logged since
    finally:
        server.close()


def test_the_control_endpoint_answers_only_the_holder_of_its_token() -> None:
    landscape = _Landscape()
    server = ControlServer(landscape)  # type: ignore[arg-type]
    try:
        client = ControlClient(server.url, server.token)
        assert client.call("reader-credentials", namespace="a-1") == [
            "pull-a-1",
            "pw-for-a-1-0123456789",
        ]
        client.call("configure-apiserver-url", url=None)
        assert landscape.url is None
        with pytest.raises(MissingCapability, match="not the harness's"):
            client.call("configure-apiserver-url", url="refused")
        stranger = ControlClient(server.url, "a-guessed-token-0123456789")
        with pytest.raises(ControlError, match="control token"):
            stranger.call("reader-credentials", namespace="a-1")
    finally:
        server.close()


def test_a_scenario_that_needs_the_landscape_alone_waits_for_the_others(tmp_path: Path) -> None:
    lock_file = tmp_path / "landscape.lock"
    other, alone = LandscapeLock(lock_file), LandscapeLock(lock_file)
    other.shared()
    alone.shared()
    acquired = threading.Event()

    def take_it_alone() -> None:
        alone.exclusive()
        acquired.set()

    thread = threading.Thread(target=take_it_alone)
    thread.start()
    assert not acquired.wait(0.5), "exclusive while another scenario still ran"
    other.release()
    assert acquired.wait(10), "never exclusive after the other scenario ended"
    thread.join()
    alone.release()
    other.close()
    alone.close()


def test_a_test_that_took_the_landscape_alone_gives_it_up_when_it_ends(tmp_path: Path) -> None:
    """The credential model takes the landscape alone inside its run; kept after it ended, its
    worker's next scenario waited behind another worker that waited for it (both for ever)."""
    from solar_conformance.plugin.landscapes import held

    lock_file = tmp_path / "landscape.lock"
    model = SimpleNamespace(lock=LandscapeLock(lock_file))
    other = LandscapeLock(lock_file)
    other_started = threading.Event()

    def start_scenario(lock: LandscapeLock, started: threading.Event) -> None:
        lock.shared()
        started.set()

    with held(model):
        model.lock.exclusive()
        thread = threading.Thread(target=start_scenario, args=(other, other_started))
        thread.start()
        assert not other_started.wait(0.5), "another scenario started while the model held it"
    next_started = threading.Event()
    follower = threading.Thread(target=start_scenario, args=(model.lock, next_started), daemon=True)
    follower.start()
    assert other_started.wait(10), "the other worker's scenario never started"
    assert next_started.wait(10), "the model's worker could not start its next scenario"
    thread.join()
    follower.join()
    model.lock.release()
    other.release()
    model.lock.close()
    other.close()


def test_a_test_that_needs_the_landscape_alone_has_it_from_its_first_step(
    tmp_path: Path,
) -> None:
    """Two such tests on two workers: the second starts only when the first has ended, not when
    the first reaches its global fault (which gave up its hold and let the other change the
    landscape under its Targets)."""
    from solar_conformance.plugin.landscapes import held

    lock_file = tmp_path / "landscape.lock"
    first, second = SimpleNamespace(lock=LandscapeLock(lock_file)), LandscapeLock(lock_file)
    second_started = threading.Event()

    def start_alone() -> None:
        with held(SimpleNamespace(lock=second), alone=True):
            second_started.set()

    with held(first, alone=True):
        thread = threading.Thread(target=start_alone)
        thread.start()
        assert not second_started.wait(0.5), "a second global fault began beside the first"
        first.lock.exclusive()  # its global fault: it keeps the landscape
        assert not second_started.wait(0.5), "the second began when the first took it alone"
    assert second_started.wait(10), "the second never began after the first ended"
    thread.join()
    first.lock.close()
    second.close()


def test_the_versions_a_landscape_names_reach_the_file_and_back(tmp_path: Path) -> None:
    named = {
        "kubernetes (target)": "v1.34.4",
        "flux": "source-controller v1.7.3",
        "registry": "zot",
    }
    loaded = load(_landscape(tmp_path, versions=named))
    assert loaded.versions == named
    file = _landscape(tmp_path)
    file.write_text(file.read_text() + "\n[versions]\nflux = 2\n")
    with pytest.raises(BadLandscapeFile, match=r"versions\.flux: the value is not a string"):
        load(file)


def test_the_holder_leaves_no_lock_file_behind(tmp_path: Path) -> None:
    landscape_file = tmp_path / "landscape.toml"
    lock = LandscapeLock(lock_path_for(landscape_file))
    lock.shared()
    lock.release()
    lock.close()
    lock_files = [
        lock_path_for(landscape_file),
        lock_path_for(landscape_file).with_suffix(".turnstile"),
    ]
    assert all(path.exists() for path in lock_files)
    remove_lock_files(landscape_file)
    assert not any(path.exists() for path in lock_files), lock_files


def test_the_audiences_the_solar_api_server_accepts_reach_the_file_and_back(tmp_path: Path) -> None:
    """Left out, the run asks the SolAr API server's OIDC discovery document for its issuer."""
    audiences = ["https://kubernetes.default.svc", "https://solar.staging.example"]
    assert load(_landscape(tmp_path, solar__api_audiences=audiences)).api_audiences == tuple(
        audiences
    )
    assert load(_landscape(tmp_path)).api_audiences == ()
    with pytest.raises(BadLandscapeFile, match=r"solar\.api_audiences"):
        load(_landscape(tmp_path, solar__api_audiences="https://kubernetes.default.svc"))
