"""Text logs: *.log, *.out, *.err, stdout/stderr captures, slurm-*.out. Bounded: small files whole, large by head + tail.

A large log whose loss is finite in the head and non-finite from the start of the tail has its NaN onset in the
part that was not read: it is found by bisection over byte offsets (collect/scan.py), a few small reads."""
from __future__ import annotations

import math
from typing import Dict, Iterable, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.collect.ranks import prefix_rank
from trainwreck.collect.safeio import read_log
from trainwreck.collect.scan import BISECT_WINDOW, bisect_nonfinite
from trainwreck.collect.textmetrics import extract
from trainwreck.collect.texttables import rows
from trainwreck.locate import LOG_NAMES, LOG_SUFFIXES
from trainwreck.model import Line, Point, Source

ORDER = 10
FALLBACK = True  # a single file the user names is read as a log when no other reader claims it
BISECT_METRICS = ("loss", "grad_norm")
Values = Tuple[Line, Dict[str, float]]
_TXT_LOG = lazy_re(r"(?i)(log|out|err|train|console|stdout|stderr|traceback|slurm|job|rank|spy|stack|dump|hang|faulthandler)")


def claims(rel: str, name: str) -> bool:
    if name == "error.json":
        return False
    if name in LOG_NAMES or name.endswith(LOG_SUFFIXES):
        return True
    return name.endswith(".txt") and bool(_TXT_LOG.search(name)) and not name.startswith(("pip", "requirements"))


def _add_points(bundle, path: str, parts: Iterable[List[Line]], tables: bool = True,
                only: Optional[str] = None) -> List[List[Values]]:
    """Metric points of each part (head, tail …): table rows first (a table never spans two parts), then lines;
    with `only`, points of that metric alone. Returns, per part, the (line, values) of every line with metrics."""
    parts = list(parts)

    def series_of(text: str) -> str:
        # interleaved ranks each get their own series: mixing them would fake spikes and oscillations
        r = prefix_rank(text)
        return path if r is None else f"{path} [rank {r}]"

    for part in parts if tables else ():
        for line, step, values in rows(part):
            series = series_of(line.text)
            for name, value in values.items():
                src = Source(line.path, line.line, line.text, step=step, metric=name, value=value, byte=line.byte)
                bundle.add_point(name, series, Point(step, value, src))
    found: List[List[Values]] = []
    for part in parts:
        got_part: List[Values] = []
        for line in part:
            got = _extract(line.text)
            if not got:
                continue
            step, values = got
            got_part.append((line, values))
            series = None
            for name, value in values.items():
                if only is not None and name != only:
                    continue
                if series is None:  # one rank prefix parse per line, not per value
                    series = series_of(line.text)
                src = Source(line.path, line.line, line.text, step=step, metric=name, value=value, byte=line.byte)
                bundle.add_point(name, series, Point(step, value, src))
        found.append(got_part)
    return found


def _extract(text: str):
    return extract(text[-2000:] if len(text) > 2000 else text)


def _value_of(name: str):
    def value(text: str) -> Optional[float]:
        got = _extract(text)
        return got[1].get(name) if got else None
    return value


def _find_onset_in_the_middle(bundle, f, log, head: List[Values], tail: List[Values]) -> None:
    """Bisect the unread middle for the first non-finite value of each BISECT_METRICS series that is finite in
    the head and non-finite from the first value of the tail."""
    if log.complete or not log.lines:
        return
    lo = log.head[-1].byte + 1 if log.head and log.head[-1].byte is not None else 0
    hi = log.lines[0].byte or 0
    if hi - lo <= BISECT_WINDOW:
        return
    for name in BISECT_METRICS:
        head_vals = [v[name] for _ln, v in head if name in v]
        tail_vals = [v[name] for _ln, v in tail if name in v]
        if not tail_vals or math.isfinite(tail_vals[0]) or any(not math.isfinite(v) for v in head_vals):
            continue
        value_of = _value_of(name)
        got = bisect_nonfinite(f, lo, hi, value_of)
        if got is None:
            bundle.note(f"{log.path}: {name} is finite in the head and non-finite in the tail; the onset in "
                        "between could not be located (no values to bisect by)")
            continue
        window, probes = got
        found = _add_points(bundle, log.path, [window], tables=False, only=name)[0]
        first = next((ln for ln, v in found if name in v and not math.isfinite(v[name])), None)
        if first is None:
            continue
        for series in bundle.series.get(name, []):
            if series.path == log.path or series.path.startswith(log.path + " [rank "):
                series.points.sort(key=lambda p: p.source.byte if p.source.byte is not None else -1)
                bad = [p for p in series.points if not math.isfinite(p.value)]
                if bad:
                    series.first_nonfinite = bad[0]
        where = f"line {first.line}" if first.line is not None else f"byte {first.byte}"
        bundle.note(f"{log.path}: the first non-finite {name} ({where}) lies between the head and the tail that "
                    f"were read; it was located by bisection over byte offsets ({probes} reads of "
                    f"{BISECT_WINDOW >> 10} KB), assuming {name} stays non-finite once it is")


def read(bundle, entry, ctx) -> None:
    with ctx.open(entry) as f:
        log = read_log(f)
        bundle.logs.append(log)
        if not log.complete:
            bundle.note(f"{log.path}: {log.size / (1 << 20):.0f} MB; read its first {len(log.head)} and last "
                        f"{len(log.lines)} lines")
        if log.cut_mid_line and log.lines:
            bundle.note(f"{log.path}: ends without a newline (the writer may have been killed mid-line)")
        head, tail = _add_points(bundle, log.path, [log.head, log.lines])
        _find_onset_in_the_middle(bundle, f, log, head, tail)
        ctx.record(f, "log")
