"""JSON-lines metrics (metrics.jsonl, log.jsonl, events.jsonl …): one object per line with a step and metrics.

Small files are parsed whole. Large ones: the last entries, an evenly spaced sample of the history, and a
byte-level scan of the WHOLE file for the first non-finite value (NaN / Infinity), which costs about what
`grep -c nan` costs, because only lines that contain such a token are parsed.
"""
from __future__ import annotations

import json
import math
import os
from typing import Dict, Optional, Tuple

from trainwreck.collect.metricnames import STEP_KEYS, canonical
from trainwreck.collect.redact import redact
from trainwreck.collect.safeio import COUNT_LIMIT, open_regular, pread
from trainwreck.model import Point, Source

ORDER = 30
FULL_PARSE_LIMIT = 2 << 20
TAIL_ENTRIES = 200
SAMPLES = 4000
CHUNK = 8 << 20


def claims(rel: str, name: str) -> bool:
    return name.endswith(".jsonl") or name.endswith(".ndjson") or name == "metrics.json"


def _float(v) -> Optional[float]:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and v.strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity"):
        return float(v.strip().lower().replace("infinity", "inf"))
    return None


def parse_record(text: str) -> Optional[Tuple[Optional[int], Dict[str, float]]]:
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    step = None
    for k in STEP_KEYS:
        v = obj.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            step = int(v)
            break
    values: Dict[str, float] = {}
    for k, v in obj.items():
        if not isinstance(k, str):
            continue
        name = canonical(k)
        if not name or name in values:
            continue
        f = _float(v)
        if f is not None:
            values[name] = f
    return step, values


def _add(bundle, rel: str, ln: Optional[int], text: str, byte: Optional[int] = None) -> bool:
    got = parse_record(text)
    if not got:
        return False
    step, values = got
    shown = redact(text if len(text) <= 2000 else text[:2000])
    for name, value in values.items():
        bundle.add_point(name, rel, Point(step, value, Source(rel, ln, shown, step=step, metric=name, value=value,
                                                              byte=byte)))
    return True


def read(bundle, entry, ctx) -> None:
    fd, st = open_regular(bundle.root, entry.abspath)
    rel = entry.rel
    try:
        if st.st_size <= FULL_PARSE_LIMIT:
            data = pread(fd, st.st_size, 0)
            bad = 0
            for n, raw in enumerate(data.split(b"\n"), 1):
                if raw.strip() and not _add(bundle, rel, n, raw.decode("utf-8", "replace").strip()):
                    bad += 1
            if bad:
                bundle.note(f"{rel}: {bad} line(s) were not valid JSON objects (truncated or garbled) and were skipped")
            ctx.record(entry, "metrics")
            return
        _read_large(bundle, fd, st.st_size, rel)
        ctx.record(entry, "metrics", [(0, 1 << 20), (max(0, st.st_size - (1 << 20)), st.st_size)])
    finally:
        os.close(fd)


_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
_TOKENS_UPPER = (b"NaN", b"NAN", b"Infinity", b"INF", b"Inf")


def _next_candidate(body: bytes, start: int, end: int, low: Optional[bytes]) -> int:
    """Offset of the next place in body[start:end] where a non-finite token may begin, or -1.

    Fast path (`low` is None): JSON writers spell non-finite numbers NaN / Infinity (json.dumps, JavaScript),
    which begin with an upper-case N or I; memchr finds those at memory speed. `low` is the case-folded chunk,
    used when upper-case letters are frequent (keys like "NLL") or numbers are stored as strings ("nan")."""
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


def first_nonfinite(fd: int, size: int, strings: bool = False,
                    count_lines: bool = True) -> Optional[Tuple[int, Optional[int], bytes]]:
    """(byte offset, line number, line) of the first line with a non-finite value, scanning the whole file.
    With count_lines False (huge files) the line number is None and only the byte offset is known.

    `strings`: also look for lower-case spellings ("nan", "inf"), for writers that store numbers as strings.
    Each chunk is searched in place (no copies); a line cut by the chunk end is read again with the next chunk."""
    off = 0
    lines_before = 0
    while off < size:
        chunk = os.pread(fd, CHUNK, off)
        if not chunk:
            break
        end = len(chunk)
        if off + end < size:
            end = chunk.rfind(b"\n") + 1
            if end == 0:  # a single line longer than a chunk: skip it
                off += len(chunk)
                continue
        low = chunk.translate(_LOWER) if strings or chunk.count(b"N", 0, 1 << 16) > 64 else None
        pos = 0
        while pos < end:
            hit = _next_candidate(chunk, pos, end, low)
            if hit < 0:
                break
            s = chunk.rfind(b"\n", 0, hit) + 1
            e = chunk.find(b"\n", hit, end)
            e = end if e < 0 else e
            got = parse_record(chunk[s:e].decode("utf-8", "replace"))
            if got and any(not math.isfinite(v) for v in got[1].values()):
                ln = lines_before + chunk.count(b"\n", 0, s) + 1 if count_lines else None
                return off + s, ln, chunk[s:e]
            pos = e + 1
        if count_lines:
            lines_before += chunk.count(b"\n", 0, end)
        off += end
    return None


def _read_large(bundle, fd: int, size: int, rel: str) -> None:
    # evenly spaced sample of the history (line numbers unknown: byte offsets instead)
    step_bytes = max(1, size // SAMPLES)
    for i in range(SAMPLES):
        off = i * step_bytes
        b = pread(fd, 4096, off)
        nl = b.find(b"\n")
        if nl < 0:
            continue
        rest = b[nl + 1:]
        e = rest.find(b"\n")
        if e < 0:
            continue
        _add(bundle, rel, None, rest[:e].decode("utf-8", "replace"), off + nl + 1)
    # the last entries
    tail_start = max(0, size - (1 << 20))
    tail = pread(fd, size - tail_start, tail_start)
    if tail_start:
        tail = tail[tail.find(b"\n") + 1:]
    lines = tail.split(b"\n")
    base = size - len(tail)
    pos = base
    offs = []
    for raw in lines:
        offs.append(pos)
        pos += len(raw) + 1
    for raw, o in list(zip(lines, offs))[-TAIL_ENTRIES:]:
        if raw.strip():
            _add(bundle, rel, None, raw.decode("utf-8", "replace"), o)
    strings = any(isinstance(p.source.text, str) and ('"nan"' in p.source.text.lower() or
                                                      '"inf' in p.source.text.lower())
                  for ss in bundle.series.values() for x in ss if x.path == rel for p in x.points[-50:])
    hit = first_nonfinite(fd, size, strings, count_lines=size <= COUNT_LIMIT)
    if hit:
        o, ln, line = hit
        _add(bundle, rel, ln, line.decode("utf-8", "replace"), o)
        for series in bundle.series.values():
            for s in series:
                if s.path == rel:
                    s.points.sort(key=lambda p: (p.source.byte if p.source.byte is not None else 0))
                    nf = [p for p in s.points if not math.isfinite(p.value)]
                    if nf:
                        s.first_nonfinite = min(nf, key=lambda p: p.source.byte or 0)
    else:
        for series in bundle.series.values():
            for s in series:
                if s.path == rel:
                    s.points.sort(key=lambda p: (p.source.byte if p.source.byte is not None else 0))
    bundle.note(f"{rel}: {size >> 20} MB; sampled {SAMPLES} entries and the last {TAIL_ENTRIES}, "
                "and scanned the whole file for the first non-finite value")
