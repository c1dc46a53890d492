"""The first non-finite loss / grad_norm, and what the metrics show just before it.

Precursors, each its own finding: a grad-norm spike, a loss-scale collapse, skipped / nan iteration counts
rising, the lr at its peak. Each observation is DIRECT; that it *caused* the NaN is a hypothesis, said so in
`meaning`.
"""
from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

from trainwreck.analyze.trajectory_stats import (
    MAD_SCALE,
    clean,
    fmt,
    is_finite,
    mad,
    median,
    nonfinite,
    nonfinite_word,
    order_of,
    span,
    src,
    where,
)
from trainwreck.collect.bundle import Series
from trainwreck.model import DIRECT, Finding, Point

WINDOW = 20  # points before the first non-finite value searched for precursors
BASELINE = 50  # points before that window that set the "normal" level
SPIKE_RATIO = 10.0  # grad_norm peak / baseline median: a likely cause
SPIKE_RATIO_MIN = 5.0  # ... below this, nothing is reported
SPIKE_Z = 6.0  # and the peak must stand this many robust σ above the baseline
HALVINGS = 4  # consecutive loss-scale halvings that count as a collapse (with the scale ending ≤ 128)

CLIP_FIX = "clip gradients: max_grad_norm=1.0 (HF Trainer) / gradient_clip_val=1.0 (Lightning) / " \
           "torch.nn.utils.clip_grad_norm_(params, 1.0)"


class Onset:
    """The first non-finite value of a metric: where it is and how the series goes on after it.

    (A plain class, not a dataclass: a dataclass costs about a millisecond to create at every start-up.)"""

    __slots__ = ("name", "series", "index", "point", "points", "later", "later_bad", "ends_finite", "from_scan")

    def __init__(self, name: str, series: Series, index: int, point: Point, points: List[Point], later: int,
                 later_bad: int, ends_finite: bool, from_scan: bool = False) -> None:
        self.name, self.series, self.point, self.points = name, series, point, points
        self.index = index  # index in the cleaned points (len(points) when known only from the whole-history scan)
        self.later = later  # points after the onset
        self.later_bad = later_bad  # ... of them non-finite
        self.ends_finite = ends_finite
        self.from_scan = from_scan  # known only from the reader's whole-history scan (points are a sample)

    def __repr__(self) -> str:
        return f"Onset({self.name!r}, index={self.index}, point={self.point!r}, later={self.later}, " \
               f"later_bad={self.later_bad}, ends_finite={self.ends_finite}, from_scan={self.from_scan})"

    @property
    def persistent(self) -> bool:
        return not self.ends_finite or (self.later > 0 and self.later_bad * 2 >= self.later)


def find_onset(name: str, candidates: Sequence[Series]) -> Optional[Onset]:
    """The earliest first non-finite value of `name` over its series (metrics files and logs)."""
    best: Optional[Onset] = None
    for s in candidates:
        pts = clean(s.points)
        idx = next((i for i, p in enumerate(pts) if nonfinite(p.value)), None)
        point = pts[idx] if idx is not None else None
        fnf = s.first_nonfinite
        from_scan = False
        if fnf is not None and (point is None or (fnf.step is not None and point.step is not None
                                                  and fnf.step < point.step)):
            point, from_scan = fnf, True
            idx = next((i for i, p in enumerate(pts) if p.step is not None and fnf.step is not None
                        and p.step > fnf.step), len(pts))
        if point is None or idx is None:
            continue
        after = pts[idx:] if from_scan else pts[idx + 1:]
        bad = sum(1 for p in after if nonfinite(p.value))
        ends_finite = bool(after) and is_finite(pts[-1].value)
        o = Onset(name, s, idx, point, pts, len(after), bad, ends_finite, from_scan)
        if best is None or earlier(o, best):
            best = o
    return best


def earlier(a: Onset, b: Onset) -> bool:
    if a.point.step is not None and b.point.step is not None:
        return a.point.step < b.point.step
    return len(a.points) > len(b.points)  # no common clock: prefer the richer series


def nonfinite_finding(o: Onset) -> Finding:
    p = o.point
    word = nonfinite_word(p.value)
    pts = o.points  # the last finite point before the onset, searched backwards from it
    last_ok = next(((i, pts[i]) for i in range(min(o.index, len(pts)) - 1, -1, -1) if is_finite(pts[i].value)),
                   None)
    before = f" (last finite value {fmt(last_ok[1].value)} at {where(last_ok[1], last_ok[0])})" if last_ok else \
        " (no finite value logged before it)"
    if o.later == 0:
        tail = "; it is the last logged value"
    elif o.later_bad == o.later:
        tail = "; the next point is non-finite too" if o.later == 1 else \
            f"; all {o.later} later points are non-finite"
    elif o.later_bad == 0:
        tail = "; the next point is finite" if o.later == 1 else f"; all {o.later} later points are finite"
    else:
        tail = f"; {o.later_bad} of {o.later} later points are non-finite"
    ev = [src(p, o.name)]
    if last_ok:
        ev.append(src(last_ok[1], o.name))
    scan = " (whole-file scan)" if o.from_scan else ""
    if o.persistent:
        claim = f"{o.name} is {word} from {where(p, o.index)}{scan}{before}{tail}"
        return Finding("metric.first-nonfinite", claim, DIRECT, 0.9 if o.name == "loss" else 0.8, ev, kind="nonfinite",
                       suggests="NaN", role="symptom", stage="runtime", order=order_of(p, o.index),
                       meaning=f"The first non-finite {o.name} marks when the run broke; look at what the metrics "
                               f"did in the steps just before it.",
                       fixes=["localise the first bad op: torch.autograd.set_detect_anomaly(True) for a few steps "
                              "before it"])
    claim = (f"{o.name} was {word} at {where(p, o.index)}{scan}{before}{tail}; the series is finite again by the "
             f"end (isolated)")
    return Finding("metric.first-nonfinite", claim, DIRECT, 0.4, ev, suggests=None, role="factor", kind="nonfinite",
                   stage="runtime", order=order_of(p, o.index),
                   meaning="Hypothesis: isolated non-finite values that recover are usually fp16 overflow steps the "
                           "loss scaler skipped, not the failure itself.")


def _before(points: List[Point], onset: Onset) -> Optional[List[Tuple[int, Point]]]:
    """(index, point) of `points` logged strictly before the onset; None when the two cannot be aligned."""
    op = onset.point
    if points is onset.points:
        return list(enumerate(points[:onset.index]))
    if op.step is not None and any(p.step is not None for p in points):
        return [(i, p) for i, p in enumerate(points) if p.step is not None and p.step < op.step]
    if op.source is not None and op.source.line is not None:
        return [(i, p) for i, p in enumerate(points) if p.source is not None and p.source.path == op.source.path
                and p.source.line is not None and p.source.line < op.source.line] or None
    return None


def gradnorm_spike_before(points: List[Point], onset: Onset) -> List[Finding]:
    pre = _before(points, onset)
    if not pre:
        return []
    fin = [(i, p) for i, p in pre if is_finite(p.value)]
    if len(fin) < 6:
        return []
    w = min(WINDOW, len(fin) // 2)
    window, base = fin[-w:], fin[:-w][-BASELINE:]
    if len(base) < 3:
        return []
    bvals = [p.value for _, p in base]
    bmed = median(bvals)
    sigma = MAD_SCALE * mad(bvals, bmed)
    pi, peak = max(window, key=lambda t: t[1].value)
    if bmed <= 0 or peak.value < SPIKE_RATIO_MIN * bmed or peak.value < bmed + SPIKE_Z * sigma:
        return []
    ratio = peak.value / bmed
    si, start = next(((i, p) for i, p in window if p.value > 3 * bmed), (pi, peak))
    at = f"{onset.name} {nonfinite_word(onset.point.value)} at {where(onset.point, onset.index)}"
    claim = (f"grad_norm rose {fmt(bmed)} → {fmt(peak.value)} (×{fmt(ratio)}) over {span(start, si, peak, pi)}, "
             f"just before the first {at}")
    ev = [src(start, "grad_norm")] + ([src(peak, "grad_norm")] if peak is not start else [])
    big = ratio >= SPIKE_RATIO
    return [Finding("metric.gradnorm-spike-before-nan", claim, DIRECT, 0.7 if big else 0.45, ev, suggests=None,
                    kind="precursor", precursor_of="NaN",
                    role="cause" if big else "factor", stage="runtime", order=order_of(start, si),
                    meaning="Hypothesis: the gradients exploded and overflowed into NaN; the median before the "
                            "rise is the baseline.",
                    fixes=[CLIP_FIX, "lower the peak lr or lengthen the warmup"])]


def _collapse(points: List[Point]) -> Optional[Tuple[int, Point, int, Point, int, float, bool]]:
    """(i_first_drop, first_drop, i_low, low, halvings, high, recovered) for the deepest run of loss-scale
    decreases, or None. The run starts at the first lowered value after a plateau at the high value, or at
    the first point when the data starts mid-fall (logs that print only "reducing to X")."""
    fin = [(i, p) for i, p in enumerate(points) if is_finite(p.value) and p.value > 0]
    if len(fin) < 2:
        return None
    j = min(range(len(fin)), key=lambda k: (fin[k][1].value, k))
    k = j
    while k > 0 and fin[k - 1][1].value >= fin[k][1].value:
        k -= 1
    hi, lo = fin[k][1].value, fin[j][1].value
    if hi <= lo:
        return None
    halvings = int(round(math.log2(hi) - math.log2(lo)))
    if not ((lo <= 1.0 < hi) or (halvings >= HALVINGS and lo <= 128)):
        return None
    recovered = any(p.value >= 4 * lo for _, p in fin[j + 1:])
    if k > 0 or fin[k + 1][1].value == hi:  # a plateau at the high value precedes: start at the first drop
        while fin[k + 1][1].value == hi:
            k += 1
        k += 1
    return fin[k][0], fin[k][1], fin[j][0], fin[j][1], halvings, hi, recovered


def loss_scale_findings(points: List[Point], onset: Optional[Onset]) -> List[Finding]:
    pts = [p for p in points if is_finite(p.value)]
    if not pts:
        return []
    c = _collapse(points)
    fixes = ["bf16 instead of fp16 where the GPU supports it (A100/H100 and newer)", CLIP_FIX,
             "look for inf/nan in inputs or in fp16-sensitive ops (softmax, norms, large logits)"]
    if c is None:
        top = max(p.value for p in pts)
        if top < 1.0 or (onset is not None and len(pts) >= 2 and top <= 1.0):
            a, b = pts[0], pts[-1]
            ia, ib = points.index(a), points.index(b)
            claim = (f"loss_scale is {fmt(top)} or less at all {len(pts)} logged points ({span(a, ia, b, ib)})"
                     + (": far below 1, every fp16 step overflows" if top < 1.0 else
                        ": the dynamic scaler sits at its floor"))
            ev = [src(a, "loss_scale")] + ([src(b, "loss_scale")] if b is not a else [])
            if top < 1.0:
                return [Finding("metric.loss-scale-floor", claim, DIRECT, 0.5, ev, suggests="NaN", role="symptom",
                                stage="runtime", order=order_of(a, ia), fixes=fixes,
                                meaning="A dynamic loss scale below 1 is reached only by halving on overflow after "
                                        "overflow: the fp16 values are inf/NaN at every step.")]
            return [Finding("metric.loss-scale-floor", claim, DIRECT, 0.4, ev, role="factor", stage="runtime",
                            order=order_of(a, ia), fixes=fixes,
                            meaning="Hypothesis: every fp16 step overflows, so the scaler cannot raise the scale.")]
        return []
    i0, p0, i1, p1, halvings, hi, recovered = c
    what = f"loss_scale fell {fmt(hi)} → {fmt(p1.value)} over {span(p0, i0, p1, i1)} ({halvings} halvings)"
    ev = [src(p0, "loss_scale"), src(p1, "loss_scale")]
    order = order_of(p0, i0)
    if recovered:
        return [Finding("metric.loss-scale-collapse", what + ", then recovered", DIRECT, 0.35, ev, role="factor",
                        stage="runtime", order=order, fixes=fixes,
                        meaning="A run of fp16 overflows that the dynamic loss scaler absorbed.")]
    if onset is not None and _before([p0], onset):
        at = f"{onset.name} {nonfinite_word(onset.point.value)} at {where(onset.point, onset.index)}"
        how = "before" if _before([p1], onset) else "ending at"
        return [Finding("metric.loss-scale-collapse-before-nan", f"{what}, {how} the first {at}", DIRECT, 0.6, ev,
                        kind="precursor", precursor_of="NaN",
                        suggests=None, role="cause", stage="runtime", order=order, fixes=fixes,
                        meaning="Hypothesis: persistent fp16 overflow (inf/nan gradients) drove the scale down "
                                "until the values themselves went non-finite.")]
    return [Finding("metric.loss-scale-collapse", f"{what} and did not recover", DIRECT,
                    0.75 if p1.value <= 1.0 else 0.65, ev, suggests="NaN", role="symptom", stage="runtime",
                    order=order, fixes=fixes,
                    meaning="Every step overflows in fp16: the scaler halves the scale on each overflow and skips "
                            "the step, so the model stops learning and the run ends at the scaler's minimum.")]


def counter_findings(name: str, points: List[Point], onset: Optional[Onset]) -> List[Finding]:
    """skipped_iterations / nan_iterations: counts that rise (cumulative) or are non-zero (per interval)."""
    fin = [(i, p) for i, p in enumerate(points) if is_finite(p.value)]
    if len(fin) < 2 and not (fin and fin[0][1].value > 0):
        return []
    vals = [p.value for _, p in fin]
    cumulative = all(b >= a for a, b in zip(vals, vals[1:])) and vals[-1] > vals[0]
    base = vals[0] if cumulative else 0.0
    first = next(((i, p) for i, p in fin if p.value > base), None)
    if first is None:
        return []
    fi, fp = first
    li, lp = fin[-1]
    label = name.replace("_", " ")
    if cumulative:
        amount = vals[-1] - vals[0]
        what = f"{label} rose {fmt(vals[0])} → {fmt(vals[-1])} over {span(fp, fi, lp, li)}"
        busy = sum(1 for a, b in zip(vals, vals[1:]) if b > a)
    else:
        nz = [p for _, p in fin if p.value > 0]
        amount = sum(p.value for p in nz)
        busy = len(nz)
        what = f"{label} non-zero at {busy} of {len(fin)} logged points from {where(fp, fi)} (total {fmt(amount)})"
    ev = [src(fp, name), src(lp, name)] if lp is not fp else [src(fp, name)]
    if onset is not None and _before([fp], onset):
        at = f"{onset.name} {nonfinite_word(onset.point.value)} at {where(onset.point, onset.index)}"
        return [Finding(f"metric.{name.replace('_', '-')}-before-nan", f"{what}, before the first {at}", DIRECT, 0.5,
                        ev, kind="precursor", precursor_of="NaN", role="cause", stage="runtime", order=order_of(fp, fi),
                        meaning="Hypothesis: steps were already overflowing (and being skipped) before the values "
                                "went non-finite.")]
    if name == "nan_iterations":
        return [Finding("metric.nan-iterations", what, DIRECT, 0.6, ev, suggests="NaN", role="symptom",
                        stage="runtime", order=order_of(fp, fi),
                        meaning="The framework counted iterations whose loss or gradients were NaN.")]
    if busy >= 3 or amount >= 10:
        return [Finding("metric.skipped-iterations", what, DIRECT, 0.4, ev, role="factor", stage="runtime",
                        order=order_of(fp, fi),
                        meaning="Optimizer steps skipped for fp16 overflow: a few early on are normal, a steady "
                                "stream means the gradients keep overflowing.")]
    return []


def lr_peak_before(points: List[Point], onset: Onset) -> List[Finding]:
    pre = _before(points, onset)
    if not pre:
        return []
    fin = [(i, p) for i, p in pre if is_finite(p.value)]
    if len(fin) < 3:
        return []
    top = max(p.value for _, p in fin)
    if top <= 0:
        return []
    pi, peak = next((i, p) for i, p in reversed(fin) if p.value >= 0.999 * top)
    lo = min(p.value for _, p in fin)
    recent = [i for i, _ in fin[-WINDOW:]]
    if pi not in recent or lo > 0.7 * top:
        return []  # the peak is not right before, or the lr never rose: nothing to say
    at = f"{onset.name} {nonfinite_word(onset.point.value)} at {where(onset.point, onset.index)}"
    claim = f"lr reached its peak {fmt(top)} at {where(peak, pi)} (from {fmt(lo)}), just before the first {at}"
    return [Finding("metric.lr-peak-before-nan", claim, DIRECT, 0.35, [src(peak, "lr")], role="factor",
                    kind="precursor", precursor_of="NaN",
                    stage="runtime", order=order_of(peak, pi),
                    meaning="Hypothesis: the run became unstable as the lr reached its peak (end of warmup).",
                    fixes=["lower the peak lr, or lengthen the warmup"])]
