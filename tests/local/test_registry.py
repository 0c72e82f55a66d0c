"""The local render registry (zot when a `zot` binary is on PATH, otherwise Distribution behind
the token service) enforces the access policy exactly as the sim backend's in-memory registry
does, and serves charts Helm accepts."""

from __future__ import annotations

import base64
import json
import os
import secrets
import socket
import subprocess
import tarfile
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from solar_conformance.backends.local.registry import LocalRegistry, missing_registry_tools
from solar_conformance.components.probes import free_loopback_ports
from solar_conformance.components.registry_client import HttpRegistryClient
from solar_conformance.components.waiting import ReadinessTimeout
from solar_conformance.components.zot import zot_config
from solar_conformance.core.api import Unreachable
from solar_conformance.core.oci import (
    HELM_CHART_LAYER,
    HELM_CONFIG,
    OCI_MANIFEST,
    Chart,
    RegistryClient,
    RegistryError,
)
from solar_conformance.core.policy import AccessPolicy
from solar_conformance.core.redact import REDACT
from solar_conformance.page.charts import pull_chart, pull_source
from solar_conformance.provision.toolchain import MissingTool, Toolchain
from solar_conformance.provision.toolchain.layout import BUILD_COMMAND
from solar_conformance.simulators.memory.registry import InMemoryRegistry

_MISSING = missing_registry_tools()

pytestmark = [
    pytest.mark.local,
    pytest.mark.skipif(
        bool(_MISSING),
        reason=(
            "the registry binary (CNCF Distribution) is not built and no zot is on PATH; run: "
            f"{BUILD_COMMAND} --only registry"
        ),
    ),
]

PUSH_USER = "solar"
READERS = {"pull-test": "test", "pull-other": "other"}
POLICY = AccessPolicy.for_namespaces(PUSH_USER, READERS)
SEEDED_REPOSITORIES = ("test/agent", "other/agent")
CHART = Chart(
    "agent",
    "0.1.0",
    templates={"configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: agent\n"},
    values={"replicas": 1},
)

# (user or None for anonymous, repository, action) -> verdict, as zot answers: 401 without
# credentials, 403 to a known user the policy refuses (tests/local/test_policy_table.py has more).
VERDICTS = [
    (PUSH_USER, "test/agent", "read", "allowed"),
    (PUSH_USER, "test/agent", "push", "allowed"),
    (PUSH_USER, "solar/created-by-push", "push", "allowed"),
    ("pull-test", "test/agent", "read", "allowed"),
    ("pull-test", "test/agent", "pull unknown tag", "not found"),
    ("pull-test", "test/never-pushed", "read", "not found"),
    ("pull-test", "other/agent", "read", "403"),
    ("pull-test", "other/never-pushed", "read", "403"),
    ("pull-test", "test/agent", "push", "403"),
    ("pull-test", "test/never-pushed", "push", "403"),
    ("pull-test", "agent", "read", "403"),
    ("pull-other", "other/agent", "read", "allowed"),
    ("pull-other", "test/agent", "read", "403"),
    (None, "test/agent", "read", "401"),
    (None, "test/agent", "push", "401"),
]

ClientFactory = Callable[[str | None, str | None], RegistryClient]


@pytest.fixture(scope="module")
def passwords() -> dict[str, str]:
    made = {user: secrets.token_urlsafe(18) for user in (PUSH_USER, *READERS)}
    REDACT.register(*made.values())
    return made


@pytest.fixture(scope="module")
def registry(passwords: dict[str, str]) -> Iterator[LocalRegistry]:
    with LocalRegistry(policy=POLICY, name="test-registry") as started:
        for user, password in passwords.items():
            started.add_user(user, password)
        yield started


@pytest.fixture(scope="module")
def local_as(registry: LocalRegistry, passwords: dict[str, str]) -> Iterator[ClientFactory]:
    with ExitStack() as clients:

        def connect(user: str | None, password: str | None) -> RegistryClient:
            client = HttpRegistryClient(
                registry.host, user, password, plain_http=registry.plain_http
            )
            return clients.enter_context(client)

        _seed(connect(PUSH_USER, passwords[PUSH_USER]))
        yield connect


@pytest.fixture(scope="module")
def in_memory_as(passwords: dict[str, str]) -> ClientFactory:
    memory = InMemoryRegistry("registry.invalid", POLICY)
    memory.users.update(passwords)
    _seed(memory.client(PUSH_USER, passwords[PUSH_USER]))
    return memory.client


@pytest.fixture(params=["in-memory", "local"])
def registry_as(request: pytest.FixtureRequest) -> ClientFactory:
    factory: ClientFactory = request.getfixturevalue(
        "in_memory_as" if request.param == "in-memory" else "local_as"
    )
    return factory


def _seed(push: RegistryClient) -> None:
    for repository in SEEDED_REPOSITORIES:
        push.push_chart(repository, CHART)


def _verdict(client: RegistryClient, repository: str, action: str) -> str:
    operations: dict[str, Callable[[], object]] = {
        "read": lambda: client.tags(repository),
        "pull unknown tag": lambda: client.manifest(repository, "9.9.9"),
        "push": lambda: client.push_chart(repository, CHART),
    }
    try:
        operations[action]()
    except RegistryError as error:
        if error.status in (401, 403):
            return str(error.status)
        # A manifest in a repository never pushed to: the sim says NAME_UNKNOWN, Distribution
        # MANIFEST_UNKNOWN (the OCI spec allows both); callers only rely on the 404.
        return "not found" if error.status == 404 else error.code
    return "allowed"


# -- pushing and pulling --------------------------------------------------------------------


def test_push_user_pushes_and_the_namespace_reader_pulls_the_chart_back(
    local_as: ClientFactory, passwords: dict[str, str]
) -> None:
    chart = Chart("bootstrap-t1", "1.2.3", templates=CHART.templates, annotations={"a": "b"})
    pushed_digest = local_as(PUSH_USER, passwords[PUSH_USER]).push_chart("test/roundtrip", chart)

    reader = local_as("pull-test", passwords["pull-test"])
    assert reader.tags("test/roundtrip") == ["1.2.3"]
    manifest, digest = reader.manifest("test/roundtrip", "1.2.3")
    assert digest == pushed_digest
    assert reader.manifest("test/roundtrip", digest) == (manifest, digest)
    (layer,) = manifest["layers"]
    assert Chart.unpack(reader.blob("test/roundtrip", layer["digest"])) == chart
    assert pull_chart(reader, "test/roundtrip") == chart  # as the harness's Flux model pulls


def test_solar_tags_are_pulled_back_as_flux_selects_them(
    local_as: ClientFactory, passwords: dict[str, str]
) -> None:
    pusher = local_as(PUSH_USER, passwords[PUSH_USER])
    for tag in ("v0.0.0", "v0.0.1", "v0.0.1-e3b0c442"):
        pusher.push_chart("test/solar-tags", Chart("solar-tags", tag, CHART.templates))
    reader = local_as("pull-test", passwords["pull-test"])
    assert sorted(reader.tags("test/solar-tags")) == ["v0.0.0", "v0.0.1", "v0.0.1-e3b0c442"]
    assert pull_chart(reader, "test/solar-tags").version == "v0.0.1"  # the page's >=0.0.0
    pinned = pull_source(reader, "test/solar-tags", {"semver": "v0.0.1-e3b0c442"})
    assert pinned.version == "v0.0.1-e3b0c442"


def test_the_artifact_has_the_media_types_helm_consumers_select(
    local_as: ClientFactory, passwords: dict[str, str]
) -> None:
    reader = local_as("pull-test", passwords["pull-test"])
    manifest, _ = reader.manifest("test/agent", CHART.version)
    assert manifest["mediaType"] == OCI_MANIFEST
    assert manifest["config"]["mediaType"] == HELM_CONFIG
    assert [layer["mediaType"] for layer in manifest["layers"]] == [HELM_CHART_LAYER]
    config = json.loads(reader.blob("test/agent", manifest["config"]["digest"]))
    assert (config["apiVersion"], config["name"], config["version"]) == ("v2", "agent", "0.1.0")


def _helm_or_skip() -> Path:
    try:
        return Toolchain.from_env().path("helm")
    except MissingTool as missing:
        pytest.skip(str(missing))


def test_helm_pulls_the_pushed_chart(
    registry: LocalRegistry, local_as: ClientFactory, passwords: dict[str, str], tmp_path: Path
) -> None:
    helm = _helm_or_skip()
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        **{
            f"HELM_{kind}_HOME": str(tmp_path / kind.lower())
            for kind in ("CONFIG", "CACHE", "DATA")
        },
    }

    def run_helm(*arguments: str, stdin: str = "") -> None:
        finished = subprocess.run(
            [str(helm), *arguments],
            input=stdin,
            capture_output=True,
            text=True,
            env=environment,
            timeout=60,
            check=False,
        )
        assert finished.returncode == 0, REDACT(f"helm {arguments[0]}: {finished.stderr}")

    login = ("registry", "login", registry.host, "--plain-http", "--password-stdin")
    run_helm(*login, "--username", "pull-test", stdin=passwords["pull-test"])
    destination = tmp_path / "pulled"
    destination.mkdir()
    run_helm(
        "pull",
        f"oci://{registry.host}/test/agent",
        "--version",
        CHART.version,
        "--plain-http",
        "--destination",
        str(destination),
    )
    archive = destination / f"agent-{CHART.version}.tgz"
    assert tarfile.is_tarfile(archive)
    assert Chart.unpack(archive.read_bytes()) == CHART


# -- who may do what ------------------------------------------------------------------------


def test_reader_cannot_read_another_namespace(
    local_as: ClientFactory, passwords: dict[str, str]
) -> None:
    reader = local_as("pull-test", passwords["pull-test"])
    digest = local_as(PUSH_USER, passwords[PUSH_USER]).manifest("other/agent", CHART.version)[1]
    for attempt in (
        lambda: reader.tags("other/agent"),
        lambda: reader.manifest("other/agent", CHART.version),
        lambda: reader.blob("other/agent", digest),
    ):
        with pytest.raises(RegistryError) as refused:
            attempt()
        assert refused.value.status in (401, 403), refused.value


def test_reader_cannot_push_into_its_own_namespace(
    local_as: ClientFactory, passwords: dict[str, str]
) -> None:
    with pytest.raises(RegistryError) as refused:
        local_as("pull-test", passwords["pull-test"]).push_chart("test/agent", CHART)
    assert refused.value.status in (401, 403), refused.value
    reader = local_as("pull-test", passwords["pull-test"])
    assert reader.tags("test/agent") == [CHART.version]


def test_unknown_names_get_the_registry_error_codes(
    local_as: ClientFactory, passwords: dict[str, str]
) -> None:
    reader = local_as("pull-test", passwords["pull-test"])
    attempts: dict[str, Callable[[], object]] = {
        "NAME_UNKNOWN": lambda: reader.tags("test/never-pushed"),
        "MANIFEST_UNKNOWN": lambda: reader.manifest("test/agent", "9.9.9"),
        "BLOB_UNKNOWN": lambda: reader.blob("test/agent", "sha256:" + "0" * 64),
    }
    for code, attempt in attempts.items():
        with pytest.raises(RegistryError) as unknown:
            attempt()
        assert (unknown.value.status, unknown.value.code) == (404, code)


def test_the_catalog_lists_what_the_user_may_read(
    registry: LocalRegistry, local_as: ClientFactory, passwords: dict[str, str]
) -> None:
    pusher = local_as(PUSH_USER, passwords[PUSH_USER])
    assert set(SEEDED_REPOSITORIES) <= set(pusher.catalog())
    listed = local_as("pull-test", passwords["pull-test"]).catalog()
    assert "test/agent" in listed
    assert [name for name in listed if not name.startswith("test/")] == []
    with pytest.raises(RegistryError) as refused:
        local_as(None, None).catalog()
    assert refused.value.status == 401, refused.value


def test_wrong_password_is_401(registry_as: ClientFactory) -> None:
    with pytest.raises(RegistryError) as refused:
        registry_as("pull-test", "not-the-password").tags("test/agent")
    assert (refused.value.status, refused.value.code) == (401, "UNAUTHORIZED")


def test_reader_added_at_runtime_reads_its_namespace_once_the_policy_names_it(
    registry: LocalRegistry, local_as: ClientFactory, passwords: dict[str, str]
) -> None:
    local_as(PUSH_USER, passwords[PUSH_USER]).push_chart("late/agent", CHART)
    password = secrets.token_urlsafe(18)
    REDACT.register(password)
    assert _verdict(local_as("pull-late", password), "late/agent", "read") == "401"

    registry.add_user("pull-late", password)
    assert _verdict(local_as("pull-late", password), "late/agent", "read") == "403"
    try:
        registry.set_policy(
            AccessPolicy.for_namespaces(PUSH_USER, {**READERS, "pull-late": "late"})
        )
        late = local_as("pull-late", password)
        assert late.tags("late/agent") == [CHART.version]
        assert _verdict(late, "test/agent", "read") == "403"
    finally:
        registry.set_policy(POLICY)
    assert _verdict(local_as("pull-late", password), "late/agent", "read") == "403"


@pytest.mark.parametrize(
    ("user", "repository", "action", "expected"),
    VERDICTS,
    ids=[f"{u or 'anonymous'}-{a}-{r}" for u, r, a, _ in VERDICTS],
)
def test_same_verdicts_as_the_in_memory_registry(
    registry_as: ClientFactory,
    passwords: dict[str, str],
    user: str | None,
    repository: str,
    action: str,
    expected: str,
) -> None:
    client = registry_as(user, passwords[user] if user else None)
    assert _verdict(client, repository, action) == expected


def test_every_user_repository_and_action_gets_the_same_verdict_from_both(
    passwords: dict[str, str],
) -> None:
    users: list[str | None] = [None, *passwords]
    repositories = [*SEEDED_REPOSITORIES, "test/never-pushed", "agent", "third/agent"]
    actions = ("read", "pull unknown tag", "push")
    cases = [(u, r, a) for u in users for r in repositories for a in actions]
    memory = InMemoryRegistry("registry.invalid", POLICY)
    memory.users.update(passwords)
    _seed(memory.client(PUSH_USER, passwords[PUSH_USER]))
    with LocalRegistry(policy=POLICY, name="test-registry-fresh") as fresh, ExitStack() as clients:
        for name, password in passwords.items():
            fresh.add_user(name, password)

        def real(user: str | None) -> RegistryClient:
            client = HttpRegistryClient(fresh.host, user, passwords[user] if user else None)
            return clients.enter_context(client)

        _seed(real(PUSH_USER))
        # Same operations in the same order: pushes change both registries alike.
        for user, repository, action in cases:
            in_memory = _verdict(
                memory.client(user, passwords[user] if user else None), repository, action
            )
            local = _verdict(real(user), repository, action)
            assert local == in_memory, f"{user or 'anonymous'} {action} {repository}"


# -- the client's own answers ----------------------------------------------------------------


def test_nothing_listening_is_unreachable() -> None:
    (port,) = free_loopback_ports(1)
    with (
        HttpRegistryClient(f"127.0.0.1:{port}", "pull-test", "x" * 8) as client,
        pytest.raises(Unreachable),
    ):
        client.tags("test/agent")


# -- lifecycle ------------------------------------------------------------------------------


def _group_alive(process_group: int) -> bool:
    try:
        os.killpg(process_group, 0)
    except ProcessLookupError:
        return False
    return True


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


class _Interrupted(Exception):
    pass


@pytest.mark.parametrize(
    "ending",
    [None, _Interrupted, KeyboardInterrupt],
    ids=["normal exit", "exception", "ctrl-c"],
)
def test_nothing_is_left_running_after_the_context_exits(
    ending: type[BaseException] | None,
) -> None:
    registry = LocalRegistry(policy=POLICY, name="test-registry-lifecycle")
    threads_before = set(threading.enumerate())
    with ExitStack() as expectation:
        if ending is not None:
            expectation.enter_context(pytest.raises(ending))
        with registry:
            service = registry.token_service  # None when zot authenticates itself
            process_group, directory = registry.process_id, registry.directory
            ports = [int(registry.host.rsplit(":", 1)[1])]
            ports += [service.port] if service is not None else []
            assert _group_alive(process_group)
            assert all(_listening(port) for port in ports)
            if ending is not None:
                raise ending()
    assert not _group_alive(process_group)
    assert not any(_listening(port) for port in ports)
    assert service is None or not service.running
    assert set(threading.enumerate()) <= threads_before
    assert not directory.exists()


def test_a_failed_start_stops_what_it_started() -> None:
    impatient = LocalRegistry(policy=POLICY, name="test-registry-impatient", startup_timeout=0)
    with pytest.raises(ReadinessTimeout, match="last seen"):
        impatient.start()
    assert not _group_alive(impatient.process_id)
    assert impatient.token_service is None or not impatient.token_service.running
    assert not impatient.directory.exists()


def test_logs_hold_no_secrets(
    registry: LocalRegistry, local_as: ClientFactory, passwords: dict[str, str]
) -> None:
    local_as("pull-test", passwords["pull-test"]).tags("test/agent")
    logs = registry.diagnostics()
    raw = "".join(path.read_text() for path in registry.log_paths.values())
    if registry.kind == "zot":
        assert set(logs) == {"test-registry-zot.log"}
        assert '"username":"pull-test"' in raw and "/v2/test/agent/tags/list" in raw
    else:
        assert set(logs) == {"test-registry-distribution.log", "test-registry-token-service.log"}
        assert "token for pull-test: repository:test/agent:pull -> pull" in raw
    encoded = [base64.b64encode(f"{u}:{p}".encode()).decode() for u, p in passwords.items()]
    assert not any(secret in raw for secret in [*passwords.values(), *encoded])
    assert "eyJ" not in raw


def test_zot_gets_the_same_policy(tmp_path: Path) -> None:
    config = zot_config("127.0.0.1", 5000, str(tmp_path), str(tmp_path / "htpasswd"), POLICY)
    assert config["http"]["accessControl"] == POLICY.document
    assert config["http"]["auth"]["htpasswd"]["path"] == str(tmp_path / "htpasswd")
