"""Text logs: *.log, *.out, *.err, stdout/stderr captures, slurm-*.out, rotated and compressed logs by name, and every
text file of another name that the content sniff (collect/sniff.py) calls a log. Bounded: small files whole, large
ones by head, windows sampled across the middle, and tail (collect/logtext.py); compressed ones on their
decompressed stream (collect/inflate.py).

A large log whose loss is finite up to one part that was read (the head, a window) and non-finite from the start of
the next has its NaN onset in the bytes between them: it is found by bisection over byte offsets (collect/scan.py),
a few small reads."""
from __future__ import annotations

import math
from typing import Dict, Iterable, List, Optional, Tuple

from trainwreck.collect.logtext import read_log
from trainwreck.collect.ranks import prefix_rank
from trainwreck.collect.scan import BISECT_WINDOW, bisect_nonfinite
from trainwreck.collect.sniff import scheduler_of
from trainwreck.collect.textmetrics import extract
from trainwreck.collect.texttables import rows
from trainwreck.locate.evidence import is_log_name
from trainwreck.model import Line, Point, Source

ORDER = 10
FALLBACK = True  # a single file the user names is read as a log when no other reader claims it
BISECT_METRICS = ("loss", "grad_norm")
Values = Tuple[Line, Dict[str, float]]
SCHEDULER_LINES = (60, 300)  # the first and last lines looked at for a scheduler's own words


def claims(rel: str, name: str) -> bool:
    """By name (other text files reach this reader through the content sniff in collect/__init__.py)."""
    return name != "error.json" and is_log_name(name)


def _add_points(bundle, path: str, parts: Iterable[List[Line]], tables: bool = True,
                only: Optional[str] = None, check=None) -> List[List[Values]]:
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
        for k, line in enumerate(part):
            if check is not None and not k & 255:
                check()  # the file's CPU deadline (safeio): parsing is part of its reading
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


def _find_onset_in_the_middle(bundle, f, log, parts: List[List[Line]], found: List[List[Values]]) -> None:
    """Bisect the unread bytes before the first part (head, a middle window, the tail) that holds a non-finite value
    of each BISECT_METRICS series, when that part's first value is already non-finite and an earlier part was read."""
    if log.complete or not log.lines:
        return
    for name in BISECT_METRICS:
        k = next((i for i, got in enumerate(found) if any(name in v and not math.isfinite(v[name]) for _l, v in got)),
                 None)
        if not k:  # none, or already in the head
            continue
        vals = [v[name] for _ln, v in found[k] if name in v]
        if math.isfinite(vals[0]):  # the onset lies inside a part that was read
            continue
        before = next((p for p in reversed(parts[:k]) if p), None)
        lo = before[-1].byte + 1 if before and before[-1].byte is not None else 0
        hi = parts[k][0].byte or 0
        if hi <= lo:
            continue
        # a gap narrower than one probe is read whole; a wider one is bisected
        got = (f.lines(lo, hi), 0) if hi - lo <= BISECT_WINDOW else bisect_nonfinite(f, lo, hi, _value_of(name))
        if got is None:
            bundle.note(f"{log.path}: {name} is finite in the part read before byte {hi} and non-finite from "
                        "there; the onset in between could not be located (no values to bisect by)")
            continue
        window, probes = got
        added = _add_points(bundle, log.path, [window], tables=False, only=name)[0]
        first = next((ln for ln, v in added if name in v and not math.isfinite(v[name])), None)
        if first is None:
            continue
        for series in bundle.series.get(name, []):
            if series.path == log.path or series.path.startswith(log.path + " [rank "):
                series.points.sort(key=lambda p: p.source.byte if p.source.byte is not None else -1)
                bad = [p for p in series.points if not math.isfinite(p.value)]
                if bad:
                    series.first_nonfinite = bad[0]
        where = f"line {first.line}" if first.line is not None else f"byte {first.byte}"
        how = (f"by bisection over byte offsets ({probes} reads of {BISECT_WINDOW >> 10} KB)" if probes
               else f"by reading the {max(1, (hi - lo) >> 10)} KB between them")
        bundle.note(f"{log.path}: the first non-finite {name} ({where}) lies between parts of the log that "
                    f"were read; it was located {how}, assuming {name} stays non-finite once it is")


def _scheduler(log) -> Optional[str]:
    first, last = SCHEDULER_LINES
    sample = (log.head or log.lines)[:first] + [ln for w in log.middle[:1] for ln in w[:5]] + log.lines[-last:]
    return scheduler_of("\n".join(ln.text for ln in sample))


def read(bundle, entry, ctx) -> None:
    with ctx.open(entry) as f:
        log = read_log(f)
        log.scheduler = _scheduler(log)
        bundle.logs.append(log)
        inflated = getattr(f, "describe", None)
        if inflated is not None and inflated():
            bundle.note(inflated())
        if not log.complete:
            shown = sum(len(w) for w in log.middle)
            middle = f", {shown} lines in {len(log.middle)} windows across the middle," if log.middle else ""
            bundle.note(f"{log.path}: {log.size / (1 << 20):.0f} MB; read its first {len(log.head)}{middle} and last "
                        f"{len(log.lines)} lines")
        if log.cut_mid_line and log.lines:
            bundle.note(f"{log.path}: ends without a newline (the writer may have been killed mid-line)")
        parts = [log.head, *log.middle, log.lines]
        found = _add_points(bundle, log.path, parts, check=f.check)
        _find_onset_in_the_middle(bundle, f, log, parts, found)
        ctx.record(f, "log")
        bundle.files[-1].scheduler = log.scheduler
