"""A validation metric frozen to every printed digit while the training loss moves: the model's outputs on the
held-out set do not change although its weights do.

Each evaluation runs the current weights over the same validation set; a val_loss that prints the same five
significant digits after every epoch, while the training loss changes between them, comes from a network
whose outputs do not depend on what it learns: it predicts one class (or one constant) for every input (dead
or saturated units, a collapsed softmax, labels that do not reach the loss). A validation accuracy frozen
along with it sits at the share of the majority class. Evaluations logged twice for the same step are not
counted twice, and the verdict's confidence says how few evaluations it rests on.
"""
from __future__ import annotations

from typing import List, Optional

from trainwreck import lazy_re
from trainwreck.analyze.blowup import ASTRONOMICAL
from trainwreck.analyze.not_learning import finite_points, printed_digits
from trainwreck.analyze.trajectory_stats import few_words, fmt, points_confidence
from trainwreck.collect.bundle import Bundle
from trainwreck.collect.metricnames import EVAL_PREFIXES
from trainwreck.model import DIRECT, Finding, Point

_NO_BETTER = lazy_re(r"(?<!\w)(\w+) did not improve from ([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")  # Keras ModelCheckpoint
_FINAL = lazy_re(r"(?i)\bfinal\b")
MIN_DIGITS = 4  # a frozen value must have been printed with this many significant digits (not a round 0.5)
MIN_EVALS = 2


def _distinct(pts: List[Point]) -> List[Point]:
    """One point per evaluation: a second point at the same step (or on the same line), or a final summary that
    repeats the one before it (verl's "Final validation metrics: {…}"), is the same evaluation."""
    out: List[Point] = []
    seen = set()
    for p in pts:
        key = ("step", p.step) if p.step is not None else ("line", p.source.path, p.source.line)
        if p.step is None and out and out[-1].value == p.value and _FINAL.search(p.source.text[:200]):
            continue  # a final summary that repeats the evaluation before it ("Final validation metrics: …")
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


FULL_DIGITS = 7  # a value written with this many significant digits is a float's full repr (a CSV, JSON) …
SAME_SPREAD = 1e-4  # … and is "the same" when all agree within this relative spread: the last digits of a float32
# mean differ from one evaluation to the next with the order of the reduction, not with the model (an epoch of
# training moves a validation loss by far more)


def _same(pts: List[Point]) -> bool:
    """Every evaluation printed the same value: exactly, or within SAME_SPREAD when the values are written in
    full (a logger's CSV holds 1.5276840925216675 and 1.527694582939148 for one frozen output)."""
    vals = [p.value for p in pts]
    if len(set(vals)) == 1:
        return True
    if min(printed_digits(v) for v in vals) < FULL_DIGITS or not vals[0]:
        return False
    return (max(vals) - min(vals)) <= SAME_SPREAD * abs(sum(vals) / len(vals))


def _train_moves(bundle: Bundle) -> Optional[str]:
    """How the training side moved between the evaluations: its loss, else its accuracy (a log of accuracies)."""
    for name, what in (("loss", "the training loss"), ("accuracy", "the training accuracy")):
        pts = finite_points(bundle.best_series(name))
        if len(pts) >= 2 and len({p.value for p in pts}) >= 2:
            return f"{what} moved from {fmt(pts[0].value)} to {fmt(pts[-1].value)}"
    return None


# A held-out accuracy frozen (identical to 4+ digits over evaluations while training moves) below this share is
# read as one class predicted for all inputs. Above it a converged model can score the same count twice; below it
# (under chance for up to 5 classes, and far from any trained model for more) the freeze is the outputs not
# depending on the input. A collapse on 2-4 balanced classes sits at 1/K >= 0.25 and is left to chance.py.
LOW_ACCURACY = 0.2


# ... and up to this share, over at least MID_EVALS evaluations: four epochs with not one prediction changed at a
# moderate accuracy is the majority class picked for every input (0.4455 of a 4-class set, 0.65 of a 3-class one);
# above it a converged model keeps its answers.
MID_ACCURACY = 0.7
MID_EVALS = 4


def _accuracy_below(name: str, value: float, share: float) -> bool:
    """An accuracy series (a share, or a percentage) below `share`."""
    return "acc" in name and (value if value <= 1.0 else value / 100.0) < share


def _no_better(bundle: Bundle, value: float):
    """The last `val_loss did not improve from 2.68635` line (Keras' ModelCheckpoint / EarlyStopping) whose best
    value is the frozen one, as printed to fewer digits."""
    hit = None
    for line in bundle.all_lines():
        if "did not improve" not in line.text:
            continue
        m = _NO_BETTER.search(line.text[-2000:])
        if m is not None and abs(float(m.group(2)) - value) <= 1e-3 * max(1.0, abs(value)):
            hit = line
    return hit


def detect(bundle: Bundle) -> List[Finding]:
    moved = _train_moves(bundle)
    if moved is None:
        return []
    frozen = []
    for name in sorted(bundle.series):
        if not name.startswith(EVAL_PREFIXES):
            continue
        pts = _distinct(finite_points(bundle.best_series(name)))
        if len(pts) < MIN_EVALS or not _same(pts):
            continue
        need = MIN_DIGITS if "loss" in name else 2  # a loss printed with 2 digits can repeat by chance
        if pts[0].value == 0.0 or printed_digits(pts[0].value) < need:
            continue  # an exact 0 is not_learning's
        if "loss" in name and abs(pts[0].value) >= ASTRONOMICAL:
            continue  # a loss frozen at 1e31 has blown up and saturated: blowup's, not a model that stopped moving
        frozen.append((name, pts))
    if not any("loss" in name or (_accuracy_below(name, pts[0].value, LOW_ACCURACY) and printed_digits(pts[0].value) >= MIN_DIGITS)
               or (_accuracy_below(name, pts[0].value, MID_ACCURACY) and printed_digits(pts[0].value) >= MIN_DIGITS
                   and len(pts) >= MID_EVALS) for name, pts in frozen):
        return []  # a high accuracy that repeats on a small validation set is not enough on its own: a converged
        # model scores the same count; one frozen to 4+ digits at a low share is the share of the class it always picks
    frozen.sort(key=lambda t: ("loss" not in t[0], t[0]))
    name, pts = frozen[0]
    n = len(pts)
    others = [f"{o} at {p[0].value:g}" for o, p in frozen[1:]]
    exact = len({p.value for p in pts}) == 1
    claim = (f"{name} is {pts[0].value:g}{'' if exact else f' (within {100 * SAME_SPREAD:g} %)'} at every one of {n} "
             f"evaluations ({pts[0].source.cite()} to "
             f"{pts[-1].source.cite()})" + (f", and so is {', '.join(others)}" if others else "")
             + f", while {moved}: the predictions on the validation set do not change" + few_words(n))
    evidence = [pts[-1].source, pts[0].source] + [p[-1].source for _, p in frozen[1:2]]
    said = _no_better(bundle, pts[0].value)
    if said is not None:
        evidence.insert(0, said.source())
        claim += f"; the trainer itself says so at {said.source().cite()}"
    return [Finding("metric.eval-frozen", claim, DIRECT, points_confidence(n, 0.75), evidence,
                    suggests="stall", role="symptom", stage="runtime", order=pts[0].step, kind="plateau",
                    verify_skill="init-loss-check",
                    fixes=["count the predicted classes on a validation batch: one class for every input is a "
                           "collapsed output (check the last layer's activation against the loss, e.g. softmax "
                           "with categorical cross-entropy, and the label encoding)",
                           "overfit one small batch: the loss must fall far below its first value within ~100 "
                           "steps",
                           "lower the learning rate (a too-high one saturates units early) and check the inputs "
                           "are normalised"],
                    meaning="The validation outputs are identical after every epoch although training updates "
                            "the weights: the network predicts the same thing for every input, so it is not "
                            "learning anything that reaches its predictions.")]
