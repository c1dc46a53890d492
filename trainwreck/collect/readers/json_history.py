"""Per-epoch metric histories dumped as one JSON document: Keras' `json.dump(model.fit(...).history)` (a dict of
per-epoch lists, `{"loss": [...], "val_loss": [...], "accuracy": [...]}`), the same dict under a key
(`{"history": {...}, "params": {...}}`, `{"epochs": [...], "metrics": {...}}`), or a list of per-epoch records
(`[{"epoch": 0, "loss": 0.9}, ...]`). Python's json writes NaN and Infinity bare, and reads them back.

Claimed by name (`history.json`, `*_history.json`) and, whatever its name, when its content has that layout
(collect/sniff.py `json_document_kind`). Each value cites the line it is written on; its step is the epoch (a
sibling `epoch`/`epochs` list, else the value's index). Files above LIMIT are not parsed (a note says so).
"""
from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from typing import List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.collect import numbers
from trainwreck.collect.metricnames import canonical
from trainwreck.model import Line, Point, Source

ORDER = 30
LIMIT = 8 << 20
MAX_DEPTH = 3
EPOCH_KEYS = ("epoch", "epochs", "step", "steps")
_NAME = lazy_re(r"(?i)^(?:.*[_\-.])?history\.json$")
_NUM = lazy_re(r"\s*(-?(?:NaN|Infinity|\d[\d.eE+\-]*)|null)\s*([,\]])")


def claims(rel: str, name: str) -> bool:
    return bool(_NAME.match(name))


def _number(v) -> Optional[float]:
    return numbers.value(v)[0]


def _numeric_list(v) -> bool:
    return isinstance(v, list) and bool(v) and all(x is None or numbers.value(x) != (None, None) for x in v)


def histories(obj, depth: int = 0) -> List[Tuple[str, List, Optional[List]]]:
    """(key, per-epoch values as written, epoch numbers or None) for every metric list of a history dict in
    `obj`."""
    out: List[Tuple[str, List, Optional[List]]] = []
    if depth > MAX_DEPTH:
        return out
    if isinstance(obj, dict):
        epochs = next((obj[k] for k in EPOCH_KEYS if _numeric_list(obj.get(k))), None)
        for k, v in obj.items():
            if not isinstance(k, str) or k in EPOCH_KEYS:
                continue
            if _numeric_list(v) and canonical(k):
                out.append((k, list(v), epochs if epochs and len(epochs) == len(v) else None))
            elif isinstance(v, (dict, list)):
                out.extend((n, vals, ep if ep is not None else (epochs if epochs and len(epochs) == len(vals)
                                                                else None))
                           for n, vals, ep in histories(v, depth + 1))
    elif isinstance(obj, list) and obj and all(isinstance(r, dict) for r in obj):
        keys = [k for k in obj[0] if isinstance(k, str) and k not in EPOCH_KEYS and canonical(k)]
        ek = next((k for k in EPOCH_KEYS if k in obj[0]), None)
        for k in keys:
            vals = [r.get(k) for r in obj]
            eps = [r.get(ek) for r in obj] if ek else None
            out.append((k, vals, eps if eps and all(_number(e) is not None for e in eps) else None))
    return out


def _value_offsets(text: str, key: str, n: int, used: set) -> Optional[List[int]]:
    """Character offsets of the n elements of the list written after `"key": [` (the first such list
    of length n not yet used)."""
    pat = re.compile(r'"%s"\s*:\s*\[' % re.escape(key))
    for m in pat.finditer(text):
        if m.start() in used:
            continue
        pos, offs = m.end(), []
        while len(offs) <= n:
            t = _NUM.match(text, pos)
            if t is None:
                break
            offs.append(t.start(1))
            pos = t.end()
            if t.group(2) == "]":
                break
        if len(offs) == n:
            used.add(m.start())
            return offs
    return None


def _records_offsets(text: str, key: str, n: int) -> Optional[List[int]]:
    pat = re.compile(r'"%s"\s*:' % re.escape(key))
    offs = [m.start() for m in pat.finditer(text)]
    return offs if len(offs) == n else None


def add_history(bundle, rel: str, obj, lines: List[Line]) -> int:
    """Add every metric list of `obj` (parsed from `lines`) as series; returns how many points were added."""
    text = "\n".join(ln.text for ln in lines)
    starts, pos = [], 0
    for ln in lines:
        starts.append(pos)
        pos += len(ln.text) + 1
    used: set = set()
    added = 0
    records = isinstance(obj, list)
    taken = set()  # Keras writes `loss` and often `train_loss` too: one list per canonical name, the plainest key
    for key, vals, epochs in sorted(histories(obj), key=lambda h: canonical(h[0]) != h[0]):
        name = canonical(key)
        if name in taken:
            continue
        taken.add(name)
        offs = _records_offsets(text, key, len(vals)) if records else _value_offsets(text, key, len(vals), used)
        for i, raw in enumerate(vals):
            v, why = numbers.value(raw)
            if v is None and not why:
                continue
            e = _number(epochs[i]) if epochs else float(i)
            step = int(e) if e is not None and math.isfinite(e) and abs(e) < numbers.MAX_STEP and e == int(e) else i
            line = lines[max(0, bisect_right(starts, offs[i]) - 1)] if offs else lines[0]
            if v is None:
                bundle.skip(rel, f"{key[:60]}: {why}, skipped", line.line, line.byte)
                continue
            bundle.add_point(name, rel, Point(step, v, Source(rel, line.line, line.text, step=step, metric=name,
                                                              value=v, byte=line.byte)))
            added += 1
    return added


def read(bundle, entry, ctx) -> None:
    rel = entry.rel
    with ctx.open(entry) as f:
        if f.size > LIMIT:
            bundle.note(f"{rel}: {f.size >> 20} MB JSON history; larger than {LIMIT >> 20} MB, not parsed")
            ctx.record(f, "metrics")
            return
        lines = f.lines(0, f.size)
        try:
            obj = json.loads("\n".join(ln.text for ln in lines))
        except (ValueError, RecursionError):
            bundle.note(f"{rel}: not a complete JSON document (truncated?); its history was not read")
            ctx.record(f, "metrics")
            return
        if not add_history(bundle, rel, obj, lines):
            bundle.note(f"{rel}: no per-epoch metric lists in it")
        ctx.record(f, "metrics")

