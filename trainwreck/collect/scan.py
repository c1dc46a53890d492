"""Finding the first non-finite value of a file without reading it into memory.

Two ways, one per kind of file:
- `first_nonfinite`: one pass over a metrics file (JSON lines, CSV, trainer_state.json) in 8 MB chunks, searched
  in place for NaN / Infinity tokens; only lines that hold one are handed to the format's `accept`. It costs
  about what `grep -c nan` costs and finds even an isolated NaN, wherever it is.
- `bisect_nonfinite`: for a text log too large to read, the byte range between a finite head and a non-finite
  tail is halved until the window where the metric turns non-finite is found: O(log size) reads of a small
  window, each read through the bounded primitive (recorded, redacted). It assumes a persistent NaN (once
  non-finite, the metric stays so), which is what a head that is finite and a tail that is not suggest.
"""
from __future__ import annotations

import errno
import math
import os
from typing import Callable, List, Optional, Tuple

from trainwreck.collect.safeio import BoundedFile
from trainwreck.model import Line

CHUNK = 8 << 20
MAX_LINE = 64 << 10  # a "line" longer than this around a hit is cut to a window of CONTEXT bytes each side
CONTEXT = 4096
SCAN_BYTES = 2 << 30  # at most this much of one file's data is searched; beyond, the note says what was not
BISECT_WINDOW = 16 << 10
BISECT_WIDEST = 1 << 20  # a probe window without any value of the metric is widened up to this size

_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
_TOKENS_UPPER = (b"NaN", b"NAN", b"Infinity", b"INF", b"Inf")

Hit = Tuple[int, Optional[int], bytes]  # (byte offset of the line, 1-based line number or None, the line)


def _next_candidate(body: bytes, start: int, end: int, low: Optional[bytes]) -> int:
    """Offset of the next place in body[start:end] where a non-finite token may begin, or -1.

    Fast path (`low` is None): JSON writers spell non-finite numbers NaN / Infinity (json.dumps, JavaScript),
    which begin with an upper-case N or I; memchr finds those at memory speed. `low` is the case-folded chunk,
    used when upper-case letters are frequent (keys like "NLL") or numbers are written lower-case ("nan")."""
    if low is not None:
        hits = [p for p in (low.find(b"nan", start, end), low.find(b"inf", start, end)) if p >= 0]
        return min(hits) if hits else -1
    best = -1
    for ch in (b"N", b"I"):
        pos = body.find(ch, start, end)
        while pos >= 0 and not body.startswith(_TOKENS_UPPER, pos):
            pos = body.find(ch, pos + 1, end)
        if pos >= 0 and (best < 0 or pos < best):
            best = pos
    return best


def _next_data(fd: int, off: int, size: int) -> int:
    """The first offset at or after `off` that holds data: holes of a sparse file (all NUL bytes: no token, no
    newline) are skipped, not read. `size` when only a hole is left; `off` where the system cannot say."""
    if _SEEK_DATA is None:
        return off
    try:
        return min(size, os.lseek(fd, off, _SEEK_DATA))
    except OSError as exc:
        return size if exc.errno == errno.ENXIO else off


_SEEK_DATA = getattr(os, "SEEK_DATA", None)


def first_nonfinite(fd: int, size: int, accept: Callable[[bytes], bool], strings: bool = False,
                    start: int = 0, count_lines: bool = False, skipped: Optional[dict] = None) -> Optional[Hit]:
    """The first line at or after byte `start` that holds a non-finite token and that `accept(line)` confirms.

    `strings`: also look for lower-case spellings (nan, inf): CSV writers, numbers stored as strings. Each chunk
    is searched in place (no copies); a line cut by the chunk end is read again with the next chunk. With
    `count_lines` the hit's line number is counted on the way (when `start` is 0), else it is None. The search
    is bounded by the file's data, not its size: holes are skipped and at most SCAN_BYTES are read; `skipped`
    (when given) gets {"holes": bytes, "unscanned": bytes} for the note."""
    off = start
    lines_before = 0
    read = holes = 0
    while off < size:
        nxt = _next_data(fd, off, size)
        if nxt > off:
            holes, off = holes + nxt - off, nxt
            continue
        if read >= SCAN_BYTES:
            break
        chunk = os.pread(fd, CHUNK, off)
        read += len(chunk)
        if not chunk:
            break
        end = len(chunk)
        if off + end < size:
            end = chunk.rfind(b"\n") + 1
            if end == 0:  # one line longer than a chunk: search it, keep an overlap for a token cut at the end
                end = max(1, len(chunk) - CONTEXT)
        low = chunk.translate(_LOWER) if strings or chunk.count(b"N", 0, 1 << 16) > 64 else None
        pos = 0
        while pos < end:
            hit = _next_candidate(chunk, pos, end, low)
            if hit < 0:
                break
            s = chunk.rfind(b"\n", max(0, hit - MAX_LINE), hit) + 1
            if s == 0 and hit > MAX_LINE:
                s = hit - CONTEXT
            e = chunk.find(b"\n", hit, min(len(chunk), hit + MAX_LINE))
            e = min(len(chunk), hit + CONTEXT) if e < 0 else e
            if accept(chunk[s:e]):
                if skipped is not None:
                    skipped["holes"], skipped["unscanned"] = holes, 0
                ln = lines_before + chunk.count(b"\n", 0, s) + 1 if count_lines and start == 0 else None
                return off + s, ln, chunk[s:e]
            pos = max(e + 1, hit + 1)
        if count_lines:
            lines_before += chunk.count(b"\n", 0, end)
        off += end
    if skipped is not None:
        skipped["holes"], skipped["unscanned"] = holes, max(0, size - off)
    return None


def scan_gaps(skipped: dict) -> str:
    """What the first-non-finite search of a file left out, for its note ("" when nothing)."""
    parts = []
    if skipped.get("holes"):
        parts.append(f"{skipped['holes'] >> 20} MB of holes (a sparse file: NUL bytes only) skipped")
    if skipped.get("unscanned"):
        parts.append(f"the last {skipped['unscanned'] >> 20} MB not searched for a non-finite value "
                     f"(the search stops after {SCAN_BYTES >> 30} GB of data; the file's end was read)")
    return "; ".join(parts)


def _probe(f: BoundedFile, off: int, value_of: Callable[[str], Optional[float]]) -> Tuple[str, List[Line], int]:
    """('finite' | 'nonfinite' | 'mixed' | 'none', the window's lines, its width) for the window that starts at
    `off` (widened while it holds no value). Under the persistent-NaN assumption the first and the last value of
    the window decide, so only the lines up to the first value and from the last value are parsed."""
    width = BISECT_WINDOW
    while True:
        lines = f.lines(off, off + width, numbered=False)
        first = next((v for v in (value_of(ln.text) for ln in lines) if v is not None), None)
        if first is not None or width >= BISECT_WIDEST or off + width >= f.size:
            break
        width *= 4
    if first is None:
        return "none", lines, width
    if not math.isfinite(first):
        return "nonfinite", lines, width
    last = next(v for v in (value_of(ln.text) for ln in reversed(lines)) if v is not None)
    return ("finite" if math.isfinite(last) else "mixed"), lines, width


def bisect_nonfinite(f: BoundedFile, lo: int, hi: int,
                     value_of: Callable[[str], Optional[float]]) -> Optional[Tuple[List[Line], int]]:
    """(lines around the first non-finite value, probes made) in bytes [lo, hi) of `f`, where the metric is
    finite before `lo` and non-finite from `hi` on; None when a probe finds no values to decide by."""
    probes = 0
    while hi - lo > BISECT_WINDOW:
        mid = (lo + hi) // 2
        state, lines, width = _probe(f, mid, value_of)
        probes += 1
        if state == "none" or not lines:
            return None
        if state == "mixed":
            return f.lines(mid, mid + width), probes
        if state == "finite":
            last = lines[-1]
            lo = max(lo + 1, (last.byte or mid) + 1)
        else:
            hi = lines[0].byte if lines[0].byte is not None else mid
    return f.lines(lo, min(f.size, hi + BISECT_WINDOW)), probes
