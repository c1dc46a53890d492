"""Canonical metric names, so that `train/loss`, `lm loss` and `training_loss` land in one series.

Besides the core names (loss, grad_norm, lr, …) a key may name a loss component (`loss_cls`, `box_loss`,
`loss_g`, `vf_loss`), a task metric (`mAP50`, `acc_seg`, `val_acc`, `miou`), a reward statistic (`reward`,
`reward_std`) or a policy KL (`kl`): each keeps its own series, named by its normalised key (`role(name)` says
which of these a series name is). A core name always wins: `train loss` is the loss, not a component."""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

from trainwreck import lazy_re

_CANON = [
    ("eval_loss", lazy_re(r"^(?:eval|val|valid|validation|test)[_/ \-.]?(?:lm[_ ])?loss(?:[_/\-.]?(?:epoch|step))?$"
                             r"|^loss[_/\-.](?:eval|val|valid|validation)$|^(?:eval|val|valid|validation|test)[_/ \-.]nll$")),
    ("loss", lazy_re(r"^(?:train(?:ing)?[_/ \-.]?)?(?:lm[ _]|total[_ ]|avg[_ ]|mean[_ ])?loss(?:[_/\-.]?(?:step|epoch|train|avg|mean))?$"
                        r"|^train[_/]loss[_/\-.]?(?:step|epoch)?$|^objective$|^cross[_ ]?entropy$|^xent$"
                        r"|^(?:train(?:ing)?[_/ \-.]?)?nll(?:_loss)?$")),
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
    # the trainer's own estimate of the time left (detectron2's metrics.json `eta_seconds`): 0 at its last step
    ("eta_seconds", lazy_re(r"^eta[_ ]?(?:s|sec|secs|seconds)$")),  # not a bare "eta": "eta: 1 day, 0:50:13"
]
# A literal each pattern's match contains (any one of them): a key holding none of them is not tried against it,
# so a run compiles only the patterns its metric names can match.
_NEEDS = {"eval_loss": ("loss", "nll"), "loss": ("loss", "objective", "entropy", "xent", "nll"), "grad_norm": ("norm",),
          "lr": ("lr", "learning"), "loss_scale": ("scale",), "skipped_iterations": ("skipped",),
          "nan_iterations": ("nan",), "throughput": ("tok", "samples", "it", "img", "images", "throughput", "steps"),
          "memory": ("mem",), "accuracy": ("acc",), "epoch": ("epoch",), "eta_seconds": ("eta",)}


# the split written after the metric (`nll_train`, `acc_val`, `f1_dev`, NRI's and many research loops' layout)
# the held-out splits a metric name may name, as words (`val acc`) and as name prefixes (`val_acc`)
SPLIT_WORDS = ("val", "valid", "validation", "eval", "evaluation", "test", "dev")
EVAL_PREFIXES = ("eval_", "val_", "valid_", "validation_", "test_")
_SPLIT_AFTER = lazy_re(r"^([a-z][a-z0-9]*(?:_[a-z0-9]+)?)[_/\-.](train|training|" + "|".join(SPLIT_WORDS) + r")$")


def _split_first(key: str) -> str:
    """`nll_train` → `train_nll`, `acc_val` → `val_acc`, `f1_dev` → `val_f1`: the split first, as every other
    spelling has it; a name without a split after it is unchanged."""
    m = _SPLIT_AFTER.match(key) if "_" in key or "/" in key or "-" in key or "." in key else None
    if m is None or m.group(1) in ("lr", "epoch", "step", "loss"):  # `loss_val` has its own rule
        return key
    return f"{'val' if m.group(2) == 'dev' else m.group(2)}_{m.group(1)}"


@lru_cache(maxsize=4096)
def core(name: str) -> Optional[str]:
    """The core canonical name of a metric key (loss, grad_norm, lr, …), or None."""
    key = _split_first(name.strip().strip("'\"").lower())
    for canon, rx in _CANON:
        if any(n in key for n in _NEEDS[canon]) and rx.match(key):
            return canon
    return None


CORE_NAMES = frozenset(c for c, _rx in _CANON)
_EVAL = lazy_re(r"^(?:eval|val|valid|validation|test)(?:[_/\-.]|$)")
_TRAIN = lazy_re(r"^(?:train(?:ing)?)[_/\-. ]")
# a word in a loss-like key that makes it a setting, a bound or a bookkeeping value, not a measured loss
_NOT_MEASURED = frozenset({"weight", "weights", "type", "coef", "coeff", "scale", "fn", "func", "name", "ratio",
                           "best", "min", "max", "target", "clip", "init", "initial", "prev", "scaler", "window"})
_LOSS_WORD = lazy_re(r"(?:^|[_/. ])loss(?:es)?(?:$|[_/. ])|^(?:l1|l2|mse|mae|bce|ce|kld|ctc)$")
_TASK = lazy_re(r"^(?:metrics/)?(?:decode[._])?(?:map(?:50|75)?(?:-95)?|b(?:box)?_?map(?:50|75)?|m?iou|mean_iou|aacc|"
                r"f1(?:_score)?|top-?[15](?:_acc(?:uracy)?)?|acc(?:uracy)?(?:[_\-.]?(?:seg|top[15]|[15]|cls))?|dice|"
                r"bleu|auc|precision|recall|f_?score|macro[_\-]f(?:1|_?score))(?:\([bm]\))?$")
# a task metric qualified by what it scores (`en-fr_mt_bleu`, `bbox_f1`, `seg_miou`): BLEU, F-scores, mAP and IoU
# only (`grad_acc` is a setting, not an accuracy)
_QUALIFIED_TASK = lazy_re(r"^(?:[a-z0-9\-]+_){1,3}(?:bleu|f1|f_?score|macro[_\-]f(?:1|_?score)|m?iou|map(?:50|75)?(?:-95)?)$")
_REWARD = lazy_re(r"^(?:objective/|env/|rewards?/)?(?:frac_reward_zero_std|rewards?(?:[_/](?:std|mean))?|"
                  r"reward_std|scores?(?:[_/]std)?)$")
# an episode's return as RL trainers log it (Stable-Baselines' `rollout/ep_rew_mean`, baselines' `eprewmean`, RLlib's
# `episode_reward_mean`, Spinning Up's `AverageEpRet`, rlkit's `exploration/Average Returns`, CleanRL's
# `charts/episodic_return`): the run's task metric, series `reward`
_RETURN = lazy_re(r"^(?:rollout/|charts/|exploration/|episode/|env/)?(?:ep_?rew_?mean|ep_rew|episode_?rewards?(?:_mean)?|"
                  r"mean_(?:episode_)?rewards?|ep_?reward(?:_mean)?|(?:average|avg)_?(?:ep_?)?(?:returns?|ret)|"
                  r"ep_?ret(?:_mean)?|episod(?:e|ic)_?returns?(?:_mean)?|mean_returns?|returns?_mean|"
                  r"(?:total|average|avg)_?(?:episode_?)?(?:rewards?|returns?))$")  # FinRL's `total_reward: 94.35`
_KL = lazy_re(r"^(?:objective/|policy/|ppo/policy/)?(?:approx_?kl|kl(?:_div(?:ergence)?)?)$")


@lru_cache(maxsize=4096)
def extra(name: str) -> Optional[str]:
    """The series name of a key that is not a core metric but is still worth a trajectory: a loss component, a
    task metric, a reward statistic or a KL. None for anything else."""
    key = _split_first(name.strip().strip("'\"").lower().replace(" ", "_"))
    if not key or len(key) > 60:
        return None
    ev = _EVAL.match(key)
    base = key[ev.end():] if ev else key
    t = _TRAIN.match(base)
    base = base[t.end():] if t else base
    if not base:
        return None
    if ("std" in base or "rew" in base or "score" in base) and _REWARD.match(base):
        if ev:
            return None
        b = base.split("/")[-1] if base.startswith(("objective/", "env/")) else base
        if b in ("rewards/std", "reward/std", "scores/std", "score/std", "score_std", "scores_std"):
            return "reward_std"
        if b in ("rewards/mean", "reward/mean", "rewards", "reward_mean", "scores", "score", "scores/mean"):
            return "reward"
        return b
    if ("rew" in base or "ret" in base) and _RETURN.match(base):
        return None if ev else "reward"
    if "kl" in base and _KL.match(base):
        return None if ev else "kl"
    if _TASK.match(base.replace("(b)", "").replace("(m)", "") if "(" in base else base) or (
            "_" in base and _QUALIFIED_TASK.match(base)):
        if ev and base in ("acc", "accuracy"):  # every spelling of a held-out accuracy is one series
            return "test_acc" if key.startswith("test") else "val_acc"
        return key.replace("metrics/", "").replace("(b)", "").replace("(m)", "")
    if ("loss" in base or len(base) <= 3) and _LOSS_WORD.search(base) and not ev:
        words = set(base.replace("/", "_").replace(".", "_").split("_"))
        if words & _NOT_MEASURED:
            return None
        return base
    return None


def canonical(name: str) -> Optional[str]:
    """The canonical name of a metric key (a core name first, else a component / task metric / reward / KL
    series name), or None when it is not one trainwreck analyses."""
    return core(name) or extra(name)


def role(name: str) -> str:
    """What a series name stands for: 'core', 'component' (a loss component), 'task' (a task metric such as
    mAP or accuracy), 'reward', 'reward_std', 'kl'."""
    if name in CORE_NAMES:
        return "core"
    if name == "kl":
        return "kl"
    if name in ("reward_std", "frac_reward_zero_std"):
        return "reward_std"
    if name == "reward":
        return "reward"
    if name.endswith("loss") or "loss" in name or name in ("l1", "l2", "mse", "mae", "bce", "ce", "kld", "ctc"):
        return "component"
    return "task"


STEP_KEYS = ("step", "global_step", "iteration", "iter", "_step", "trainer/global_step", "train/global_step",
             "num_steps", "steps", "it")
