"""Hugging Face Trainer state (trainer_state.json): `log_history` entries, cited by the line of each value."""
from __future__ import annotations

import json
import re

from ..metricnames import canonical
from ..model import Point, Source
from ..redact import redact
from ..safeio import read_small

ORDER = 30
_OBJ = re.compile(r"\{[^{}\[\]]*\}")
_KEYLINE = re.compile(r'"([^"]+)"\s*:\s*([^,\n}]+)')


def claims(rel: str, name: str) -> bool:
    return name == "trainer_state.json"


def read(bundle, entry, ctx) -> None:
    if getattr(bundle, "_trainer_state_read", False):
        return  # the newest one (root before checkpoints) already gave the history
    rel, data = read_small(bundle.root, entry.abspath, limit=32 << 20)
    text = data.decode("utf-8", "replace")
    start = text.find('"log_history"')
    if start < 0:
        bundle.note(f"{rel}: no log_history in it")
        return
    bundle._trainer_state_read = True  # type: ignore[attr-defined]
    lines = text.splitlines()
    bad = 0
    n = 0
    for m in _OBJ.finditer(text, start):
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            bad += 1
            continue
        if not isinstance(obj, dict):
            continue
        n += 1
        step = obj.get("step")
        step = int(step) if isinstance(step, (int, float)) and not isinstance(step, bool) and step == step else None
        first_line = text.count("\n", 0, m.start()) + 1
        # line of each key within the object (HF writes one key per line with indent=2)
        key_lines = {}
        for km in _KEYLINE.finditer(m.group(0)):
            key_lines.setdefault(km.group(1), first_line + m.group(0).count("\n", 0, km.start()))
        for k, v in obj.items():
            name = canonical(k) if isinstance(k, str) else None
            if not name or isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            ln = key_lines.get(k, first_line)
            shown = redact(lines[ln - 1].strip() if 0 < ln <= len(lines) else m.group(0))
            src = Source(rel, ln, shown, step=step, metric=name, value=float(v))
            bundle.add_point(name, rel, Point(step, float(v), src))
    if bad or not text.rstrip().endswith("}"):
        bundle.note(f"{rel}: truncated or partly invalid JSON; read {n} complete log_history entries")
    ctx.record(entry, "metrics")
