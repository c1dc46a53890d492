"""Listing a run directory boundedly, without following links out of it or into loops."""
from __future__ import annotations

import os
import stat
from typing import Iterator, List, Tuple

from trainwreck.collect.redact import redact_path
from trainwreck.collect.safeio import Entry, real_inside


class Walker:
    """Bounded directory listing: depth and entry-count limits (no clock: the same tree is always listed the same
    way); symlinked directories are not entered."""

    def __init__(self, root: str, max_depth: int = 6, max_entries: int = 50000):
        self.root = os.path.realpath(root)
        self.max_depth = max_depth
        self.max_entries = max_entries
        self.notes: List[str] = []
        self.seen = 0

    def files(self, prune=lambda rel, name: False) -> Iterator[Entry]:
        stack: List[Tuple[str, int]] = [(self.root, 0)]
        while stack:
            d, depth = stack.pop()
            try:
                it = os.scandir(d)
            except OSError as exc:
                rel = redact_path(os.path.relpath(d, self.root))
                self.notes.append(f"{rel}: cannot list ({exc.strerror or exc})")
                continue
            subdirs = []
            with it:
                for e in it:
                    self.seen += 1
                    if self.seen > self.max_entries:
                        self.notes.append(f"stopped listing after {self.seen - 1} entries (limit): some files were not considered")
                        return
                    rel = redact_path(os.path.relpath(e.path, self.root).replace(os.sep, "/"))
                    try:
                        if e.is_dir(follow_symlinks=False):
                            if depth + 1 <= self.max_depth and not prune(rel, e.name):
                                subdirs.append(e.path)
                            elif depth + 1 > self.max_depth and not prune(rel, e.name):
                                if not any("deeper than" in n for n in self.notes):
                                    self.notes.append(f"folders deeper than {self.max_depth} levels were not searched")
                            continue
                        if e.is_symlink():
                            if not real_inside(self.root, e.path):
                                self.notes.append(f"{rel}: links outside the run directory, not read")
                                continue
                            try:
                                st = os.stat(e.path)
                            except OSError:
                                self.notes.append(f"{rel}: broken or looping symlink, not read")
                                continue
                            if stat.S_ISDIR(st.st_mode):
                                continue  # symlinked directories are never entered
                        else:
                            st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    yield Entry(rel, e.path, st.st_size, st.st_mtime, stat.S_ISREG(st.st_mode))
            for sd in sorted(subdirs, reverse=True):
                stack.append((sd, depth + 1))
