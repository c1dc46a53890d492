"""Discovery: the run to diagnose under a folder, the same for the CLI and the prompt-router hook.

The rule, for a folder F (the current directory, or a directory the user named):

1. F holds a run's own records (metrics.jsonl/.csv, trainer_state.json, hparams.yaml, events.jsonl,
   TensorBoard events, *.wandb, wandb-metadata/summary, progress.csv, `.hydra/`, HF `checkpoint-*/`):
   F is the run, whole, with everything under it (its `wandb/`, `lightning_logs/`, `checkpoints/`).
2. Otherwise every layout below is searched, each candidate is a folder that holds a log or a run record, and
   each is dated by the newest modification time of the folder and its direct entries:
   `runs/*`, `outputs/*/*` (Hydra), `multirun/*/*/*`, `lightning_logs/version_*`, `*/lightning_logs/version_*`,
   `wandb/latest-run`, `wandb/run-*`, `wandb/offline-run-*`, `logs/*`, `checkpoints/*`, and plain `*/`
   (which also finds an HF Trainer output_dir: it holds `checkpoint-*/`). A candidate `checkpoint-*` folder
   stands for its parent (the output_dir). The same folder reached twice (a symlink such as
   `wandb/latest-run`) counts once. A candidate whose real path lies outside F is refused, and so is a fixed
   layout name (`outputs`, `wandb`, `latest-run`) that links out of F, before it is listed: like collect,
   discovery never follows a link out of the tree it was pointed at; Choice.skipped names them (runs kept on a
   scratch disk behind an `outputs -> /scratch/…` link are diagnosed by naming them:
   `trainwreck diagnose outputs/<date>/<time>`).
3. A candidate folder under another candidate: when the outer one holds records, the inner one is part of it;
   otherwise the outer one is not a run, and its loose log files become candidates, each as a single file.
4. The log files directly in F (`nohup.out`, `*.log`, `slurm-*.out`, …) are candidates too, each as a single
   file, when some *run folder* sits beside them: a candidate from a named layout, or a plain `*/` folder with
   records or with a config.yaml beside its logs. A stray root log therefore wins only when it is the newest
   evidence, and then the diagnosis reads that one file, never the whole project tree.
   With no run folder beside them, F with its logs (or its config.yaml) is the run, whole, as before.
5. The newest candidate wins; on equal times a folder beats a file, then the path that sorts last
   (`version_1` over `version_0`, the later timestamp).

Bounded: a folder listing reads at most 4,096 names (F's own log files included); where a layout fans out
(Hydra date folders) the 64 most recently changed folders are followed, and a layout yields at most 4,096
folders; only the 128 most recently changed candidate folders have their entries read (256 entries each) and
dated. Nothing is walked deeper than the layouts above. The price of the bound: a run still writing into a
folder created before 128 newer candidate folders is not seen.
"""
from __future__ import annotations

import os

from trainwreck.locate.evidence import Folder, inspect

PLAIN = "*"
PATTERNS = ("runs/*", "outputs/*/*", "multirun/*/*/*", "lightning_logs/version_*", "*/lightning_logs/version_*",
            "wandb/latest-run", "wandb/run-*", "wandb/offline-run-*", "logs/*", "checkpoints/*", PLAIN)
MAX_LIST = 4096  # names read from one folder listing
MAX_FANOUT = 64  # intermediate folders followed per layout level, the most recently changed first
MAX_INSPECT = 128  # candidate folders whose entries are read and dated, the most recently changed first


MAX_SKIPPED = 16  # links out of the folder named in Choice.skipped


class Choice:
    """What discovery chose: `path`, and `kind` "self" (the folder itself), "dir" (a run folder under it) or
    "file" (one log file directly in it). `skipped`: the layout paths that are links leaving the folder searched
    (never followed, never chosen; the first MAX_SKIPPED)."""

    __slots__ = ("path", "kind", "looked", "skipped")

    def __init__(self, path: str, kind: str, looked: list, skipped: list = None):
        self.path, self.kind, self.looked = path, kind, looked
        self.skipped = skipped or []

    def __repr__(self) -> str:
        return f"Choice({self.path!r}, {self.kind!r})"


class _Cand:
    __slots__ = ("path", "mtime", "order", "named", "real", "folder", "dropped")

    def __init__(self, path: str, mtime: float, order: int):
        self.path, self.mtime, self.order = path, mtime, order
        self.named = PATTERNS[order] != PLAIN
        self.real = ""
        self.folder: Folder = None
        self.dropped = False


def _stat_mtime(st_source) -> float:
    try:
        return st_source.stat().st_mtime if hasattr(st_source, "stat") else os.stat(st_source).st_mtime
    except OSError:
        return 0.0


def _match(name: str, part: str) -> bool:
    if part == "*":
        return True
    if part.endswith("*"):
        return name.startswith(part[:-1])
    return name == part


class _Lister:
    """Folder listings, each read once per discovery and capped at MAX_LIST names. The mtimes come from the
    listing's own entries (one stat each, cached), only for the folders that are ranked."""

    def __init__(self, base: str):
        self.cache: dict = {}
        self.inside = os.path.realpath(base).rstrip(os.sep) + os.sep  # the folder searched, as a prefix
        self.skipped: list = []  # links seen that leave it

    def leaves(self, path: str) -> bool:
        """`path` resolves outside the folder searched (recorded in `skipped`)."""
        if os.path.realpath(path).startswith(self.inside):
            return False
        if len(self.skipped) < MAX_SKIPPED and path not in self.skipped:
            self.skipped.append(path)
        return True

    def subdirs(self, d: str) -> list:
        got = self.cache.get(d)
        if got is None:
            got, inside = [], None
            try:
                with os.scandir(d) as it:
                    for i, e in enumerate(it):
                        if i >= MAX_LIST:
                            break
                        try:
                            if e.name.startswith(".") or not e.is_dir():
                                continue
                            if e.is_symlink():  # followed only while it stays inside the folder listed
                                inside = inside or os.path.realpath(d).rstrip(os.sep) + os.sep
                                if self.leaves(e.path) or not os.path.realpath(e.path).startswith(inside):
                                    continue
                            got.append((e.name, e))
                        except OSError:
                            pass
            except OSError:
                pass
            self.cache[d] = got
        return got


def _expand(lister: _Lister, base: str, pattern: str) -> list:
    """(path, DirEntry or path) of the folders `pattern` matches under base, bounded at every level."""
    level = [(base, base)]
    for part in pattern.split("/"):
        if "*" in part and len(level) > MAX_FANOUT:
            level = sorted(level, key=lambda x: (_stat_mtime(x[1]), x[0]), reverse=True)[:MAX_FANOUT]
        nxt = []
        for d, _src in level:
            if "*" in part:
                nxt.extend((e.path, e) for n, e in lister.subdirs(d) if _match(n, part))
            else:
                p = os.path.join(d, part)  # a fixed name (outputs, wandb, latest-run): never a link out
                if os.path.isdir(p) and not (os.path.islink(p) and lister.leaves(p)):
                    nxt.append((p, p))
            if len(nxt) >= MAX_LIST:
                break
        level = nxt[:MAX_LIST]
    return level


def _candidates(base: str, lister: _Lister) -> list:
    """Every layout's folders, each with its own mtime (no listing of their entries yet)."""
    seen, out = set(), []
    for order, pat in enumerate(PATTERNS):
        for p, src in _expand(lister, base, pat):
            if os.path.basename(p).startswith("checkpoint-"):  # an HF checkpoint stands for its output_dir
                p = src = os.path.dirname(p)
                if p == base:
                    continue
            if p in seen:
                continue
            seen.add(p)
            out.append(_Cand(p, _stat_mtime(src), order))
    return out


def _resolve_nesting(cands: list, base_real: str) -> list:
    """Rule 3: a candidate under another one. Returns the extra file candidates."""
    by_real = {c.real: c for c in cands}
    inner_of: dict = {}
    for c in cands:  # each candidate's enclosing candidates, found by walking up to the base (no pairwise scan)
        d = os.path.dirname(c.real)
        while len(d) > len(base_real) and d != os.path.dirname(d):
            if d in by_real:
                inner_of.setdefault(d, []).append(c)
            d = os.path.dirname(d)
    files = []
    for real in sorted(inner_of, key=len):
        outer = by_real[real]
        inner = [c for c in inner_of[real] if not c.dropped]
        if outer.dropped or not inner:
            continue
        if outer.folder.records:
            for c in inner:
                c.dropped = True
        else:
            outer.dropped = True
            files.extend(outer.folder.logs)
    return files


def discover(base: str) -> Choice:
    """The run to diagnose under `base` (see the module docstring for the rule); kind "" when nothing was found."""
    looked = [os.path.join(base, p) for p in PATTERNS]
    top = inspect(base, dated=False, limit=MAX_LIST)  # a project may keep hundreds of slurm-*.out at its top
    if top.records:
        return Choice(base, "self", looked)
    lister = _Lister(base)
    cands = _candidates(base, lister)
    # the most recently changed first; the same folder reached twice keeps its earlier layout's name
    cands.sort(key=lambda c: c.path, reverse=True)  # on equal times the later name (version_1, a later date)
    cands.sort(key=lambda c: (-c.mtime, c.order))
    base_real = os.path.realpath(base)
    live, reals, inside = [], {base_real}, base_real.rstrip(os.sep) + os.sep
    for c in cands[:MAX_INSPECT]:
        c.real = os.path.realpath(c.path)
        if c.real in reals or not c.real.startswith(inside):  # reached twice, or a link out of the tree
            if not c.real.startswith(inside):
                lister.leaves(c.path)
            continue
        reals.add(c.real)
        c.folder = inspect(c.path)
        if c.folder.evidence:
            live.append(c)
    nested_logs = _resolve_nesting(live, base_real)
    live = [c for c in live if not c.dropped]
    run_beside = any(c.named or c.folder.strong() for c in live)
    skipped = [os.path.relpath(p, base) for p in lister.skipped]
    if not run_beside and (top.evidence or top.config):
        return Choice(base, "self", looked, skipped)
    scored = [(c.folder.newest, 1, c.path, "dir") for c in live]
    scored += [(m, 0, p, "file") for p, m in nested_logs]
    if run_beside:
        scored += [(m, 0, p, "file") for p, m in top.logs]
    if not scored:
        return Choice("", "", looked, skipped)
    best = max(scored)
    return Choice(best[2], best[3], looked, skipped)
