"""The shape of a loss curve: sustained divergence, transient spikes, plateaus (at chance level or not).

All statistics run on finite values only, in logged order; steps are used for wording, not for arithmetic.
"""
from __future__ import annotations

import math
from bisect import bisect_left, insort
from itertools import accumulate
from typing import List, Optional, Sequence, Tuple

from trainwreck.analyze.chance_level import at_chance, nearest_k, tolerance
from trainwreck.analyze.trajectory_stats import (
    MAD_SCALE,
    diff_noise,
    finite_points,
    flat_from,
    fmt,
    mad,
    median,
    order_of,
    points_confidence,
    rolling_median,
    span,
    src,
    where,
)
from trainwreck.model import DIRECT, HYPOTHESIS, Finding, Point, Source

MIN_POINTS = 8  # fewer finite points: no shape is claimed
RISE_REL = 0.10  # divergence: the tail's median must stand ≥ 10% of |min| above the minimum …
RISE_SIGMA_BASE = 4.0  # … and ≥ 4 σ of the noise measured before the minimum (3 σ of the whole series'
RISE_SIGMA_ALL = 3.0  # noise when fewer than 6 points precede the minimum), capped at 50% of |min|
RECOVERED = 0.3  # … and not have come back: last points within 30% of the excursion and 1.5× the minimum: a bump
TINY_REL = 0.005  # … and ≥ 0.5% of the largest magnitude the series had up to its minimum (its scale)
SPIKE_WINDOW = 50  # rolling window (previous points) for the spike baseline
SPIKE_Z = 6.0  # robust z-score of a spike …
SPIKE_REL = {"loss": 0.3, "eval_loss": 0.3, "grad_norm": 3.0}  # … and its rise relative to the baseline median
RECOVER_WITHIN = 20  # points after a spike in which the value must come back to the baseline
SINGLE_BATCH = 2  # a recovered spike this many points wide is one bad batch: healthy
FLAT_TREND = 0.01  # plateau: median of the last third within 1% of the first third …
FLAT_SPREAD = 0.05  # … and robust σ within 5% of the level
PLATEAU_POINTS = 20  # a plateau not at chance level needs this many points …
PLATEAU_FROM = 100  # … logged from the start of training (first step ≤ this, when steps are known)
SMALL_K = 50  # K inferred from a flat loss level alone only up to here (ln K and ln(K+1) stay ≥ 2 % apart)
COMMON_K = (2, 10, 100, 1000, 21843, 30522, 32000, 32768, 50257, 50304, 65536, 100277, 128256, 151936)

DIVERGENCE_FIXES = ["lower the lr (e.g. ÷3) or add / lengthen the warmup",
                    "clip gradients: max_grad_norm=1.0 / gradient_clip_val=1.0",
                    "resume from the last checkpoint before the rise"]


def divergence(points: Sequence[Point], name: str = "loss", before_nan: Optional[str] = None) -> List[Finding]:
    """A sustained rise over the running minimum: the last K points all stand clearly above it."""
    fp = finite_points(points)
    n = len(fp)
    if n < MIN_POINTS:
        return []
    xs = [p.value for _, p in fp]
    w = 1 if n < 20 else min(25, max(3, (n // 25) | 1))
    sm = rolling_median(xs, w)
    j = sm.index(min(sm))  # the first point at the lowest smoothed value
    k_tail = max(3, min(50, n // 5))
    if n - j - 1 < k_tail:
        return []  # the minimum is too close to the end for a sustained rise
    m = sm[j]
    if len(fp[:j + 1]) >= 6:
        sigma, ks, baseline = diff_noise(xs[:j + 1]), RISE_SIGMA_BASE, True
    else:
        sigma, ks, baseline = diff_noise(xs), RISE_SIGMA_ALL, False
    need = max(RISE_REL * abs(m), min(ks * sigma, 0.5 * abs(m)))
    if need <= 0:
        return []
    level = median(xs[-k_tail:])
    floor = m + need / 2
    if level - m < need or min(sm[-k_tail:]) < floor:
        return []
    if level - m < TINY_REL * max(abs(x) for x in xs[:j + 1]):
        return []  # a sliver regained after a fall of orders of magnitude (0.25 → 4.6e-4 → 8.5e-4): noise at the floor
    on = n - 1
    while on > j and sm[on - 1] >= floor:
        on -= 1
    (im, pm), (io, po), pl = fp[j], fp[on], fp[-1][1]
    ipk, ppk = max(fp[on:], key=lambda t: t[1].value)
    if m > 0 and _came_back(xs[[t[0] for t in fp].index(ipk) + 1:], m, ppk.value):
        return []  # the excursion came back down: the last points sit near the minimum again (a bump, not divergence)
    big = (level - m) >= abs(m) or (sigma > 0 and (level - m) >= 8 * sigma)
    if not big and len({p.value for _i, p in fp[on:]}) == 1:
        return []  # a modest step up to one value repeated to every digit: a frozen loss (not_learning), not a rise
    conf = points_confidence(n, (0.75 if big else 0.6) if baseline else 0.5)  # a short series says less
    claim = (f"{name} rose from its minimum {fmt(pm.value)} ({where(pm, im)}) to a median of {fmt(level)} over "
             f"the last {k_tail} points (peak {fmt(ppk.value)} at {where(ppk, ipk)}); above {fmt(floor)} since "
             f"{where(po, io)}, a sustained rise, not a single spike")
    if before_nan:
        claim += f", before {before_nan}"
    if not baseline:
        claim += "; fewer than 6 points precede the minimum, so the noise is measured on the whole series"
    ev = [src(po, name), src(pm, name), src(ppk, name)] + ([src(pl, name)] if pl is not ppk else [])
    meaning = "The loss climbs away from its best value and stays up: training is diverging."
    if before_nan:
        return [Finding("metric.divergence", claim, DIRECT, conf, ev, suggests=None, role="cause", stage="runtime",
                        order=order_of(po, io), meaning=meaning + " It went non-finite afterwards.",
                        fixes=DIVERGENCE_FIXES)]
    return [Finding("metric.divergence", claim, DIRECT, conf, ev, suggests="divergence", role="symptom",
                    stage="runtime" if name == "loss" else "evaluation", order=order_of(po, io), meaning=meaning,
                    fixes=DIVERGENCE_FIXES)]


def _came_back(after: Sequence[float], m: float, peak: float) -> bool:
    """After its peak the series came down for good: every point of the later half of the descent below half the
    excursion, and the last three within RECOVERED of it and 1.5× the minimum (a wide bump, not a divergence)."""
    if len(after) < 4:
        return False
    half = after[len(after) // 2:]
    return (all(x <= m + 0.5 * (peak - m) for x in half)
            and all(x <= min(m + RECOVERED * (peak - m), 1.5 * m) for x in after[-3:]))


def spikes(points: Sequence[Point], name: str = "loss", limit: int = 3,
           skip_unrecovered: bool = False) -> List[Finding]:
    """Transient spikes against a rolling median / MAD baseline; the `limit` largest are reported."""
    fp = finite_points(points)
    n = len(fp)
    if n < 15:
        return []
    xs = [p.value for _, p in fp]
    rel = SPIKE_REL.get(name, 0.5)
    stride = max(1, n // 5000)  # huge series: refresh the baseline every `stride` points
    # positive series (losses, norms) have right-skewed noise: z-scores are taken on log values there
    lxs = [math.log(x) if x > 0 else None for x in xs]
    nones = list(accumulate((v is None for v in lxs), initial=0))  # nones[i]: how many of lxs[:i] are None
    flags: List[Tuple[int, float, float]] = []  # (position, baseline median, baseline σ)
    med = sig = lmed = lsig = 0.0
    use_log = False
    # the window xs[wlo:whi] (and its log values) kept sorted as it slides: median and MAD do not depend on the
    # order of their input, and sorting a sorted window (or its deviations, two monotone runs) is linear
    win: List[float] = []
    lwin: List[float] = []
    wlo = whi = 0
    for i in range(10, n):
        if (i - 10) % stride == 0:
            lo = max(0, i - SPIKE_WINDOW)
            for j in range(whi, i):
                insort(win, xs[j])
                if lxs[j] is not None:
                    insort(lwin, lxs[j])  # type: ignore[arg-type]
            for j in range(wlo, lo):
                del win[bisect_left(win, xs[j])]
                if lxs[j] is not None:
                    del lwin[bisect_left(lwin, lxs[j])]  # type: ignore[arg-type]
            wlo, whi = lo, i
            med = median(win)
            sig = max(MAD_SCALE * mad(win, med), 0.01 * abs(med), 1e-12)
            use_log = nones[i] == nones[lo]  # every value of the window is positive
            if use_log:
                lmed = median(lwin)
                lsig = max(MAD_SCALE * mad(lwin, lmed), 0.01)
        x = xs[i]
        if med <= 0 or x < med + rel * abs(med):
            continue
        lx = lxs[i]
        z = (lx - lmed) / lsig if use_log and lx is not None else (x - med) / sig
        if z >= SPIKE_Z:
            flags.append((i, med, sig))
    events: List[List[Tuple[int, float, float]]] = []
    for f in flags:
        if events and f[0] - events[-1][-1][0] <= 2:
            events[-1].append(f)
        else:
            events.append([f])
    found = []
    for ev in events:
        i0, med, sig = ev[0]
        i1 = ev[-1][0]
        ipk = max((e[0] for e in ev), key=lambda k: xs[k])
        back = next((k for k in range(i1 + 1, min(n, i1 + 1 + RECOVER_WITHIN))
                     if xs[k] <= med + max(3 * sig, 0.1 * abs(med))), None)
        found.append((xs[ipk] / med, i0, ipk, back, med, i1 - i0 + 1))
    found.sort(key=lambda t: -t[0])
    out: List[Finding] = []
    for ratio, i0, ipk, back, med, width in found[:limit]:
        if back is None and skip_unrecovered:
            continue
        (a, pa), pb = fp[i0], fp[ipk][1]
        what = "grad_norm" if name == "grad_norm" else name
        claim = f"{what} spiked {fmt(med)} → {fmt(pb.value)} (×{fmt(ratio)}) at {where(pa, a)}"
        ev_src = [src(pa, name)] + ([src(pb, name)] if pb is not pa else [])
        if back is not None:
            c, pc = fp[back]
            claim += f" and recovered to {fmt(pc.value)} by {where(pc, c)}"
            ev_src.append(src(pc, name))
        elif fp[-1][0] - fp[ipk][0] < RECOVER_WITHIN and ipk >= n - RECOVER_WITHIN:
            claim += "; the logged data ends before it could recover"
        else:
            claim += f" and had not come back within {RECOVER_WITHIN} points"
        if len(found) > limit and ratio == found[limit - 1][0]:
            claim += f" ({len(found)} spikes in all)"
        # a one- or two-point spike that came back (one bad batch, in a per-step or an epoch-averaged log) is a
        # trajectory observation (kind "trajectory"): decide never makes it the run's failure. A longer episode,
        # or one that did not come back, is kind "spike", which may count as divergence.
        # An episode that came back, after which the series ends below where it was before it (the run went on
        # learning past it), is transient whatever its width.
        benign = back is not None and (width <= SINGLE_BATCH or xs[-1] < med)
        out.append(Finding(f"metric.{'gradnorm' if name == 'grad_norm' else 'loss'}-spike", claim, DIRECT,
                           0.4 if back is not None else 0.5, ev_src, role="factor",
                           kind="trajectory" if benign else "",
                           stage="runtime" if name != "eval_loss" else "evaluation", order=order_of(pa, a),
                           meaning="A transient spike that recovered is a warning sign, not the failure."
                           if back is not None else "A spike that did not come back down."))
    return out


def _flat(xs: Sequence[float]) -> Optional[Tuple[float, float]]:
    """(level, robust σ) when the values are flat, else None."""
    n = len(xs)
    t = max(1, n // 3)
    level = median(xs)
    if level == 0:
        return None
    sigma = MAD_SCALE * mad(xs, level)
    trend = abs(median(xs[-t:]) - median(xs[:t]))
    if trend > FLAT_TREND * abs(level) + 0.5 * sigma or sigma > FLAT_SPREAD * abs(level):
        return None
    return level, sigma


def _flat_from_start(fp: Sequence[Tuple[int, Point]]) -> bool:
    """Flat over every logged point, logged from the start of training, with enough points to say so."""
    first = fp[0][1] if fp else None
    return (first is not None and len(fp) >= PLATEAU_POINTS and (first.step is None or first.step <= PLATEAU_FROM)
            and _flat([p.value for _, p in fp]) is not None)


def plateau(points: Sequence[Point], name: str = "loss",
            k_config: Optional[Tuple[int, Source]] = None) -> List[Finding]:
    """Flat loss: at chance level ln(K) (K from the config, else a common size), or flat all along."""
    fp = finite_points(points)
    n = len(fp)
    # A few points can still say "not learning": the loss sits exactly at a chance level thousands of steps
    # into training (e.g. 6.906 ≈ ln(1000) at iteration 78000). Only chance level counts then, tightly.
    late_few = 2 <= n < MIN_POINTS and fp[0][1].step is not None and fp[0][1].step >= 1000
    if n < MIN_POINTS and not late_few:
        return []
    seg = fp[n // 2:] if n >= 2 * MIN_POINTS else fp
    flat = _flat([p.value for _, p in seg])
    if late_few:
        vals = [p.value for _, p in seg]
        level = median(vals)
        if not level or (max(vals) - min(vals)) > 0.01 * abs(level):
            return []
        flat = (level, MAD_SCALE * mad(vals, level))
    if flat is None:
        return []
    level, sigma = flat
    # date the plateau where the loss became flat, not where the window looked at starts
    ks_here = [k_config[0]] if k_config is not None else [k for k in COMMON_K if at_chance(level, k, late_few)]
    windowed = seg is not fp
    band = max(3 * sigma, FLAT_TREND * abs(level) * 2, tolerance(ks_here[0], late_few) if ks_here else 0.0)
    seg = fp[flat_from([p.value for _, p in fp], level, band):] if not late_few else seg
    (a, pa), (b, pb) = seg[0], seg[-1]
    where_ = span(pa, a, pb, b)
    ev = [src(pa, name), src(pb, name)]
    fixes = ["overfit one small batch: the loss must fall far below this level within ~100 steps",
             "check that labels line up with inputs (shuffling, collate, label column) and num_classes",
             "check that the lr is non-zero and the optimizer holds the model's trainable parameters"]
    long_run = pb.step is not None and pb.step >= 1000
    base = f"{name} is flat at {level:.4g} (±{fmt(sigma)}) over {where_} ({len(seg)} points)"
    if k_config is not None:
        k, ksrc = k_config
        if at_chance(level, k, few_points=late_few):
            claim = f"{base} ≈ ln({k}) = {math.log(k):.4g}: chance level for the {k} classes in the config"
            return [Finding("metric.plateau-chance", claim, DIRECT, 0.8 if long_run else 0.65, ev + [ksrc], kind="chance",
                            suggests="stall", role="symptom", stage="runtime", order=order_of(pa, a), fixes=fixes,
                            meaning="The model predicts the uniform distribution: it is not learning.")]
    else:
        k = nearest_k(level, COMMON_K, few_points=late_few)
        guessed = "guessed from common sizes"
        if k is None and not late_few and _flat_from_start(fp):
            # K from the data: a loss flat from its first steps exactly (0.5 %) at ln(K) for a small integer K
            k, guessed = nearest_k(level, range(2, SMALL_K + 1), few_points=True), "inferred from the loss level"
        if k is not None:
            claim = (f"{base} ≈ ln({k}) = {math.log(k):.4g}, chance level if there are {k} classes "
                     f"(K {guessed}, not from the config)")
            return [Finding("metric.plateau-chance", claim, HYPOTHESIS, 0.55 if long_run else 0.45, ev, kind="chance",
                            suggests="stall", role="symptom", stage="runtime", order=order_of(pa, a), fixes=fixes,
                            meaning="A loss stuck at ln(K) means uniform predictions over K classes: not learning.")]
    if late_few:
        return []
    if windowed and _flat([p.value for _, p in fp]) is None:
        return []  # flat only at the end, not at chance: a converged run looks like this
    first = fp[0][1]
    if n < PLATEAU_POINTS or (first.step is not None and first.step > PLATEAU_FROM):
        return []  # a short or mid-run window: flat there says nothing about whether the run learns
    claim = f"{name} has not moved: flat at {fmt(level)} (±{fmt(sigma)}) over all {n} logged points ({span(fp[0][1], fp[0][0], pb, b)})"
    # steps that start at the start of training rule out a resumed, converged run: the loss never left its first
    # value. Without steps (epoch logs) that cannot be told, and the verdict stays weak.
    from_start = first.step is not None and pb.step is not None and pb.step >= 10 * max(1, first.step)
    return [Finding("metric.plateau", claim, DIRECT, 0.5 if from_start else 0.3, [src(fp[0][1], name), src(pb, name)],
                    suggests="stall",
                    role="symptom", stage="runtime", order=order_of(fp[0][1], fp[0][0]), fixes=fixes,
                    meaning="The loss is not decreasing and not at a known chance level: the model is stuck (or, "
                            "when the log has no steps to show it started at the start, a resumed, converged run).")]
