"""A language model worse than guessing uniformly: a per-token loss whose perplexity exceeds any vocabulary.

A per-token cross-entropy of ln(V) is a model that spreads its probability evenly over a vocabulary of V tokens;
real vocabularies stop at a few hundred thousand tokens (ln 256,000 = 12.45). When the log prints a perplexity
beside the loss and the two agree (ppl = e^loss: the loss is a per-token cross-entropy, not a sum or a regression
loss), a loss that stays above ln(MAX_VOCAB) is a model worse than uniform over any vocabulary: its weights have
diverged (a learning rate far too high, typically), whatever the loss did before. A loss logged without its
perplexity says nothing here: an MSE or a summed loss can be that large and healthy.
"""
from __future__ import annotations

import math
from typing import List, Optional

from trainwreck import lazy_re
from trainwreck.analyze.not_learning import finite_points
from trainwreck.analyze.trajectory_stats import fmt, points_confidence
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding, Point

MAX_VOCAB = 1_000_000  # no tokenizer's vocabulary is larger: ln(1e6) = 13.8 nats a token is worse than uniform
MIN_POINTS = 3  # the last this many points must all be that high
_PPL = lazy_re(r"(?i)\b(?:ppl|perplexity)\b[\s:=|]*([0-9][0-9.,]*(?:e[+-]?\d+)?)")


def _ppl(p: Point) -> Optional[float]:
    m = _PPL.search(p.source.text[-2000:]) if p.source is not None and p.source.text else None
    if m is None:
        return None
    try:
        return float(m.group(1).replace(",", ""))
    except ValueError:
        return None


def detect(bundle: Bundle) -> List[Finding]:
    pts = finite_points(bundle.best_series("loss"))
    floor = math.log(MAX_VOCAB)
    best: List[Point] = []
    run: List[Point] = []
    for p in pts:  # the longest stretch of consecutive points above the floor
        run = run + [p] if p.value > floor else []
        if len(run) > len(best):
            best = run
    if len(best) < MIN_POINTS:
        return []
    checked = [(p, _ppl(p)) for p in best[-MIN_POINTS:]]
    if not all(q is not None and q > 0 and abs(math.log(q) - p.value) <= 0.05 * p.value for p, q in checked):
        return []  # the printed perplexity must be e^loss: only then is the loss a per-token cross-entropy
    top = max(best, key=lambda x: x.value)
    end = pts[-1]
    claim = (f"loss stays above ln(1,000,000) = {floor:.1f} nats a token for {len(best)} consecutive points "
             f"({best[0].source.cite()} to {best[-1].source.cite()}; peak {fmt(top.value)}, perplexity "
             f"{math.exp(min(top.value, 700)):.3g}): the model is worse than a uniform guess over any vocabulary"
             + (f"; it is {fmt(end.value)} at the last point" if end is not best[-1] else ""))
    return [Finding(
        "metric.worse-than-uniform", claim, DIRECT, points_confidence(len(best), 0.7), [best[0].source,
                                                                                        top.source],
        suggests="divergence", role="cause", stage="runtime", order=best[0].step, kind="divergence",
        verify_skill="debug",
        fixes=["lower the learning rate by 10x (a plain-SGD RNN at lr 20 needs gradient clipping to stay stable)",
               "clip gradients: torch.nn.utils.clip_grad_norm_(params, 0.25–1.0)"],
        meaning="A per-token cross-entropy above ln(vocabulary size) is worse than predicting every token with equal "
                "probability: the weights have diverged.")]
