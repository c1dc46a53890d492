"""Short-series blow-ups: a gradient norm or loss that jumped by orders of magnitude and stayed there.

The trajectory detectors need enough points for robust statistics; real reports often quote only a
handful of steps around the failure (`grad_norm 0.3 → 63 → 156 → 290 → 372`). A sustained jump of two or
more orders of magnitude in a finite series is a divergence whatever the number of points.
"""
from __future__ import annotations

import math
from typing import List

from trainwreck.analyze.trajectory_stats import median  # statistics.median's result, without its imports
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding

GRAD_FACTOR = 50.0  # last point vs the baseline
LOSS_FACTOR = 3.0
HUGE_GRAD = 1e8  # finite gradient norms this large mean the run has already blown up


def _finite(series):
    """Finite points in order; one per step (a step printed by two log formats counts once)."""
    if not series:
        return []
    out = []
    for p in series.points:
        if not (isinstance(p.value, float) and math.isfinite(p.value)):
            continue
        if out and p.step is not None and out[-1].step == p.step:
            out[-1] = p
        else:
            out.append(p)
    return out


def detect(bundle: Bundle) -> List[Finding]:
    out: List[Finding] = []
    g = bundle.best_series("grad_norm")
    loss = bundle.best_series("loss")
    for s in (g, loss):
        if s and any(not math.isfinite(p.value) for p in s.points):
            return []  # a non-finite value makes this a NaN story, told by the trajectory detectors
    gp = _finite(g)
    if 3 <= len(gp) < 40:
        base = median(p.value for p in gp[: max(1, len(gp) // 3)])
        tail = gp[-3:] if len(gp) >= 5 else gp[-2:]
        if base > 0 and gp[-1].value >= GRAD_FACTOR * base and all(p.value >= 10 * base for p in tail):
            lp = _finite(loss)
            rose = bool(lp) and min(p.value for p in lp) > 0 and lp[-1].value >= 1.5 * min(p.value for p in lp)
            first = next(p for p in gp if p.value >= 10 * base)
            claim = (f"grad_norm jumped {base:.3g} → {gp[-1].value:.3g} (×{gp[-1].value / base:.3g}) from "
                     f"{_at(first)} and stayed up" + (f"; loss rose {min(p.value for p in lp):.3g} → "
                                                      f"{lp[-1].value:.3g}" if rose else ""))
            out.append(Finding(
                id="metric.gradnorm-explosion", claim=claim, label=DIRECT, confidence=0.7 if rose else 0.55,
                evidence=[first.source, gp[-1].source] + ([lp[-1].source] if rose else []), suggests="divergence",
                role="cause", stage="runtime", order=first.step, kind="divergence",
                fixes=["clip gradients at 1.0 (max_grad_norm / gradient_clip_val)",
                       "lower the learning rate 2–3× for this phase, or lengthen warmup",
                       "rewind to the last checkpoint before the jump and skip the batches that preceded it"],
                verify_skill="loss-spike-rollback",
                meaning="Gradients grew by orders of magnitude and did not come back: the optimisation diverged."))
    if not out and len(gp) >= 2:
        recent = sorted(p.value for p in gp[-3:])
        if recent[len(recent) // 2] >= HUGE_GRAD:
            first = next(p for p in gp if p.value >= HUGE_GRAD)
            out.append(Finding(
                id="metric.gradnorm-huge", claim=f"grad_norm is astronomically large: {first.value:.3g} at "
                f"{_at(first)}, {gp[-1].value:.3g} at {_at(gp[-1])} (finite, but no healthy run has norms "
                f"near {HUGE_GRAD:.0e})", label=DIRECT, confidence=0.6, evidence=[first.source, gp[-1].source],
                suggests="divergence", role="cause", stage="runtime", order=first.step, kind="divergence",
                verify_skill="loss-spike-rollback",
                fixes=["clip gradients at 1.0", "lower the learning rate; check for a missing normalisation layer or "
                       "an unscaled loss (sum instead of mean)"]))
    lp = _finite(loss)
    if not out and 3 <= len(lp) < 8:
        lo = min(p.value for p in lp)
        i_lo = min(range(len(lp)), key=lambda i: lp[i].value)
        after = lp[i_lo + 1:]
        jump = len(after) >= 2 and lo > 0 and all(p.value >= LOSS_FACTOR * lo for p in after[-2:])
        creep = (len(after) >= 3 and all(b.value > a.value for a, b in zip(after, after[1:]))
                 and lo > 0 and after[-1].value >= 1.1 * lo)
        if jump or creep:
            how = (f"and stayed ≥ {LOSS_FACTOR:g}× its minimum" if jump
                   else f"rising at every one of the last {len(after)} points")
            out.append(Finding(
                id="metric.loss-blowup", claim=f"loss rose from {lo:.4g} ({_at(lp[i_lo])}) to {lp[-1].value:.4g} "
                f"({_at(lp[-1])}) {how}", label=DIRECT, confidence=0.55 if jump else 0.45,
                evidence=[lp[i_lo].source, lp[-1].source], suggests="divergence", role="cause", stage="runtime", kind="divergence",
                order=after[0].step, verify_skill="loss-spike-rollback",
                fixes=["lower the learning rate 2–3×", "clip gradients at 1.0"]))
    if not out and len(lp) == 2 and lp[0].value > 0 and lp[1].value >= 2 * lp[0].value:
        acc = _finite(bundle.best_series("accuracy"))
        collapsed = len(acc) >= 2 and acc[0].value > 0 and acc[-1].value <= 0.5 * acc[0].value
        if collapsed or lp[1].value >= 4 * lp[0].value:
            out.append(Finding(
                id="metric.loss-blowup", claim=f"loss jumped {lp[0].value:.4g} → {lp[1].value:.4g}"
                + (f" while accuracy fell {acc[0].value:.4g} → {acc[-1].value:.4g}" if collapsed else ""),
                label=DIRECT, confidence=0.45 if collapsed else 0.4,
                evidence=[lp[0].source, lp[1].source] + ([acc[-1].source] if collapsed else []),
                suggests="divergence", role="cause", kind="divergence",
                stage="runtime", order=lp[1].step, verify_skill="loss-spike-rollback",
                fixes=["lower the learning rate 2–3×", "clip gradients at 1.0"]))
    return out


def _at(p) -> str:
    return f"step {p.step}" if p.step is not None else p.source.cite()
