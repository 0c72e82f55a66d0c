"""CPU seconds spent by processes of this machine, read from Linux's /proc and getrusage."""

from __future__ import annotations

import os
import resource
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


def own_seconds() -> float:
    """This process and the children it has waited for (theirs included)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def self_seconds() -> float:
    """This process alone."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _stat(pid: int) -> tuple[int, float] | None:
    """A process's parent and its CPU seconds with those of the children it waited for."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:  # gone meanwhile
        return None
    fields = text.rsplit(")", 1)[1].split()  # after the command's name, which may hold spaces
    parent = int(fields[1])
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return parent, (utime + stime + cutime + cstime) / CLOCK_TICKS


def tree_seconds(root: int | None = None) -> float:
    """A process (this one unless named), every live descendant of it, and every descendant they
    waited for. A descendant that ended unwaited for, or was re-parented, is not counted."""
    root = os.getpid() if root is None else root
    processes: dict[int, tuple[int, float]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            found = _stat(int(entry.name))
            if found is not None:
                processes[int(entry.name)] = found
    children: dict[int, list[int]] = {}
    for pid, (parent, _seconds) in processes.items():
        children.setdefault(parent, []).append(pid)
    total, pending = 0.0, [root]
    while pending:
        pid = pending.pop()
        if pid in processes:
            total += processes[pid][1]
        pending += children.get(pid, [])
    return total
