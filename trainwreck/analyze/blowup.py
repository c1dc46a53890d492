"""Short-series blow-ups: a gradient norm or loss that jumped by orders of magnitude and stayed there.

The trajectory detectors need enough points for robust statistics; real reports often quote only a
handful of steps around the failure (`grad_norm 0.3 → 63 → 156 → 290 → 372`). A sustained jump of two or
more orders of magnitude in a finite series is a divergence whatever the number of points.
"""
from __future__ import annotations

import math
from statistics import median
from typing import List

from ..bundle import Bundle
from ..model import DIRECT, Finding

GRAD_FACTOR = 50.0  # last point vs the baseline
LOSS_FACTOR = 3.0


def _finite(series):
    return [p for p in series.points if isinstance(p.value, float) and math.isfinite(p.value)] if series else []


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
            claim = (f"grad_norm jumped {base:.3g} → {gp[-1].value:.3g} (×{gp[-1].value / base:.3g}) from step "
                     f"{first.step} and stayed up" + (f"; loss rose {min(p.value for p in lp):.3g} → "
                                                      f"{lp[-1].value:.3g}" if rose else ""))
            out.append(Finding(
                id="metric.gradnorm-explosion", claim=claim, label=DIRECT, confidence=0.7 if rose else 0.55,
                evidence=[first.source, gp[-1].source] + ([lp[-1].source] if rose else []), suggests="divergence",
                role="cause", stage="runtime", order=first.step,
                fixes=["clip gradients at 1.0 (max_grad_norm / gradient_clip_val)",
                       "lower the learning rate 2–3× for this phase, or lengthen warmup",
                       "rewind to the last checkpoint before the jump and skip the batches that preceded it"],
                verify_skill="loss-spike-rollback",
                meaning="Gradients grew by orders of magnitude and did not come back: the optimisation diverged."))
    lp = _finite(loss)
    if not out and 3 <= len(lp) < 8:
        lo = min(p.value for p in lp)
        i_lo = min(range(len(lp)), key=lambda i: lp[i].value)
        after = lp[i_lo + 1:]
        if lo > 0 and len(after) >= 2 and all(p.value >= LOSS_FACTOR * lo for p in after):
            out.append(Finding(
                id="metric.loss-blowup", claim=f"loss rose from {lo:.4g} (step {lp[i_lo].step}) to "
                f"{lp[-1].value:.4g} (step {lp[-1].step}) and stayed ≥ {LOSS_FACTOR:g}× its minimum",
                label=DIRECT, confidence=0.5, evidence=[lp[i_lo].source, lp[-1].source], suggests="divergence",
                role="cause", stage="runtime", order=after[0].step, verify_skill="loss-spike-rollback",
                fixes=["lower the learning rate 2–3×", "clip gradients at 1.0"]))
    return out
