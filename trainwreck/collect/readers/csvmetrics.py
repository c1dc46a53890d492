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
from trainwreck.collect.safeio import WIDE_LINE_BYTES, cap_text
from trainwreck.model import Line, Point, Source

ORDER = 30
STEP_COLUMNS = ("step", "global_step", "trainer/global_step")
MAX_COLUMNS = 4096  # columns read from a header (and cells from a row): a 100,000-column file is bounded
WIDE_METRICS = 64  # metric series read from a header over the line cap (metricfile samples it like any file)


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


def _cut(line: Line) -> bool:
    """The line's text is the end of a longer line (collect/linetext.py): its first cells are not in it."""
    return line.text.startswith("[…") and " chars cut] " in line.text[:40]


def _header(bundle, f, rel: str):
    """(column names, the header's Source for the names as written, whether every column was read, the header's
    width in bytes when it is over the line cap, else 0). The names are read from the start of the header however
    long it is, bounded by WIDE_LINE_BYTES and MAX_COLUMNS; no names for an empty file."""
    first = f.lines(0, min(f.size, WIDE_LINE_BYTES))[:1]
    if first and not _cut(first[0]):
        return _row(first[0].text), first[0].source(), True, 0
    cols, whole = f.cells(0, _row, most=MAX_COLUMNS, again=bool(first))
    if not cols:
        return [], None, True, 0
    if not whole:
        bundle.note(f"{rel}: header longer than {WIDE_LINE_BYTES >> 10} KB or {MAX_COLUMNS} columns; read its first "
                    f"{len(cols)} columns, the later ones not")
    names = ",".join(c for c in cols if canonical(c))  # the metric columns as written (a cut line: the end only)
    return cols, Source(rel, 1, cap_text(names)), whole, len(",".join(cols).encode("utf-8", "replace"))


def read(bundle, entry, ctx) -> None:
    rel = entry.rel
    with ctx.open(entry) as f:
        cols, header, whole_header, width = _header(bundle, f, rel)
        if not cols:
            ctx.record(f, "metrics")
            return
        names = [canonical(c) for c in cols]
        # the column names as written ("lr-SGD", "lr-AdamW"): canonical names lose what they say about the setup
        bundle.facts.setdefault(f"metric_names:{rel}", header)
        step_i = next((i for i, c in enumerate(cols) if c.strip() in STEP_COLUMNS), None)
        metric_cols = [i for i, n in enumerate(names) if n]
        if width and len(metric_cols) > WIDE_METRICS:  # points = rows x metric columns: a wide table is bounded
            bundle.note(f"{rel}: {len(metric_cols)} metric columns; the first {WIDE_METRICS} read, the others not")
            metric_cols = metric_cols[:WIDE_METRICS]

        extra: List[Optional[int]] = [None]  # the cell count of the row before, when it had a cell too many

        def add(line: Line) -> Optional[int]:
            if _cut(line):  # a row longer than the line cap: read by its cells, from its start
                row, whole = f.cells(line.byte or 0, _row, most=len(cols) + 1, again=True)
            else:
                row, whole = _row(line.text), True
            if not row:
                return None
            while len(row) > len(cols) and not row[-1].strip():
                row = row[:-1]  # a trailing comma (or several): empty cells past the header, nothing moved
            if len(row) > len(cols):
                # A cell too many. Alone, it is an unquoted comma somewhere (which cell moved is unknown: no cell
                # is trusted); the same count row after row is a column the header never named, appended from some
                # step on (its cells stay where the header has them): the first 'extra' row of a run is skipped,
                # the following ones read by the header's columns.
                again = extra[0] == len(row) and whole
                extra[0] = len(row) if whole else None
                if whole_header and not again:
                    bundle.skip(rel, f"row has {'more than ' if not whole else ''}{len(row) - (not whole)} cells, "
                                f"the header {len(cols)}; skipped", line.line, line.byte)
                    return 0
                row = row[:len(cols)]  # the cells past the header's last column are not read
            else:
                extra[0] = None
                if not whole:
                    bundle.skip(rel, f"row longer than {WIDE_LINE_BYTES >> 10} KB; its first {len(row)} cells "
                                "read", line.line, line.byte)
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

        bad = read_records(bundle, f, add, nonfinite, lambda line: True, skip_first=True, row_bytes=width)
        ctx.record(f, "metrics")
    if bad:
        bundle.note(f"{rel}: {bad} row(s) could not be split into cells (garbled quoting) and were skipped")
