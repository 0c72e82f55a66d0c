"""`solar-conformance`: the page run from the installed package, and the harness's other commands.

    solar-conformance run [--landscape FILE] [--report DIR] [NAME.feature...] [PYTEST ARGS...]
    solar-conformance local up|down|logs|namespace|apiserver-url|token-requests ...
    solar-conformance kind up|down|clusters|namespace|apiserver-url|token-requests ...
    solar-conformance report ...
    solar-conformance provision ...

`run` runs the feature files the package carries: on the in-memory reference (sim) by default,
or against the landscape a landscape file describes (docs/landscape-file.md), and writes the
report into DIR. Naming feature files (`create_target.feature`, with or without a folder) runs
only those; without, the whole page. Every other pytest option passes through (`-n 4`, `-k`,
`--solar-impl`, ...).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from importlib import import_module, resources
from pathlib import Path

from solar_conformance.core.command_line import BAD_INPUT, OneLineParser

COMMANDS = {
    "local": "solar_conformance.backends.local.__main__",
    "kind": "solar_conformance.backends.kind.__main__",
    "report": "solar_conformance.report.__main__",
    "provision": "solar_conformance.provision.__main__",
}
DEFAULT_REPORT = "solar-conformance-report"
FEATURE_SUFFIX = ".feature"


class BadRunArguments(Exception):
    """What `run` was given cannot be run: one line."""


def features_folder() -> Path:
    """The page's feature files as the package carries them (the checkout's features/ when the
    package is installed in editable mode)."""
    return Path(str(resources.files("solar_conformance.features")))


def run_arguments(argv: Sequence[str]) -> list[str]:
    """The pytest arguments of `solar-conformance run ARGV`."""
    parser = OneLineParser(
        prog="solar-conformance run",
        description="Run the agent-registration page against a SolAr landscape.",
        epilog="Other arguments are pytest's and the plugin's (pytest --help lists them).",
    )
    parser.add_argument(
        "--landscape",
        metavar="FILE",
        help="the landscape file of an existing SolAr landscape (default: the in-memory reference)",
    )
    parser.add_argument(
        "--report",
        metavar="DIR",
        default=DEFAULT_REPORT,
        help=f"where the report is written (default: {DEFAULT_REPORT})",
    )
    known, rest = parser.parse_known_args(list(argv))
    features = features_folder()
    named = [token for token in rest if _names_a_feature_file(token)]
    passed_through = [token for token in rest if token not in named]
    arguments = [
        *([str(_packaged_feature(features, name)) for name in named] or [str(features)]),
        # No ini file of wherever the package happens to be installed: the plugin's own settings.
        f"--config-file={os.devnull}",
        f"--rootdir={features.parent}",
        "-p",
        "no:cacheprovider",
        "--strict-markers",
        "-o",
        "xfail_strict=true",
        f"--solar-report={known.report}",
    ]
    if known.landscape:
        arguments += ["--solar-env=existing", f"--solar-landscape={known.landscape}"]
    return arguments + passed_through


def _names_a_feature_file(token: str) -> bool:
    return not token.startswith("-") and token.endswith(FEATURE_SUFFIX)


def _packaged_feature(features: Path, name: str) -> Path:
    """The feature file the package carries under NAME's file name: the page is what the package
    ships, so a folder in NAME (the checkout's `features/...`) only locates it."""
    carried = features / Path(name).name
    if carried.is_file():
        return carried
    choices = ", ".join(sorted(path.name for path in features.glob(f"*{FEATURE_SUFFIX}")))
    raise BadRunArguments(
        f"solar-conformance run: no feature file {name!r}; the page has: {choices}"
    )


def _pytest(arguments: list[str]) -> int:
    with subprocess.Popen([sys.executable, "-m", "pytest", *arguments]) as child:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:
                # pytest had the same Ctrl-C: it tears down and reports; its exit code is ours.
                continue


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if not given:
        print(
            f"solar-conformance: name a command: run, {', '.join(COMMANDS)} "
            "(solar-conformance --help says what each does)",
            file=sys.stderr,
        )
        return BAD_INPUT
    command, rest = given[0], given[1:]
    if command == "run":
        # pytest in a process of its own: this one has imported the package already, and pytest
        # rewrites the asserts of the modules it imports itself.
        try:
            arguments = run_arguments(rest)
        except BadRunArguments as bad:
            print(bad, file=sys.stderr)
            return BAD_INPUT
        return _pytest(arguments)
    if command not in COMMANDS:
        print(
            f"solar-conformance: unknown command {command!r}; "
            f"use one of: run, {', '.join(COMMANDS)}",
            file=sys.stderr,
        )
        return BAD_INPUT
    entry: Callable[[Sequence[str]], int] = import_module(COMMANDS[command]).main
    return entry(rest)


if __name__ == "__main__":
    sys.exit(main())
