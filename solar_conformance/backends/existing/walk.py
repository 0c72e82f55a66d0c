"""Walking the page by hand on a landscape that `local up` or `kind up` holds: the page's objects
and env.sh written at the start, and the commands that act on the running landscape through its
landscape file, as the `existing` backend sees it.

    solar-conformance local|kind namespace --namespace other [--target T] [--state-dir DIR]
    solar-conformance local|kind apiserver-url unset|set [--state-dir DIR]
    solar-conformance local|kind token-requests refuse|accept [--namespace test] [--state-dir DIR]

`namespace` does the operator's part in a second namespace of the SolAr cluster (its own pull
user) and writes its page files to DIR/<namespace>/. `apiserver-url` unsets or sets the
reference controller's `controller.agent.apiserverURL` (Disabled and back). `token-requests`
makes the SolAr API server refuse TokenRequests in a namespace (the harness's admission-policy
fault: MintFailed) or accept them again; each returns once the change is in force.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from solar_conformance.backends.existing import holder
from solar_conformance.backends.existing.landscape_file import BadLandscapeFile
from solar_conformance.core import yamlio
from solar_conformance.core.command_line import BAD_INPUT, OneLineParser
from solar_conformance.core.landscape import MissingPrerequisite

DEFAULT_NAMESPACE = "test"
DEFAULT_TARGET = "cluster-1"
PAGE_FILES = ("target.yaml", "regcred.yaml", "helmrelease.yaml")
ENV_FILE = "env.sh"

# A registry client for the hand walk, in plain sight: curl and jq, with the pull user of a
# namespace's regcred as the target cluster holds it (what Flux pulls with). It answers the
# registry's challenge as Docker clients do (a Bearer token from the realm, or Basic auth) and
# hands credentials to curl on stdin, so no password shows in a process list or on the screen.
REGISTRY_FUNCTION = r"""
# regcred_get NAMESPACE PATH: GET http://<registry>PATH as the pull user of NAMESPACE's regcred
# on the target cluster; prints the body, and the HTTP status to stderr on a line of its own.
regcred_get() {
  local config host auth challenge realm service scope token
  config=$(kubectl --kubeconfig "$TARGET_KUBECONFIG" get secret regcred -n "$1" \
    -o jsonpath='{.data.\.dockerconfigjson}' | base64 -d) || return 1
  host=$(printf %s "$config" | jq -r '.auths | keys[0]')
  auth=$(printf %s "$config" | jq -r '.auths[.auths | keys[0]].auth')
  challenge=$(curl -s -o /dev/null -D - "http://$host$2" | tr -d '\r' |
    sed -n 's/^[Ww][Ww][Ww]-[Aa]uthenticate: //p')
  if [ "${challenge%% *}" = Bearer ]; then
    realm=$(printf %s "$challenge" | sed -n 's/.*realm="\([^"]*\)".*/\1/p')
    service=$(printf %s "$challenge" | sed -n 's/.*service="\([^"]*\)".*/\1/p')
    scope=$(printf %s "$challenge" | sed -n 's/.*scope="\([^"]*\)".*/\1/p')
    token=$(printf 'Authorization: Basic %s\n' "$auth" | curl -s -G -H @- "$realm" \
      --data-urlencode "service=$service" --data-urlencode "scope=$scope" | jq -r '.token // ""')
    printf 'Authorization: Bearer %s\n' "$token"
  else
    printf 'Authorization: Basic %s\n' "$auth"
  fi | curl -s -w '%{stderr}\nHTTP %{http_code}\n' -H @- \
    -H 'Accept: application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json' \
    "http://$host$2"
}
"""


def _write_private(path: Path, text: str) -> None:
    path.write_text("")
    path.chmod(0o600)
    path.write_text(text)


def environment_script(solar: Path, target: Path, kubectl_directory: str | None) -> str:
    """What `. DIR/env.sh` sets: both kubeconfigs, the pinned kubectl first on PATH, and
    `regcred_get`, the walk's registry client."""
    lines = [
        "# . this file: SOLAR_KUBECONFIG, TARGET_KUBECONFIG, the pinned kubectl and regcred_get",
        f"export SOLAR_KUBECONFIG={shlex.quote(str(solar))}",
        f"export TARGET_KUBECONFIG={shlex.quote(str(target))}",
    ]
    if kubectl_directory is not None:
        lines.append(f'export PATH={shlex.quote(kubectl_directory)}:"$PATH"')
    return "\n".join(lines) + "\n" + REGISTRY_FUNCTION


def write_page_files(
    landscape: Any, directory: Path, namespace: str, target: str
) -> dict[str, Path]:
    """The namespace set up as the page's operator does, and the page's objects for it."""
    from solar_conformance.core.api import new_object
    from solar_conformance.page.objects import FirstContact
    from solar_conformance.page.setup import REGISTRY, set_up_namespace

    set_up_namespace(landscape, landscape.solar, namespace)
    user, password = landscape.reader_credentials(namespace)
    page = FirstContact(landscape.registry.host, namespace, target, user, password, True)
    directory.mkdir(parents=True, exist_ok=True)
    files = {name.removesuffix(".yaml"): directory / name for name in PAGE_FILES}
    target_obj = new_object(
        "Target", target, namespace, spec={"renderRegistryRef": {"name": REGISTRY}, "userdata": {}}
    )
    files["target"].write_text(yamlio.dump(target_obj))
    _write_private(files["regcred"], yamlio.dump(page.regcred()))
    files["helmrelease"].write_text("---\n".join(yamlio.dump(o) for o in page.helmrelease()))
    return files


def prepare(
    landscape: Any, state_dir: Path, namespace: str, target: str, kubectl_directory: str | None
) -> dict[str, Any]:
    """What `up` leaves for the walk: the namespace set up, the page's files and env.sh; the
    state the holder records of them."""
    files = write_page_files(landscape, state_dir, namespace, target)
    files["env"] = state_dir / ENV_FILE
    files["env"].write_text(
        environment_script(
            landscape.solar_kubeconfig, landscape.target_kubeconfig, kubectl_directory
        )
    )
    return {
        "namespace": namespace,
        "solar": {"kubeconfig": str(landscape.solar_kubeconfig)},
        "target": {"kubeconfig": str(landscape.target_kubeconfig)},
        "registry": {"host": landscape.registry.host},
        "files": {name: str(path) for name, path in files.items()},
    }


def remove_files(state_dir: Path, state: Mapping[str, Any]) -> None:
    """What `up` and `namespace` wrote for the walk, once the landscape is down."""
    for folder in [state_dir, *(state_dir / ns for ns in state.get("namespaces", []))]:
        for name in (*PAGE_FILES, ENV_FILE):
            (folder / name).unlink(missing_ok=True)
        if folder != state_dir and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def print_walk(state: Mapping[str, Any], state_dir: Path, backend: str, target: str) -> None:
    """Where the landscape is, and the walk's first commands."""
    namespace = state["namespace"]
    print(f"SolAr cluster:   KUBECONFIG={state['solar']['kubeconfig']}")
    print(f"target cluster:  KUBECONFIG={state['target']['kubeconfig']}")
    print(f"render registry: {state['registry']['host']} (plain HTTP)")
    here = state_dir.resolve()
    print(f"walk the page (docs/backends/{backend}.md):")
    print(f"  . {here / ENV_FILE}")
    print(f'  kubectl --kubeconfig "$SOLAR_KUBECONFIG" apply -f {here / "target.yaml"}')
    print(
        '  kubectl --kubeconfig "$SOLAR_KUBECONFIG" get target '
        f"{target} -n {namespace} -o jsonpath='{{.status.conditions}}'"
    )
    print(f'  kubectl --kubeconfig "$TARGET_KUBECONFIG" create namespace {namespace}')
    for name in ("regcred", "helmrelease"):
        print(
            f'  kubectl --kubeconfig "$TARGET_KUBECONFIG" apply -n {namespace} '
            f"-f {here / (name + '.yaml')}"
        )
    print(
        '  kubectl --kubeconfig "$SOLAR_KUBECONFIG" get targetreport '
        f"{target} -n {namespace} -o jsonpath='{{.spec.lastReportTime}}'"
    )


class NotUp(RuntimeError):
    """No landscape is up in the state directory."""


def state_of(state_dir: Path) -> dict[str, Any]:
    state_file = state_dir / holder.STATE
    if not state_file.exists():
        raise NotUp(f"no landscape is up ({state_file} does not exist); run `up` first")
    return holder.read_state(state_file)


@contextmanager
def attached(state_dir: Path) -> Iterator[Any]:
    """The running landscape, through its landscape file, as the `existing` backend sees it."""
    from solar_conformance.backends.existing.landscape import ExistingLandscape
    from solar_conformance.backends.existing.landscape_file import load
    from solar_conformance.core.contract import REFERENCE

    state = state_of(state_dir)
    landscape = ExistingLandscape(load(Path(state["landscape"])), REFERENCE)
    try:
        yield landscape
    finally:
        landscape.close()


def second_namespace(state_dir: Path, namespace: str, target: str) -> int:
    """The operator's part in another namespace, and its page files in DIR/<namespace>/."""
    with attached(state_dir) as landscape:
        if any(ns["metadata"]["name"] == namespace for ns in landscape.solar.list("Namespace")):
            print(
                f"namespace {namespace} exists already on the SolAr cluster; choose another",
                file=sys.stderr,
            )
            return BAD_INPUT
        files = write_page_files(landscape, state_dir / namespace, namespace, target)
    _remember_namespace(state_dir, namespace)
    print(f"namespace {namespace} set up: Release and Profile solar-agent, Registry render")
    for path in files.values():
        print(f"  {path.resolve()}")
    return 0


def _remember_namespace(state_dir: Path, namespace: str) -> None:
    """So that `down` removes its page files too (the holder rewrites no state once up)."""
    state_file = state_dir / holder.STATE
    if not state_file.exists():
        return
    state = json.loads(state_file.read_text())
    state["namespaces"] = sorted({*state.get("namespaces", []), namespace})
    (state_dir / f"{holder.STATE}.tmp").write_text(json.dumps(state, indent=2))
    (state_dir / f"{holder.STATE}.tmp").replace(state_file)


def apiserver_url(state_dir: Path, action: str) -> int:
    """Unset or set again controller.agent.apiserverURL (the harness's configure-apiserver-url)."""
    with attached(state_dir) as landscape:
        url = None if action == "unset" else landscape.solar_api_url
        landscape.configure_apiserver_url(url)
    print(f"controller.agent.apiserverURL {'unset' if url is None else f'set to {url}'}")
    return 0


REFUSAL_MESSAGE = "TokenRequests refused by hand (solar-conformance ... token-requests)"


def token_requests(state_dir: Path, action: str, namespace: str) -> int:
    """Refuse TokenRequests in the namespace, or accept them again (the harness's mint fault)."""
    from solar_conformance.components.faults import accept_token_requests, deny_token_requests

    with attached(state_dir) as landscape:
        if action == "refuse":
            deny_token_requests(landscape.solar, namespace, REFUSAL_MESSAGE)
        else:
            accept_token_requests(landscape.solar, namespace)
    print(f"TokenRequests in {namespace} are {'refused' if action == 'refuse' else 'accepted'}")
    return 0


# A namespace is a DNS label; a Target's name is part of the names SolAr derives from it
# (bootstrap-<target>, its ServiceAccount), so it is kept as short as the steps keep it.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
NAMESPACE_LIMIT = 63
TARGET_LIMIT = 40


def _is_name(name: str, limit: int) -> bool:
    return len(name) <= limit and bool(DNS_LABEL.match(name))


ACTIONS = {
    "apiserver-url": ("unset", "set"),
    "token-requests": ("refuse", "accept"),
}
Command = Callable[[argparse.Namespace, str], int]


def _walk_command(args: argparse.Namespace, namespace: str) -> int:
    if args.command == "namespace":
        return second_namespace(args.state_dir, namespace, args.target)
    if args.command == "apiserver-url":
        return apiserver_url(args.state_dir, args.action)
    return token_requests(args.state_dir, args.action, namespace)


def one_line(problem: BaseException) -> str:
    """A refusal's message on one line: its first problem, and how many more there are."""
    lines = [line for line in str(problem).splitlines() if line.strip()] or [repr(problem)]
    more = len(lines) - 1
    return lines[0] + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def main(
    prog: str,
    description: str | None,
    default_state_dir: Path,
    own: Mapping[str, Command],
    argv: Sequence[str] | None,
    prerequisites: tuple[type[Exception], ...] = (),
    own_options: Callable[[argparse.ArgumentParser], None] = lambda parser: None,
) -> int:
    """A backend's command line: its own commands (up, down, ...) and options, and the walk's.
    Bad arguments, no landscape up, a landscape file that cannot be used and the backend's
    `prerequisites` missing end the command in one line with exit code 4."""
    parser = OneLineParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    own_options(parser)
    parser.add_argument("command", choices=(*own, "namespace", *ACTIONS))
    parser.add_argument(
        "action", nargs="?", help="apiserver-url: unset|set; token-requests: refuse|accept"
    )
    parser.add_argument("--state-dir", type=Path, default=default_state_dir)
    parser.add_argument("--namespace", default=None, help=f"default: {DEFAULT_NAMESPACE}")
    parser.add_argument("--target", default=DEFAULT_TARGET)
    args = parser.parse_args(argv)
    allowed = ACTIONS.get(args.command)
    if allowed is None and args.action is not None:
        parser.error(f"{args.command} takes no action ({args.action})")
    if allowed is not None and args.action is None:
        parser.error(f"{args.command} needs {' or '.join(allowed)}")
    if allowed is not None and args.action not in allowed:
        parser.error(f"{args.command} takes {' or '.join(allowed)}, not {args.action}")
    if args.command == "namespace" and args.namespace is None:
        parser.error("namespace needs --namespace NAME")
    for option, name, limit in (
        ("--namespace", args.namespace, NAMESPACE_LIMIT),
        ("--target", args.target, TARGET_LIMIT),
    ):
        if name is not None and not _is_name(name, limit):
            parser.error(
                f"{option} {name!r} is not a Kubernetes name: at most {limit} lower-case "
                "letters, digits and '-', starting and ending with a letter or digit"
            )
    namespace = args.namespace or DEFAULT_NAMESPACE
    refused: tuple[type[Exception], ...] = (
        NotUp,
        holder.BadState,
        BadLandscapeFile,
        MissingPrerequisite,
        *prerequisites,
    )
    try:
        return own.get(args.command, _walk_command)(args, namespace)
    except refused as problem:
        print(one_line(problem), file=sys.stderr)
        return BAD_INPUT
