"""Learning-rate schedule anomalies and a stalled step counter / throughput.

Only what the data shows: "no warmup" is said only when the lr is logged from the first steps.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from trainwreck.analyze.trajectory_stats import (
    clean,
    finite_points,
    fmt,
    is_finite,
    median,
    nonfinite,
    order_of,
    span,
    src,
    where,
)
from trainwreck.model import DIRECT, Finding, Point, Source

JUMP_AFTER_PEAK = 3.0  # lr × this between two points, and above 1.5 × its earlier peak
JUMP_IN_WARMUP = 10.0  # lr × this between two points while a smooth warmup was still rising
ZERO_TAIL = 0.3  # lr 0 for this share of the points at the end (after being positive)
WARMUP_FROM = 10  # "no warmup" only when the first lr point is at step ≤ this
STALL_RUN = 10  # the same step repeated this many times at the end …
STALL_FACTOR = 4  # … and this many times the usual repeat count
THROUGHPUT_DROP = 0.1  # throughput at the end below this share of its earlier median

SCHED_FIX = "check the scheduler's total steps (num_training_steps / max_steps / T_max) and warmup against the " \
            "real number of optimizer steps, and that a resumed run restores the scheduler state"


def lr_anomalies(points: Sequence[Point], unstable: bool = False,
                 warmup_cfg: Optional[Source] = None) -> List[Finding]:
    """Zero, negative or non-finite lr; an lr that jumps up far beyond warmup; an lr that ends at 0 early;
    no warmup (only when `unstable` and the lr is logged from the first steps)."""
    pts = clean(points)
    out: List[Finding] = []
    bad = next(((i, p) for i, p in enumerate(pts) if nonfinite(p.value)), None)
    if bad is not None:
        i, p = bad
        out.append(Finding("metric.lr-anomaly", f"lr is {fmt(p.value)} at {where(p, i)}", DIRECT, 0.6,
                           [src(p, "lr")], suggests="NaN", role="cause", stage="runtime", order=order_of(p, i),
                           fixes=[SCHED_FIX]))
    fp = finite_points(pts)
    if not fp:
        return out
    vals = [p.value for _, p in fp]
    neg = next(((i, p) for i, p in fp if p.value < 0), None)
    if neg is not None:
        i, p = neg
        out.append(Finding("metric.lr-anomaly", f"lr is negative ({fmt(p.value)}) at {where(p, i)}", DIRECT, 0.6,
                           [src(p, "lr")], role="cause", stage="runtime", order=order_of(p, i), fixes=[SCHED_FIX],
                           meaning="A negative lr climbs the loss instead of descending it."))
    (i0, p0), (il, pl) = fp[0], fp[-1]
    if len(fp) >= 3 and all(v == 0 for v in vals):
        out.append(Finding("metric.lr-anomaly", f"lr is 0 at all {len(fp)} logged points ({span(p0, i0, pl, il)})",
                           DIRECT, 0.65, [src(p0, "lr"), src(pl, "lr")], suggests="stall", role="cause",
                           stage="runtime", order=order_of(p0, i0), fixes=[SCHED_FIX],
                           meaning="With a zero learning rate the weights never change."))
        return out
    z = len(vals)
    while z > 0 and vals[z - 1] == 0:
        z -= 1
    zeros = len(vals) - z
    if z > 0 and zeros >= 3 and zeros >= ZERO_TAIL * len(vals):
        iz, pz = fp[z]
        out.append(Finding("metric.lr-anomaly",
                           f"lr has been 0 since {where(pz, iz)}: the last {zeros} of {len(vals)} logged points",
                           DIRECT, 0.5, [src(pz, "lr"), src(pl, "lr")], suggests="stall", role="cause",
                           stage="runtime", order=order_of(pz, iz), fixes=[SCHED_FIX],
                           meaning="The schedule reached 0 long before training ended (its total steps are too "
                                   "small), so the rest of the run does not learn."))
    jump = _jump(fp)
    if jump is not None:
        out.append(jump)
    if unstable and len(fp) >= 3 and p0.step is not None and p0.step <= WARMUP_FROM:
        top = max(vals)
        if top > 0 and vals[0] >= 0.9 * top:
            ev = [src(p0, "lr")] + ([warmup_cfg] if warmup_cfg is not None else [])
            cfg = f"; config {warmup_cfg.text.strip()}" if warmup_cfg is not None else ""
            # "peak" is the series maximum: the first value is called that only when it is the maximum
            start = f"at its peak {fmt(top)}" if vals[0] >= top else \
                f"at {fmt(vals[0])}, {vals[0] / top:.0%} of its maximum {fmt(top)},"
            out.append(Finding("metric.lr-anomaly",
                               f"lr is already {start} at step {p0.step}, the first logged point: "
                               f"no warmup{cfg}", DIRECT, 0.35, ev, role="factor", stage="runtime",
                               order=order_of(p0, i0), fixes=["add a warmup (e.g. 1–5% of the steps)"],
                               meaning="Hypothesis: starting at the full lr lets early, large updates destabilise "
                                       "the run."))
    return out


def _jump(fp) -> Optional[Finding]:
    """The first point where the lr jumps up (see JUMP_*), judged against all the points logged before it.

    One pass: what the test needs to know about the points before k (do they rise all along, their largest
    neighbour-to-neighbour ratio, their maximum) is carried forward, so the cost is linear in the points."""
    vals = [p.value for _, p in fp]
    rising = True  # vals[:k] never decreases
    max_step: Optional[float] = None  # the largest y / x over neighbours x, y of vals[:k] with x > 0
    top = vals[0] if vals else 0.0  # max(vals[:k])
    for k in range(1, len(vals)):
        a, b = vals[k - 1], vals[k]
        if k >= 2:  # vals[k - 1] joins the points before k
            x = vals[k - 2]
            rising = rising and a >= x
            if x > 0 and (max_step is None or a / x > max_step):
                max_step = a / x
            top = a if a > top else top
        if a <= 0 or b <= a:
            continue
        if rising:
            ok = k >= 3 and b >= JUMP_IN_WARMUP * a and (max_step is None or max_step <= 3.0)
        else:
            ok = b >= JUMP_AFTER_PEAK * a and b > 1.5 * top
        if ok:
            prior = vals[:k]  # once, for the wording
            (ia, pa), (ib, pb) = fp[k - 1], fp[k]
            kind = "during a smooth warmup" if rising else f"above its earlier peak {fmt(max(prior))}"
            return Finding("metric.lr-anomaly",
                           f"lr jumped {fmt(a)} → {fmt(b)} (×{fmt(b / a)}) between {where(pa, ia)} and "
                           f"{where(pb, ib)}, {kind}", DIRECT, 0.5, [src(pb, "lr"), src(pa, "lr")],
                           role="cause", stage="runtime", order=order_of(pb, ib), fixes=[SCHED_FIX],
                           meaning="A sudden lr jump (a resumed run with a fresh scheduler, a wrong schedule unit) "
                                   "can throw a trained model out of its basin.")
    return None


def step_stall(points: Sequence[Point], name: str) -> List[Finding]:
    """The step counter repeats while lines keep coming (trailing run of one step)."""
    pts = [p for p in points if p.step is not None]
    if len(pts) < STALL_RUN:
        return []
    runs: List[int] = []
    r = 1
    for a, b in zip(pts, pts[1:]):
        if b.step == a.step:
            r += 1
        else:
            runs.append(r)
            r = 1
    runs.append(r)
    if len(runs) < 2:
        return []  # the only step ever logged: nothing to compare with
    typical = median(runs[:-1])
    last = runs[-1]
    if last < STALL_RUN or last < STALL_FACTOR * typical:
        return []
    first, end = pts[-last], pts[-1]
    if first.source is not None and end.source is not None and first.source.line and end.source.line:
        rng = f"lines {first.source.line}–{end.source.line}"
    else:
        rng = f"points {len(pts) - last + 1}–{len(pts)}"
    claim = (f"the step counter stays at {end.step} for the last {last} logged {name} points ({rng}) while "
             f"lines keep coming (usually {fmt(typical)} per step)")
    return [Finding("metric.step-stall", claim, DIRECT, 0.55, [src(first, name), src(end, name)],
                    suggests="stall", role="symptom", stage="runtime", order=float(end.step),
                    meaning="Work continues but no optimizer step completes: a hung collective, skipped steps, "
                            "or a loop that never reaches the optimizer.")]


def throughput_drop(points: Sequence[Point]) -> List[Finding]:
    fp = [(i, p) for i, p in enumerate(clean(points)) if is_finite(p.value)]
    if len(fp) < 8:
        return []
    k = max(2, len(fp) // 10)
    base_vals = [p.value for _, p in fp[2:-k]] or [p.value for _, p in fp[:-k]]
    base = median(base_vals)
    tail = fp[-k:]
    level = median([p.value for _, p in tail])
    if base <= 0 or level > THROUGHPUT_DROP * base:
        return []
    (a, pa), (b, pb) = tail[0], tail[-1]
    return [Finding("metric.step-stall",
                    f"throughput fell from a median of {fmt(base)} to {fmt(level)} over the last {k} points "
                    f"({span(pa, a, pb, b)})", DIRECT, 0.6 if level <= 0.02 * base else 0.5,
                    [src(pa, "throughput"), src(pb, "throughput")], suggests="stall", role="symptom",
                    stage="runtime", order=order_of(pa, a),
                    meaning="The run slowed to a crawl: a straggler rank, I/O or dataloader starvation, "
                            "swapping, or a hang in progress.")]
