"""Collect the evidence bundle: list the run boundedly, hand each file to the first reader that claims it.

A reader is a module in `trainwreck/collect/readers/` with `ORDER` (int), `claims(rel, name) -> bool` and
`read(bundle, entry, ctx)`. Adding a format means adding a module there, nothing else.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import pkgutil
import time
from functools import lru_cache
from typing import List, Optional

from trainwreck.collect import readers as _readers_pkg
from trainwreck.collect.bundle import Bundle, FileRecord
from trainwreck.collect.safeio import Entry, Skip, Walker, open_regular
from trainwreck.locate import Run

MAX_FILES_READ = 64
# folders that hold bulk data, not evidence
PRUNE = {".git", "__pycache__", "node_modules", ".venv", "venv", "site-packages", "data", "datasets", "media",
         "wandb-artifacts", "artifacts", "tensorboard"}


@lru_cache(maxsize=1)
def readers() -> list:
    mods = []
    for info in pkgutil.iter_modules(_readers_pkg.__path__):
        mod = importlib.import_module(f"{_readers_pkg.__name__}.{info.name}")
        if hasattr(mod, "claims") and hasattr(mod, "read"):
            mods.append(mod)
    return sorted(mods, key=lambda m: (getattr(m, "ORDER", 50), m.__name__))


class Context:
    def __init__(self, bundle: Bundle, deadline: float):
        self.bundle = bundle
        self.deadline = deadline
        self.read_count = 0

    def record(self, entry: Entry, kind: str, ranges: Optional[List[tuple]] = None) -> None:
        """Remember a file that was read, with a hash of what was read (whole file when small)."""
        h = hashlib.sha256()
        hashed = "whole"
        try:
            fd, st = open_regular(self.bundle.root, entry.abspath)
        except Skip:
            return
        try:
            if st.st_size <= (64 << 20) and not ranges:
                off = 0
                while off < st.st_size:
                    b = os.pread(fd, 8 << 20, off)
                    if not b:
                        break
                    h.update(b)
                    off += len(b)
            else:
                hashed = "head+tail"
                rs = ranges or [(0, min(st.st_size, 1 << 20)), (max(0, st.st_size - (1 << 20)), st.st_size)]
                for a, b in rs:
                    h.update(os.pread(fd, max(0, b - a), a))
        except OSError:
            hashed = "unreadable"
        finally:
            os.close(fd)
        self.bundle.files.append(FileRecord(entry.rel, st.st_size, st.st_mtime, h.hexdigest(), hashed, kind))


def collect(run: Run, seconds: float = 8.0) -> Bundle:
    bundle = Bundle(root=run.root, target=run.target, single_file=run.single_file)
    ctx = Context(bundle, time.monotonic() + seconds)
    if run.single_file:
        st = os.stat(run.single_file)
        rel = os.path.relpath(run.single_file, run.root).replace(os.sep, "/")
        entries = [Entry(rel, run.single_file, st.st_size, st.st_mtime)]
        mods = [m for m in readers() if m.claims(rel, os.path.basename(rel))] or \
            [m for m in readers() if getattr(m, "FALLBACK", False)]
        _read(ctx, entries[0], mods[:1])
        return bundle
    walker = Walker(run.root)
    claimed = []
    for entry in walker.files(prune=lambda rel, name: name in PRUNE or (name.startswith(".") and name != ".hydra")):
        name = entry.rel.rsplit("/", 1)[-1]
        for mod in readers():
            if mod.claims(entry.rel, name):
                claimed.append((getattr(mod, "ORDER", 50), -entry.mtime, entry.rel, entry, mod))
                break
    for note in walker.notes:
        bundle.note(note)
    claimed.sort(key=lambda c: (c[0], c[1], c[2]))
    if len(claimed) > MAX_FILES_READ:
        bundle.note(f"{len(claimed)} candidate files; read the {MAX_FILES_READ} most relevant (newest first within each kind)")
        claimed = claimed[:MAX_FILES_READ]
    for _o, _m, _r, entry, mod in claimed:
        if time.monotonic() > ctx.deadline:
            bundle.note("collection time budget spent: remaining files were not read")
            break
        _read(ctx, entry, [mod])
    return bundle


def _read(ctx: Context, entry: Entry, mods: list) -> None:
    for mod in mods:
        try:
            mod.read(ctx.bundle, entry, ctx)
        except Skip as exc:
            ctx.bundle.note(str(exc))
        except (OSError, ValueError, UnicodeError, MemoryError, RecursionError) as exc:
            ctx.bundle.note(f"{entry.rel}: could not be read ({type(exc).__name__}: {str(exc)[:120]})")
