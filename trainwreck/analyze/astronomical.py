"""Astronomical loss values that keep coming back: a finite loss many orders of magnitude above the run's own
typical value, more than once.

A loss that is usually 0.05–0.09 and prints 6.9e15 at one step and 3.4e15 three steps later has not had a
noisy batch: no batch of a working model has a loss 10^17 times the typical one. Between the spikes it may
fall back to its usual level (the update that caused a spike can be undone by the next ones, or the spike is a
numerically broken forward pass), so neither a "sustained rise" nor "far above the first value" sees it when
the excerpt starts at a spike. Recurring values of this size are a numerically unstable optimisation:
divergence. One such value alone is left to the trajectory detectors (a single corrupt batch can do it);
`blowup.implausible` already covers a loss that climbed from its first value and stayed up.
"""
from __future__ import annotations

import math
from typing import List

from trainwreck.analyze.blowup import implausible
from trainwreck.analyze.trajectory_stats import at_step, few_words, fmt, median, points_confidence
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding, Point

ASTRONOMICAL = 1e6  # this many times the series' median: no batch of a working model is that far off
MIN_POINTS = 3
MIN_HITS = 2  # recurring: at least this many such values


def _finite(points: List[Point]) -> List[Point]:
    out: List[Point] = []
    for p in points:
        if not isinstance(p.value, (int, float)) or isinstance(p.value, bool):
            continue
        if not math.isfinite(p.value):
            return []  # the non-finite detectors read this series
        if out and p.step is not None and out[-1].step == p.step:
            out[-1] = p
        else:
            out.append(p)
    return out



def detect(bundle: Bundle) -> List[Finding]:
    out: List[Finding] = []
    for series in bundle.series.get("loss") or []:
        pts = _finite(series.points)
        if len(pts) < MIN_POINTS or implausible(pts) is not None:
            continue
        med = median([p.value for p in pts])
        if not med > 0:
            continue
        hits = [p for p in pts if p.value >= ASTRONOMICAL * med]
        if len(hits) < MIN_HITS:
            continue
        shown = ", ".join(f"{fmt(p.value)} at {at_step(p)}" for p in hits[:3]) + (" …" if len(hits) > 3 else "")
        out.append(Finding(
            id="metric.loss-astronomical", kind="divergence", label=DIRECT,
            confidence=points_confidence(len(pts), 0.8),
            claim=(f"loss reached {shown}: {len(hits)} values at least {fmt(ASTRONOMICAL)}× its median "
                   f"{fmt(med)} ({series.path}){few_words(len(pts))}; finite, but no batch of a working model is "
                   "that far off, and they recur: the optimisation is numerically unstable"),
            evidence=[p.source for p in hits[:3]], suggests="divergence", role="cause",
            stage="runtime", order=hits[0].step, step=hits[0].step, verify_skill="loss-spike-rollback",
            meaning="Loss values many orders of magnitude above the run's typical loss, again and again: unstable "
                    "training, the updates (or the forward pass) are numerically unstable and the run diverges.",
            fixes=["lower the learning rate 2–3×, or lengthen the warmup",
                   "clip gradients at 1.0 (max_grad_norm / gradient_clip_val)",
                   "look for a loss term that can explode (a log or division of a value near 0, an unnormalised "
                   "input or target) and guard it"]))
        break  # one series says it; the others would repeat it
    return out
