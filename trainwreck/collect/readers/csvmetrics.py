"""CSV metrics: Lightning's metrics.csv (CSVLogger), progress.csv, YOLO's results.csv (one row per epoch).
Sparse columns; rows cited by line.

Small files are read whole; large ones by a sample of their rows, their last rows and a scan of the whole file
for the first non-finite value (collect/metricfile.py), like JSON lines."""
from __future__ import annotations

import math
from typing import List, Optional

from trainwreck.collect import numbers
from trainwreck.collect.metricfile import read_records
from trainwreck.collect.metricnames import canonical
from trainwreck.collect.safeio import MAX_LINE_CHARS
from trainwreck.model import Line, Point, Source

ORDER = 30
STEP_COLUMNS = ("step", "global_step", "trainer/global_step")


def claims(rel: str, name: str) -> bool:
    return name in ("metrics.csv", "progress.csv", "log.csv", "train_log.csv", "results.csv")


def _row(text: str) -> List[str]:
    if '"' not in text:  # the common case: no quoting, a plain split is the csv module's answer
        return text.split(",") if text else []
    import csv  # only for quoted cells: most metrics files never need the module

    try:
        return next(csv.reader([text]), [])
    except csv.Error:
        return []


def _number(cell: str) -> Optional[float]:
    return numbers.text_value(cell)[0]


def read(bundle, entry, ctx) -> None:
    rel = entry.rel
    with ctx.open(entry) as f:
        first = f.lines(0, min(f.size, 65536))[:1]
        cols = _row(first[0].text) if first else []
        if not cols:
            ctx.record(f, "metrics")
            return
        names = [canonical(c) for c in cols]
        # the column names as written ("lr-SGD", "lr-AdamW"): canonical names lose what they say about the setup
        bundle.facts.setdefault(f"metric_names:{rel}", first[0].source())
        step_i = next((i for i, c in enumerate(cols) if c.strip() in STEP_COLUMNS), None)
        metric_cols = [i for i, n in enumerate(names) if n]

        def add(line: Line) -> Optional[int]:
            if line.text.startswith("[…") and " chars cut] " in line.text[:40]:  # its first cells are gone
                bundle.skip(rel, f"row longer than {MAX_LINE_CHARS} characters (a field too large), skipped",
                            line.line, line.byte)
                return 0
            row = _row(line.text)
            if not row:
                return None
            n = 0
            step = None
            if step_i is not None and step_i < len(row):
                step, why = numbers.step(row[step_i], cols[step_i].strip()[:60])
                if why:
                    bundle.skip(rel, why, line.line, line.byte)
            for i in metric_cols:
                if i >= len(row) or not row[i].strip():
                    continue
                v, why = numbers.text_value(row[i])
                if v is None:
                    if why:
                        bundle.skip(rel, f"{cols[i].strip()[:60]}: {why}, skipped", line.line, line.byte)
                    continue
                bundle.add_point(names[i], rel, Point(step, v, Source(rel, line.line, line.text, step=step,
                                                                     metric=names[i], value=v, byte=line.byte)))
                n += 1
            return n

        def nonfinite(raw: bytes) -> bool:
            row = _row(raw.decode("utf-8", "replace"))
            return any(i < len(row) and (v := _number(row[i])) is not None and not math.isfinite(v)
                       for i in metric_cols)

        bad = read_records(bundle, f, add, nonfinite, lambda line: True, skip_first=True)
        ctx.record(f, "metrics")
    if bad:
        bundle.note(f"{rel}: {bad} row(s) could not be split into cells (garbled quoting) and were skipped")
