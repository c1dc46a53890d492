"""Helpers shared by the trajectory detectors: robust statistics, point cleaning, wording.

No detector lives here (the registry runs modules that define `detect`; this one does not).
"""
from __future__ import annotations

import math
from bisect import bisect_left, insort
from itertools import repeat
from operator import sub
from typing import Dict, List, Optional, Sequence, Tuple

from trainwreck import record_replace
from trainwreck.model import Point, Source

MAD_SCALE = 1.4826  # MAD × this estimates σ for normal noise


def is_finite(v: object) -> bool:
    if v.__class__ is float:  # the common case, first: x - x is 0.0 exactly when x is finite
        return v - v == 0.0  # type: ignore[operator]
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def nonfinite(v: object) -> bool:
    if v.__class__ is float:
        return v - v != 0.0  # type: ignore[operator]  # nan or ±inf
    return isinstance(v, float) and not math.isfinite(v)


def median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return math.nan
    m = n // 2
    return s[m] if n % 2 else (s[m - 1] + s[m]) / 2.0


def mad(xs: Sequence[float], med: Optional[float] = None) -> float:
    if not xs:
        return math.nan
    c = median(xs) if med is None else med
    return median(list(map(abs, map(sub, xs, repeat(c)))))  # |x - c| for every x, without a Python-level loop


def diff_noise(xs: Sequence[float]) -> float:
    """Robust σ of the point-to-point noise (trend-insensitive): MAD of first differences / √2."""
    if len(xs) < 3:
        return 0.0
    return MAD_SCALE * median(list(map(abs, map(sub, xs[1:], xs)))) / math.sqrt(2.0)  # |xs[i] - xs[i - 1]|


def rolling_median(xs: Sequence[float], w: int) -> List[float]:
    """Centred rolling median (window shrinks at the edges).

    The window is kept sorted as it slides (one insertion, one removal per point), so the cost is
    O(n log w) and not a sort per point. Equal values keep their logged order, as a sort would."""
    if w <= 1:
        return list(xs)
    h = w // 2
    n = len(xs)
    win = sorted(xs[:min(n, h)])
    out: List[float] = []
    for i in range(n):
        if i + h < n:
            insort(win, xs[i + h])  # enters on the right of equal values: it is the newest
        if i - h - 1 >= 0:
            del win[bisect_left(win, xs[i - h - 1])]  # the leftmost equal value is the oldest
        m = len(win) // 2
        out.append(win[m] if len(win) % 2 else (win[m - 1] + win[m]) / 2.0)
    return out


def clean(points: Sequence[Point]) -> List[Point]:
    """Points with a numeric value, in file order, without back-to-back duplicates (a line logged twice by
    two handlers: same step, same value)."""
    out: List[Point] = []
    append = out.append
    last: Optional[Point] = None  # out[-1]
    for p in points:
        v = p.value
        if v.__class__ is not float and (isinstance(v, bool) or not isinstance(v, (int, float))):
            continue
        if last is not None and p.step is not None and last.step == p.step:
            q = last.value
            if q == v or (nonfinite(q) and nonfinite(v) and (math.isnan(q) == math.isnan(v))):
                continue
        append(p)
        last = p
    return out


def finite_points(points: Sequence[Point]) -> List[Tuple[int, Point]]:
    """(index in `points`, point) for every finite value: non-finite values are masked before statistics."""
    return [(i, p) for i, p in enumerate(points)
            if (p.value - p.value == 0.0 if p.value.__class__ is float else is_finite(p.value))]


def src(p: Point, name: str) -> Source:
    """The point's own source, completed with metric / step / value when the reader left them out."""
    s = p.source
    if s is None:
        return Source(path="", step=p.step, metric=name, value=p.value)
    if s.metric is None or s.step != p.step or s.value is None:
        return record_replace(s, metric=s.metric or name, step=p.step if s.step is None else s.step,
                                   value=p.value if s.value is None else s.value)
    return s


def at_step(p: Point) -> str:
    """'step 400', or the point's citation ('train.log:88') when the metric has no step."""
    return f"step {p.step}" if p.step is not None else p.source.cite()


def where(p: Point, idx: int) -> str:
    """'step 400', or 'line 88' / 'point 12' when the metric has no step."""
    if p.step is not None:
        return f"step {p.step}"
    if p.source is not None and p.source.line is not None:
        return f"line {p.source.line}"
    return f"point {idx + 1}"


def span(a: Point, ia: int, b: Point, ib: int) -> str:
    """'steps 350–390' (or lines / points) for a range of two points."""
    if a.step is not None and b.step is not None:
        return f"step {a.step}" if a.step == b.step else f"steps {a.step}–{b.step}"
    if a.source is not None and b.source is not None and a.source.line is not None and b.source.line is not None:
        return f"line {a.source.line}" if a.source.line == b.source.line else f"lines {a.source.line}–{b.source.line}"
    return f"point {ia + 1}" if ia == ib else f"points {ia + 1}–{ib + 1}"


def order_of(p: Point, idx: int) -> float:
    """Position on the run's timeline: the step when logged, else the point's index in its series."""
    return float(p.step) if p.step is not None else float(idx)


def fmt(v: float) -> str:
    """A number as people write it in a report: 9.8, 0.0471, 1.2e5, 3e-4, nan, inf."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return str(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e5 or a < 1e-3:
        m, e = f"{v:.1e}".split("e")
        m = m.rstrip("0").rstrip(".")
        return f"{m}e{int(e)}"
    if a >= 100:
        return f"{v:.0f}" if a >= 1000 else f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.3g}" if a >= 1 else f"{v:.3g}"


def nonfinite_word(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    return "inf" if v > 0 else "-inf"


def flat_from(xs: Sequence[float], level: float, band: float, w: int = 5) -> int:
    """The index where the flat stretch that ends the series starts: the first index from which every
    (rolling-median smoothed) value stays within `band` of `level`. len(xs) - 1 at worst."""
    n = len(xs)
    if n == 0:
        return 0
    sm = rolling_median(xs, min(w, max(1, n // 4) | 1))
    i = n - 1
    while i > 0 and abs(sm[i - 1] - level) <= band:
        i -= 1
    while i < n - 1 and abs(xs[i] - level) > band:  # the smoothed edge may start on an outlier
        i += 1
    return i


def points_confidence(n: int, full: float) -> float:
    """Confidence that grows with the number of points a verdict rests on, up to `full` (30+ points)."""
    if n >= 30:
        return full
    scale = 0.55 if n <= 3 else 0.65 if n <= 5 else 0.75 if n <= 10 else 0.85
    return round(max(0.35, full * scale), 2)


def few_words(n: int) -> str:
    """What a short series' verdict says about how little data it rests on ('' from 30 points)."""
    if n >= 30:
        return ""
    return f" (only {n} point{'s' if n != 1 else ''} logged: low confidence)" if n < 10 else f" ({n} points)"


def epochs_by_line(bundle) -> Dict[Tuple[str, Optional[int]], float]:
    """(path, line) -> the epoch logged on that line, from the bundle's `epoch` series."""
    out: Dict[Tuple[str, Optional[int]], float] = {}
    for s in bundle.series.get("epoch") or []:
        for p in s.points:
            if p.source is not None and p.source.line is not None and is_finite(p.value):
                out[(p.source.path, p.source.line)] = p.value
    return out


def late(p: Point, epochs: Dict[Tuple[str, Optional[int]], float], step: int = 1000, epoch: float = 2.0) -> bool:
    """Has training run long enough by this point for a loss at its initial level to mean 'not learning':
    step ≥ `step`, or at least `epoch` epochs done (epoch-level logs carry no step)."""
    if p.step is not None and p.step >= step:
        return True
    if p.source is None:
        return False
    e = epochs.get((p.source.path, p.source.line))
    return e is not None and e >= epoch
