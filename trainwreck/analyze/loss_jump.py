"""A loss that jumps three orders of magnitude in one logged interval, to far above where it started: the
"order-of-magnitude jump" shape, in the total loss or in any of its components.

A component loss of 0.66 that prints 3554 at the next iteration (a side output of an edge detector, an RPN term
of a detector) has not met a hard batch: no batch of a working model costs a thousand times its best value and
ten times its value at initialisation. It is the step (or the forward pass) going numerically unstable, the start
of a divergence, even when the loss falls back afterwards and even when a smoothed total (Caffe's
`average_loss`) hides it. Both conditions are needed: a loss that converged near 0 and then prints a value a
thousand times larger but still below its first value is a hard batch, not this. A loss scale (it grows by
design) and validation losses are not read here.
"""
from __future__ import annotations

import math
from typing import List, Optional, Tuple

from trainwreck.analyze.trajectory_stats import few_words, fmt, points_confidence
from trainwreck.collect.bundle import Bundle
from trainwreck.collect.metricnames import EVAL_PREFIXES, role
from trainwreck.model import DIRECT, Finding, Point

JUMP = 1000.0  # this many times the lowest value logged before it ...
ABOVE_START = 10.0  # ... and this many times the first logged value
MIN_POINTS = 3


def _read(name: str) -> bool:
    if name == "loss":
        return True
    return role(name) == "component" and "scale" not in name and not name.startswith(EVAL_PREFIXES)


def _jumps(points: List[Point]) -> Optional[Tuple[List[Point], Point, int]]:
    """(the points that jumped, the lowest point before the first of them, the number of points) or None."""
    pts = [p for p in points if isinstance(p.value, (int, float)) and not isinstance(p.value, bool)]
    if len(pts) < MIN_POINTS or not all(math.isfinite(p.value) for p in pts):
        return None  # a non-finite loss is the NaN detectors' story
    first = pts[0].value
    if not first > 0:
        return None
    low = pts[0]
    low_at_first: Optional[Point] = None
    hits: List[Point] = []
    for p in pts[1:]:
        if low.value > 0 and p.value >= JUMP * low.value and p.value >= ABOVE_START * first:
            if not hits:
                low_at_first = low
            hits.append(p)
        if p.value < low.value:
            low = p
    if not hits or low_at_first is None:
        return None
    return hits, low_at_first, len(pts)


def _total_before(bundle: Bundle, p: Point) -> Optional[Point]:
    """The total loss printed just above a component point that carries no step (Caffe prints `Iteration N, loss =
    X` and then one `Train net output` line per component): the total of the same iteration."""
    total = bundle.best_series("loss")
    line = p.source.line
    if total is None or p.step is not None or line is None:
        return None
    near = [q for q in total.points if q.source.path == p.source.path and q.source.line is not None
            and line - 20 <= q.source.line < line]
    return near[-1] if near else None


def detect(bundle: Bundle) -> List[Finding]:
    found = []
    for name in sorted(bundle.series):
        if not _read(name):
            continue
        s = bundle.best_series(name)
        got = _jumps(s.points) if s is not None else None
        if got is not None:
            found.append((name, s.path) + got)
    if not found:
        return []
    found.sort(key=lambda t: (-len(t[2]), t[0] != "loss", t[0]))
    name, path, hits, low, n = found[0]
    others = [t[0] for t in found[1:]]
    top = hits[0]
    again = f", and {len(hits) - 1} more time{'s' if len(hits) > 2 else ''}" if len(hits) > 1 else ""
    claim = (f"{name} jumped from {fmt(low.value)} ({low.source.cite()}) to {fmt(top.value)} "
             f"({top.source.cite()}){again}: more than {fmt(JUMP)}× its lowest value and {fmt(ABOVE_START)}× its "
             f"first ({path})" + (f"; so did {', '.join(others[:4])}" if others else "") + few_words(n))
    full = 0.8 if len(hits) > 1 or others else 0.7
    total = _total_before(bundle, top) if name != "loss" else None
    if total is not None:
        claim += f"; the total loss of that iteration is {fmt(total.value)} ({total.source.cite()})"
    return [Finding("metric.loss-order-jump", claim, DIRECT, points_confidence(n, full),
                    [top.source, low.source] + ([total.source] if total is not None else [])
                    + [t[2][0].source for t in found[1:3]], suggests="divergence",
                    role="cause", stage="runtime", order=top.step, step=top.step, kind="divergence",
                    verify_skill="loss-spike-rollback",
                    fixes=["lower the learning rate 2–3×, or lengthen the warmup",
                           "clip gradients (max_grad_norm / gradient_clip_val / clip_gradients in a Caffe solver)",
                           "look for a loss term that can explode (a log or division of a value near 0, a "
                           "regression target far outside the usual range, an unnormalised input) and guard it"],
                    meaning="A loss thousands of times above its best value and far above its value at the start "
                            "is a numerically unstable update or forward pass: training is diverging, even when "
                            "the loss falls back for a while.")]
