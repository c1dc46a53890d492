"""Collect the evidence bundle: list the run boundedly, hand each file to the first reader that claims it.

A reader is a module in `trainwreck/collect/readers/` with `ORDER` (int), `claims(rel, name) -> bool` and
`read(bundle, entry, ctx)`; it opens its file with `ctx.open(entry)` (the one bounded, redacting read primitive,
which reads a compressed file as its decompressed stream) and ends with `ctx.record(f, kind)`. Adding a format
means adding a module there, nothing else. A file no reader claims by name is classified by its content
(collect/content.py): any text is a log unless it is metrics, structured data or source code; binary files are
named in a note. "Nothing to diagnose" is left for a run where no file holds text.

What is read is bounded by bytes, never by a clock: at most MAX_FILES_READ files, chosen and ordered by how
likely they are to hold the first failure (see `plan`), and logs share one byte budget (safeio.EVIDENCE_BYTES).
The CPU-time deadlines of safeio (a file's, the run's) are only a backstop: a file past its deadline is left out
with a note, and once the run's is passed the files not yet read are named in one note.
"""
from __future__ import annotations

import importlib
import os
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

from trainwreck import lazy_re, submodules
from trainwreck.collect import readers as _readers_pkg
from trainwreck.collect import safeio
from trainwreck.collect.bundle import Bundle
from trainwreck.collect.content import READER_OF, Skipped, classify
from trainwreck.collect.inflate import compression_of, open_evidence
from trainwreck.collect.safeio import MIN_HEAD, MIN_TAIL, BoundedFile, Budget, Entry, OutOfTime, Skip
from trainwreck.collect.walk import Walker
from trainwreck.locate import Run

MAX_FILES_READ = 64
# at most this many files of one non-log kind (by reader; "text": logs found by content, not by name) are sure of
# a place; logs named as logs take the remaining places
KIND_QUOTA = {"checkpoints": 16, "text": 12}
DEFAULT_QUOTA = 8
LOG_KINDS = ("logs", "text")
LAST_RESORT = 8  # other text files (JSON documents, docs, word lists) read as logs when nothing else holds text
PEEK_BYTES = 8192  # the end of each log is looked at for failure markers before the reading order is set
PEEK_FILES = 256  # ... for at most this many logs (the oldest and the newest halves)
# what the end of a log that holds a failure looks like (bytes; case matters where words would be too common)
FAILURE_MARKERS = lazy_re(
    rb"Traceback \(most recent call last\)|Error\b|Exception\b|FAILED|Killed|killed process|Segmentation fault"
    rb"|core dumped|SIGTERM|SIGKILL|SIGABRT|Aborted|out of memory|OOM|Watchdog|timed out|[Tt]imeout\b"
    rb"|exitcode|exit code|[^A-Za-z](?:nan|NaN|inf|Inf)\b"
    rb"|TIME LIMIT|CANCELLED|TERM_[A-Z]+|Exited with exit code|PBS: job killed|OOMKilled|BackOff|wallclock")
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
        return open_evidence(self.bundle.root, entry.abspath, self.budget)

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
            if compression_of(f.peek(0, 16)):  # its end is not text until the whole stream is decompressed
                return False
            return FAILURE_MARKERS.search(f.peek(max(0, f.size - PEEK_BYTES), PEEK_BYTES)) is not None
    except Skip:
        return False


def plan(root: str, claimed: List[Tuple[Entry, object]],
         by_content: frozenset = frozenset()) -> Tuple[List[Tuple[Entry, object]], Optional[str]]:
    """Which claimed files are read, in which order, and a note when some are left out.

    Logs whose end shows a failure come first, the oldest of them first: of twenty per-rank logs the rank that
    failed first stopped writing first, and the others' watchdog timeouts came later. Logs without a failure
    follow, newest first. Other kinds keep their reader's order, newest first. The cap keeps up to KIND_QUOTA
    files of each other kind and gives the remaining places to logs in that order. Logs found by their content
    (`by_content`: rels of files whose names do not say they are logs) are the kind "text", ordered as logs are,
    with a quota of their own: a run's nohup capture or scheduler report is not crowded out by a hundred rank logs."""
    by_kind: Dict[str, List[Tuple[Entry, object]]] = {}
    for entry, mod in claimed:
        kind = _kind(mod)
        by_kind.setdefault("text" if kind == "logs" and entry.rel in by_content else kind, []).append((entry, mod))
    for k in LOG_KINDS:
        logs = by_kind.get(k, [])
        if not logs:
            continue
        by_age = sorted(logs, key=lambda c: (c[0].mtime, c[0].rel))
        peek = by_age if len(by_age) <= PEEK_FILES else by_age[:PEEK_FILES // 2] + by_age[-PEEK_FILES // 2:]
        marked = {e.rel for e, _m in peek if _has_failure_marker(root, e)}
        by_kind[k] = sorted(logs, key=lambda c: (c[0].rel not in marked,
                                                c[0].mtime if c[0].rel in marked else -c[0].mtime, c[0].rel))
    for k, items in by_kind.items():
        if k not in LOG_KINDS:
            items.sort(key=lambda c: (-c[0].mtime, c[0].rel))
    kinds = sorted(by_kind, key=lambda k: (getattr(by_kind[k][0][1], "ORDER", 50), k != "logs", k))
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


def _modules() -> Dict[str, object]:
    return {_kind(m): m for m in readers()}


def collect(run: Run, hide: frozenset = frozenset()) -> Bundle:
    """The run's evidence; files whose path in the run is in `hide` are not listed at all (`eval` hides each case's
    label, case.json, so that a label is never read as evidence of the run it labels)."""
    bundle = Bundle(root=run.root, target=run.target, single_file=run.single_file)
    ctx = Context(bundle)
    skipped = Skipped()
    if run.single_file:
        st = os.stat(run.single_file)
        rel = os.path.relpath(run.single_file, run.root).replace(os.sep, "/")
        entry = Entry(rel, run.single_file, st.st_size, st.st_mtime)
        mods = [m for m in readers() if m.claims(rel, os.path.basename(rel))]
        if not mods:  # named by the user: read it as the content says, as a log when it says nothing else
            got = classify(bundle.root, [entry], _modules(), skipped)
            mods = [got[0][1]] if got else []
            if not got and not any(skipped.by.get(r) for r in ("binary", "special", "unreadable")):
                mods, skipped = [_modules()[READER_OF["log"]]], Skipped()  # text of another kind, named: read it
        _read(ctx, entry, mods[:1])
        bundle.deadline = ctx.budget.until
        _finish(bundle, skipped)
        return bundle
    walker = Walker(run.root)
    claimed, unknown = [], []
    for entry in walker.files(prune=lambda rel, name: name in PRUNE or (name.startswith(".") and name != ".hydra")):
        if entry.rel in hide:
            continue
        name = entry.rel.rsplit("/", 1)[-1]
        mod = next((m for m in readers() if m.claims(entry.rel, name)), None)
        if mod is not None:
            claimed.append((entry, mod))
        else:
            unknown.append(entry)
    for note in walker.notes:
        bundle.note(note)
    by_content = classify(bundle.root, unknown, _modules(), skipped)
    content_logs = frozenset(e.rel for e, m in by_content if _kind(m) == "logs")
    chosen, note = plan(bundle.root, claimed + by_content, content_logs)
    if note:
        bundle.note(note)
    for i, (entry, mod) in enumerate(chosen):
        if ctx.budget.out_of_time():
            _unread(bundle, [e.rel for e, _m in chosen[i:]])
            break
        _read(ctx, entry, [mod])
    if not bundle.files and skipped.structured:  # nothing else holds text: what does is read as a log
        last = sorted(skipped.structured, key=lambda e: (-e.mtime, e.rel))[:LAST_RESORT]
        bundle.note(f"no log or metrics file in the run: {len(last)} other text file(s) read as logs "
                    f"({', '.join(e.rel for e in last[:4])}{' …' if len(last) > 4 else ''})")
        for entry in last:
            for rels in skipped.by.values():
                if entry.rel in rels:
                    rels.remove(entry.rel)
            _read(ctx, entry, [_modules()[READER_OF["log"]]])
    if ctx.reduced:
        bundle.note("the collection's byte budget for logs is spent: "
                    f"{len(ctx.reduced)} log(s) read by their first {MIN_HEAD >> 10} KB and last {MIN_TAIL >> 10} KB "
                    f"only ({', '.join(ctx.reduced[:5])}{' …' if len(ctx.reduced) > 5 else ''})")
    bundle.deadline = ctx.budget.until
    named = [log for log in bundle.logs if log.path in content_logs]
    if named:
        shown = ", ".join(f"{log.path} ({_what(log)})" for log in named[:5])
        bundle.note(f"read as logs by their content (their names do not say so): {shown}"
                    f"{f' and {len(named) - 5} more' if len(named) > 5 else ''}")
    _finish(bundle, skipped)
    return bundle


def _what(log) -> str:
    return f"{SCHEDULERS.get(log.scheduler, log.scheduler)} output" if log.scheduler else "text"


SCHEDULERS = {"lsf": "LSF job", "slurm": "Slurm job", "pbs": "PBS job", "sge": "SGE job",
              "kubernetes": "Kubernetes pod/events"}


def _finish(bundle: Bundle, skipped: Skipped) -> None:
    for note in bundle.skip_notes():
        bundle.note(note)
    note = skipped.note()
    if note:
        if bundle.files:
            bundle.note(note)
        else:  # nothing was read: the reason goes first, where the one-line error shows it
            bundle.notes.insert(0, note)


def _unread(bundle: Bundle, rels: List[str]) -> None:
    bundle.note(f"the run's CPU deadline ({safeio.RUN_SECONDS:.0f} s) was reached: {len(rels)} file(s) not read "
                f"({', '.join(rels[:5])}{' …' if len(rels) > 5 else ''})")


def _read(ctx: Context, entry: Entry, mods: list) -> None:
    """Each file is read on its own: whatever a reader raises on one malformed file (the expected OSError, or an
    unexpected OverflowError, TypeError …) becomes a note naming the file, what it gave is dropped whole, and the
    other files are read as if it were not there."""
    for mod in mods:
        try:
            mod.read(ctx.bundle, entry, ctx)
        except OutOfTime as exc:  # a backstop, not a budget: what the file gave before it is not trusted half-read
            ctx.bundle.forget(entry.rel)
            ctx.bundle.note(str(exc))
        except Skip as exc:
            ctx.bundle.note(str(exc))
        except (OSError, ValueError, UnicodeError, MemoryError, RecursionError) as exc:
            ctx.bundle.forget(entry.rel)
            ctx.bundle.note(f"{entry.rel}: could not be read ({type(exc).__name__}: {_said(exc)})")
        except Exception as exc:  # a reader's bug on this file must not take the diagnosis down
            ctx.bundle.forget(entry.rel)
            ctx.bundle.note(f"{entry.rel}: skipped, the {_kind(mod)} reader failed on it "
                            f"({type(exc).__name__}: {_said(exc)}); the rest of the diagnosis stands")


def _said(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:120]
