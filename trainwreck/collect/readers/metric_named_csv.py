"""One metric per file, named by the file: d3rlpy's logger writes `<metric>.csv` (`loss.csv`, `critic_loss.csv`,
`actor_loss.csv`, `environment.csv`: the evaluation return) with headerless rows `epoch,step,value`
(d3rlpy/logger.py: `print(f"{epoch},{step},{metric}", file=f)`); a two-column `step,value` file is read the same
way. The series is the file's stem, canonicalised (`critic_loss`); the step is the row's step column. A file of
this name with a header row is an ordinary metrics CSV and goes to that reader.
"""
from __future__ import annotations

import math
import os
from typing import List, Optional

from trainwreck.collect.metricfile import read_records
from trainwreck.collect.metricnames import canonical
from trainwreck.collect.numbers import step as numbers_step
from trainwreck.collect.numbers import text_value
from trainwreck.collect.readers import csvmetrics
from trainwreck.model import Line, Point, Source

ORDER = 31  # after csvmetrics, which keeps the names it knows
# d3rlpy's scorer names that are not metric names elsewhere: `environment` is `evaluate_on_environment`, the mean
# episode return of the evaluation rollouts (the run's task metric)
_SCORERS = {"environment": "reward"}


def _name(name: str) -> Optional[str]:
    stem, ext = os.path.splitext(name)
    if ext.lower() != ".csv" or csvmetrics.claims("", name):
        return None
    return _SCORERS.get(stem) or canonical(stem)


def claims(rel: str, name: str) -> bool:
    return _name(name) is not None


def _cells(text: str) -> Optional[List[float]]:
    parts = text.strip().split(",")
    if not 2 <= len(parts) <= 3:
        return None
    cells = [text_value(p)[0] for p in parts]  # a number too large for a float is no value (collect/numbers.py)
    return None if None in cells else cells


def read(bundle, entry, ctx) -> None:
    rel = entry.rel
    metric = _name(os.path.basename(rel))
    with ctx.open(entry) as f:
        first = f.lines(0, min(f.size, 4096))[:1]
        headerless = bool(first) and metric is not None and _cells(first[0].text) is not None
        if headerless:

            def add(line: Line) -> Optional[int]:
                cells = _cells(line.text)
                if cells is None:
                    return None
                s, v = cells[-2], cells[-1]
                step = numbers_step(s)[0] if s == int(s) else None
                bundle.add_point(metric, rel, Point(step, v, Source(rel, line.line, line.text, step=step,
                                                                    metric=metric, value=v, byte=line.byte)))
                return 1

            def nonfinite(raw: bytes) -> bool:
                cells = _cells(raw.decode("utf-8", "replace"))
                return cells is not None and not math.isfinite(cells[-1])

            read_records(bundle, f, add, nonfinite, lambda line: True)
            ctx.record(f, "metrics")
    if not headerless:
        csvmetrics.read(bundle, entry, ctx)  # a header row: an ordinary metrics CSV
