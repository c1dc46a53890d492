"""Metric trajectories: first non-finite step and its precursors, divergence, spikes, plateaus, lr schedule
anomalies, a stalled step counter.

`detect(bundle)` runs everything on the bundle's best series; `analyze_series(points, name)` runs the checks
that apply to one metric (the `curve` verb); `summarize(bundle)` is the per-metric summary of the report.
The detectors live in trajectory_nonfinite / trajectory_shape / trajectory_schedule (none defines `detect`).
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from trainwreck.analyze import trajectory_context as ctx
from trainwreck.analyze import trajectory_nonfinite as nf
from trainwreck.analyze import trajectory_schedule as sched
from trainwreck.analyze import trajectory_shape as shape
from trainwreck.analyze.chance_level import class_count, nearest_k, tolerance
from trainwreck.analyze.trajectory_stats import clean, finite_points, fmt, is_finite, nonfinite, nonfinite_word, where
from trainwreck.collect.bundle import Series
from trainwreck.collect.metricnames import CORE_NAMES, role
from trainwreck.model import Finding, Point, Source

WARMUP_KEYS = ("warmup_steps", "num_warmup_steps", "lr_warmup_steps", "warmup_iters", "warmup_ratio", "warmup")
_STALL_METRICS = ("loss", "lr", "grad_norm", "throughput", "loss_scale")


SHAPE_POINTS = 6000  # above this, shape statistics run on a bucketed series (each bucket's min and max)


def decimate(points: List[Point], limit: int = SHAPE_POINTS) -> List[Point]:
    """Keep long series cheap to analyse without losing what matters: per bucket, the lowest and the highest
    point in their original order (spikes and troughs survive); every non-finite point is kept."""
    n = len(points)
    if n <= limit:
        return points
    k = -(-n // (limit // 2))
    out: List[Point] = []
    for b in range(0, n, k):
        chunk = points[b:b + k]
        fin = [p for p in chunk if is_finite(p.value)]
        keep = {id(p) for p in chunk if not is_finite(p.value)}
        if fin:
            keep.add(id(min(fin, key=lambda p: p.value)))
            keep.add(id(max(fin, key=lambda p: p.value)))
        out.extend(p for p in chunk if id(p) in keep)
    return out


def _points(bundle, name: str) -> List[Point]:
    s = bundle.best_series(name)
    return decimate(clean(s.points)) if s is not None else []


def _onset_text(o: nf.Onset) -> str:
    return f"the first {o.name} {nonfinite_word(o.point.value)} at {where(o.point, o.index)}"


def _kind(findings: List[Finding], kind: str) -> List[Finding]:
    for f in findings:
        f.kind = f.kind or kind
    return findings


def _finite_blowup_before(loss: List[Point], onset: nf.Onset) -> Optional[str]:
    """'6.87 → 4.8e9 by step 600' when the loss, finite at every point, rose ≥ 100× its running minimum before
    the onset (by step, else by line in the same file)."""
    if not loss or not all(is_finite(p.value) for p in loss):
        return None
    op = onset.point
    if op.step is not None and all(p.step is not None for p in loss):
        pre = [p for p in loss if p.step < op.step]
    elif op.source is not None and op.source.line is not None:
        pre = [p for p in loss if p.source is not None and p.source.path == op.source.path
               and p.source.line is not None and p.source.line < op.source.line]
    else:
        return None
    lo = None
    for i, p in enumerate(pre):
        lo = p if lo is None or p.value < lo.value else lo
        if lo.value > 0 and p.value >= 100 * lo.value:
            return f"{fmt(lo.value)} → {fmt(p.value)} by {where(p, i)}"
    return None


def _component_divergence(bundle, loss: List[Point], told: bool) -> List[Finding]:
    """A sustained rise of one loss component (`loss_g`, `loss_cls`, …). When the total loss is logged and
    falls, the rise is a trade-off between terms (a VAE's KL, a GAN's generator loss as the discriminator
    improves): reported as a factor, not the failure."""
    if told:
        return []
    fin = [p.value for _i, p in finite_points(loss)]
    total_falls = len(fin) >= 3 and fin[-1] <= 1.1 * min(fin) and fin[-1] < fin[0]
    out: List[Finding] = []
    for name in sorted(bundle.series):
        if name in CORE_NAMES or role(name) != "component":
            continue
        pts = _points(bundle, name)
        if len(pts) < shape.MIN_POINTS or any(nonfinite(p.value) for p in pts):
            continue
        for f in shape.divergence(pts, name):
            f.kind, f.stage = "divergence", "runtime"
            start = ctx.start_of(f)
            if total_falls:  # a trade-off between terms: an observation, never the verdict
                f.role, f.suggests, f.kind = "factor", None, "trajectory"
            elif start is not None:  # the total falls over the rise's own span, or a task metric improves
                why = ctx.total_improves(loss, start) or ctx.task_improves(bundle, start)
                if why:
                    ctx.demote(f, name, why)
            out.append(f)
    return out


def _other_loss_nonfinite(bundle) -> List[Finding]:
    """The first loss component or validation loss that turns non-finite and stays so, when that is a failure:
    it was finite before (the model's outputs went non-finite), or the total beside it cannot be the model's
    (`Train mse: nan` beside a `loss: 0.00000` that never moves). A term that is NaN from its first value beside a
    total that trains is a metric with nothing to measure (`mask_loss: nan` on batches with no masks)."""
    total = [p.value for _i, p in finite_points(_points(bundle, "loss"))]
    degenerate = not total or len(set(total)) == 1
    for name in sorted(bundle.series):
        if name in ("loss", "grad_norm") or (name != "eval_loss" and role(name) != "component"):
            continue
        o = nf.find_onset(name, bundle.series.get(name) or [])
        if o is None or not o.persistent:
            continue
        was_finite = any(is_finite(p.value) for p in o.points[:o.index])
        if was_finite or degenerate:
            return [nf.nonfinite_finding(o)]
    return []


def _rose_to_chance(points: List[Point], k_config) -> bool:
    """The loss rose, but only to the chance level ln(K) (K from the config, else a common size) and its
    minimum never went far below it: a model collapsing to uniform predictions, not one that learned and blew
    up."""
    fin = [p.value for _i, p in finite_points(points)]
    if len(fin) < 3:
        return False
    tail = sorted(fin[-3:])[1]
    ks = [k_config[0]] if k_config else shape.COMMON_K
    k = nearest_k(tail, ks)
    return k is not None and min(fin) >= 0.85 * math.log(k) and max(fin[-3:]) <= math.log(k) + tolerance(k)


def detect(bundle) -> List[Finding]:
    out: List[Finding] = []
    onsets = [nf.find_onset(m, bundle.series.get(m) or []) for m in ("loss", "grad_norm")]
    for o in onsets:
        if o is not None:
            out.append(nf.nonfinite_finding(o))
    if onsets == [None, None]:  # a loss term or the validation loss non-finite for good while the total is not
        out.extend(_other_loss_nonfinite(bundle))
    if onsets[0] is None and onsets[1] is not None and onsets[1].persistent:
        blew = _finite_blowup_before(_points(bundle, "loss"), onsets[1])
        if blew is not None:  # the loss blew up (finite) first: the non-finite grad norm is its consequence
            out[-1].claim += f"; the loss stays finite throughout and had already blown up ({blew})"
            out[-1].role, out[-1].suggests, out[-1].confidence = "factor", None, 0.4
            out[-1].consequence_of = "divergence"
            onsets[1] = None
    persistent = [o for o in onsets if o is not None and o.persistent]
    onset: Optional[nf.Onset] = None
    if persistent:
        onset = persistent[0] if len(persistent) == 1 or not nf.earlier(persistent[1], persistent[0]) \
            else persistent[1]

    grad = _points(bundle, "grad_norm")
    if onset is not None:
        gpts = onset.points if onset.name == "grad_norm" else grad
        out.extend(nf.gradnorm_spike_before(gpts, onset))
        out.extend(nf.lr_peak_before(_points(bundle, "lr"), onset))
    out.extend(nf.loss_scale_findings(_points(bundle, "loss_scale"), onset))
    for counter in ("nan_iterations", "skipped_iterations"):
        out.extend(nf.counter_findings(counter, _points(bundle, counter), onset))

    loss = _points(bundle, "loss")
    div: List[Finding] = []
    if loss:
        pre = loss
        if onset is not None and onset.name == "loss" and onset.series is bundle.best_series("loss"):
            pre = onset.points[:onset.index]
        div = shape.divergence(pre, "loss", before_nan=_onset_text(onset) if onset is not None else None)
        for f in div:  # a rise that ends in NaN is the NaN's precursor
            f.kind, f.precursor_of = "divergence", ("NaN" if onset is not None else None)
        if div and onset is None and _rose_to_chance(pre, class_count(bundle)):
            div = []  # never left the chance neighbourhood, ends at ln(K): not learning (chance.py says so)
        for f in div if onset is None else []:  # a task metric that improves over the rise: the run learns
            start = ctx.start_of(f)
            why = ctx.task_improves(bundle, start) if start is not None else None
            if why:
                ctx.demote(f, "loss", why)
        out.extend(div)
        out.extend(_kind(shape.spikes(pre, "loss", skip_unrecovered=bool(div) or onset is not None), "spike"))
        out.extend(_kind(shape.plateau(pre, "loss", class_count(bundle)), "plateau"))
    out.extend(_component_divergence(bundle, loss, onset is not None or any(f.suggests for f in div)))
    if grad and not any(f.precursor_of == "NaN" and f.evidence and f.evidence[0].metric == "grad_norm" for f in out):
        out.extend(_kind(shape.spikes(grad, "grad_norm", limit=2, skip_unrecovered=onset is not None), "trajectory"))

    warm = bundle.config(*WARMUP_KEYS)
    warm_src = warm.source() if warm else None
    out.extend(sched.lr_anomalies(_points(bundle, "lr"), unstable=onset is not None or bool(div),
                                  warmup_cfg=warm_src))

    best: Optional[Tuple[int, str, Series]] = None
    for name in _STALL_METRICS:
        s = bundle.best_series(name)
        if s is not None:
            n = sum(1 for p in s.points if p.step is not None)
            if best is None or n > best[0]:
                best = (n, name, s)
    if best is not None:
        out.extend(sched.step_stall(best[2].points, best[1]))
    out.extend(sched.throughput_drop(_points(bundle, "throughput")))
    return out


def analyze_series(points: Sequence[Point], name: str,
                   k_config: Optional[Tuple[int, Source]] = None) -> List[Finding]:
    """The checks that apply to one metric on its own (the `curve` verb): non-finite values, divergence,
    spikes and plateau for losses; spikes for grad_norm; schedule anomalies for lr; collapse for loss_scale;
    counters; throughput; a stalled step counter for any of them."""
    pts = clean(points)
    out: List[Finding] = []
    path = pts[0].source.path if pts and pts[0].source is not None else ""
    onset = nf.find_onset(name, [Series(name, path, list(pts), len(pts))]) if name in ("loss", "eval_loss",
                                                                                        "grad_norm") else None
    if onset is not None:
        out.append(nf.nonfinite_finding(onset))
    pre = pts[:onset.index] if onset is not None and onset.persistent else pts
    before = _onset_text(onset) if onset is not None and onset.persistent else None
    if name in ("loss", "eval_loss"):
        div = shape.divergence(pre, name, before_nan=before)
        out.extend(div)
        out.extend(shape.spikes(pre, name, skip_unrecovered=bool(div) or before is not None))
        out.extend(shape.plateau(pre, name, k_config))
    elif name == "grad_norm":
        if onset is not None and onset.persistent:
            out.extend(nf.gradnorm_spike_before(onset.points, onset))
        else:
            out.extend(shape.spikes(pts, name, limit=2))
    elif name == "lr":
        out.extend(sched.lr_anomalies(pts))
    elif name == "loss_scale":
        out.extend(nf.loss_scale_findings(pts, None))
    elif name in ("skipped_iterations", "nan_iterations"):
        out.extend(nf.counter_findings(name, pts, None))
    elif name == "throughput":
        out.extend(sched.throughput_drop(pts))
    out.extend(sched.step_stall(points, name))
    return out


def _summary(name: str, s: Series, n_series: int) -> Dict[str, Any]:
    pts = s.points
    fin = [p for _, p in finite_points(pts)]
    steps = [p.step for p in pts if p.step is not None]
    onset = nf.find_onset(name, [s])
    d: Dict[str, Any] = {
        "path": s.path,
        "n": len(pts),
        "total": s.total,
        "first_step": steps[0] if steps else None,
        "last_step": steps[-1] if steps else None,
        "min": min(p.value for p in fin) if fin else None,
        "max": max(p.value for p in fin) if fin else None,
        "last": fin[-1].value if fin else None,
        "last_finite_step": fin[-1].step if fin else None,
        "nonfinite": sum(1 for p in pts if nonfinite(p.value)),
        "first_nonfinite_step": onset.point.step if onset is not None else None,
        "first_nonfinite": nonfinite_word(onset.point.value).lower() if onset is not None else None,
    }
    if onset is not None and onset.point.step is None:
        d["first_nonfinite_at"] = where(onset.point, onset.index)
    if n_series > 1:
        d["series"] = n_series
    return d


def summarize(bundle) -> Dict[str, Dict[str, Any]]:
    """Per metric (best series): n points, first/last step, min/max/last finite value, first non-finite step."""
    out: Dict[str, Dict[str, Any]] = {}
    for name in sorted(bundle.series):
        s = bundle.best_series(name)
        if s is None or not s.points:
            continue
        if not any(is_finite(p.value) or nonfinite(p.value) for p in s.points):
            continue
        out[name] = _summary(name, s, len(bundle.series[name]))
    return out
