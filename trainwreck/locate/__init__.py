"""Find the run to diagnose: an explicit directory or log file, or the most recent run under a folder."""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

LOG_SUFFIXES = (".log", ".out", ".err", ".stderr", ".stdout")
LOG_NAMES = {"stderr.txt", "stdout.txt", "output.txt", "log.txt", "train.txt", "console.txt", "error.json",
             "output.log", "debug.log", "error.txt", "traceback.txt"}
RUN_MARKERS = {"metrics.jsonl", "metrics.csv", "trainer_state.json", "config.yaml", "hparams.yaml", "events.jsonl",
               "wandb-summary.json", "progress.csv", "log_history.json"}

# Where runs live, relative to a project folder, in the order a user would name them.
PATTERNS = [
    "runs/*",
    "outputs/*/*",
    "multirun/*/*/*",
    "lightning_logs/version_*",
    "*/lightning_logs/version_*",
    "wandb/latest-run",
    "logs/*",
    "checkpoints/*",
    "*",
]


class NotFound(Exception):
    """Nothing to diagnose; the message says where we looked and what to pass."""


@dataclass
class Run:
    root: str  # absolute, real path of the run directory
    target: str  # what the user named (or what discovery chose), for display
    single_file: Optional[str] = None  # absolute path when the user named one log file
    how: str = ""  # how the run was found
    looked: List[str] = field(default_factory=list)


def looks_like_run(d: str, limit: int = 400) -> bool:
    """A cheap, bounded look at one folder's direct entries (and .hydra)."""
    try:
        with os.scandir(d) as it:
            for i, e in enumerate(it):
                if i >= limit:
                    break
                name = e.name
                if name in RUN_MARKERS or name in LOG_NAMES or name == ".hydra":
                    return True
                if name.endswith(LOG_SUFFIXES) or name.startswith("events.out.tfevents"):
                    return True
                if name.startswith("checkpoint-") and e.is_dir(follow_symlinks=False):
                    return True
                if name.endswith(".wandb") or name == "wandb-metadata.json":
                    return True
    except OSError:
        return False
    return False


def _mtime(d: str) -> float:
    newest = 0.0
    try:
        newest = os.stat(d).st_mtime
        with os.scandir(d) as it:
            for i, e in enumerate(it):
                if i >= 200:
                    break
                try:
                    newest = max(newest, e.stat(follow_symlinks=False).st_mtime)
                except OSError:
                    pass
    except OSError:
        pass
    return newest


def discover(base: str) -> Tuple[Optional[str], List[str]]:
    """The most recently modified run folder under `base`, and the patterns searched."""
    looked = []
    candidates: List[Tuple[float, str]] = []
    for pat in PATTERNS:
        looked.append(os.path.join(base, pat))
        hits = glob.glob(os.path.join(glob.escape(base), pat))[:2000]
        for h in hits:
            if os.path.isdir(h) and looks_like_run(h):
                candidates.append((_mtime(h), h))
        if candidates and pat != "*":
            break
    # an HF Trainer output_dir one level down (trainer_state.json inside checkpoint-*/)
    if not candidates:
        for h in glob.glob(os.path.join(glob.escape(base), "*", "checkpoint-*", "trainer_state.json"))[:200]:
            d = os.path.dirname(os.path.dirname(h))
            candidates.append((_mtime(d), d))
    if not candidates:
        return None, looked
    candidates.sort(key=lambda c: (c[0], c[1]))
    return candidates[-1][1], looked


def locate(path: Optional[str], cwd: Optional[str] = None) -> Run:
    cwd = cwd or os.getcwd()
    if path:
        p = os.path.abspath(os.path.join(cwd, os.path.expanduser(path)))
        if not os.path.lexists(p):
            raise NotFound(f"no such file or directory: {path}")
        if os.path.isfile(p):
            return Run(os.path.realpath(os.path.dirname(p)), path, single_file=os.path.realpath(p), how="log file")
        if not os.path.isdir(p):
            raise NotFound(f"{path}: not a directory or regular file (a FIFO or device cannot be diagnosed)")
        if looks_like_run(p):
            return Run(os.path.realpath(p), path, how="run directory")
        found, looked = discover(p)
        if found:
            return Run(os.path.realpath(found), os.path.relpath(found, cwd), how=f"most recent run under {path}")
        # a folder with no recognised layout: diagnose it as it is
        return Run(os.path.realpath(p), path, how="directory", looked=looked)
    if looks_like_run(cwd):
        return Run(os.path.realpath(cwd), ".", how="current directory")
    found, looked = discover(cwd)
    if found:
        return Run(os.path.realpath(found), os.path.relpath(found, cwd), how="most recent run")
    where = ", ".join(os.path.relpath(x, cwd) for x in looked[:-1])
    raise NotFound(
        f"no training run found under {cwd} (looked in {where}, and for *.log/*.out/metrics.jsonl/"
        "trainer_state.json here). Pass the run directory or a log file: trainwreck diagnose PATH")
