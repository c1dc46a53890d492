"""Canonical metric names, so that `train/loss`, `lm loss` and `training_loss` land in one series."""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

from trainwreck import lazy_re

_CANON = [
    ("eval_loss", lazy_re(r"^(?:eval|val|valid|validation|test)[_/ \-.]?(?:lm[_ ])?loss(?:[_/\-.]?(?:epoch|step))?$"
                             r"|^loss[_/\-.](?:eval|val|valid|validation)$")),
    ("loss", lazy_re(r"^(?:train(?:ing)?[_/ \-.]?)?(?:lm[ _]|total[_ ]|avg[_ ]|mean[_ ])?loss(?:[_/\-.]?(?:step|epoch|train|avg|mean))?$"
                        r"|^train[_/]loss[_/\-.]?(?:step|epoch)?$|^objective$|^cross[_ ]?entropy$|^xent$|^nll(?:_loss)?$")),
    ("grad_norm", lazy_re(r"^(?:train[_/])?(?:global[_ ])?(?:grad|gradient)[_ \-.]?norm(?:[_/\-.]?(?:total|global|l2))?$"
                             r"|^(?:grad|gradient)s?[_/\-.]norm$|^gnorm$|^total[_ ]norm$|^grad_norm/total$")),
    ("lr", lazy_re(r"^(?:train[_/])?(?:lr|learning[_ \-]?rate)(?:[_/\-.].*)?$|^lr-.*$")),
    ("loss_scale", lazy_re(r"^(?:loss[_ \-]?scale|scale|grad[_ ]scale|cur[_ ]scale|loss_scaler)$")),
    ("skipped_iterations", lazy_re(r"^(?:number[_ ]of[_ ])?skipped[_ ]iter(?:ation)?s?$")),
    ("nan_iterations", lazy_re(r"^(?:number[_ ]of[_ ])?nan[_ ]iter(?:ation)?s?$")),
    ("throughput", lazy_re(r"^(?:tokens|samples|it|tok|img|images)(?:/s|[_ ]per[_ ]s(?:ec(?:ond)?)?|ps)$"
                              r"|^throughput.*$|^(?:train[_/])?(?:samples|tokens|steps)_per_second$")),
    ("memory", lazy_re(r"^(?:gpu[_ ])?mem(?:ory)?(?:[_ ](?:allocated|reserved|used|max[_ ]allocated))?(?:[_ ]?\(?[gm]i?b\)?)?$"
                          r"|^max[_ ]mem(?:ory)?[_ ]allocated.*$|^memory[_/].*$")),
    ("accuracy", lazy_re(r"^(?:train[_/])?acc(?:uracy)?(?:[_/\-.]?(?:step|epoch|top1))?$")),
    ("epoch", lazy_re(r"^epoch$")),
]
# A literal each pattern's match contains (any one of them): a key holding none of them is not tried against it,
# so a run compiles only the patterns its metric names can match.
_NEEDS = {"eval_loss": ("loss",), "loss": ("loss", "objective", "entropy", "xent", "nll"), "grad_norm": ("norm",),
          "lr": ("lr", "learning"), "loss_scale": ("scale",), "skipped_iterations": ("skipped",),
          "nan_iterations": ("nan",), "throughput": ("tok", "samples", "it", "img", "images", "throughput", "steps"),
          "memory": ("mem",), "accuracy": ("acc",), "epoch": ("epoch",)}


@lru_cache(maxsize=4096)
def canonical(name: str) -> Optional[str]:
    """The canonical name of a metric key, or None when it is not one trainwreck analyses."""
    key = name.strip().strip("'\"").lower()
    for canon, rx in _CANON:
        if any(n in key for n in _NEEDS[canon]) and rx.match(key):
            return canon
    return None


STEP_KEYS = ("step", "global_step", "iteration", "iter", "_step", "trainer/global_step", "train/global_step",
             "num_steps", "steps", "it")
