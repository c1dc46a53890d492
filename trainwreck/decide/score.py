"""Score the classes the findings suggest and pick the run's classification, then its confidence.

The first real failure wins: a NaN (or divergence) that a crash or OOM follows is that NaN's run; when two
classes score alike, the more specific one wins (PRECEDENCE)."""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Tuple

from trainwreck.collect.bundle import Bundle
from trainwreck.decide.timeline import StepIndex, earliest
from trainwreck.model import Finding

ROLE_WEIGHT = {"cause": 1.0, "symptom": 0.9, "terminal": 0.45, "factor": 0.0, "context": 0.0}
# When two classes score alike, the one earlier in this list is the more specific diagnosis.
PRECEDENCE = ["NaN", "OOM", "crash", "divergence", "stall"]
UNCLEAR_BELOW = 0.3
NAN_MESSAGE_WITH_FINITE_LOSS = 0.6  # a NaN message while the logged loss stays finite weighs this much


def strength(f: Finding) -> float:
    return max(0.0, min(1.0, f.confidence)) * ROLE_WEIGHT.get(f.role, 0.0)


def loss_stays_finite(bundle: Bundle) -> Optional[bool]:
    """Cross-check a NaN message against the loss trajectory: True when every logged loss is finite."""
    series = bundle.best_series("loss")
    if not series or not series.points:
        return None
    return all(math.isfinite(p.value) for p in series.points)


def score(bundle: Bundle, findings: List[Finding]) -> Tuple[Dict[str, float], Dict[str, List[Finding]]]:
    by_class: Dict[str, List[Finding]] = {}
    for f in findings:
        if f.suggests and ROLE_WEIGHT.get(f.role, 0) > 0:
            by_class.setdefault(f.suggests, []).append(f)
    # terminal events only count fully when nothing else explains the run
    non_terminal_classes = {c for c, fs in by_class.items() if any(f.role != "terminal" and strength(f) >= 0.4
                                                                    for f in fs)}
    finite_loss = loss_stays_finite(bundle)
    scores: Dict[str, float] = {}
    for cls, fs in by_class.items():
        best = 0.0
        for f in fs:
            s = strength(f)
            if f.role == "terminal" and not (non_terminal_classes - {cls}):
                s = max(0.0, min(1.0, f.confidence)) * 0.85  # the only failure we can see
            if cls == "NaN" and f.signature and finite_loss:
                s *= NAN_MESSAGE_WITH_FINITE_LOSS  # transient, or skipped steps: the trajectory says otherwise
            best = max(best, s)
        # corroboration: several independent findings for one class
        n_indep = len({f.id for f in fs if strength(f) >= 0.3})
        scores[cls] = min(1.0, best + 0.05 * max(0, n_indep - 1))
    return scores, by_class


def _strong_earliest(fs: List[Finding], idx: StepIndex) -> Optional[float]:
    return earliest([f for f in fs if strength(f) >= 0.5], idx)


def pick(scores: Dict[str, float], by_class: Dict[str, List[Finding]], idx: StepIndex) -> str:
    if not scores or max(scores.values()) < UNCLEAR_BELOW:
        return "unclear"
    top = max(scores.values())
    # The first real failure wins: a NaN (or divergence) that a crash or OOM follows is that NaN's run.
    for early in ("NaN", "divergence"):
        if scores.get(early, 0.0) < 0.55:
            continue
        t0 = _strong_earliest(by_class.get(early, []), idx)
        rivals = [c for c, v in scores.items() if c != early and v > scores[early]]
        if all((lambda t: t is None or t0 is None or t0 <= t)(_strong_earliest(by_class.get(c, []), idx))
               for c in rivals):
            if early == "divergence" and scores.get("NaN", 0.0) >= 0.55:
                continue  # a divergence that ends in NaN is a NaN run: decided above
            return early
    close = [c for c in PRECEDENCE if c in scores and scores[c] >= top - 0.08]
    return close[0] if close else max(scores, key=scores.get)


def confidence(cls: str, scores: Dict[str, float], by_class: Dict[str, List[Finding]], causes: List[Finding],
               idx: StepIndex) -> float:
    """The winner's score, less when a rival class is close, more when trajectory and log agree."""
    if cls == "unclear":
        return round(max(scores.values(), default=0.1), 2)
    conf = scores.get(cls, 0.0)
    # rivals that came later are consequences (see pick), not competing explanations
    t_cls = _strong_earliest(by_class.get(cls, []), idx)
    rivals = sorted((v for k, v in scores.items() if k != cls and not (
        t_cls is not None and (_strong_earliest(by_class.get(k, []), idx) or -1) > t_cls)), reverse=True)
    if rivals:
        conf -= max(0.0, 0.15 - (conf - rivals[0])) if rivals[0] > 0.3 else 0.0
    if len({f.from_metrics for f in causes}) == 2:
        conf += 0.05
    return max(0.05, min(0.97, conf))


def order_key(f: Finding) -> Tuple[int, float]:
    return (0 if f.order is not None else 1, f.order if f.order is not None else 0.0)


def rank_causes(cls: str, by_class: Dict[str, List[Finding]]) -> Tuple[Optional[Finding], List[Finding]]:
    """The primary cause (the first real failure: among strong causes of the class, the earliest; a terminal
    event only when nothing else is strong) and the class's other findings, strongest first."""
    cands = sorted(by_class.get(cls, []), key=lambda f: (-strength(f), order_key(f)))
    strong = [f for f in cands if strength(f) >= (strength(cands[0]) - 0.1)] if cands else []
    primary = min(strong, key=order_key) if strong else None
    if primary is not None and primary.role == "terminal":
        non_term = [f for f in strong if f.role != "terminal"]
        primary = non_term[0] if non_term else primary
    return primary, ([primary] if primary else []) + [f for f in cands if f is not primary]
