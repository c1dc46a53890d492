"""JSON-lines metrics (metrics.jsonl, log.jsonl, events.jsonl …): one object per line with a step and metrics.

Small files are parsed whole. Large ones: the last entries, an evenly spaced sample of the history, and a
byte-level scan of the WHOLE file for the first non-finite value (NaN / Infinity), which costs about what
`grep -c nan` costs, because only lines that contain such a token are parsed (collect/metricfile.py).
"""
from __future__ import annotations

import json
import math
from typing import Dict, List, Optional, Tuple

from trainwreck.collect import numbers, scan
from trainwreck.collect.metricfile import read_records
from trainwreck.collect.metricnames import STEP_KEYS, canonical
from trainwreck.model import Line, Point, Source

ORDER = 30
SHOWN = 2000  # characters of a record kept as its citation text


def claims(rel: str, name: str) -> bool:
    return name.endswith(".jsonl") or name.endswith(".ndjson") or name == "metrics.json"


def _float(v) -> Tuple[Optional[float], Optional[str]]:
    if isinstance(v, str) and v.strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity"):
        return float(v.strip().lower().replace("infinity", "inf")), None
    return numbers.value(v)


def parse_record(text: str, problems: Optional[List[str]] = None
                 ) -> Optional[Tuple[Optional[int], Dict[str, float]]]:
    """(step, {canonical metric: value}) of one JSON-lines record; None when it is not a JSON object. A value or
    a step that is no usable number is left out, and why is appended to `problems` when it is given."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    step = None
    refused = None
    for k in STEP_KEYS:
        v = obj.get(k)
        step, why = numbers.step(v, k)
        if isinstance(v, str):  # a step written as a string is not read as one; "inf" is still said
            step = None
        if step is not None:
            break
        refused = refused or why
    if step is None and refused and problems is not None:
        problems.append(refused)
    values: Dict[str, float] = {}
    for k, v in obj.items():
        if not isinstance(k, str):
            continue
        name = canonical(k)
        if not name or name in values:
            continue
        f, why = _float(v)
        if f is not None:
            values[name] = f
        elif why and problems is not None:
            problems.append(f"{k[:60]}: {why}, skipped")
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
        problems: List[str] = []
        got = parse_record(text, problems)
        for why in problems:
            bundle.skip(rel, why, line.line, line.byte)
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
