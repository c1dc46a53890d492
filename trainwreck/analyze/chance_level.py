"""Chance level, in one place: the loss a model that predicts uniformly over K classes gives is ln(K).

Every ln(K) comparison in trainwreck uses this module: the plateau detector (a flat loss at chance level), the
chance-level detector (loss at ln(K) and accuracy at 1/K) and the initial-loss check (`init-loss`). A level is
"at chance" when it lies within `tolerance(k)` of ln(K): 2% of ln(K), at least 0.05 nats, and a quarter of that
(0.5%) when only a few points are seen (a short series has to sit exactly on the level to say anything).
The initial loss of a fresh model is a looser question, so its band is a ratio: 0.8–1.25 × ln(K).
"""
from __future__ import annotations

import math
from typing import Dict, Iterable, Optional, Tuple

from trainwreck.model import Source

CHANCE_REL = 0.02  # a level within 2% of ln(K) …
CHANCE_ABS = 0.05  # … or within 0.05 nats of it (small K), is chance level
FEW_POINTS_SHARE = 0.25  # from a few points only: a quarter of that tolerance
INIT_BAND = (0.8, 1.25)  # first loss / ln(K) of a freshly initialised model


def expected_loss(k: int) -> float:
    """Cross-entropy of uniform predictions over k classes: ln(k)."""
    return math.log(k)


def tolerance(k: int, few_points: bool = False) -> float:
    """How far from ln(k) a loss level may be and still be called chance level."""
    if few_points:
        return FEW_POINTS_SHARE * CHANCE_REL * math.log(k)
    return max(CHANCE_REL * math.log(k), CHANCE_ABS)


def at_chance(level: float, k: int, few_points: bool = False) -> bool:
    """True when `level` is ln(k) within the tolerance (k ≥ 2)."""
    return k >= 2 and math.isfinite(level) and abs(level - math.log(k)) <= tolerance(k, few_points)


def nearest_k(level: float, ks: Iterable[int], few_points: bool = False) -> Optional[int]:
    """Among candidate class counts, the one whose ln(K) `level` sits at, when any."""
    near = [(abs(level - math.log(k)), k) for k in ks if at_chance(level, k, few_points)]
    return min(near)[1] if near else None


STILL_AT_CHANCE_POINTS = 3  # a series this long whose last value is still ln(K) never left chance level


def initial_loss_verdict(first: float, k: int, last: Optional[float] = None, n: int = 1,
                         last_at: str = "") -> Dict[str, object]:
    """Is a first logged loss what a freshly initialised model over k classes gives? ok True/False with why.

    With the last logged value of a series of `n` points: a loss that starts at ln(k) and is still there at
    its last point is not 'OK' — the wiring may be right, but the model never learned anything."""
    exp = expected_loss(k)
    ratio = first / exp
    out: Dict[str, object] = {"expected": round(exp, 4), "k": k, "ratio": round(ratio, 3)}
    lo, hi = INIT_BAND
    if lo <= ratio <= hi and last is not None and n >= STILL_AT_CHANCE_POINTS and at_chance(last, k):
        out.update(ok=False, still_at_chance=True,
                   verdict=f"first loss {first:.4g} matches ln({k}) = {exp:.4g} as a fresh model's should, but the "
                   f"loss is still {last:.4g} ≈ ln({k}) at its last logged point{f' ({last_at})' if last_at else ''}"
                   f", {n} points later: it never left chance level, the model is not learning")
    elif lo <= ratio <= hi:
        out.update(ok=True, verdict=f"first loss {first:.4g} matches ln({k}) = {exp:.4g}: initialisation and "
                   "loss wiring look right")
    elif ratio < lo:
        out.update(ok=False, verdict=f"first loss {first:.4g} is well below ln({k}) = {exp:.4g}: the first logged "
                   "step may be late (already learning), labels may leak into inputs, or the loss is not a mean "
                   f"cross-entropy over {k} classes")
    else:
        out.update(ok=False, verdict=f"first loss {first:.4g} is {ratio:.1f}× ln({k}) = {exp:.4g}: initial logits "
                   "are too large (init scale, missing final norm, temperature) or the loss is summed, not averaged")
    return out


MAX_CLASSES = 1e9  # the largest vocabularies hold ~1e6 tokens; more is a corrupt or hostile value
CLASS_KEYS = ("num_classes", "vocab_size", "n_classes", "num_labels", "n_vocab", "padded_vocab_size")


def _count(raw: str) -> Optional[int]:
    try:
        v = float(raw) if len(raw) < 100 else math.inf
    except ValueError:
        return None
    return int(v) if 2 <= v <= MAX_CLASSES and v == int(v) else None


def class_count_refused(bundle) -> Optional[str]:
    """Why the config's number of classes / vocabulary was not used (not a count: 1e999, 0, -1, "ten"), or None."""
    e = bundle.config(*CLASS_KEYS)
    if e is None:
        return None
    raw = str(e.value).strip("'\"")
    if _count(raw) is not None or raw.lower() in ("", "null", "none", "~") or raw.startswith("${"):
        return None  # a count, or a value left unset: nothing to say
    return (f"{e.key} = {raw[:40]} ({e.source().cite()}) is not a number of classes (an integer from 2 to "
            f"{MAX_CLASSES:.0e})")


def class_count(bundle) -> Optional[Tuple[int, Source]]:
    """K (number of classes / vocabulary) from the config, with its source; a value that is no count gives a
    note and None."""
    e = bundle.config(*CLASS_KEYS)
    if e is None:
        return None
    k = _count(str(e.value).strip("'\""))
    if k is None:
        refused = class_count_refused(bundle)
        if refused:
            bundle.note(f"{refused}; not used for the expected initial loss")
        return None
    return k, e.source()
