"""What the rest of a run did while one loss rose: the context that decides whether a rise is a failure.

A rising curve is read against the run's other curves over the same span (from the point where the rise starts
to the end of the log):
- the total (primary) loss falling while one of its components rises is a trade-off between the terms (a VAE's
  KL, a detector's box term while classification improves), not divergence;
- a task metric (an accuracy, an mAP, an F1, an episode reward) that improves over the span says the model is
  learning: a loss rise beside it is at most a note. In RL this is expected of a value / critic loss: its
  targets are the returns, which grow as the policy improves.
Spans are matched by step when both series carry steps, else by line within one file; a series that cannot be
matched to the span says nothing.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from trainwreck.analyze.trajectory_stats import diff_noise, finite_points, fmt, median, where
from trainwreck.collect.metricnames import role
from trainwreck.model import Point

MIN_AFTER = 3  # points of the other series inside the span
MIN_GAIN_RANGE = 0.02  # an improvement must exceed 2 % of the series' range …
MIN_GAIN_NOISE = 2.0  # … and twice its point-to-point noise
_VALUE_WORDS = ("value", "vf", "critic", "qf", "q_loss")


def _split(pts: Sequence[Point], start: Point) -> Optional[int]:
    """Index of the first point of `pts` at or after `start` (by step, else by line in the same file)."""
    if start.step is not None and pts and all(p.step is not None for p in pts):
        return next((i for i, p in enumerate(pts) if p.step >= start.step), None)  # type: ignore[operator]
    s = start.source
    if s is None or s.line is None or not s.path:
        return None
    if not all(p.source is not None and p.source.path == s.path and p.source.line is not None for p in pts):
        return None
    return next((i for i, p in enumerate(pts) if p.source.line >= s.line), None)  # type: ignore[union-attr]


def change_over(pts: Sequence[Point], start: Point, higher_better: bool) -> Optional[Tuple[str, str, float, float]]:
    """(where the span starts, where it ends, the value at its start, the level reached at the end) when the series
    improved over the span from `start` to its end by more than its noise and 2 % of its range; else None."""
    fin = [p for _i, p in finite_points(pts)]
    if len(fin) < MIN_AFTER + 1:
        return None
    k = _split(fin, start)
    if k is None or len(fin) - k < MIN_AFTER:
        return None
    xs = [p.value for p in fin]
    ref = median(xs[max(0, k - 1):k + 2])
    after = xs[k:]
    end = median(after[-max(MIN_AFTER, len(after) // 5):])
    gain = (end - ref) if higher_better else (ref - end)
    need = max(MIN_GAIN_RANGE * (max(xs) - min(xs)), MIN_GAIN_NOISE * diff_noise(xs))
    if gain <= 0 or gain <= need:
        return None
    return where(fin[k], k), where(fin[-1], len(fin) - 1), fin[k].value, end


def _task_names(bundle) -> List[str]:
    return sorted(n for n in bundle.series if n == "accuracy" or role(n) in ("task", "reward"))


def task_improves(bundle, start: Point) -> Optional[str]:
    """'ep reward rose from -42 (line 96) to 79 (line 149)' for the first task metric that improved over the
    span from `start` to its end; None when none did (or none can be matched to the span)."""
    for name in _task_names(bundle):
        s = bundle.best_series(name)
        got = change_over(s.points, start, higher_better=True) if s is not None else None
        if got is not None:
            a, b, first, end = got
            return f"{name} improved over the same span, from {fmt(first)} ({a}) to {fmt(end)} by {b}"
    return None


def total_improves(loss: Sequence[Point], start: Point) -> Optional[str]:
    """'the total loss fell from 2.53 (step 79) to 1.04 by step 3999' when it fell over the span."""
    got = change_over(loss, start, higher_better=False)
    if got is None:
        return None
    a, b, first, end = got
    return f"the total loss fell over the same span, from {fmt(first)} ({a}) to {fmt(end)} by {b}"


def is_value_loss(name: str) -> bool:
    """A value-function / critic loss (PPO's value_loss / vf_loss, SAC's qf_loss, a critic's loss)."""
    low = name.lower()
    return any(w in low for w in _VALUE_WORDS)


def start_of(f) -> Optional[Point]:
    """The point a divergence finding's rise starts from (its minimum: the finding's second evidence)."""
    if len(f.evidence) < 2:
        return None
    e = f.evidence[1]
    return Point(e.step, e.value, e) if isinstance(e.value, float) else None


def demote(f, name: str, why: str, verdict: str = "the run is learning") -> None:
    """Make a rise a low-confidence note: the other curves say the run is learning (or, `verdict`, why else the rise
    does not make the run diverge)."""
    f.role, f.suggests, f.fixes, f.kind = "factor", None, [], "trajectory"  # an observation, never the verdict
    f.confidence = min(f.confidence, 0.3)
    if is_value_loss(name) and why.startswith("reward"):
        why += ("; in RL the value targets are the returns, so a value loss that grows while the reward climbs "
                "is expected")
    f.claim += f"; {why}: {verdict}, so this rise is a note, not divergence"
