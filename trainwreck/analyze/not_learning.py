"""Not learning, in the shapes that are not a plateau at ln(K): a loss frozen to every printed digit, a loss of
exactly 0 with nothing learned, a gradient norm of exactly 0, a reward with zero spread (GRPO-style advantages
all zero), a task metric pinned at its floor or ceiling while the loss barely moves.

Each verdict is dated at the first point of the stretch that is stuck (not where a window happens to start),
and its confidence grows with the number of points it rests on. A non-finite loss or gradient norm makes the
run a NaN story: nothing here is said then.
"""
from __future__ import annotations

import math
from typing import List, Optional, Sequence

from trainwreck.analyze import trajectory_context as ctx
from trainwreck.analyze.chance_level import nearest_k
from trainwreck.analyze.trajectory_shape import COMMON_K
from trainwreck.analyze.trajectory_stats import at_step, epochs_by_line, few_words, fmt, late, points_confidence
from trainwreck.collect.bundle import Bundle, Series
from trainwreck.collect.metricnames import EVAL_PREFIXES, canonical, role
from trainwreck.model import DIRECT, Finding, Point

MIN_RUN = 3  # points in a stuck stretch (2 when the whole logged series is that stretch)
FIXES = ["overfit one small batch: the loss must fall far below its first value within ~100 steps",
         "check that the optimizer holds the model's trainable parameters (requires_grad, frozen layers) and the "
         "lr is non-zero",
         "check that labels line up with inputs (label column, collate, ignore_index masking every target)"]


def finite_points(s: Optional[Series]) -> List[Point]:
    """The series' finite points (Series.finite), none for a missing series."""
    return s.finite() if s is not None else []


def printed_digits(v: float) -> int:
    """Significant digits of a value as it was printed (its shortest repr)."""
    return len(repr(abs(v)).split("e")[0].replace(".", "").strip("0"))


def _stuck_tail(pts: Sequence[Point], same) -> int:
    """Index where the stretch of points equal (by `same`) to the last one starts."""
    i = len(pts) - 1
    while i > 0 and same(pts[i - 1].value, pts[-1].value):
        i -= 1
    return i


def _long_descent(pts: Sequence[Point], i: int, epochs) -> bool:
    """The stretch before the freeze at i lasted at least as long as the freeze (in steps when the points have them,
    in the epochs their lines log when they do not, else in points): a run that trained for most of its length and
    then converged."""
    a, b, c = pts[0].step, pts[i].step, pts[-1].step
    if a is None or b is None or c is None:
        a, b, c = (epochs.get((p.source.path, p.source.line)) if p.source is not None else None
                   for p in (pts[0], pts[i], pts[-1]))
    if a is not None and b is not None and c is not None:
        return b - a >= c - b
    return i >= len(pts) - i


def _enough(n_run: int, n_all: int) -> bool:
    return n_run >= MIN_RUN or (n_run >= 2 and n_run == n_all)



DEGENERATE_FIXES = ["count the distinct labels in the training data and in one collated batch: with a single class "
                    "(every label 0) the loss is 0 and the accuracy 1 before anything is learned",
                    "check that the loss and the accuracy compare the model's output with the labels (not the labels "
                    "with themselves, not a constant), and that no input feature carries the label"]


def _finding(fid: str, claim: str, n: int, full: float, ev: List, first: Point, meaning: str,
             fixes: Optional[List[str]] = None) -> Finding:
    return Finding(fid, claim + few_words(n), DIRECT, points_confidence(n, full), [e for e in ev if e is not None],
                   suggests="stall", role="symptom", stage="runtime", order=first.step, kind="plateau",
                   fixes=fixes or FIXES, verify_skill="init-loss-check", meaning=meaning)


def _nan_story(bundle: Bundle) -> bool:
    return any(not math.isfinite(p.value) for m in ("loss", "grad_norm") for s in bundle.series.get(m) or []
               for p in s.points if isinstance(p.value, float))


def _pinned(bundle: Bundle, epochs) -> List[tuple]:
    """(name, points, start, 'floor' | 'ceiling') for each task metric that sits exactly at 0 or at its
    maximum (1 or 100) over its whole logged stretch of ≥ 2 points. A ceiling counts only from the first steps
    of training: the end of a converged run sits at 100 % training accuracy too."""
    out = []
    single = []  # accuracies logged once, at exactly 0
    for name in sorted(bundle.series):
        if name != "accuracy" and role(name) != "task":
            continue
        pts = finite_points(bundle.best_series(name))
        if len(pts) == 1 and pts[0].value == 0.0 and "acc" in name:
            single.append((name, pts, 0, "floor"))
        if len(pts) < 2:
            continue
        v = pts[-1].value
        if v == 0.0 or v in (1.0, 100.0):
            i = _stuck_tail(pts, lambda a, b: a == b)
            early = not late(pts[0], epochs, step=1000, epoch=1.0) and (pts[0].step is not None or bool(epochs))
            if i == 0 and (v == 0.0 or early):
                out.append((name, pts, i, "floor" if v == 0.0 else "ceiling"))
    # one evaluation says little, but the training and the held-out accuracy both at exactly 0 is a model that
    # gets nothing right anywhere (any chance level is above 0); while the loss falls fast (a first evaluation of a
    # run still warming up, an exact-match score at 0) detect() asks for three such metrics instead
    return out + (single if len(single) >= 2 else [])


def _loss_barely_moves(bundle: Bundle) -> Optional[str]:
    """'loss 17.88 → 17.77' when every loss series logged (total and components) ends within 20% of where it
    started (or is exactly 0 throughout): the loss 'creeps', it does not fall."""
    shown = None
    any_loss = False
    for name in sorted(bundle.series):
        if name != "loss" and role(name) != "component":
            continue
        pts = finite_points(bundle.best_series(name))
        if len(pts) < 2:
            continue
        any_loss = True
        a, b = pts[0].value, pts[-1].value
        if a == b == 0.0:
            shown = shown or f"{name} exactly 0"
            continue
        if a <= 0 or b < 0.8 * a:
            return None
        if shown is None or name == "loss":
            shown = f"{name} {fmt(a)} → {fmt(b)}"
    return shown if any_loss else None


def detect(bundle: Bundle) -> List[Finding]:
    if _nan_story(bundle):
        return []
    out: List[Finding] = []
    epochs = epochs_by_line(bundle)
    pinned = _pinned(bundle, epochs)
    # zero reward spread: every sampled completion of a prompt gets the same reward
    for name in ("reward_std", "frac_reward_zero_std"):
        r = finite_points(bundle.best_series(name))
        stuck = 0.0 if name == "reward_std" else 1.0
        if len(r) >= 2 and r[-1].value == stuck:
            i = _stuck_tail(r, lambda a, b: a == b)
            run = r[i:]
            if _enough(len(run), len(r)):
                what = "reward_std is exactly 0" if stuck == 0.0 else "frac_reward_zero_std is 1 (every group)"
                out.append(_finding("metric.reward-std-zero", f"{what} at every one of {len(run)} points from "
                                    f"{at_step(run[0])} to {at_step(run[-1])}", len(run), 0.8,
                                    [run[0].source, run[-1].source], run[0],
                                    "All completions of a prompt get the same reward, so every group-relative "
                                    "advantage is 0 and the policy gets no learning signal (reward function "
                                    "always 0 or always 1, a format check nothing passes)."))
                break
    # a loss (or a loss component) frozen to every printed digit, or exactly 0
    for name in sorted(bundle.series):
        if name != "loss" and role(name) != "component":
            continue
        pts = finite_points(bundle.best_series(name))
        if len(pts) < 2:
            continue
        i = _stuck_tail(pts, lambda a, b: a == b)
        run = pts[i:]
        v = pts[-1].value
        if not _enough(len(run), len(pts)):
            continue
        if v == 0.0:
            if name != "loss" or out:  # (a GRPO loss is 0 when the reward spread is: that finding says why)
                continue  # a component at 0 is often by design (YOLOX's l1_loss before its last epochs)
            early = not late(run[0], epochs, step=1000, epoch=1.0) and (run[0].step is not None or bool(epochs))
            floor = next((p for p in pinned), None)
            # from the start, or dropped to exactly 0 from a real value within a logging interval or two early in
            # training (a loss no longer computed: all targets masked from the second batch on): no training signal
            dropped = early and 0 < i <= 2 and pts[i - 1].value > 0.1
            if not (floor or (early and i == 0) or dropped):
                continue  # a loss that reached 0 late in a long run may be a memorised training set
            claim = f"{name} is exactly 0 at every one of {len(run)} points from {at_step(run[0])} to {at_step(run[-1])}"
            if dropped:
                claim += f", right after {fmt(pts[i - 1].value)} at {at_step(pts[i - 1])}"
            ev = [run[0].source, run[-1].source]
            fixes = None
            meaning = ("A loss of exactly 0 from the start means no target contributes to it (every label masked "
                       "or ignored, a one-class task, a loss wired to a constant): the model gets no training "
                       "signal.")
            if floor:
                fname, fpts, _s, where = floor
                claim += f" while {fname} stays at its {where} {fmt(fpts[-1].value)}"
                ev.append(fpts[-1].source)
                if where == "ceiling":  # perfect from the first step: nothing was ever left to learn
                    claim += " from the first step"
                    meaning = ("A loss of exactly 0 with a perfect score before any training is a degenerate "
                               "objective, not a solved task: every example has the same label (one class, labels "
                               "all 0), the label leaks into the input, or the loss and the metric compare the "
                               "labels with themselves. The model gets no training signal.")
                    fixes = DEGENERATE_FIXES + FIXES[2:]
            out.append(_finding("metric.loss-exactly-zero", claim, len(run), 0.7, ev, run[0], meaning, fixes))
            continue
        need = 4 if len(run) < 10 else 3 if len(run) < 30 else 2
        if i > 0 and min(p.value for p in pts[:i]) > 0 and v > 0 and nearest_k(v, COMMON_K) is None and (
                max(p.value for p in pts[:i]) > 1.5 * v
                or (_long_descent(pts, i, epochs) and max(p.value for p in pts[:i]) > 1.2 * v)):
            continue  # it learned first and froze: converged, or the lr annealed to 0. Learned = fell a third below
            # its high, or a sixth over a descent at least as long as the freeze (a fall over five logged steps, then
            # a freeze, is stuck early); never when it froze at ln(K): a fall to chance level is no learning
        if printed_digits(v) < need:
            continue  # a value printed with few digits repeats by rounding alone
        claim = (f"{name} is constant at {v!r} (every printed digit) over {len(run)} points, {at_step(run[0])} to "
                 f"{at_step(run[-1])}")
        # one term frozen says less than the whole loss frozen (0.65, not 0.75): the rest of the model may train
        f = _finding("metric.loss-constant", claim, len(run), 0.75 if name == "loss" else 0.65,
                     [run[0].source, run[-1].source], run[0],
                     "A loss that does not change in any printed digit is not being optimised: the parameters do "
                     "not move (lr 0, frozen or detached parameters, saturated outputs).")
        if name != "loss":  # the total loss falls, or a task metric improves, while this term stays frozen
            why = ctx.total_improves(finite_points(bundle.best_series("loss")), run[0]) or \
                ctx.task_improves(bundle, run[0])
            if why:
                f.role, f.suggests, f.confidence, f.fixes = "factor", None, min(f.confidence, 0.3), []
                f.kind = "trajectory"  # an observation: the curve view must not call the run "not learning"
                f.claim += (f"; {why}: the rest of the model learns, and this term is one that does not train "
                            "(a term with nothing trainable behind it)")
        out.append(f)
    out += _accuracy_frozen(bundle, out)
    # the gradient norm exactly 0
    g = finite_points(bundle.best_series("grad_norm"))
    if len(g) >= 2 and g[-1].value == 0.0:
        i = _stuck_tail(g, lambda a, b: a == b)
        run = g[i:]
        # while the loss clearly falls, the parameters do move: a zero norm is then a logging artefact (DeepSpeed
        # stages that do not report it), not a frozen model
        lp = finite_points(bundle.best_series("loss"))
        falls = len(lp) >= 2 and lp[0].value > 0 and lp[-1].value < 0.8 * lp[0].value
        if _enough(len(run), len(g)) and not falls:
            out.append(_finding("metric.gradnorm-zero", f"grad_norm is exactly 0 at every one of {len(run)} points "
                                f"from {at_step(run[0])} to {at_step(run[-1])}", len(run), 0.75,
                                [run[0].source, run[-1].source], run[0],
                                "No gradient reaches the parameters: nothing is trained (frozen or detached "
                                "parameters, a loss that does not depend on them, every target masked)."))
    # too few points for either rule alone, but the two together leave no doubt: the loss is exactly 0 and so is
    # the gradient norm, at every point logged (one HF log line is enough)
    lz = finite_points(bundle.best_series("loss"))
    if lz and g and not any(f.id in ("metric.loss-exactly-zero", "metric.gradnorm-zero") for f in out) \
            and all(p.value == 0.0 for p in lz) and all(p.value == 0.0 for p in g):
        n = min(len(lz), len(g))
        out.append(_finding("metric.loss-and-gradnorm-zero", f"loss and grad_norm are both exactly 0 at every "
                            f"logged point, from {at_step(lz[0])}", n, 0.7,
                            [lz[0].source, g[0].source], lz[0],
                            "A loss of exactly 0 with a gradient norm of exactly 0 means no target contributes to "
                            "the loss (every label masked to the ignore index, empty targets after truncation): "
                            "nothing is trained."))
    # a task metric pinned at its floor or ceiling while the loss barely moves
    moving = _loss_barely_moves(bundle) if pinned else None
    floors = [p for p in pinned if p[3] == "floor"]
    # without a creeping loss, a floor still says "not learning" when it cannot be the start of a healthy run:
    # several task metrics at exactly 0 together, one at 0 over 3+ evaluations, or an accuracy of exactly 0 (any
    # chance level is above 0). While the loss falls fast a single metric at 0 is a run still warming up (mAP
    # is 0 for a detector's first epochs): then every task metric logged, at least three, must sit at 0.
    lp = finite_points(bundle.best_series("loss"))
    falls_fast = len(lp) >= 2 and lp[0].value > 0 and lp[-1].value < 0.8 * lp[0].value
    if falls_fast:
        floor_alone = len(floors) >= 3 and len(floors) == len(_task_series(bundle))
    else:
        floor_alone = bool(floors) and (len(floors) >= 2 or len(floors[0][1]) >= 3 or floors[0][0] == "accuracy")
    # a validation metric at exactly 0 over 3+ evaluations while the same metric on the training data rises is
    # no warm-up (the model does learn the training set): the held-out score is broken or never reached
    twins = {p[0]: train_twin_rise(bundle, p[0]) for p in floors if len(p[1]) >= 3}
    twins = {k: v for k, v in twins.items() if v}
    if twins:
        floors = [p for p in floors if p[0] in twins] + [p for p in floors if p[0] not in twins]
        floor_alone = True
    if pinned and (moving or floor_alone) and not any(f.id == "metric.loss-exactly-zero" for f in out):
        chosen = pinned if moving else (floors if twins else sorted(floors, key=lambda p: -len(p[1])))
        name, pts, _i, where = chosen[0]
        others = [p[0] for p in chosen[1:]]
        claim = ((f"{name} stays at its {where} {fmt(pts[-1].value)} at every one of {len(pts)} evaluations "
                  f"({at_step(pts[0])} to {at_step(pts[-1])})" if len(pts) > 1 else
                  f"{name} is at its {where} {fmt(pts[-1].value)} at {at_step(pts[0])}")
                 + (f", as {'do' if len(pts) > 1 else 'is'} {', '.join(others[:4])}" if others else "")
                 + (f", while the loss barely moves ({moving})" if moving else
                    f", while {twins[name]} on the training data" if name in twins else _loss_trend(bundle)))
        f = _finding("metric.task-metric-pinned", claim, len(pts), 0.65 if moving else 0.5,
                     [pts[0].source, pts[-1].source], pts[0],
                     "The task metric never leaves its floor (or sits at a trivial ceiling) while the loss "
                     "creeps or falls: the model is not learning the task (labels missing or misaligned, an empty "
                     "validation set, class count or loss wiring).")
        f.confidence = round(f.confidence + min(0.1, 0.05 * len(others)), 2)  # several metrics pinned together
        out.append(f)
    return out




FROZEN_ACC_MIN = 5  # evaluations a training accuracy must repeat, to every digit, to say nothing moves
FROZEN_ACC_DIGITS = 5  # ... printed with at least this many significant digits (a share of a tiny set repeats, and
# a running average late in an epoch, 62.36, moves below two decimals)


def _accuracy_frozen(bundle: Bundle, found: List[Finding]) -> List[Finding]:
    """The training accuracy repeated to every printed digit (13.9155 % five epochs running) below its ceiling:
    not one prediction on the training data changes from one epoch to the next, so the parameters do not move
    (a converged model at 100 % repeats too; that is the ceiling, left out)."""
    if any(f.id == "metric.loss-constant" for f in found):
        return []  # the frozen loss already says it
    pts = finite_points(bundle.best_series("accuracy"))
    if len(pts) < FROZEN_ACC_MIN:
        return []
    i = _stuck_tail(pts, lambda a, b: a == b)
    run, v = pts[i:], pts[-1].value
    scale = 100.0 if max(p.value for p in pts) > 1.0 else 1.0
    if len(run) < FROZEN_ACC_MIN or printed_digits(v) < FROZEN_ACC_DIGITS or not 0 < v < 0.9 * scale:
        return []
    if i > 0 and min(p.value for p in pts[:i]) * 1.2 < v:
        return []  # it learned first (rose a sixth or more) and then froze: converged, as the loss rule reads it
    return [_finding("metric.accuracy-frozen", f"the training accuracy is constant at {v!r} (every printed digit) "
                     f"over {len(run)} evaluations, {at_step(run[0])} to {at_step(run[-1])}", len(run), 0.7,
                     [run[0].source, run[-1].source], run[0],
                     "Not one prediction on the training data changes between evaluations: the parameters do not "
                     "move (lr 0, frozen or detached parameters, saturated or dead outputs), or the model predicts "
                     "one class for everything.")]


def train_twin_rise(bundle: Bundle, name: str) -> Optional[str]:
    """For a validation metric (`val_acc`), 'accuracy rises (0.0916 → 0.4467)' when the same metric logged on
    the training data (`train_acc`, `acc_train`: series `accuracy`) ends above where it started and above 0."""
    base = next((name[len(p):] for p in EVAL_PREFIXES if name.startswith(p)), None)
    if not base:
        return None
    twin = next((n for n in (canonical(base), canonical("train_" + base)) if n and n != name and n in bundle.series),
                None)
    pts = finite_points(bundle.best_series(twin)) if twin else []
    if len(pts) < 2 or not (pts[-1].value > pts[0].value and pts[-1].value > 0):
        return None
    return f"{twin} rises ({fmt(pts[0].value)} → {fmt(pts[-1].value)})"


def _task_series(bundle: Bundle) -> List[str]:
    """The task metrics (and accuracy) the run logs with at least 2 finite points."""
    return [n for n in bundle.series if (n == "accuracy" or role(n) == "task") and len(finite_points(bundle.best_series(n))) >= 2]


def _loss_trend(bundle: Bundle) -> str:
    """', while the loss falls (loss 2.84 → 1.14)' or ', with no loss series logged beside it'."""
    pts = finite_points(bundle.best_series("loss"))
    if len(pts) < 2:
        return ", with no loss series logged beside it" if not pts else f" (loss {fmt(pts[0].value)})"
    a, b = pts[0].value, pts[-1].value
    return f", while the loss {'falls' if b < a else 'does not fall'} (loss {fmt(a)} → {fmt(b)})"
