"""Hugging Face Trainer state (trainer_state.json): `log_history` entries, cited by the line of each value.

Small files are parsed whole. Larger ones: the first 256 KB (the start of training), the last 1 MB (the end),
and a scan of the whole file for the first NaN / Infinity, whose entry is parsed too.
"""
from __future__ import annotations

import json
import os
import re
from typing import Optional

from trainwreck.collect.metricnames import canonical
from trainwreck.collect.redact import redact
from trainwreck.collect.safeio import COUNT_LIMIT, open_regular, pread
from trainwreck.model import Point, Source

ORDER = 30
LIMIT = 2 << 20
HEAD = 256 << 10
TAIL = 1 << 20
_OBJ = re.compile(r"\{[^{}\[\]]*\}")
_KEYLINE = re.compile(r'"([^"]+)"\s*:\s*([^,\n}]+)')


def claims(rel: str, name: str) -> bool:
    return name == "trainer_state.json"


def _entries(bundle, rel: str, text: str, first_line: Optional[int]) -> int:
    """Add the metric values of every complete `{...}` entry in `text`; returns how many entries were read.
    `first_line` is the file line of text[0] (None when unknown)."""
    lines = text.split("\n")
    n = 0
    pos, nl = 0, 0  # newlines counted incrementally: text.count from 0 for every entry would be quadratic
    for m in _OBJ.finditer(text):
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            continue
        if not isinstance(obj, dict) or not any(isinstance(k, str) and canonical(k) for k in obj):
            continue
        n += 1
        step = obj.get("step")
        step = int(step) if isinstance(step, (int, float)) and not isinstance(step, bool) and step == step else None
        nl += text.count("\n", pos, m.start())
        pos = m.start()
        rel_line = nl  # 0-based line within `text`
        key_lines = {}
        for km in _KEYLINE.finditer(m.group(0)):
            key_lines.setdefault(km.group(1), rel_line + m.group(0).count("\n", 0, km.start()))
        for k, v in obj.items():
            name = canonical(k) if isinstance(k, str) else None
            if not name or isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            i = key_lines.get(k, rel_line)
            shown = redact(lines[i] if 0 <= i < len(lines) else m.group(0))
            ln = first_line + i if first_line is not None else None
            bundle.add_point(name, rel, Point(step, float(v), Source(rel, ln, shown, step=step, metric=name,
                                                                     value=float(v))))
    return n


def _first_nonfinite(fd: int, size: int):
    """(offset of the entry's '{', the entry's bytes) of the first entry holding NaN or Infinity."""
    off = 0
    chunk_size = 8 << 20
    while off < size:
        chunk = os.pread(fd, chunk_size + 4096, off)
        if not chunk:
            return None
        hits = [p for p in (chunk.find(b"NaN", 0, chunk_size), chunk.find(b"Infinity", 0, chunk_size)) if p >= 0]
        if hits:
            hit = off + min(hits)
            start = max(0, hit - 4096)
            window = pread(fd, 8192, start)
            s = window.rfind(b"{", 0, hit - start)
            e = window.find(b"}", hit - start)
            if s >= 0 and e > s:
                return start + s, window[s:e + 1]
            off = hit + 1
            continue
        off += chunk_size
    return None


def read(bundle, entry, ctx) -> None:
    if getattr(bundle, "_trainer_state_read", False):
        return  # the newest one (root before checkpoints) already gave the history
    fd, st = open_regular(bundle.root, entry.abspath)
    rel = entry.rel
    try:
        size = st.st_size
        if size <= LIMIT:
            text = pread(fd, size, 0).decode("utf-8", "replace")
            start = text.find('"log_history"')
            if start < 0:
                bundle.note(f"{rel}: no log_history in it")
                return
            n = _entries(bundle, rel, text, 1)
            if not text.rstrip().endswith("}"):
                bundle.note(f"{rel}: truncated JSON; read {n} complete log_history entries")
            ctx.record(entry, "metrics")
        else:
            head = pread(fd, HEAD, 0).decode("utf-8", "replace")
            _entries(bundle, rel, head, 1)
            tail_off = max(0, size - TAIL)
            tail = pread(fd, size - tail_off, tail_off)
            first = None
            if size <= COUNT_LIMIT:
                from trainwreck.collect.safeio import count_newlines
                first = count_newlines(fd, tail_off) + 1
            _entries(bundle, rel, tail.decode("utf-8", "replace"), first)
            hit = _first_nonfinite(fd, size)
            if hit:
                off, data = hit
                from trainwreck.collect.safeio import count_newlines
                line = count_newlines(fd, off) + 1 if size <= COUNT_LIMIT else None
                _entries(bundle, rel, data.decode("utf-8", "replace"), line)
            for series in bundle.series.values():
                for s in series:
                    if s.path == rel:
                        s.points.sort(key=lambda p: (p.step is None, p.step or 0))
            bundle.note(f"{rel}: {size >> 20} MB; read its first {HEAD >> 10} KB and last {TAIL >> 20} MB of "
                        "log_history and scanned the whole file for the first NaN/Infinity")
            ctx.record(entry, "metrics", [(0, HEAD), (tail_off, size)])
    finally:
        os.close(fd)
    bundle._trainer_state_read = True  # type: ignore[attr-defined]
