"""JSON-lines metrics (metrics.jsonl, log.jsonl, events.jsonl …): one object per line with a step and metrics.

Small files are parsed whole. Large ones: the last entries, an evenly spaced sample of the history, and a
byte-level scan of the WHOLE file for the first non-finite value (NaN / Infinity), which costs about what
`grep -c nan` costs, because only lines that contain such a token are parsed (collect/metricfile.py).
"""
from __future__ import annotations

import json
import math
from typing import Dict, Optional, Tuple

from trainwreck.collect import scan
from trainwreck.collect.metricfile import read_records
from trainwreck.collect.metricnames import STEP_KEYS, canonical
from trainwreck.model import Line, Point, Source

ORDER = 30
SHOWN = 2000  # characters of a record kept as its citation text


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


def _nonfinite_record(raw: bytes) -> bool:
    got = parse_record(raw.decode("utf-8", "replace"))
    return bool(got) and any(not math.isfinite(v) for v in got[1].values())


def first_nonfinite(fd: int, size: int, strings: bool = False,
                    count_lines: bool = True) -> Optional[Tuple[int, Optional[int], bytes]]:
    """(byte offset, line number, line) of the first record with a non-finite metric value, whole file."""
    return scan.first_nonfinite(fd, size, _nonfinite_record, strings=strings, count_lines=count_lines)


def _lower_case_values(line: Line) -> bool:
    low = line.text.lower()
    return '"nan"' in low or '"inf' in low


def read(bundle, entry, ctx) -> None:
    rel = entry.rel

    def add(line: Line) -> Optional[int]:
        text = line.text.strip()
        got = parse_record(text)
        if not got:
            return None
        step, values = got
        shown = text if len(text) <= SHOWN else text[:SHOWN]
        for name, value in values.items():
            bundle.add_point(name, rel, Point(step, value, Source(rel, line.line, shown, step=step, metric=name,
                                                                  value=value, byte=line.byte)))
        return len(values)

    with ctx.open(entry) as f:
        bad = read_records(bundle, f, add, _nonfinite_record, _lower_case_values)
        ctx.record(f, "metrics")
    if bad:
        bundle.note(f"{rel}: {bad} line(s) were not valid JSON objects (truncated or garbled) and were skipped")
