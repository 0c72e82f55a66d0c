"""One policy, three enforcers, the same answers.

The render registry's access policy is enforced by the sim's in-memory registry, by CNCF
Distribution behind the harness's token service, and by zot itself. Every row of the table below
is asked of each of them, in the same order, from the same starting content; each must answer
with the row's status. The answers are zot's (docs/backends/zot.md): 401 to a caller without
valid credentials, 403 to an authenticated user the policy refuses, 404 to one it allows for a
repository or tag that does not exist, and a catalog filtered to what the caller may read.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from solar_conformance.backends.local.registry import DISTRIBUTION_TOOL, LocalRegistry
from solar_conformance.components.registry_client import HttpRegistryClient
from solar_conformance.core.oci import Chart, RegistryClient, RegistryError
from solar_conformance.core.policy import AccessPolicy
from solar_conformance.core.redact import REDACT
from solar_conformance.provision.toolchain import MissingTool, Toolchain
from solar_conformance.provision.toolchain.layout import BUILD_COMMAND
from solar_conformance.provision.zot_binary import ZOT_EXECUTABLE, find_zot
from solar_conformance.simulators.memory.registry import InMemoryRegistry

pytestmark = pytest.mark.local

PUSH_USER = "solar"
READERS = {"pull-test": "test", "pull-other": "other"}
POLICY = AccessPolicy.for_namespaces(PUSH_USER, READERS)
SEEDED = ("test/agent", "test/doomed", "other/agent", "testing/agent", "agent")
CHART = Chart("agent", "0.1.0", templates={"a.yaml": "kind: ConfigMap\n"}, values={"a": 1})
NEW_TAG = Chart("agent", "0.2.0", templates={"a.yaml": "kind: ConfigMap\n"}, values={"a": 2})
WRONG_PASSWORD = "wrong-password"  # a caller with this password for a known user
STRANGER = "stranger"  # a user the registry does not know


@dataclass(frozen=True)
class Row:
    user: str | None  # None: anonymous
    action: str
    repository: str
    status: int

    @property
    def id(self) -> str:
        return f"{self.user or 'anonymous'} {self.action} {self.repository or '(catalog)'}"


# In order: earlier rows' pushes and deletes are what later rows see.
TABLE = [
    Row(PUSH_USER, "read", "test/agent", 200),
    Row(PUSH_USER, "push a new tag", "test/agent", 201),
    Row(PUSH_USER, "overwrite a tag", "test/agent", 201),
    Row(PUSH_USER, "push a new tag", "solar/created-by-push", 201),
    Row(PUSH_USER, "delete", "test/doomed", 202),
    Row(PUSH_USER, "read", "test/doomed", 200),  # the repository stays, without tags
    Row("pull-test", "read", "test/agent", 200),
    Row("pull-test", "pull a missing tag", "test/agent", 404),
    Row("pull-test", "read", "test/never-pushed", 404),
    Row("pull-test", "read", "other/agent", 403),
    Row("pull-test", "read", "other/never-pushed", 403),
    Row("pull-test", "read", "testing/agent", 403),
    Row("pull-test", "read", "agent", 403),
    Row("pull-test", "read", "test", 404),  # `test/**` matches `test` itself: allowed, unknown
    Row("pull-test", "overwrite a tag", "test/agent", 403),
    Row("pull-test", "push an unseen chart", "test/new", 403),
    Row("pull-test", "push an unseen chart", "other/new", 403),
    Row("pull-test", "delete", "test/agent", 403),
    Row("pull-other", "read", "other/agent", 200),
    Row("pull-other", "read", "test/agent", 403),
    Row(WRONG_PASSWORD, "read", "test/agent", 401),
    Row(STRANGER, "read", "test/agent", 401),
    Row(None, "read", "test/agent", 401),
    Row(None, "push an unseen chart", "test/new", 401),
    Row(None, "catalog", "", 401),
    Row(WRONG_PASSWORD, "catalog", "", 401),
]
# What each user's catalog lists at the end of the table: what it may read, and nothing else.
CATALOGS = {
    PUSH_USER: [
        "agent",
        "other/agent",
        "solar/created-by-push",
        "test/agent",
        "test/doomed",
        "testing/agent",
    ],
    "pull-test": ["test/agent", "test/doomed"],
    "pull-other": ["other/agent"],
}

Connect = Callable[[str | None, str | None], RegistryClient]


def _unseen_chart() -> Chart:
    """A chart whose blobs no repository holds. zot deduplicates blobs: a caller who may read a
    repository and asks whether a blob is there (a push's first step) gets a blob another
    repository holds linked in, which creates that repository, untagged (docs/backends/zot.md).
    Refused pushes here are of blobs nobody has, so they leave nothing behind anywhere."""
    return Chart(f"unseen-{secrets.token_hex(6)}", "0.0.1", templates={"a.yaml": "kind: List\n"})


def _answer(client: RegistryClient, action: str, repository: str) -> int:
    operations: dict[str, Callable[[], object]] = {
        "read": lambda: client.tags(repository),
        "pull a missing tag": lambda: client.manifest(repository, "9.9.9"),
        "push a new tag": lambda: client.push_chart(repository, NEW_TAG),
        "overwrite a tag": lambda: client.push_chart(repository, CHART),
        "push an unseen chart": lambda: client.push_chart(repository, _unseen_chart()),
        "delete": lambda: client.delete_manifest(repository, CHART.version),
        "catalog": client.catalog,
    }
    success = {"push a new tag": 201, "overwrite a tag": 201, "push an unseen chart": 201}
    success |= {"delete": 202}
    try:
        operations[action]()
    except RegistryError as error:
        return error.status
    return success.get(action, 200)


@pytest.fixture(scope="module")
def passwords() -> dict[str, str]:
    made = {user: secrets.token_urlsafe(18) for user in (PUSH_USER, *READERS)}
    REDACT.register(*made.values())
    return made


def _credentials(user: str | None, passwords: dict[str, str]) -> tuple[str | None, str | None]:
    if user is None:
        return None, None
    if user == WRONG_PASSWORD:
        return "pull-test", "not-the-password"
    if user == STRANGER:
        return STRANGER, "no-such-user-password"
    return user, passwords[user]


@contextmanager
def _local_registry(passwords: dict[str, str], zot: Path | None) -> Iterator[Connect]:
    with (
        LocalRegistry(
            policy=POLICY, name="policy-table", zot_binary=zot, look_for_zot_on_path=False
        ) as registry,
        ExitStack() as clients,
    ):
        for user, password in passwords.items():
            registry.add_user(user, password)

        def connect(user: str | None, password: str | None) -> RegistryClient:
            return clients.enter_context(HttpRegistryClient(registry.host, user, password))

        yield connect


def _missing_distribution() -> str | None:
    try:
        Toolchain.from_env().path(DISTRIBUTION_TOOL)
    except MissingTool:
        return f"CNCF Distribution is not built; run: {BUILD_COMMAND} --only registry"
    return None


@pytest.fixture(scope="module", params=["in-memory model", "distribution+token-service", "zot"])
def enforcer(request: pytest.FixtureRequest, passwords: dict[str, str]) -> Iterator[Connect]:
    if request.param == "in-memory model":
        memory = InMemoryRegistry("registry.invalid", POLICY)
        memory.users.update(passwords)
        connect: Connect = memory.client
        _seed(connect, passwords)
        yield connect
        return
    zot = None
    if request.param == "zot":
        zot = find_zot()
        if zot is None:
            pytest.skip(f"no `{ZOT_EXECUTABLE}` binary on PATH (zot v2, built from its source)")
    else:
        missing = _missing_distribution()
        if missing:
            pytest.skip(missing)
    with _local_registry(passwords, zot) as connect:
        _seed(connect, passwords)
        yield connect


def _seed(connect: Connect, passwords: dict[str, str]) -> None:
    pusher = connect(PUSH_USER, passwords[PUSH_USER])
    for repository in SEEDED:
        pusher.push_chart(repository, CHART)


@pytest.mark.parametrize("row", TABLE, ids=[row.id for row in TABLE])
def test_the_enforcer_answers_as_zot(
    enforcer: Connect, passwords: dict[str, str], row: Row
) -> None:
    client = enforcer(*_credentials(row.user, passwords))
    assert _answer(client, row.action, row.repository) == row.status, row.id


@pytest.mark.parametrize("user", sorted(CATALOGS))
def test_the_catalog_lists_what_the_user_may_read_and_nothing_else(
    enforcer: Connect, passwords: dict[str, str], user: str
) -> None:
    assert enforcer(user, passwords[user]).catalog() == CATALOGS[user]
