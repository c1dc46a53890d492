"""Find the run to diagnose: an explicit log file, or a directory (the current one by default) resolved by
discovery (`trainwreck.locate.discovery`: the most recently modified run across every layout).

Standard library only and cheap to import: the prompt-router hook (`hooks/prompt_router.py`) imports this
package to name the same run the CLI would diagnose.
"""
from __future__ import annotations

import os

from trainwreck.locate.discovery import PATTERNS, Choice, discover
from trainwreck.locate.evidence import LOG_NAMES, LOG_SUFFIXES, RUN_MARKERS, looks_like_run

__all__ = ["LOG_NAMES", "LOG_SUFFIXES", "PATTERNS", "RUN_MARKERS", "Choice", "NotFound", "Run", "discover",
           "locate", "looks_like_run"]


class NotFound(Exception):
    """Nothing to diagnose; the message says where we looked and what to pass."""


class Run:
    """The run to diagnose."""

    __slots__ = ("root", "target", "single_file", "how", "looked")

    def __init__(self, root: str, target: str, single_file: str | None = None, how: str = "",
                 looked: list | None = None):
        self.root = root  # absolute, real path of the run directory
        self.target = target  # what the user named (or what discovery chose), for display
        self.single_file = single_file  # absolute path when one log file is the run
        self.how = how  # how the run was found
        self.looked = looked or []

    def __repr__(self) -> str:
        return f"Run(root={self.root!r}, target={self.target!r}, single_file={self.single_file!r}, how={self.how!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Run) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)


def _from_choice(c: Choice, base: str, shown: str, cwd: str, under: str) -> Run | None:
    if c.kind == "self":
        return Run(os.path.realpath(base), shown, how="current directory" if under == "" else "run directory")
    if not c.path:
        return None
    rel = os.path.relpath(c.path, cwd)
    suffix = f" under {under}" if under else ""
    if c.kind == "dir":
        return Run(os.path.realpath(c.path), rel, how=f"most recent run{suffix}")
    if c.kind == "file":
        real = os.path.realpath(c.path)
        return Run(os.path.dirname(real), rel, single_file=real, how=f"most recent log file{suffix}")
    return None


def locate(path: str | None, cwd: str | None = None) -> Run:
    cwd = cwd or os.getcwd()
    if path:
        p = os.path.abspath(os.path.join(cwd, os.path.expanduser(path)))
        if not os.path.lexists(p):
            raise NotFound(f"no such file or directory: {path}")
        if os.path.isfile(p):
            return Run(os.path.realpath(os.path.dirname(p)), path, single_file=os.path.realpath(p), how="log file")
        if not os.path.isdir(p):
            raise NotFound(f"{path}: not a directory or regular file (a FIFO or device cannot be diagnosed)")
        c = discover(p)
        run = _from_choice(c, p, path, cwd, path)
        # a folder with no recognised layout: diagnose it as it is
        return run or Run(os.path.realpath(p), path, how="directory", looked=c.looked)
    if not os.path.isdir(cwd):
        raise NotFound(f"{cwd}: not a directory. Pass the run directory or a log file: trainwreck diagnose PATH")
    c = discover(cwd)
    run = _from_choice(c, cwd, ".", cwd, "")
    if run:
        return run
    where = ", ".join(os.path.relpath(x, cwd) for x in c.looked[:-1])
    skipped = ""
    if c.skipped:
        skipped = (f"; skipped {', '.join(c.skipped[:4])}{' …' if len(c.skipped) > 4 else ''}: a link that "
                   "leaves this folder is never followed, name it to diagnose it")
    raise NotFound(
        f"no training run found under {cwd} (looked in {where}, and for *.log/*.out/metrics.jsonl/"
        f"trainer_state.json here{skipped}). Pass the run directory or a log file: trainwreck diagnose PATH")
