"""Bounded, read-only access to a run directory.

Rules every reader follows:
- never open anything that is not a regular file (a FIFO named train.log would block forever);
- never follow a symlink that leaves the run directory, never loop through symlinked directories;
- never read a whole large file: small files are read whole, large ones by head + tail (seek from the end);
- never write anything.
Everything returned is already decoded, stripped of ANSI codes and NUL bytes, and redacted.
"""
from __future__ import annotations

import errno
import os
import re
import stat
import time
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

from trainwreck.collect.redact import PemTracker, redact
from trainwreck.model import Line, LogText

FULL_READ_LIMIT = 2 << 20  # files up to this size are read whole
TAIL_BYTES = 1 << 20  # at most this much is read from the end of a larger file
HEAD_BYTES = 128 << 10  # and this much from its start (startup errors, config dumps)
COUNT_LIMIT = 128 << 20  # newlines are counted (for absolute line numbers) up to this size
MAX_LINE_CHARS = 4000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")


class Skip(Exception):
    """A file that cannot or must not be read; the message is one line for the report's notes."""


@dataclass
class Entry:
    rel: str  # path relative to the run root, with '/' separators
    abspath: str
    size: int
    mtime: float


def real_inside(root_real: str, path: str) -> bool:
    try:
        rp = os.path.realpath(path)
    except (OSError, RuntimeError, ValueError):
        return False
    return rp == root_real or rp.startswith(root_real.rstrip(os.sep) + os.sep)


def check_regular(root_real: str, path: str) -> os.stat_result:
    """Stat `path` and make sure it is a regular file inside the run. Raises Skip with the reason."""
    rel = os.path.relpath(path, root_real) if path.startswith(root_real) else path
    if not real_inside(root_real, path):
        raise Skip(f"{rel}: links outside the run directory, not read")
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Skip(f"{rel}: symlink loop, not read") from None
        raise Skip(f"{rel}: cannot stat ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file")
        raise Skip(f"{rel}: {kind}, not read")
    return st


def open_regular(root_real: str, path: str) -> Tuple[int, os.stat_result]:
    """Open read-only and non-blocking, then verify it is (still) a regular file."""
    check_regular(root_real, path)
    rel = os.path.relpath(path, root_real)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise Skip(f"{rel}: cannot open ({exc.strerror or exc})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise Skip(f"{rel}: not a regular file, not read")
    return fd, st


def pread(fd: int, size: int, offset: int) -> bytes:
    chunks = []
    while size > 0:
        b = os.pread(fd, min(size, 8 << 20), offset)
        if not b:
            break
        chunks.append(b)
        size -= len(b)
        offset += len(b)
    return b"".join(chunks)


def looks_binary(sample: bytes) -> Optional[str]:
    """A reason string when `sample` is not text, else None. NUL padding alone does not make a log binary."""
    if not sample:
        return None
    n = len(sample)
    ctrl = sum(sample.count(bytes([c])) for c in list(range(1, 8)) + list(range(14, 27)) + list(range(28, 32)) + [127])
    nul = sample.count(0)
    if ctrl / n > 0.05:
        return f"{100 * ctrl / n:.0f}% control bytes"
    if nul / n > 0.5:
        return f"{100 * nul / n:.0f}% NUL bytes"
    return None


def clean_line(raw: bytes) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if len(raw) > 64 << 10:
        raw = raw[-(64 << 10):]
    text = raw.replace(b"\x00", b"").decode("utf-8", "replace")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return text


def _cap(text: str) -> str:
    if len(text) > MAX_LINE_CHARS:
        return f"[…{len(text) - MAX_LINE_CHARS} chars cut] " + text[-MAX_LINE_CHARS:]
    return text


def _split(data: bytes, rel: str, first_line: Optional[int], base_offset: int, pem: PemTracker) -> List[Line]:
    out: List[Line] = []
    pos = 0
    n = 0
    for raw in data.split(b"\n"):
        text = _cap(pem(clean_line(raw)))
        ln = first_line + n if first_line is not None else None
        out.append(Line(rel, ln, text, base_offset + pos))
        pos += len(raw) + 1
        n += 1
    return out


def count_newlines(fd: int, end: int) -> int:
    n, off = 0, 0
    while off < end:
        b = os.pread(fd, min(8 << 20, end - off), off)
        if not b:
            break
        n += b.count(b"\n")
        off += len(b)
    return n


def read_log(root_real: str, abspath: str, tail_lines: int = 500, full_limit: int = FULL_READ_LIMIT) -> LogText:
    """Read a text file boundedly. Raises Skip for files that must not or cannot be read."""
    rel = os.path.relpath(abspath, root_real).replace(os.sep, "/")
    fd, st = open_regular(root_real, abspath)
    try:
        size = st.st_size
        if size == 0:
            return LogText(rel, 0, [], True)
        if size <= full_limit:
            data = pread(fd, size, 0)
            why = looks_binary(data[:65536]) or looks_binary(data[-65536:])
            if why:
                raise Skip(f"{rel}: looks binary ({why}), not read as a log")
            cut = not data.endswith(b"\n")
            if not cut:
                data = data[:-1]
            lines = _split(data, rel, 1, 0, PemTracker())
            return LogText(rel, size, lines, True, cut_mid_line=cut)
        # large file: head and tail only
        start = max(0, size - TAIL_BYTES)
        tail = pread(fd, size - start, start)
        why = looks_binary(tail[-65536:])
        if why:
            raise Skip(f"{rel}: looks binary ({why}), not read as a log")
        cut = not tail.endswith(b"\n")
        if not cut:
            tail = tail[:-1]
        if start > 0:
            nl = tail.find(b"\n")
            if nl < 0:  # one gigantic line: keep its end
                lines = [Line(rel, None, _cap(redact(clean_line(tail))), start)]
                return LogText(rel, size, lines, False, cut_mid_line=cut)
            start += nl + 1
            tail = tail[nl + 1:]
        first_line = None
        if size <= COUNT_LIMIT:
            first_line = count_newlines(fd, start) + 1
        lines = _split(tail, rel, first_line, start, PemTracker())
        lines = lines[-tail_lines:]
        head_data = pread(fd, min(HEAD_BYTES, start), 0)
        nl = head_data.rfind(b"\n")
        head: List[Line] = []
        if nl > 0 and not looks_binary(head_data[:65536]):
            head = _split(head_data[:nl], rel, 1, 0, PemTracker())
        return LogText(rel, size, lines, False, head=head, cut_mid_line=cut)
    except OSError as exc:
        raise Skip(f"{rel}: read failed ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_small(root_real: str, abspath: str, limit: int = 4 << 20) -> Tuple[str, bytes]:
    """Read a small structured file (config, JSON) whole; refuse it beyond `limit` bytes."""
    rel = os.path.relpath(abspath, root_real).replace(os.sep, "/")
    fd, st = open_regular(root_real, abspath)
    try:
        if st.st_size > limit:
            raise Skip(f"{rel}: {st.st_size >> 20} MB, larger than the {limit >> 20} MB read limit; skipped")
        return rel, pread(fd, st.st_size, 0)
    except OSError as exc:
        raise Skip(f"{rel}: read failed ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


class Walker:
    """Bounded directory listing: depth, entry count and time limits; symlinked directories are not entered."""

    def __init__(self, root: str, max_depth: int = 6, max_entries: int = 50000, seconds: float = 3.0):
        self.root = os.path.realpath(root)
        self.max_depth = max_depth
        self.max_entries = max_entries
        self.deadline = time.monotonic() + seconds
        self.notes: List[str] = []
        self.seen = 0

    def files(self, prune=lambda rel, name: False) -> Iterator[Entry]:
        stack: List[Tuple[str, int]] = [(self.root, 0)]
        while stack:
            d, depth = stack.pop()
            try:
                it = os.scandir(d)
            except OSError as exc:
                rel = os.path.relpath(d, self.root)
                self.notes.append(f"{rel}: cannot list ({exc.strerror or exc})")
                continue
            subdirs = []
            with it:
                for e in it:
                    self.seen += 1
                    if self.seen > self.max_entries or time.monotonic() > self.deadline:
                        self.notes.append(f"stopped listing after {self.seen - 1} entries (limit): some files were not considered")
                        return
                    rel = os.path.relpath(e.path, self.root).replace(os.sep, "/")
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
                    yield Entry(rel, e.path, st.st_size, st.st_mtime)
            for sd in sorted(subdirs, reverse=True):
                stack.append((sd, depth + 1))
