"""Bounded, read-only access to a run directory.

Rules every reader follows:
- never open anything that is not a regular file (a FIFO named train.log would block forever);
- never follow a symlink that leaves the run directory, never loop through symlinked directories;
- never read a whole large file: small files are read whole, large ones by head + tail (seek from the end);
- the work is bounded by bytes: per file (head + tail), per collection (EVIDENCE_BYTES, then only MIN_HEAD +
  MIN_TAIL per file) and for line numbering (COUNT_LIMIT, COUNT_BYTES: beyond, byte offsets), never by a clock;
  CPU-time deadlines (FILE_SECONDS, RUN_SECONDS: this process's CPU time, which load does not advance) are only a
  backstop far above any input's cost (the worst hostile file: ~0.3 s): a file past one is left out with a note;
- never write anything.
Every reader reads through BoundedFile; every line it returns is already decoded, stripped of ANSI codes and NUL
bytes, and redacted (key and value together), so no text leaves a reader unredacted.
"""
from __future__ import annotations

import errno
import os
import stat
import time
from bisect import bisect_right
from typing import Callable, List, Optional, Tuple

from trainwreck import path_inside, record
from trainwreck.collect.bundle import FileRecord
from trainwreck.collect.linetext import MAX_LINE_CHARS as MAX_LINE_CHARS  # the line's text (collect/linetext.py),
from trainwreck.collect.linetext import cap_text as cap_text  # re-exported: readers import it with the primitive
from trainwreck.collect.linetext import clean_line as clean_line
from trainwreck.collect.linetext import clean_text, redact_texts, split_lines
from trainwreck.collect.redact import redact_path
from trainwreck.model import Line

try:  # the built-in module: hashlib would load OpenSSL (~5 ms of every call) for the same digest
    from _sha256 import sha256 as _sha256
except ImportError:  # pragma: no cover - other Pythons
    from hashlib import sha256 as _sha256

# A log's analysis costs per line (metrics, signatures, tracebacks, trajectories: ~50 us a line), so a log is read
# whole only up to FULL_READ_LIMIT; a larger one gives its first HEAD_BYTES and its last lines (read_log's
# tail_lines, found within TAIL_BYTES); the middle is searched for a non-finite onset by bisection (collect/scan.py).
# The work on one log is then that of ~800-1,200 lines whatever its size: 10 KB or 4 GB cost about the same.
FULL_READ_LIMIT = 64 << 10  # logs up to this size are read whole
TAIL_BYTES = 1 << 20  # at most this much is read from the end of a larger file
HEAD_BYTES = 16 << 10  # and this much from its start (startup errors, config dumps)
MIN_TAIL = 64 << 10  # once the collection's byte budget is spent, a file still gets its last 64 KB
MIN_HEAD = 16 << 10  # ... and its first 16 KB
EVIDENCE_BYTES = 2 << 20  # bytes one collection reads as evidence before files get only MIN_HEAD + MIN_TAIL
COUNT_LIMIT = 16 << 20  # newlines are counted (for absolute line numbers) up to this offset of a file
COUNT_BYTES = 64 << 20  # ... and at most this many bytes per collection; beyond, lines are cited by byte offset
INFLATE_BYTES = 128 << 20  # decompressed bytes one collection produces from compressed logs (collect/inflate.py)
WIDE_LINE_BYTES = 64 << 10  # a table row read by its cells (BoundedFile.cells) is read up to this many bytes


class Skip(Exception):
    """A file that cannot or must not be read; the message is one line for the report's notes."""


FILE_SECONDS, RUN_SECONDS = 10.0, 30.0  # CPU seconds for reading one file; for a run's collection and analysis
cpu_clock = time.process_time  # this process's CPU time: machine load does not advance it


class OutOfTime(Skip):
    """A file whose reading passed its CPU deadline: what it gave is left out, and the note says so."""


@record
class Entry:
    def __init__(self, rel: str, abspath: str, size: int, mtime: float, regular: bool = True) -> None:
        self.rel = redact_path(rel)  # path relative to the run root, '/' separators; a secret in a name redacted
        self.abspath = abspath
        self.size = size
        self.mtime = mtime
        self.regular = regular  # False for a FIFO, socket or device (never opened; a reader's open says why)


def real_inside(root_real: str, path: str) -> bool:
    try:
        rp = os.path.realpath(path)
    except (OSError, RuntimeError, ValueError):
        return False
    return path_inside(rp, root_real)


def check_regular(root_real: str, path: str, rel: Optional[str] = None) -> os.stat_result:
    """Stat `path` and make sure it is a regular file inside the run. Raises Skip with the reason (naming the
    file as `rel`, by default its path relative to the run; redacted: a directory name may hold a secret)."""
    if rel is None:
        rel = redact_path(os.path.relpath(path, root_real) if path.startswith(root_real) else path)
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


_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0))
_NOATIME = getattr(os, "O_NOATIME", 0)  # Linux: reading leaves the file's access time alone (owner or CAP_FOWNER only)
_noatime_ok = [bool(_NOATIME)]


def _open_fd(path: str) -> int:
    if _noatime_ok[0]:
        try:
            return os.open(path, _OPEN_FLAGS | _NOATIME)
        except PermissionError:  # EPERM: not the file's owner; EACCES would fail without the flag too
            pass
        except OSError as exc:
            if exc.errno != errno.EINVAL:  # a filesystem without the flag
                raise
            _noatime_ok[0] = False
    return os.open(path, _OPEN_FLAGS)


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def open_regular(root_real: str, path: str) -> Tuple[int, os.stat_result]:
    """Open read-only and non-blocking a regular file inside the run, and prove that the descriptor is that file.
    The path is resolved once (realpath, checked inside the run), that resolved path is opened with O_NOFOLLOW
    (a file swapped for a symlink in between is refused) and then checked again: the descriptor's device and inode
    equal those stat'ed before the open, and the path still resolves to itself with that inode (a directory of
    the path swapped for a link and back is refused). O_NOATIME where the kernel allows it."""
    rel = redact_path(os.path.relpath(path, root_real) if path.startswith(root_real) else path)
    real = os.path.realpath(path)
    before = check_regular(root_real, real, rel)
    try:
        fd = _open_fd(real)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Skip(f"{rel}: became a symlink while being opened, not read") from None
        raise Skip(f"{rel}: cannot open ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Skip(f"{rel}: not a regular file, not read")
        try:
            after = os.stat(real)
            moved = os.path.realpath(real) != real
        except OSError:
            after, moved = None, True
        if not _same(st, before) or moved or after is None or not _same(st, after):
            raise Skip(f"{rel}: replaced while being opened (a link or another file), not read")
    except BaseException:
        os.close(fd)
        raise
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


class Budget:
    """What one collection may still read: evidence bytes (decoded into lines or records), bytes scanned only
    to count newlines, and bytes decompressed from compressed logs. All are spent in the order the files are read,
    so the same run is read the same way whatever the machine load."""

    def __init__(self, evidence: Optional[int] = None, counting: Optional[int] = None,
                 inflate: Optional[int] = None):
        self.evidence = EVIDENCE_BYTES if evidence is None else evidence
        self.counting = COUNT_BYTES if counting is None else counting
        self.inflate = INFLATE_BYTES if inflate is None else inflate
        self.until = cpu_clock() + RUN_SECONDS  # the run's CPU deadline (collection and analysis)

    def out_of_time(self) -> bool:
        return cpu_clock() > self.until


class BoundedFile:
    """The one read primitive. A regular file inside the run, opened read-only and non-blocking, read by bounded
    windows. Every line it returns is decoded, cleaned (NUL, ANSI, CR) and redacted, key and value together; every
    window that becomes evidence is remembered, so the lock-file hash covers exactly the bytes that were read."""

    def __init__(self, root_real: str, abspath: str, budget: Optional[Budget] = None):
        self.rel = redact_path(os.path.relpath(abspath, root_real).replace(os.sep, "/"))
        self.fd, st = open_regular(root_real, abspath)
        self.size, self.mtime = st.st_size, st.st_mtime
        self.budget = budget if budget is not None else Budget()
        self.pieces: List[Tuple[int, bytes]] = []  # (offset, bytes) read as evidence
        self.reduced = False  # the collection's byte budget was spent: only MIN_HEAD + MIN_TAIL were read
        self._marks: List[Tuple[int, int]] = [(0, 0)]  # (offset, newlines before it) known so far, sorted
        self.until = min(self.budget.until, cpu_clock() + FILE_SECONDS)

    def check(self) -> None:
        """Raise OutOfTime past this file's CPU deadline (its own, or the run's when that comes first)."""
        if cpu_clock() > self.until:
            run = self.until >= self.budget.until
            raise OutOfTime(f"{self.rel}: reading stopped at the CPU deadline "
                            f"({f'{RUN_SECONDS:.0f} s for the whole run' if run else f'{FILE_SECONDS:.0f} s a file'}); "
                            "what it gave is left out of the diagnosis")

    def __enter__(self) -> "BoundedFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def peek(self, offset: int, size: int) -> bytes:
        """Raw bytes for a decision (format sniffing, scanning); not evidence, never shown."""
        self.check()
        try:
            return pread(self.fd, max(0, min(size, self.size - offset)), offset)
        except OSError as exc:
            raise Skip(f"{self.rel}: read failed ({exc.strerror or exc})") from None

    def raw(self, offset: int, size: int) -> bytes:
        """Raw bytes that are evidence but not text (a checkpoint's container header): recorded, never decoded."""
        data = self.peek(offset, size)
        self._keep(offset, data)
        return data

    def _keep(self, offset: int, data: bytes) -> None:
        self.pieces.append((offset, data))
        self.budget.evidence -= len(data)

    def line_number_at(self, offset: int) -> Optional[int]:
        """The 1-based number of the line that starts at `offset`, or None when counting up to it would pass
        COUNT_LIMIT or the collection's counting budget (then the byte offset is the citation)."""
        i = bisect_right(self._marks, (offset, float("inf"))) - 1  # the nearest count at or before `offset`
        done, count = self._marks[i]
        need = offset - done
        if offset > COUNT_LIMIT or need > self.budget.counting:
            return None
        self.budget.counting -= need
        while done < offset:
            b = self.peek(done, min(8 << 20, offset - done))
            if not b:
                break
            count += b.count(b"\n")
            done += len(b)
        if done != self._marks[i][0]:
            self._marks.insert(i + 1, (done, count))
        return count + 1

    def lines(self, start: int, end: int, numbered: bool = True, last: Optional[int] = None) -> List[Line]:
        """The whole lines in bytes [start, end): a line cut by `start` is dropped, so is one cut by `end` unless
        `end` is the end of the file; with `last`, only the last `last` of them are decoded and kept (and only
        their bytes count as read). Line numbers when `numbered` and countable, else byte offsets only."""
        start, end = max(0, start), min(self.size, end)
        if start >= end:
            return []
        data = self.peek(start - 1 if start else 0, end - start + (1 if start else 0))
        if start:
            nl = data.find(b"\n")
            if nl < 0:
                return []
            data, start = data[nl + 1:], start + nl
        if end < self.size:
            cut = data.rfind(b"\n")
            data = data[:cut + 1] if cut >= 0 else b""
        if not data:
            return []
        skipped = 0
        if last is not None:
            cut = len(data) - 1
            for _ in range(last):
                cut = data.rfind(b"\n", 0, cut)
                if cut < 0:
                    break
            if cut >= 0:
                skipped = data.count(b"\n", 0, cut + 1)
                data, start_kept = data[cut + 1:], start + cut + 1
            else:
                start_kept = start
        else:
            start_kept = start
        self._keep(start_kept, data)
        if data.endswith(b"\n"):
            data = data[:-1]
        first = None
        if numbered:
            first = 1 if start == 0 else self.line_number_at(start)
            first = first + skipped if first is not None else None
        out = split_lines(data, self.rel, first, start_kept)
        self.check()
        return out

    def line_after(self, offset: int, limit: int = 4096) -> Optional[Line]:
        """The first whole line that starts after `offset` (within `limit` bytes), cited by byte offset."""
        data = self.peek(offset, limit)
        nl = data.find(b"\n") if offset else -1
        end = data.find(b"\n", nl + 1)
        if end < 0:
            return None
        raw = data[nl + 1:end]
        self._keep(offset + nl + 1, raw)
        return split_lines(raw, self.rel, None, offset + nl + 1)[0]

    def cells(self, offset: int, split: Callable[[str], List[str]], limit: int = WIDE_LINE_BYTES,
              most: Optional[int] = None, again: bool = False) -> Tuple[List[str], bool]:
        """The cells of the line that starts at byte `offset`, read from its START (a Line of `lines` keeps the
        end of an over-long line, so the cells of a wide table row would be shifted): at most `limit` bytes and
        `most` cells. The line is cleaned like every line, split by `split`, and each cell is redacted as a text
        of its own (and cut to MAX_LINE_CHARS), so a redaction stays inside its cell and no cell moves.
        Returns (cells, whole): `whole` is False when a bound cut the line (the cell it cut into is dropped).
        `again`: the line was read before through `lines` (its bytes are in the evidence budget already)."""
        data = self.peek(offset, min(limit + 1, 16 << 10))  # most rows end within 16 KB: read more only if not
        nl = data.find(b"\n")
        if nl < 0 and limit + 1 > len(data) and offset + len(data) < self.size:
            data = self.peek(offset, limit + 1)
            nl = data.find(b"\n")
        whole = nl >= 0 or len(data) <= limit
        data = data[:nl] if nl >= 0 else data[:limit]
        if again:
            self.pieces.append((offset, data))
        else:
            self._keep(offset, data)
        cells = split(clean_text(data))
        if not whole:
            cells = cells[:-1]
        if most is not None and len(cells) > most:
            cells, whole = cells[:most], False
        return redact_texts(cells), whole

    def all_lines(self, limit: int) -> List[Line]:
        """Every line of a small structured file (config, JSON); refused beyond `limit` bytes."""
        if self.size > limit:
            raise Skip(f"{self.rel}: {self.size >> 20} MB, larger than the {limit >> 20} MB read limit; skipped")
        return self.lines(0, self.size)

    def record(self, kind: str) -> FileRecord:
        """The lock-file entry: sha256 of the bytes that were read (merged ranges, in file order)."""
        h = _sha256()
        covered, pos = 0, 0
        for off, data in sorted(self.pieces, key=lambda p: p[0]):
            if off + len(data) <= pos:
                continue
            part = data[max(0, pos - off):]
            h.update(part)
            covered += len(part)
            pos = max(pos, off + len(data))
        whole = covered >= self.size or (not self.pieces and self.size == 0)
        return FileRecord(self.rel, self.size, self.mtime, h.hexdigest(), "whole" if whole else "head+tail", kind)
