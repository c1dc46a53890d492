"""CSV metrics: Lightning's metrics.csv (CSVLogger), progress.csv. Sparse columns; rows cited by line."""
from __future__ import annotations

import csv
import io
import os

from trainwreck.collect.metricnames import canonical
from trainwreck.collect.redact import redact
from trainwreck.collect.safeio import open_regular, pread
from trainwreck.model import Point, Source

ORDER = 30
LIMIT = 8 << 20


def claims(rel: str, name: str) -> bool:
    return name in ("metrics.csv", "progress.csv", "log.csv", "train_log.csv")


def read(bundle, entry, ctx) -> None:
    fd, st = open_regular(bundle.root, entry.abspath)
    try:
        head = pread(fd, min(st.st_size, 65536), 0)
        header = head.split(b"\n", 1)[0].decode("utf-8", "replace")
        if st.st_size <= LIMIT:
            body, first = pread(fd, st.st_size, 0).decode("utf-8", "replace"), 1
            ranges = None
        else:
            off = st.st_size - (1 << 20)
            tail = pread(fd, st.st_size - off, off)
            tail = tail[tail.find(b"\n") + 1:]
            body, first = header + "\n" + tail.decode("utf-8", "replace"), None
            ranges = [(0, 65536), (off, st.st_size)]
            bundle.note(f"{entry.rel}: large; read the header and the last 1 MB")
    finally:
        os.close(fd)
    rows = body.splitlines()
    reader = csv.reader(io.StringIO("\n".join(rows)))
    try:
        cols = next(reader)
    except (StopIteration, csv.Error):
        return
    names = [canonical(c) for c in cols]
    step_i = next((i for i, c in enumerate(cols) if c.strip() in ("step", "global_step", "trainer/global_step")), None)
    for idx, row in enumerate(reader, 2):
        ln = idx if first is not None else None
        step = None
        if step_i is not None and step_i < len(row):
            try:
                step = int(float(row[step_i]))
            except ValueError:
                step = None
        for i, val in enumerate(row):
            if i >= len(names) or not names[i] or not val.strip():
                continue
            try:
                v = float(val)
            except ValueError:
                continue
            text = redact(rows[idx - 1] if idx - 1 < len(rows) else ",".join(row))
            bundle.add_point(names[i], entry.rel, Point(step, v, Source(entry.rel, ln, text, step=step,
                                                                       metric=names[i], value=v)))
    ctx.record(entry, "metrics", ranges)
