"""Collect the evidence bundle: list the run boundedly, hand each file to the first reader that claims it.

A reader is a module in `trainwreck/collect/readers/` with `ORDER` (int), `claims(rel, name) -> bool` and
`read(bundle, entry, ctx)`; it opens its file with `ctx.open(entry)` (the one bounded, redacting read primitive)
and ends with `ctx.record(f, kind)`. Adding a format means adding a module there, nothing else.

What is read is bounded by bytes, never by a clock: at most MAX_FILES_READ files, chosen and ordered by how
likely they are to hold the first failure (see `plan`), and logs share one byte budget (safeio.EVIDENCE_BYTES).
"""
from __future__ import annotations

import importlib
import os
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

from trainwreck import lazy_re, submodules
from trainwreck.collect import readers as _readers_pkg
from trainwreck.collect.bundle import Bundle
from trainwreck.collect.safeio import MIN_HEAD, MIN_TAIL, BoundedFile, Budget, Entry, Skip
from trainwreck.collect.walk import Walker
from trainwreck.locate import Run

MAX_FILES_READ = 64
# at most this many files of one non-log kind (by reader); logs take the remaining places
KIND_QUOTA = {"checkpoints": 16}
DEFAULT_QUOTA = 8
PEEK_BYTES = 8192  # the end of each log is looked at for failure markers before the reading order is set
PEEK_FILES = 256  # ... for at most this many logs (the oldest and the newest halves)
# what the end of a log that holds a failure looks like (bytes; case matters where words would be too common)
FAILURE_MARKERS = lazy_re(
    rb"Traceback \(most recent call last\)|Error\b|Exception\b|FAILED|Killed|killed process|Segmentation fault"
    rb"|core dumped|SIGTERM|SIGKILL|SIGABRT|Aborted|out of memory|OOM|Watchdog|timed out|[Tt]imeout\b"
    rb"|exitcode|exit code|[^A-Za-z](?:nan|NaN|inf|Inf)\b")
# folders that hold bulk data, not evidence
PRUNE = {".git", "__pycache__", "node_modules", ".venv", "venv", "site-packages", "data", "datasets", "media",
         "wandb-artifacts", "artifacts", "tensorboard"}


@lru_cache(maxsize=1)
def readers() -> list:
    mods = []
    for name in submodules(_readers_pkg.__path__):
        mod = importlib.import_module(f"{_readers_pkg.__name__}.{name}")
        if hasattr(mod, "claims") and hasattr(mod, "read"):
            mods.append(mod)
    return sorted(mods, key=lambda m: (getattr(m, "ORDER", 50), m.__name__))


class Context:
    """What readers share during one collection: the bundle and the byte budget."""

    def __init__(self, bundle: Bundle, budget: Optional[Budget] = None):
        self.bundle = bundle
        self.budget = budget if isinstance(budget, Budget) else Budget()
        self.reduced: List[str] = []

    def open(self, entry: Entry) -> BoundedFile:
        return BoundedFile(self.bundle.root, entry.abspath, self.budget)

    def record(self, f: BoundedFile, kind: str) -> None:
        """Remember a file that was read, with a hash of exactly the bytes that were read."""
        self.bundle.files.append(f.record(kind))
        if f.reduced:
            self.reduced.append(f.rel)


def _kind(mod) -> str:
    return mod.__name__.rsplit(".", 1)[-1]


def _has_failure_marker(root: str, entry: Entry) -> bool:
    try:
        with BoundedFile(root, entry.abspath) as f:
            return FAILURE_MARKERS.search(f.peek(max(0, f.size - PEEK_BYTES), PEEK_BYTES)) is not None
    except Skip:
        return False


def plan(root: str, claimed: List[Tuple[Entry, object]]) -> Tuple[List[Tuple[Entry, object]], Optional[str]]:
    """Which claimed files are read, in which order, and a note when some are left out.

    Logs whose end shows a failure come first, the oldest of them first: of twenty per-rank logs the rank that
    failed first stopped writing first, and the others' watchdog timeouts came later. Logs without a failure
    follow, newest first. Other kinds keep their reader's order, newest first. The cap keeps up to KIND_QUOTA
    files of each other kind and gives the remaining places to logs in that order."""
    by_kind: Dict[str, List[Tuple[Entry, object]]] = {}
    for entry, mod in claimed:
        by_kind.setdefault(_kind(mod), []).append((entry, mod))
    logs = by_kind.get("logs", [])
    if logs:
        by_age = sorted(logs, key=lambda c: (c[0].mtime, c[0].rel))
        peek = by_age if len(by_age) <= PEEK_FILES else by_age[:PEEK_FILES // 2] + by_age[-PEEK_FILES // 2:]
        marked = {e.rel for e, _m in peek if _has_failure_marker(root, e)}
        by_kind["logs"] = sorted(logs, key=lambda c: (c[0].rel not in marked,
                                                     c[0].mtime if c[0].rel in marked else -c[0].mtime, c[0].rel))
    for k, items in by_kind.items():
        if k != "logs":
            items.sort(key=lambda c: (-c[0].mtime, c[0].rel))
    kinds = sorted(by_kind, key=lambda k: (getattr(by_kind[k][0][1], "ORDER", 50), k))
    take = {k: min(len(v), KIND_QUOTA.get(k, DEFAULT_QUOTA)) for k, v in by_kind.items() if k != "logs"}
    free = MAX_FILES_READ - sum(take.values())
    if "logs" in by_kind:
        take["logs"] = min(len(by_kind["logs"]), max(free, 0))
        free -= take["logs"]
    for k in kinds:  # places nobody used go to the other kinds' next files, in reading order
        extra = min(max(free, 0), len(by_kind[k]) - take[k])
        take[k] += extra
        free -= extra
    chosen = [c for k in kinds for c in by_kind[k][:take[k]]]
    note = None
    if len(claimed) > len(chosen):
        left = ", ".join(f"{len(by_kind[k]) - take[k]} {k}" for k in kinds if len(by_kind[k]) > take[k])
        note = (f"{len(claimed)} candidate files; read the {len(chosen)} most relevant (logs that show a failure "
                f"first, oldest first; then the newest of each kind); not read: {left}")
    return chosen, note


def collect(run: Run) -> Bundle:
    bundle = Bundle(root=run.root, target=run.target, single_file=run.single_file)
    ctx = Context(bundle)
    if run.single_file:
        st = os.stat(run.single_file)
        rel = os.path.relpath(run.single_file, run.root).replace(os.sep, "/")
        entry = Entry(rel, run.single_file, st.st_size, st.st_mtime)
        mods = [m for m in readers() if m.claims(rel, os.path.basename(rel))] or \
            [m for m in readers() if getattr(m, "FALLBACK", False)]
        _read(ctx, entry, mods[:1])
        return bundle
    walker = Walker(run.root)
    claimed = []
    for entry in walker.files(prune=lambda rel, name: name in PRUNE or (name.startswith(".") and name != ".hydra")):
        name = entry.rel.rsplit("/", 1)[-1]
        mod = next((m for m in readers() if m.claims(entry.rel, name)), None)
        if mod is not None:
            claimed.append((entry, mod))
    for note in walker.notes:
        bundle.note(note)
    chosen, note = plan(bundle.root, claimed)
    if note:
        bundle.note(note)
    for entry, mod in chosen:
        _read(ctx, entry, [mod])
    if ctx.reduced:
        bundle.note("the collection's byte budget for logs is spent: "
                    f"{len(ctx.reduced)} log(s) read by their first {MIN_HEAD >> 10} KB and last {MIN_TAIL >> 10} KB "
                    f"only ({', '.join(ctx.reduced[:5])}{' …' if len(ctx.reduced) > 5 else ''})")
    return bundle


def _read(ctx: Context, entry: Entry, mods: list) -> None:
    for mod in mods:
        try:
            mod.read(ctx.bundle, entry, ctx)
        except Skip as exc:
            ctx.bundle.note(str(exc))
        except (OSError, ValueError, UnicodeError, MemoryError, RecursionError) as exc:
            ctx.bundle.note(f"{entry.rel}: could not be read ({type(exc).__name__}: {str(exc)[:120]})")
