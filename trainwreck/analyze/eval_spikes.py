"""A validation loss that blows up again and again: unstable training, even when it comes back each time.

A training loss spike can be one bad batch; a validation loss is the model's loss averaged over a whole held-out
set, so a validation loss several times its best so far means the weights themselves were broken at that
evaluation. Once is a warning (a factor); two or more separate blow-ups of at least SPIKE× the best so far are a
run whose optimisation keeps diverging and recovering (a learning rate too high for the model and batch, no
warm-up, no clipping) — divergence, whatever the last value.
"""
from __future__ import annotations

from typing import List

from trainwreck.analyze.not_learning import finite_points
from trainwreck.analyze.trajectory_stats import at_step, fmt, points_confidence
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding

SPIKE = 5.0  # a validation loss at least this many times its best so far is a blow-up
MIN_EVALS = 5  # evaluations needed before blow-ups are counted
MIN_EPISODES = 2  # separate blow-ups that make the run unstable (one is a factor)



def detect(bundle: Bundle) -> List[Finding]:
    pts = finite_points(bundle.best_series("eval_loss"))
    if len(pts) < MIN_EVALS or any(p.value <= 0 for p in pts):
        return []
    episodes = []  # (best before it, the peak point) for each run of evaluations at ≥ SPIKE × the best so far
    best = pts[0].value
    inside = False
    for p in pts[1:]:
        if p.value >= SPIKE * best:
            if not inside:
                episodes.append([best, p])
            elif p.value > episodes[-1][1].value:
                episodes[-1][1] = p
            inside = True
        else:
            inside = False
            best = min(best, p.value)
    if not episodes:
        return []
    shown = ", ".join(f"{fmt(b)} → {fmt(p.value)} at {at_step(p)}" for b, p in episodes[:4])
    more = f" and {len(episodes) - 4} more" if len(episodes) > 4 else ""
    last = pts[-1]
    unstable = len(episodes) >= MIN_EPISODES
    claim = (f"eval_loss blew up to ≥{SPIKE:g}× its best so far {len(episodes)} time{'s' if len(episodes) > 1 else ''} "
             f"({shown}{more}); it is {fmt(last.value)} at its last evaluation ({at_step(last)})")
    ev = [episodes[0][1].source] + [e[1].source for e in episodes[1:3]] + [last.source]
    return [Finding(
        "metric.eval-loss-blowups" if unstable else "metric.eval-loss-blowup", claim, DIRECT,
        points_confidence(len(pts), 0.6) if unstable else 0.35, ev,
        suggests="divergence" if unstable else None, role="cause" if unstable else "factor",
        stage="runtime", order=episodes[0][1].step, kind="divergence" if unstable else "trajectory",
        verify_skill="debug",
        fixes=["lower the peak learning rate (halve it) or lengthen the warm-up",
               "clip gradients: max_grad_norm=1.0 (HF Trainer) / gradient_clip_val=1.0 (Lightning) / "
               "torch.nn.utils.clip_grad_norm_(params, 1.0)"],
        meaning="The validation loss is averaged over the whole held-out set: at each blow-up the weights "
                "themselves were broken, not one batch. Repeated blow-ups that recover are optimisation that "
                "keeps diverging, typically a learning rate too high for the model and batch.")]
