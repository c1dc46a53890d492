"""The run's timeline: where a finding sits in training steps, the failure's onset (with its source), the
precursors that came before it, the step a rollback must go back before, and the rank that failed first.

A step is always a logged training step, never a line index: a log line is placed after the last metric line
logged before it in the same file."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from trainwreck.collect.bundle import Bundle
from trainwreck.model import Finding, cite

StepIndex = Dict[str, List[Tuple[int, int]]]


def step_index(bundle: Bundle) -> StepIndex:
    """Per log file, (line, step) of every metric line in it: places a log line on the training timeline."""
    idx: StepIndex = {}
    for series in bundle.series.values():
        for s in series:
            for p in s.points:
                if p.source.line is not None and p.step is not None:
                    idx.setdefault(p.source.path, []).append((p.source.line, p.step))
    for v in idx.values():
        v.sort()
    return idx


def when(f: Finding, idx: StepIndex) -> Optional[float]:
    """The training step at which a finding happened, when it can be known (x.5: after step x was logged)."""
    if f.step is not None:
        return float(f.step)
    if not f.evidence:
        return None
    e = f.evidence[0]
    if e.metric is not None and e.step is not None:
        return float(e.step)
    if e.line is None or e.path not in idx:
        return None
    prior = [st for ln, st in idx[e.path] if ln <= e.line]
    return float(max(prior)) + 0.5 if prior else None  # after the last step logged before it


def earliest(fs: List[Finding], idx: StepIndex) -> Optional[float]:
    times = [t for t in (when(f, idx) for f in fs) if t is not None]
    return min(times) if times else None


def _metric_step(f: Finding) -> Optional[Tuple[int, Dict[str, Any]]]:
    for e in f.evidence:
        if e.metric is not None and e.step is not None:
            return e.step, e.to_json()
    return None


def onset(cls: str, primary: Optional[Finding], causes: List[Finding]) -> Dict[str, Any]:
    """The step the failure starts at: the primary cause's own step (a detector's onset, e.g. the first
    non-finite point), else the first metric point it cites; else the same from another finding of the class.
    {"step": None} when no finding of the class is placed on the training timeline."""
    for f in [primary] + causes:
        if f is None or not (f.suggests == cls or f is primary):
            continue
        if f.step is not None:
            src = next((e.to_json() for e in f.evidence if e.metric is not None and e.step == f.step), None)
            return {"step": f.step, "finding": f.id, "cite": cite(src) if src else "", "source": src} if src else \
                {"step": f.step, "finding": f.id, "cite": ""}
        hit = _metric_step(f)
        if hit is not None:
            step, src = hit
            return {"step": step, "finding": f.id, "cite": cite(src), "source": src}
    return {"step": None}


def precursors(cls: str, findings: List[Finding], onset_step: Optional[int]) -> List[Dict[str, Any]]:
    """Findings that say they precede this class's failure (a grad-norm spike before a NaN), earliest first."""
    out = []
    for f in findings:
        if f.precursor_of != cls or f.step is None or (onset_step is not None and f.step > onset_step):
            continue
        d = f.to_json()
        out.append({"id": f.id, "step": f.step, "summary": d["summary"], "label": f.label,
                    "cite": cite(f.evidence[0]) if f.evidence else ""})
    return sorted(out, key=lambda p: p["step"])


def rollback_before(onset_step: Optional[int], pre: List[Dict[str, Any]]) -> Optional[int]:
    """A rollback goes back before the instability began: the earliest precursor, else the onset."""
    steps = [p["step"] for p in pre] + ([onset_step] if onset_step is not None else [])
    return min(steps) if steps else None


def first_failing_rank(findings: List[Finding], primary: Optional[Finding]) -> Optional[Dict[str, Any]]:
    """The rank that failed first: the launcher's / traceback order's account when there is one, else the rank
    the primary cause's evidence came from."""
    for f in findings:
        if f.kind == "launcher-summary" and not f.signature and f.rank is not None:
            return {"rank": f.rank, "finding": f.id, "cite": cite(f.evidence[0]) if f.evidence else ""}
    if primary is not None and primary.rank is not None:
        return {"rank": primary.rank, "finding": primary.id,
                "cite": cite(primary.evidence[0]) if primary.evidence else ""}
    return None
