"""Short-series blow-ups: a gradient norm or loss that jumped by orders of magnitude and stayed there.

The trajectory detectors need enough points for robust statistics; real reports often quote only a
handful of steps around the failure (`grad_norm 0.3 → 63 → 156 → 290 → 372`), or a few per-epoch summary
lines. A sustained jump in a finite series is a divergence whatever the number of points; the verdict's
confidence says how few points it rests on. Every loss series is looked at: each rank's, and each loss
component's (`loss_cls`, `loss_g`, …); a component that rises while the total loss falls is a trade-off
between terms, reported as a factor.
"""
from __future__ import annotations

import math
from typing import List, Optional, Tuple

from trainwreck.analyze import trajectory_context as ctx
from trainwreck.analyze.trajectory_stats import at_step, few_words, fmt, median, points_confidence
from trainwreck.collect.bundle import Bundle, Series
from trainwreck.collect.metricnames import role
from trainwreck.model import DIRECT, Finding, Point

GRAD_FACTOR = 50.0  # last point vs the baseline
GRAD_JUMP = 100.0  # a grad-norm jump this large anywhere, with the loss doubled, is a blow-up even if it came back
LOSS_FACTOR = 3.0
SUSTAINED = (2.0, 1.3)  # peak ≥ 2× the minimum and every later point ≥ 1.3× it: the loss never came back
IMPLAUSIBLE = 1000.0  # a finite loss this many times its own first value is no longer a loss a model can have
IMPLAUSIBLE_ABS = 1e4  # … and this large: a loss that starts near 0 (a value or KL term) may grow 1000× and be fine
ASTRONOMICAL = 1e10  # a finite loss this large (twice, or at the last point) has blown up, whatever it started at
KL_JUMP, KL_BIG, KL_WINDOW = 100.0, 1.0, 5  # ×100 within 5 points, to at least 1 nat
HUGE_GRAD = 1e8  # finite gradient norms this large mean the run has already blown up
SHORT = 8  # fewer loss points than this: the shape detector says nothing, this module does
FIXES = ["lower the learning rate 2–3×, or lengthen the warmup", "clip gradients at 1.0 (max_grad_norm / "
         "gradient_clip_val)", "rewind to the last checkpoint before the rise"]


def _finite(series: Optional[Series]) -> List[Point]:
    """Finite points before the first non-finite one, in order; one per step (a step printed by two log
    formats counts once)."""
    if not series:
        return []
    out: List[Point] = []
    for p in series.points:
        if not isinstance(p.value, (int, float)) or isinstance(p.value, bool):
            continue
        if not math.isfinite(p.value):
            break
        if out and p.step is not None and out[-1].step == p.step:
            out[-1] = p
        else:
            out.append(p)
    return out


def _has_nonfinite(series: Optional[Series]) -> bool:
    return bool(series) and any(not math.isfinite(p.value) for p in series.points)



def _finding(fid: str, claim: str, conf: float, ev: list, order, component: bool = False) -> Finding:
    return Finding(id=fid, claim=claim, label=DIRECT, confidence=conf, evidence=[e for e in ev if e is not None],
                   suggests=None if component else "divergence", role="factor" if component else "cause",
                   stage="runtime", order=order, kind="divergence", verify_skill="loss-spike-rollback", fixes=FIXES,
                   meaning="The loss climbed away from its best value and did not come back: the optimisation "
                           "diverged." if not component else
                           "One loss term rose while the total loss fell: the terms trade off; watch it, it is "
                           "not the failure by itself.")


def implausible(lp: List[Point]) -> Optional[Tuple[int, float]]:
    """(index of the first implausible point, its ratio to the first value) when a positive loss reached
    IMPLAUSIBLE × its first value (and IMPLAUSIBLE_ABS) and its last point is still ≥ √IMPLAUSIBLE × it."""
    if len(lp) < 2 or lp[0].value <= 0:
        return None
    first = lp[0].value
    i = next((k for k, p in enumerate(lp) if p.value >= IMPLAUSIBLE * first and p.value >= IMPLAUSIBLE_ABS), None)
    if i is None or lp[-1].value < math.sqrt(IMPLAUSIBLE) * first:
        return None
    return i, lp[i].value / first


NEGLIGIBLE = 0.05  # a term whose whole rise is under this share of the total loss cannot have diverged the run


def _negligible(pts: List[Point], start: Point, total: List[Point]) -> Optional[str]:
    """'its whole rise (0.0047) is 2.5% of the total loss (0.19)' when a loss term's rise is too small to move the
    total: mmdetection's loss_bbox going 0.0023 -> 0.007 beside a total of 0.19 is noise of the run, not divergence."""
    level = median([p.value for p in total]) if total else 0.0
    rise = max(p.value for p in pts[pts.index(start):]) - start.value
    if level <= 0 or rise >= NEGLIGIBLE * level:
        return None
    return f"its whole rise ({fmt(rise)}) is {100 * rise / level:.1f}% of the total loss ({fmt(level)})"


def _loss_rules(name: str, lp: List[Point], component: bool) -> List[Finding]:
    """Jump, creep, sustained rise and implausible magnitude on one short finite loss series."""
    n = len(lp)
    big = implausible(lp)
    if big is not None and n < SHORT * 5:
        i, ratio = big
        claim = (f"{name} reached {fmt(lp[i].value)} at {at_step(lp[i])}, {fmt(ratio)}× its first value "
                 f"{fmt(lp[0].value)} ({at_step(lp[0])}), and is {fmt(lp[-1].value)} at {at_step(lp[-1])}: orders of "
                 f"magnitude above any loss this run started from{few_words(n)}")
        return [_finding("metric.loss-implausible", claim, points_confidence(n, 0.85),
                         [lp[i].source, lp[0].source, lp[-1].source], lp[i].step, component)]
    astro = [p for p in lp if abs(p.value) >= ASTRONOMICAL]
    # any length, when it is most of the series or where it ends: a loss that lives at 1e31 has blown up however
    # long it was logged there (a long series with a few such values is left to the spike and trend detectors)
    # (a long series falling from 3.9e10 is an unnormalised loss that trains: it must rise or stay put)
    if astro and (len(astro) >= 2 or astro[-1] is lp[-1]) and (
            n < SHORT * 5 or ((astro[-1] is lp[-1] or 2 * len(astro) >= n) and lp[-1].value >= 0.9 * lp[0].value)):
        top = max(astro, key=lambda p: abs(p.value))
        claim = (f"{name} reaches {fmt(top.value)} at {at_step(top)} ({len(astro)} of {n} points at or beyond "
                 f"{ASTRONOMICAL:.0g} in magnitude, first at {at_step(astro[0])}): finite, but no loss of a healthy run "
                 f"is near that size{few_words(n)}")
        return [_finding("metric.loss-astronomical", claim, max(0.45, points_confidence(n, 0.8)),
                         [astro[0].source, top.source, lp[-1].source], astro[0].step, component)]
    if not 3 <= n < SHORT:
        return []
    i_lo = min(range(n), key=lambda i: lp[i].value)
    lo = lp[i_lo].value
    after = lp[i_lo + 1:]
    if lo <= 0 or not after:
        return []
    peak = max(after, key=lambda p: p.value)
    jump = len(after) >= 2 and all(p.value >= LOSS_FACTOR * lo for p in after[-2:])
    creep = len(after) >= 3 and all(b.value > a.value for a, b in zip(after, after[1:])) and after[-1].value >= 1.1 * lo
    sustained = (len(after) >= 2 and peak.value >= SUSTAINED[0] * lo
                 and all(p.value >= SUSTAINED[1] * lo for p in after))
    if not (jump or creep or sustained):
        return []
    if jump:
        how, full = f"and stayed ≥ {LOSS_FACTOR:g}× its minimum", 0.75
    elif creep:
        how, full = f"rising at every one of the last {len(after)} points", 0.65
    else:
        how, full = (f"(peak {fmt(peak.value)} at {at_step(peak)}) and never came back within "
                     f"{round((SUSTAINED[1] - 1) * 100)}% of its minimum"), 0.6
    claim = f"{name} rose from {lo:.4g} ({at_step(lp[i_lo])}) to {lp[-1].value:.4g} ({at_step(lp[-1])}) {how}{few_words(n)}"
    return [_finding("metric.loss-blowup", claim, points_confidence(n, full), [after[0].source, lp[i_lo].source,
                                                                                lp[-1].source], after[0].step,
                     component)]


def _total_falls(bundle: Bundle) -> bool:
    """The total loss is logged and ends at (or near) its minimum: a rising component is a trade-off."""
    lp = _finite(bundle.best_series("loss"))
    return len(lp) >= 3 and lp[-1].value <= 1.1 * min(p.value for p in lp) and lp[-1].value < lp[0].value


def _grad_rules(bundle: Bundle, gp: List[Point], lp: List[Point]) -> List[Finding]:
    out: List[Finding] = []
    if 3 <= len(gp) < 40:
        base = median([p.value for p in gp[: max(1, len(gp) // 3)]])
        tail = gp[-3:] if len(gp) >= 5 else gp[-2:]
        rose = bool(lp) and min(p.value for p in lp) > 0 and lp[-1].value >= 1.5 * min(p.value for p in lp)
        doubled = bool(lp) and min(p.value for p in lp) > 0 and lp[-1].value >= 2 * min(p.value for p in lp)
        stayed = base > 0 and gp[-1].value >= GRAD_FACTOR * base and all(p.value >= 10 * base for p in tail)
        jumped = base > 0 and doubled and max(p.value for p in gp) >= GRAD_JUMP * base
        if stayed or jumped:
            first = next(p for p in gp if p.value >= 10 * base)
            top = gp[-1] if stayed else max(gp, key=lambda p: p.value)
            claim = (f"grad_norm jumped {base:.3g} → {top.value:.3g} (×{top.value / base:.3g}) from {at_step(first)}"
                     + (" and stayed up" if stayed else "") + (f"; loss rose {min(p.value for p in lp):.3g} → "
                                                               f"{lp[-1].value:.3g}" if rose else "")
                     + few_words(len(gp)))
            conf = points_confidence(len(gp), 0.8 if rose else 0.65)
            out.append(Finding(
                id="metric.gradnorm-explosion", claim=claim, label=DIRECT, confidence=conf,
                evidence=[first.source, top.source] + ([lp[-1].source] if rose else []), suggests="divergence",
                role="cause", stage="runtime", order=first.step, kind="divergence",
                fixes=["clip gradients at 1.0 (max_grad_norm / gradient_clip_val)",
                       "lower the learning rate 2–3× for this phase, or lengthen warmup",
                       "rewind to the last checkpoint before the jump and skip the batches that preceded it"],
                verify_skill="loss-spike-rollback",
                meaning="Gradients grew by orders of magnitude and did not come back: the optimisation diverged."))
    if not out and gp:
        recent = sorted(p.value for p in gp[-3:])
        if recent[len(recent) // 2] >= HUGE_GRAD:
            first = next(p for p in gp if p.value >= HUGE_GRAD)
            n = len(gp)
            out.append(Finding(
                id="metric.gradnorm-huge", claim=f"grad_norm is astronomically large: {first.value:.3g} at "
                f"{at_step(first)}" + (f", {gp[-1].value:.3g} at {at_step(gp[-1])}" if gp[-1] is not first else "")
                + f" (finite, but no healthy run has norms near {HUGE_GRAD:.0e}){few_words(n)}", label=DIRECT,
                confidence=max(0.45, points_confidence(n, 0.7)), evidence=[first.source, gp[-1].source],
                suggests="divergence", role="cause", stage="runtime", order=first.step, kind="divergence",
                verify_skill="loss-spike-rollback",
                fixes=["clip gradients at 1.0", "lower the learning rate; check for a missing normalisation layer or "
                       "an unscaled loss (sum instead of mean)"]))
    return out


def _kl_rules(kp: List[Point]) -> List[Finding]:
    """A policy's KL to its old / reference policy that jumped KL_JUMP× within a few points to KL_BIG nats and
    stayed there: one update moved the policy far away (a PPO / RLHF policy collapse). Short series only, where
    a slow healthy growth of a summed KL cannot be mistaken for it."""
    if not 3 <= len(kp) < SHORT * 5:
        return []
    i, base = next(((k, p) for k, p in enumerate(kp) if p.value > 0), (None, None))
    if base is None:
        return []  # measured from the first positive value: later ones are already part of any rise
    top = next((p for p in kp[i + 1:i + 1 + KL_WINDOW] if p.value >= KL_JUMP * base.value and p.value >= KL_BIG),
               None)
    if top is None or not all(p.value >= KL_JUMP / 10 * base.value for p in kp[kp.index(top):]):
        return []
    n = len(kp)
    claim = (f"kl jumped {fmt(base.value)} → {fmt(top.value)} (×{fmt(top.value / base.value)}) from "
             f"{at_step(base)} to {at_step(top)} and stayed up ({fmt(kp[-1].value)} at {at_step(kp[-1])}): the policy "
             f"moved far from the one it was updated from{few_words(n)}")
    return [Finding(id="metric.kl-blowup", claim=claim, label=DIRECT, confidence=points_confidence(n, 0.75),
                    evidence=[top.source, base.source, kp[-1].source], suggests="divergence", role="cause",
                    stage="runtime", order=top.step, kind="divergence", verify_skill="loss-spike-rollback",
                    fixes=["lower the policy learning rate, or the number of optimisation epochs per batch",
                           "stop the update early when the KL passes a target (target_kl), or clip harder",
                           "rewind to the last checkpoint before the jump"],
                    meaning="The KL between the new and the old policy exploded within one update: the policy "
                            "collapsed instead of improving (a policy-gradient divergence).")]


def detect(bundle: Bundle) -> List[Finding]:
    loss = bundle.best_series("loss")
    if _has_nonfinite(loss):
        return []  # a non-finite loss makes this a NaN story, told by the trajectory detectors
    lp = _finite(loss)
    out = _grad_rules(bundle, _finite(bundle.best_series("grad_norm")), lp)
    if out:
        return out
    # every loss series: each rank's (a diverging rank hides behind a healthy one) and each component's
    falls = None
    seen = set()
    for name in sorted(bundle.series):
        if name != "loss" and role(name) != "component":
            continue
        for s in sorted(bundle.series[name], key=lambda x: not any(p.step is not None for p in x.points[:3])):
            if _has_nonfinite(s):
                continue
            pts = _finite(s)
            key = tuple(p.value for p in pts)
            if key in seen:
                continue  # the same values logged by two writers (a log and a metrics file)
            seen.add(key)
            component = name != "loss"
            if component and falls is None:
                falls = _total_falls(bundle)
            label = name + (f" on {s.path.rsplit('[', 1)[1].rstrip(']')}" if s.path.endswith("]") and "[rank " in s.path
                            else "")
            got = _loss_rules(label, pts, component and bool(falls))
            for f in got:  # a rise beside a falling total or an improving task metric (reward, accuracy): a note
                if f.id == "metric.loss-blowup" and f.suggests and len(pts) >= 2:
                    start = min(pts, key=lambda p: p.value)
                    why = (ctx.total_improves(lp, start) if component else None) or ctx.task_improves(bundle, start)
                    small = _negligible(pts, start, lp) if component and not why else None
                    if why or small:
                        ctx.demote(f, name, why or small, "the run is learning" if why else "too small to move the run")
            out.extend(got)
    if not out:
        out.extend(_kl_rules(_finite(bundle.best_series("kl"))))
    if not out and len(lp) == 2 and lp[0].value > 0 and lp[1].value >= 2 * lp[0].value:
        acc = _finite(bundle.best_series("accuracy"))
        collapsed = len(acc) >= 2 and acc[0].value > 0 and acc[-1].value <= 0.5 * acc[0].value
        if collapsed or lp[1].value >= 4 * lp[0].value:
            out.append(Finding(
                id="metric.loss-blowup", claim=f"loss jumped {lp[0].value:.4g} → {lp[1].value:.4g}"
                + (f" while accuracy fell {acc[0].value:.4g} → {acc[-1].value:.4g}" if collapsed else "")
                + few_words(2), label=DIRECT, confidence=0.45 if collapsed else 0.4,
                evidence=[lp[0].source, lp[1].source] + ([acc[-1].source] if collapsed else []),
                suggests="divergence", role="cause", kind="divergence",
                stage="runtime", order=lp[1].step, verify_skill="loss-spike-rollback",
                fixes=["lower the learning rate 2–3×", "clip gradients at 1.0"]))
    return out
