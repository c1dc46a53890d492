"""Compressed logs (`.gz`, `.bz2`, `.xz`, and `.zst` when `zstandard` is importable) through the one read primitive.

A compressed file is recognised by its magic bytes, never by its name. `InflatedFile` is a BoundedFile whose bytes
are the decompressed stream: every reader and every bound sees the decompressed size and offsets, every line it
returns is cleaned and redacted by the same code, and the lock-file hash covers the decompressed bytes that were
read. The stream is decompressed once, front to back, in CHUNK pieces (each decompressor call is asked for at most
CHUNK bytes of output, so a single compressed block that expands to gigabytes never lands in memory at once), and
at most INFLATE_LIMIT decompressed bytes per file (and the collection's `Budget.inflate`; bzip2, slower, gets a
quarter of that) are ever produced: a decompression bomb costs what a 64 MB log costs, then stops with a note.

What is kept of the stream is bounded too: all of it up to KEEP_WHOLE; beyond, its first HEAD_KEEP bytes, its last
TAIL_KEEP bytes, and up to 2 * MAX_WINDOWS windows sampled at an even stride across the middle (the stride doubles
whenever the windows would pass that count, so their spacing is even whatever the final size). Newlines are counted
on the way, so every kept byte has an exact line number. A read of a range that was not kept returns no bytes (a
bisection there finds nothing to decide by and says so).
"""
from __future__ import annotations

import io
import os
from bisect import bisect_right
from typing import List, Optional, Tuple

from trainwreck.collect.bundle import FileRecord
from trainwreck.collect.safeio import TAIL_BYTES, BoundedFile, Budget, Skip

MAGIC = ((b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
SUFFIXES = {"gzip": ".gz", "bz2": ".bz2", "xz": ".xz", "zstd": ".zst"}
INFLATE_LIMIT = 64 << 20  # decompressed bytes produced from one file, at most (and safeio.INFLATE_BYTES per collection)
MIN_INFLATE = 1 << 20
# what one decompressed byte costs against those limits: bzip2 decompresses ~4x slower than gzip, xz or zstd, so it
# gets a quarter of the bytes for the same time
COST = {"gzip": 1, "xz": 1, "zstd": 1, "bz2": 4}
COMPRESSED_LIMIT = 256 << 20  # compressed bytes read from one file, at most
CHUNK = 64 << 10
KEEP_WHOLE = 4 << 20  # a stream up to this size is kept whole (every offset readable)
HEAD_KEEP = 128 << 10
TAIL_KEEP = TAIL_BYTES + CHUNK
WINDOW = 16 << 10  # bytes kept at the start of each sampled chunk of the middle
MAX_WINDOWS = 48


def compression_of(head: bytes) -> Optional[str]:
    """The compression format of a file that starts with `head`, or None."""
    for magic, name in MAGIC:
        if head.startswith(magic):
            return name
    # "BZh" + block size digit + the block magic (pi): plain text starting with "BZh" is not bzip2
    if len(head) >= 10 and head[:3] == b"BZh" and head[3:4] in b"123456789" and head[4:10] == b"1AY&SY":
        return "bz2"
    return None


def available(method: str) -> bool:
    if method != "zstd":
        return True
    try:
        import zstandard  # noqa: F401  (optional: .zst is read only when it is installed)
    except ImportError:
        return False
    return True


class _FdRaw(io.RawIOBase):
    """The compressed bytes of an open regular file, read by pread (the descriptor's offset is never moved)."""

    def __init__(self, fd: int, size: int):
        self.fd, self.pos, self.end = fd, 0, min(size, COMPRESSED_LIMIT)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = min(len(b), self.end - self.pos)
        if n <= 0:
            return 0
        data = os.pread(self.fd, n, self.pos)
        b[:len(data)] = data
        self.pos += len(data)
        return len(data)


def open_stream(method: str, raw: io.RawIOBase):
    """A file-like object whose read(n) returns at most n decompressed bytes."""
    buffered = io.BufferedReader(raw, CHUNK)
    if method == "gzip":
        import gzip
        return gzip.GzipFile(fileobj=buffered, mode="rb")
    if method == "bz2":
        import bz2
        return bz2.BZ2File(buffered, "rb")
    if method == "xz":
        import lzma
        return lzma.LZMAFile(buffered, "rb")
    import zstandard
    return zstandard.ZstdDecompressor().stream_reader(buffered, read_across_frames=True)


def _errors() -> tuple:
    import lzma
    import zlib
    return (EOFError, OSError, ValueError, zlib.error, lzma.LZMAError)


class InflatedFile(BoundedFile):
    """A compressed regular file, read as its decompressed stream (see the module docstring)."""

    def __init__(self, root_real: str, abspath: str, method: str, budget: Optional[Budget] = None):
        super().__init__(root_real, abspath, budget)
        if not available(method):
            self.close()
            raise Skip(f"{self.rel}: zstd-compressed; install the `zstandard` package to read it")
        self.method = method
        self.disk_size = self.size
        self.truncated = False  # stopped at the limit with more of the stream left
        self.damaged: Optional[str] = None  # the stream ended in an error (a writer killed mid-file, a bad copy)
        self._segs: List[Tuple[int, bytes, int]] = []  # (offset, bytes, newlines before offset), sorted
        self._starts: List[int] = []
        try:
            self._inflate()
        except BaseException:
            self.close()
            raise

    def _inflate(self) -> None:
        cost = COST[self.method]
        limit = (INFLATE_LIMIT if self.budget.inflate >= INFLATE_LIMIT else max(MIN_INFLATE, self.budget.inflate)) // cost
        stream = open_stream(self.method, _FdRaw(self.fd, self.disk_size))
        # read1: what one decompressor step gives, so a stream that breaks off loses only that step's bytes
        read = getattr(stream, "read1", stream.read)
        whole: Optional[List[bytes]] = []
        head: List[Tuple[int, bytes, int]] = []
        tail: List[Tuple[int, bytes, int]] = []
        windows: List[Tuple[int, bytes, int]] = []
        span, next_at, total, nl, tail_bytes = CHUNK, HEAD_KEEP, 0, 0, 0
        try:
            while total < limit:
                chunk = read(min(CHUNK, limit - total))
                if not chunk:
                    break
                piece = (total, chunk, nl)
                if whole is not None:
                    whole.append(chunk)
                    if total + len(chunk) > KEEP_WHOLE:
                        whole = None
                if total < HEAD_KEEP:
                    head.append(piece)
                elif total >= next_at:  # the first chunk of each `span` of the middle leaves a window
                    windows.append((total, chunk[:WINDOW], nl))
                    if len(windows) > 2 * MAX_WINDOWS:
                        span *= 2
                        windows = _one_per_slot(windows, span)
                    next_at = (total // span + 1) * span
                tail.append(piece)
                tail_bytes += len(chunk)
                while tail_bytes - len(tail[0][1]) >= TAIL_KEEP:
                    tail_bytes -= len(tail.pop(0)[1])
                nl += chunk.count(b"\n")
                total += len(chunk)
            else:
                self.truncated = bool(stream.read(1))
        except _errors() as exc:
            self.damaged = f"{type(exc).__name__}: {str(exc)[:80]}"
        finally:
            self.budget.inflate -= total * cost
            try:
                stream.close()
            except _errors():
                pass
        self.size = total
        if whole is not None:
            self._segs = [(0, b"".join(whole), 0)] if total else []
        else:
            tail_start = tail[0][0] if tail else total
            windows = [w for w in windows if w[0] + len(w[1]) <= tail_start]
            self._segs = _merge(head + windows + tail)
        self._starts = [s[0] for s in self._segs]

    def _seg(self, offset: int) -> Optional[Tuple[int, bytes, int]]:
        i = bisect_right(self._starts, offset) - 1
        if i < 0:
            return None
        seg = self._segs[i]
        return seg if offset < seg[0] + len(seg[1]) else None

    def peek(self, offset: int, size: int) -> bytes:
        """Decompressed bytes from `offset`, clipped to the kept segment that holds it (b"" where none does)."""
        seg = self._seg(offset)
        if seg is None or size <= 0:
            return b""
        at = offset - seg[0]
        return seg[1][at:at + size]

    def kept(self) -> List[Tuple[int, int]]:
        """(start, end) of every kept range of the decompressed stream."""
        return [(s[0], s[0] + len(s[1])) for s in self._segs]

    def line_number_at(self, offset: int) -> Optional[int]:
        seg = self._seg(offset)
        if seg is None:
            return None
        return seg[2] + seg[1].count(b"\n", 0, offset - seg[0]) + 1

    def describe(self) -> Optional[str]:
        """A note for the report when the stream was not read to its end, else None."""
        kind = SUFFIXES[self.method]
        if self.damaged:
            return (f"{self.rel}: the {kind} stream ends in an error after {self.size >> 10} KB decompressed "
                    f"({self.damaged}); what decompressed before it was read")
        if self.truncated:
            return (f"{self.rel}: {kind}-compressed; only its first {self.size >> 20} MB decompressed were read "
                    "(the decompression limit); the rest of the stream was not read")
        return None

    def record(self, kind: str) -> FileRecord:
        rec = super().record(kind)
        rec.size, rec.compression = self.disk_size, self.method
        if self.truncated or self.damaged:
            rec.hashed = "head+tail"
        return rec


def _one_per_slot(windows: List[Tuple[int, bytes, int]], span: int) -> List[Tuple[int, bytes, int]]:
    """The first window of each `span`-wide slot: the sample thinned to an even, wider stride."""
    out, last = [], -1
    for w in windows:
        slot = w[0] // span
        if slot != last:
            out.append(w)
            last = slot
    return out


def _merge(pieces: List[Tuple[int, bytes, int]]) -> List[Tuple[int, bytes, int]]:
    """Sorted, non-overlapping segments; touching pieces become one (so a line across them stays whole)."""
    out: List[Tuple[int, bytes, int]] = []
    for off, data, nl in sorted(pieces, key=lambda p: p[0]):
        if out and off <= out[-1][0] + len(out[-1][1]):
            p_off, p_data, p_nl = out[-1]
            end = p_off + len(p_data)
            if off + len(data) > end:
                out[-1] = (p_off, p_data + data[end - off:], p_nl)
            continue
        out.append((off, data, nl))
    return out


def open_evidence(root_real: str, abspath: str, budget: Optional[Budget] = None) -> BoundedFile:
    """The read primitive for a file whose format is not known in advance: a compressed file is read as its
    decompressed stream, anything else as it is."""
    f = BoundedFile(root_real, abspath, budget)
    method = compression_of(f.peek(0, 16))
    if method is None:
        return f
    f.close()
    return InflatedFile(root_real, abspath, method, budget)


def sniff_head(root_real: str, abspath: str, size: int) -> Tuple[Optional[str], bytes]:
    """(compression method or None, the first `size` bytes of the content: decompressed for a compressed file).
    Raises Skip for a file that cannot be opened; a damaged stream gives what decompressed before the damage."""
    with BoundedFile(root_real, abspath) as f:
        head = f.peek(0, size)
        method = compression_of(head[:16])
        if method is None:
            return None, head
        if not available(method):
            return method, b""
        out = b""
        try:
            stream = open_stream(method, _FdRaw(f.fd, f.size))
            try:
                out = stream.read(size)
            finally:
                stream.close()
        except _errors():
            pass
        return method, out
