"""Chance level seen from two sides: a loss at ln(K) *and* an accuracy at 1/K is a model that predicts nothing.

The plateau detector needs a long, flat loss series; epoch-level logs often give four or five points. When the
loss (train or validation) sits at ln(K) and the accuracy at the matching 1/K, few points are enough.
"""
from __future__ import annotations

import math
from typing import List, Tuple

from trainwreck.analyze.chance_level import class_count, expected_loss, nearest_k, tolerance
from trainwreck.analyze.trajectory_shape import COMMON_K
from trainwreck.analyze.trajectory_stats import at_step, epochs_by_line, flat_from, late, median, points_confidence
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding


def _last(bundle: Bundle, name: str, n: int = 5):
    s = bundle.best_series(name)
    if not s:
        return []
    if any(not math.isfinite(p.value) for p in s.points):
        return None
    return s.points[-n:]



def detect(bundle: Bundle) -> List[Finding]:
    cfg = class_count(bundle)
    train_acc = _last(bundle, "accuracy")
    held_out = _last(bundle, "val_acc") or _last(bundle, "test_acc")
    # K from the data when the config does not give it: the accuracy's 1/K (the loss must then sit at ln K too)
    k_acc = None
    for series in (train_acc, held_out):
        if series and k_acc is None:
            a = median(p.value for p in series)
            frac = a / 100.0 if max(p.value for p in series) > 1.5 else a
            if 1e-6 <= frac <= 0.5:  # up to a vocabulary of a million: the loss must sit at ln(1/frac) too
                k_acc = int(round(1.0 / frac))
    ks: Tuple[int, ...] = (cfg[0],) if cfg else COMMON_K + ((k_acc,) if k_acc and k_acc >= 2 else ())
    epochs = epochs_by_line(bundle)
    for name in ("eval_loss", "loss"):
        pts = _last(bundle, name)
        if not pts or len(pts) < 2:
            continue
        acc = (held_out or train_acc) if name == "eval_loss" else (train_acc or held_out)  # the same split first
        level = median(p.value for p in pts)
        k = nearest_k(level, ks)
        if k is None:
            continue
        flat = pts[-1].value >= 0.99 * pts[0].value
        acc_ok = False
        if acc:
            a = median(p.value for p in acc)
            chance = 100.0 / k if max(p.value for p in acc) > 1.5 else 1.0 / k
            acc_ok = abs(a - chance) <= max(0.25 * chance, 0.01 if chance < 1 else 1.0)
        # at step 10 a loss of ln(K) is expected; at step 1000 or after two epochs it is not
        if not (acc_ok or (flat and len(pts) >= 3 and late(pts[-1], epochs))):
            continue
        # the stretch at ln(K) that ends the series starts where the loss reached it, not at the last few points
        whole = [p for p in bundle.best_series(name).points if math.isfinite(p.value)]
        start = whole[flat_from([p.value for p in whole], expected_loss(k), tolerance(k))]
        n_at = len(whole) - whole.index(start)
        claim = (f"{name} stays at {level:.4g} ≈ ln({k}) = {expected_loss(k):.4g}"
                 + (f" from {at_step(start)} to {at_step(whole[-1])} ({n_at} points)" if start is not pts[-1] else "")
                 + (f" and accuracy at {median(p.value for p in acc):.4g} ≈ chance (1/{k})" if acc_ok else "")
                 + f": the model predicts uniformly over {k} classes, it is not learning"
                 + ("" if cfg else f" (K={k} inferred from the {'accuracy' if k == k_acc and acc_ok else 'loss'}, "
                                   "not from the config)"))
        ev = [start.source, pts[-1].source] + ([acc[-1].source] if acc_ok else []) + ([cfg[1]] if cfg else [])
        conf = max(0.45, points_confidence(n_at, 0.75 if acc_ok else 0.55))
        return [Finding(
            id="metric.chance-level", claim=claim, label=DIRECT, confidence=conf, evidence=ev,
            suggests="stall", role="symptom", stage="runtime", order=start.step, verify_skill="init-loss-check",
            kind="chance",
            fixes=["overfit one small batch: the loss must fall far below ln(K) within ~100 steps",
                   "check that labels line up with inputs (shuffle, collate, label column) and the number of classes",
                   "check the lr is non-zero and the optimizer holds the model's trainable parameters"],
            meaning="Cross-entropy at ln(K) with accuracy at 1/K: uniform predictions.")]
    return []
