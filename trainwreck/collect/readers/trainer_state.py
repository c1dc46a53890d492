"""Hugging Face Trainer state (trainer_state.json): `log_history` entries, cited by the line of each value.

HF's final summary entry (`train_runtime`, `train_loss` averaged over the whole run, `total_flos` …) is not a
point of any series: it becomes the fact `hf.train_summary` (the run reached the end of `Trainer.train`), and
the top-level `global_step` / `max_steps` / `num_train_epochs` / `epoch` become facts `trainer_state.<key>`,
each cited by its line, for the outcome detector.

Small files are parsed whole. Larger ones: the first 256 KB (the start of training), the last 1 MB (the end),
and a scan of the whole file for the first NaN / Infinity (collect/scan.py), whose entry is parsed too.
"""
from __future__ import annotations

import json
import math
from typing import List, Optional, Union

from trainwreck import lazy_re
from trainwreck.collect import numbers
from trainwreck.collect.metricnames import canonical
from trainwreck.collect.safeio import TAIL_BYTES
from trainwreck.collect.scan import CONTEXT, first_nonfinite, scan_gaps
from trainwreck.model import Line, Point, Source

ORDER = 30
LIMIT = 2 << 20
HEAD = 256 << 10
TAIL = TAIL_BYTES
_OBJ = lazy_re(r"\{(?:[^{}\[\]]|\[REDACTED:[a-z\-]+\])*\}")  # a flat entry (a redacted value may sit in it)
_KEYLINE = lazy_re(r'"([^"]+)"\s*:\s*([^,\n}]+)')
_NONFINITE = lazy_re(rb'"([^"]+)"\s*:\s*-?(?:NaN|Infinity)\b')
# A top-level key of `json.dumps(dataclasses.asdict(state), indent=2, sort_keys=True)`: two spaces of indent.
_TOP = lazy_re(r'^  "(global_step|max_steps|num_train_epochs|epoch)": (-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?),?\s*$')
SUMMARY_KEY = "train_runtime"  # only Trainer.train's final summary entry holds it


def claims(rel: str, name: str) -> bool:
    return name == "trainer_state.json"


def _entries(bundle, rel: str, lines: Union[List[Line], str], first_line: Optional[int] = None) -> int:
    """Add the metric values of every complete `{...}` entry in `lines`; returns how many entries were read.
    Each value cites its own line (its byte offset where the line number is unknown). `lines` may also be text
    already redacted, whose first line is `first_line` (the fuzz target calls it so)."""
    if isinstance(lines, str):
        lines = [Line(rel, None if first_line is None else first_line + i, t) for i, t in enumerate(lines.split("\n"))]
    if not lines:
        return 0
    text = "\n".join(ln.text for ln in lines)
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
        nl += text.count("\n", pos, m.start())
        pos = m.start()
        key_lines = {}
        for km in _KEYLINE.finditer(m.group(0)):
            key_lines.setdefault(km.group(1), nl + m.group(0).count("\n", 0, km.start()))
        step, why = numbers.step(obj.get("step"))
        if why:
            line = lines[min(key_lines.get("step", nl), len(lines) - 1)]
            bundle.skip(rel, why, line.line, line.byte)
        if SUMMARY_KEY in obj:  # the run's averages, not the last step's values: a fact, never a point
            line = lines[min(key_lines.get(SUMMARY_KEY, nl), len(lines) - 1)]
            bundle.facts["hf.train_summary"] = Source(rel, line.line, line.text, step=step, byte=line.byte)
            continue
        for k, v in obj.items():
            name = canonical(k) if isinstance(k, str) else None
            value, why = numbers.value(v) if name else (None, None)
            if value is None and not why:
                continue
            line = lines[min(key_lines.get(k, nl), len(lines) - 1)]
            if value is None:
                bundle.skip(rel, f"{k[:60]}: {why}, skipped", line.line, line.byte)
                continue
            bundle.add_point(name, rel, Point(step, value, Source(rel, line.line, line.text, step=step,
                                                                  metric=name, value=value, byte=line.byte)))
    return n


def _top_level(bundle, rel: str, lines: List[Line]) -> None:
    """The state's own counters (global_step, max_steps …) as facts, each cited by its line."""
    for ln in lines:
        if not ln.text.startswith('  "'):
            continue
        m = _TOP.match(ln.text)
        if m is None:
            continue
        value = float(m.group(2))
        if not math.isfinite(value) or abs(value) >= numbers.MAX_STEP:
            bundle.skip(rel, f"{m.group(1)} is out of range, not read", ln.line, ln.byte)
            continue
        bundle.facts[f"trainer_state.{m.group(1)}"] = Source(rel, ln.line, ln.text, value=value, byte=ln.byte)


def _nonfinite_metric(raw: bytes) -> bool:
    return any(canonical(m.group(1).decode("utf-8", "replace")) for m in _NONFINITE.finditer(raw))


def _entry_around(f, hit: int) -> Optional[List[Line]]:
    """The lines of the log_history entry that holds byte `hit`."""
    start = max(0, hit - CONTEXT)
    window = f.peek(start, 2 * CONTEXT)
    s = window.rfind(b"{", 0, hit - start)
    e = window.find(b"}", hit - start)
    if s < 0 or e < s:
        return None
    a = start + window.rfind(b"\n", 0, s) + 1
    nl = window.find(b"\n", e)
    return f.lines(a, start + nl + 1 if nl >= 0 else f.size)


def read(bundle, entry, ctx) -> None:
    if getattr(bundle, "_trainer_state_read", False):
        return  # the newest one (root before checkpoints) already gave the history
    rel = entry.rel
    with ctx.open(entry) as f:
        size = f.size
        if size <= LIMIT:
            lines = f.lines(0, size)
            if not any('"log_history"' in ln.text for ln in lines):
                bundle.note(f"{rel}: no log_history in it")
                return
            n = _entries(bundle, rel, lines)
            _top_level(bundle, rel, lines)
            last = next((ln.text.rstrip() for ln in reversed(lines) if ln.text.strip()), "")
            if not last.endswith("}"):
                bundle.note(f"{rel}: truncated JSON; read {n} complete log_history entries")
        else:
            head, tail = f.lines(0, HEAD), f.lines(size - TAIL, size)
            _entries(bundle, rel, head)
            _entries(bundle, rel, tail)
            _top_level(bundle, rel, head + tail)
            skipped: dict = {}
            hit = first_nonfinite(f.fd, size, _nonfinite_metric, skipped=skipped)
            gap = scan_gaps(skipped)
            if gap:
                bundle.note(f"{rel}: {gap}")
            if hit is not None:
                off, _ln, raw = hit
                m = _NONFINITE.search(raw)
                lines = _entry_around(f, off + (m.start() if m else 0))
                if lines:
                    _entries(bundle, rel, lines)
            for series in bundle.series.values():
                for s in series:
                    if s.path == rel:
                        s.points.sort(key=lambda p: (p.step is None, p.step or 0))
            bundle.note(f"{rel}: {size >> 20} MB; read its first {HEAD >> 10} KB and last {TAIL >> 20} MB of "
                        "log_history and scanned the whole file for the first NaN/Infinity")
        ctx.record(f, "metrics")
    bundle._trainer_state_read = True  # type: ignore[attr-defined]
