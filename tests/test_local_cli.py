"""What `solar-conformance local` and `kind` give for walking the page by hand: env.sh (with its
registry client), local's `logs`, a second namespace, and the commands that act on a running
landscape; and what `down` removes of the walk's files."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlparse

import pytest

from solar_conformance.backends.existing import walk
from solar_conformance.backends.existing.walk import environment_script
from solar_conformance.backends.kind.__main__ import main as kind_main
from solar_conformance.backends.local.__main__ import agent_logs
from solar_conformance.backends.local.__main__ import main as local_main
from solar_conformance.backends.sim.landscape import SimLandscape
from solar_conformance.components import faults
from solar_conformance.core import yamlio
from solar_conformance.core.contract import Contract
from solar_conformance.page.setup import set_up_namespace

JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6dGVzdDphZ2VudCJ9.c2lnbmF0dXJl"


def _sourced(script: Path, expression: str) -> str:
    result = subprocess.run(
        ["bash", "-c", f'. "$1" && printf %s "{expression}"', "bash", str(script)],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"]},
    )
    return result.stdout


def test_env_script_names_both_kubeconfigs_and_puts_kubectl_first(tmp_path: Path) -> None:
    script = tmp_path / "env.sh"
    solar, target = tmp_path / "a dir" / "solar.kubeconfig", tmp_path / "target's.kubeconfig"
    script.write_text(environment_script(solar, target, str(tmp_path / "kube bin")))
    assert _sourced(script, "$SOLAR_KUBECONFIG") == str(solar)
    assert _sourced(script, "$TARGET_KUBECONFIG") == str(target)
    assert _sourced(script, "$PATH").split(":")[0] == str(tmp_path / "kube bin")


def test_env_script_without_a_built_kubectl_leaves_path_alone(tmp_path: Path) -> None:
    script = tmp_path / "env.sh"
    script.write_text(environment_script(tmp_path / "s", tmp_path / "t", None))
    assert _sourced(script, "$PATH") == os.environ["PATH"]


def test_logs_print_every_agent_of_the_namespace_oldest_first_redacted(tmp_path: Path) -> None:
    for number, text in ((1, "first pod\n"), (2, f"reported with {JWT}\n")):
        pod = tmp_path / "test" / f"solar-agent-abc-{number:05d}"
        pod.mkdir(parents=True)
        (pod / "agent.log").write_text(text)
        os.utime(pod / "agent.log", (number, number))
    (tmp_path / "other" / "solar-agent-def-00003").mkdir(parents=True)
    (tmp_path / "other" / "solar-agent-def-00003" / "agent.log").write_text("other namespace\n")

    output = agent_logs(tmp_path, "test")

    assert output.index("solar-agent-abc-00001") < output.index("solar-agent-abc-00002")
    assert "first pod" in output and "reported with" in output
    assert "other namespace" not in output
    assert JWT not in output and "eyJ" not in output


def test_logs_of_a_namespace_without_agents_say_so(tmp_path: Path) -> None:
    assert agent_logs(tmp_path, "test") == "no agent has run in namespace test yet\n"


# --- regcred_get: env.sh's registry client ------------------------------------------------------

PULL_USER, PULL_PASSWORD = "reader-test", "s3cret-pull-password"
BEARER = "registry-token-for-the-catalog"
CATALOG = '{"repositories":["test/bootstrap-cluster-1"]}'


class _Registry(BaseHTTPRequestHandler):
    """A registry that challenges as Distribution (Bearer, a token realm) or as zot (Basic)."""

    challenge: ClassVar[str] = "Bearer"
    token_queries: ClassVar[list[dict[str, list[str]]]] = []

    def do_GET(self) -> None:
        host = self.headers["Host"]
        basic = "Basic " + base64.b64encode(f"{PULL_USER}:{PULL_PASSWORD}".encode()).decode()
        given = self.headers.get("Authorization")
        url = urlparse(self.path)
        if url.path == "/token":
            type(self).token_queries.append(parse_qs(url.query))
            ok = given == basic
            self._answer(200 if ok else 401, json.dumps({"token": BEARER}) if ok else "{}")
        elif given == (f"Bearer {BEARER}" if self.challenge == "Bearer" else basic):
            self._answer(200, CATALOG)
        else:
            self.send_response(401)
            if self.challenge == "Bearer":
                self.send_header(
                    "WWW-Authenticate",
                    f'Bearer realm="http://{host}/token",service="render",'
                    'scope="registry:catalog:*"',
                )
            else:
                self.send_header("WWW-Authenticate", 'Basic realm="zot"')
            self.send_header("Content-Length", "0")
            self.end_headers()

    def _answer(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


def _regcred_get(tmp_path: Path, challenge: str) -> tuple[str, list[dict[str, list[str]]]]:
    class Registry(_Registry):
        token_queries: ClassVar[list[dict[str, list[str]]]] = []

    Registry.challenge = challenge
    handler = Registry
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host = f"127.0.0.1:{server.server_address[1]}"
        auth = base64.b64encode(f"{PULL_USER}:{PULL_PASSWORD}".encode()).decode()
        config = {"auths": {host: {"username": PULL_USER, "password": PULL_PASSWORD, "auth": auth}}}
        encoded = base64.b64encode(json.dumps(config).encode()).decode()
        kube_bin = tmp_path / "bin"
        kube_bin.mkdir()
        (kube_bin / "kubectl").write_text(  # the target cluster's regcred of namespace test only
            "#!/bin/sh\n"
            'case "$*" in *"get secret regcred -n test "*) echo ' + encoded + " ;; "
            '*) echo "not found" >&2; exit 1 ;; esac\n'
        )
        (kube_bin / "kubectl").chmod(0o755)
        script = tmp_path / "env.sh"
        script.write_text(environment_script(tmp_path / "s", tmp_path / "t", str(kube_bin)))
        result = subprocess.run(
            ["bash", "-c", '. "$1" && regcred_get test /v2/_catalog', "bash", str(script)],
            capture_output=True,
            text=True,
            check=True,
            env={"PATH": os.environ["PATH"]},
        )
        return result.stdout + result.stderr, handler.token_queries
    finally:
        server.shutdown()
        server.server_close()


def test_regcred_get_answers_a_bearer_challenge_with_the_namespaces_pull_user(
    tmp_path: Path,
) -> None:
    output, token_queries = _regcred_get(tmp_path, "Bearer")
    assert output == f"{CATALOG}\nHTTP 200\n"
    assert token_queries == [{"service": ["render"], "scope": ["registry:catalog:*"]}]
    assert PULL_PASSWORD not in output and BEARER not in output


def test_regcred_get_answers_a_basic_challenge_as_zot_asks(tmp_path: Path) -> None:
    output, token_queries = _regcred_get(tmp_path, "Basic")
    assert output == f"{CATALOG}\nHTTP 200\n"
    assert token_queries == []
    assert PULL_PASSWORD not in output


# --- the commands that act on a running landscape -----------------------------------------------

Main = Callable[[list[str]], int]


@pytest.fixture(params=[local_main, kind_main], ids=["local", "kind"])
def main(request: pytest.FixtureRequest) -> Main:
    command: Main = request.param
    return command


@pytest.mark.parametrize(
    "argv",
    [
        ["namespace", "--namespace", "other"],
        ["apiserver-url", "unset"],
        ["token-requests", "refuse", "--namespace", "test"],
    ],
)
def test_commands_on_a_landscape_refuse_in_one_line_when_none_is_up(
    tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str], main: Main
) -> None:
    assert main([*argv, f"--state-dir={tmp_path}"]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no landscape is up" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["apiserver-url"],
        ["apiserver-url", "refuse"],
        ["token-requests", "unset"],
        ["namespace"],
        ["up", "set"],
    ],
)
def test_commands_refuse_a_missing_or_wrong_action_in_one_line(
    tmp_path: Path, argv: list[str], main: Main, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*argv, f"--state-dir={tmp_path}"])
    assert exited.value.code == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--help" in err


@contextmanager
def _sim(_: Path) -> Iterator[SimLandscape]:
    landscape = SimLandscape(Contract())
    try:
        yield landscape
    finally:
        landscape.close()


def test_a_second_namespace_is_set_up_with_its_own_pull_user_and_page_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], main: Main
) -> None:
    seen: dict[str, Any] = {}

    @contextmanager
    def attached(state_dir: Path) -> Iterator[SimLandscape]:
        with _sim(state_dir) as landscape:
            set_up_namespace(landscape, landscape.solar, "test")
            seen["landscape"] = landscape
            yield landscape
            seen["kinds"] = {
                kind: [o["metadata"]["name"] for o in landscape.solar.list(kind, "other")]
                for kind in ("Release", "Profile", "Registry")
            }

    monkeypatch.setattr(walk, "attached", attached)
    assert main(["namespace", "--namespace=other", "--target=edge", f"--state-dir={tmp_path}"]) == 0

    assert seen["kinds"] == {
        "Release": ["solar-agent"],
        "Profile": ["solar-agent"],
        "Registry": ["render"],
    }
    folder = tmp_path / "other"
    assert sorted(p.name for p in folder.iterdir()) == [
        "helmrelease.yaml",
        "regcred.yaml",
        "target.yaml",
    ]
    assert (folder / "regcred.yaml").stat().st_mode & 0o077 == 0
    target = yamlio.load((folder / "target.yaml").read_text())
    assert (target["metadata"]["name"], target["metadata"]["namespace"]) == ("edge", "other")
    config = json.loads(
        yamlio.load((folder / "regcred.yaml").read_text())["stringData"][".dockerconfigjson"]
    )
    (entry,) = config["auths"].values()
    assert (entry["username"], entry["password"]) == seen["landscape"].reader_credentials("other")
    assert entry["username"] != seen["landscape"].reader_credentials("test")[0]
    assert "other/bootstrap-edge" in (folder / "helmrelease.yaml").read_text()
    assert entry["password"] not in capsys.readouterr().out


def test_a_namespace_that_exists_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], main: Main
) -> None:
    @contextmanager
    def attached(state_dir: Path) -> Iterator[SimLandscape]:
        with _sim(state_dir) as landscape:
            set_up_namespace(landscape, landscape.solar, "test")
            yield landscape

    monkeypatch.setattr(walk, "attached", attached)
    assert main(["namespace", "--namespace=test", f"--state-dir={tmp_path}"]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "namespace test exists already" in err
    assert not (tmp_path / "test").exists()


class _Recorder:
    """Stands for the attached landscape: records what the commands ask of it."""

    solar_api_url = "https://127.0.0.1:6443"

    def __init__(self) -> None:
        self.solar = object()
        self.calls: list[tuple[Any, ...]] = []

    def configure_apiserver_url(self, url: str | None) -> None:
        self.calls.append(("configure_apiserver_url", url))


def _attach(monkeypatch: pytest.MonkeyPatch) -> _Recorder:
    recorder = _Recorder()

    @contextmanager
    def attached(_: Path) -> Iterator[_Recorder]:
        yield recorder

    monkeypatch.setattr(walk, "attached", attached)
    return recorder


def test_apiserver_url_unsets_and_sets_again_the_landscapes_own_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, main: Main
) -> None:
    recorder = _attach(monkeypatch)
    assert main(["apiserver-url", "unset", f"--state-dir={tmp_path}"]) == 0
    assert main(["apiserver-url", "set", f"--state-dir={tmp_path}"]) == 0
    assert recorder.calls == [
        ("configure_apiserver_url", None),
        ("configure_apiserver_url", _Recorder.solar_api_url),
    ]


def test_token_requests_use_the_harness_fault_in_the_named_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, main: Main
) -> None:
    recorder = _attach(monkeypatch)
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(
        faults, "deny_token_requests", lambda solar, ns, message: calls.append(("deny", solar, ns))
    )
    monkeypatch.setattr(
        faults, "accept_token_requests", lambda solar, ns: calls.append(("accept", solar, ns))
    )
    assert main(["token-requests", "refuse", "--namespace=other", f"--state-dir={tmp_path}"]) == 0
    assert main(["token-requests", "accept", "--namespace=other", f"--state-dir={tmp_path}"]) == 0
    assert calls == [("deny", recorder.solar, "other"), ("accept", recorder.solar, "other")]


def test_logs_refuses_in_one_line_when_no_landscape_is_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert local_main(["logs", f"--state-dir={tmp_path}"]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no landscape is up" in err


def test_down_removes_the_walks_files_and_leaves_the_rest(tmp_path: Path) -> None:
    for folder in (tmp_path, tmp_path / "other"):
        folder.mkdir(exist_ok=True)
        for name in (*walk.PAGE_FILES, walk.ENV_FILE):
            (folder / name).write_text("x")
    (tmp_path / "kubeconfig-you-made").write_text("x")
    walk.remove_files(tmp_path, {"namespaces": ["other"]})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kubeconfig-you-made"]
