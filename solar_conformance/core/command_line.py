"""The harness's commands refuse bad arguments as its pytest options do: one line on stderr that
says what is wrong and where to read more, and exit code 4 (argparse prints its usage and exits
2)."""

from __future__ import annotations

import argparse
from typing import NoReturn

BAD_INPUT = 4


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose refusal is one line and exit code 4; its subcommands' parsers are
    of the same class."""

    def error(self, message: str) -> NoReturn:
        self.exit(BAD_INPUT, f"{self.prog}: {message} (see {self.prog} --help)\n")
