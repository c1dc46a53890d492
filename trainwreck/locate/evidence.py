"""What one bounded listing of a folder says about it: a run's own records, loose logs, a config, and how recent.

Standard library only and cheap to import (no dataclasses, no typing, no re): the prompt-router hook imports
this package on every prompt.
"""
from __future__ import annotations

import os

LOG_SUFFIXES = (".log", ".out", ".err", ".stderr", ".stdout")
LOG_NAMES = {"stderr.txt", "stdout.txt", "output.txt", "log.txt", "train.txt", "console.txt", "error.json",
             "output.log", "debug.log", "error.txt", "traceback.txt", "stdout", "stderr", "nohup", "output", "log",
             "console"}
# a .txt is a log when its name says so (train_log.txt, rank3_stack.txt); pip/requirements lists are not
TXT_LOG_WORDS = ("log", "out", "err", "train", "console", "stdout", "stderr", "traceback", "slurm", "job", "rank",
                 "spy", "stack", "dump", "hang", "faulthandler")
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
_COMPRESSED_EXT = {"gz", "bz2", "xz", "zst"}
_LAST_CHARS = frozenset("tz0123456789")
# Files only a run writes: a folder holding one is a run, whole, with everything under it.
RECORD_NAMES = {"metrics.jsonl", "metrics.csv", "trainer_state.json", "hparams.yaml", "events.jsonl",
                "wandb-summary.json", "wandb-metadata.json", "progress.csv", "log_history.json"}
CONFIG_NAMES = {"config.yaml"}  # a run writes one, but so does a project keep one at its top
RUN_MARKERS = RECORD_NAMES | CONFIG_NAMES

MAX_ENTRIES = 256  # direct entries read from one folder; nothing deeper is ever listed


def _strip_rotation(name: str) -> str:
    """train.log.1.gz -> train.log; nohup.out.3 -> nohup.out (a compression suffix, then rotation numbers)."""
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            name = name[:-len(suffix)]
            break
    while True:
        base, dot, num = name.rpartition(".")
        if not dot or not base or not num.isdigit():
            return name
        name = base


def _scheduler_name(name: str) -> bool:
    """PBS/SGE/LSF default output names: job.o12345, job.e12345 (also .po/.pe for SGE parallel jobs)."""
    base, dot, ext = name.rpartition(".")
    if not dot or not base:
        return False
    for prefix in ("o", "e", "po", "pe"):
        rest = ext[len(prefix):]
        if ext.startswith(prefix) and rest and rest.replace("-", "").replace("_", "").isdigit():
            return True
    return False


def is_log_name(name: str) -> bool:
    """A file whose name says it is a log: the cheap rule discovery uses (collect also reads text of any name).
    Called for every entry of every listing the prompt-router hook makes: the common answers come first."""
    if name in LOG_NAMES or name.endswith(LOG_SUFFIXES):
        return True
    if name[-1:] not in _LAST_CHARS:  # .txt, .gz/.xz/.zst/.bz2, rotation and job numbers end so; .md, .py do not
        return False
    dot = name.rfind(".")
    if dot <= 0:
        return False
    ext = name[dot + 1:]
    if ext == "txt":
        return _is_txt_log(name)
    if ext.isdigit() or ext in _COMPRESSED_EXT:
        plain = _strip_rotation(name)
        return plain != name and (plain in LOG_NAMES or plain.endswith(LOG_SUFFIXES) or _is_txt_log(plain))
    return ext[:1] in ("o", "e", "p") and _scheduler_name(name)


def _is_txt_log(name: str) -> bool:
    if not name.endswith(".txt") or name.startswith(("pip", "requirements")):
        return False
    low = name.lower()
    return any(w in low for w in TXT_LOG_WORDS)


def is_record(name: str, is_dir: bool) -> bool:
    if is_dir:
        return name == ".hydra" or name.startswith("checkpoint-")  # Hydra run dir; HF Trainer output_dir
    return (name in RECORD_NAMES or name.startswith("events.out.tfevents") or name.endswith(".wandb"))


class Folder:
    """One folder as a bounded listing of its direct entries shows it."""

    __slots__ = ("path", "records", "config", "logs", "newest")

    def __init__(self, path: str):
        self.path = path
        self.records = False  # holds a run's own records (metrics, trainer state, .hydra/, checkpoint-*/, …)
        self.config = False  # holds a config.yaml
        self.logs: list = []  # (path, mtime) of the regular log files directly in it
        self.newest = 0.0  # newest mtime of the folder and its direct entries (when dated)

    @property
    def evidence(self) -> bool:
        """Something to diagnose: a run's records or a log (a config alone is not a run)."""
        return self.records or bool(self.logs)

    def strong(self) -> bool:
        """A run folder for sure: its own records, or a config beside its logs."""
        return self.records or (self.config and bool(self.logs))


def _entry_mtime(e) -> float:
    try:
        return e.stat(follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


def inspect(path: str, dated: bool = True, limit: int = MAX_ENTRIES) -> Folder:
    """Read at most `limit` direct entries of `path`. With `dated`, stat each one for `newest`; without it,
    only the log files are stat'ed (their mtimes are what a loose log competes with)."""
    f = Folder(path)
    try:
        f.newest = os.stat(path).st_mtime
        with os.scandir(path) as it:
            for i, e in enumerate(it):
                if i >= limit:
                    break
                name = e.name
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                    is_file = not is_dir and e.is_file(follow_symlinks=False)
                except OSError:
                    continue
                if is_record(name, is_dir):
                    f.records = True
                elif name in CONFIG_NAMES:
                    f.config = True
                hidden = name.startswith(".") and name != ".hydra"
                m = _entry_mtime(e) if (dated and not hidden) or (is_file and is_log_name(name)) else 0.0
                if is_file and is_log_name(name):
                    f.logs.append((e.path, m))
                if not hidden and m > f.newest:
                    f.newest = m
    except OSError:
        pass
    return f


def looks_like_run(d: str, limit: int = 400) -> bool:
    """A cheap, bounded look at one folder's direct entries: any log, run record or config."""
    f = inspect(d, dated=False, limit=limit)
    return f.evidence or f.config
