"""Facts the verbs show, derived once from the decided findings: the verdict per metric series (`curve`) and
the chance-level / initial-loss verdict (`init-loss`)."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from trainwreck.analyze.chance_level import class_count, class_count_refused, initial_loss_verdict
from trainwreck.collect.bundle import Bundle
from trainwreck.model import Finding, cite

# How a series' strongest finding reads as a one-word verdict, most telling first.
_VERDICTS = [("nonfinite", "non-finite"), ("divergence", "diverging"), ("chance", "at chance level"),
             ("plateau", "not learning"), ("precursor", "unstable before the failure"), ("spike", "spiking")]


def trajectories(summary: Dict[str, Any], findings: List[Finding]) -> Dict[str, Any]:
    """Per metric series: its summary, every finding that rests on it (in timeline order) and a verdict."""
    by_metric: Dict[str, List[Dict[str, Any]]] = {}
    kinds: Dict[str, set] = {}
    for seq, f in enumerate(findings):
        if f.from_metrics:
            name = f.evidence[0].metric
            by_metric.setdefault(name, []).append(dict(f.brief(), seq=seq))  # seq: the detectors' order
            kinds.setdefault(name, set()).add(f.kind)
    out: Dict[str, Any] = {}
    for name in sorted(set(summary) | set(by_metric)):
        fs = by_metric.get(name, [])
        verdict = next((v for k, v in _VERDICTS if k in kinds.get(name, ())), "anomalous" if fs else "no anomaly")
        out[name] = {"verdict": verdict, "summary": summary.get(name), "findings": fs}
    return out


def chance(bundle: Bundle, findings: List[Finding], k: Optional[int] = None,
           k_source: Optional[str] = None) -> Dict[str, Any]:
    """Is the first logged loss what a fresh model over K classes gives, and does the loss sit at chance level?"""
    out: Dict[str, Any] = {}
    at = next((f for f in findings if f.kind == "chance"), None)
    out["at_chance"] = at is not None
    if at is not None:
        out["finding"] = {"id": at.id, "claim": at.claim, "cite": cite(at.evidence[0]) if at.evidence else ""}
    if not k:
        cfg = class_count(bundle)
        if cfg:
            k, k_source = cfg[0], cite(cfg[1])
    s = bundle.best_series("loss")
    pts = [p for p in (s.points if s else []) if math.isfinite(p.value)]
    if not pts:
        out.update(ok=None, why="no finite loss values were found")
        return out
    first = pts[0]
    out.update(first_loss=first.value, step=first.step, cite=first.source.cite())
    if not k or k < 2:
        refused = class_count_refused(bundle)
        out.update(ok=None, why=f"{refused or 'the number of classes / vocabulary size is unknown'}: pass "
                   "--num-classes or --vocab")
        return out
    last = pts[-1]
    out.update(initial_loss_verdict(first.value, k, last.value, len(pts), last.source.cite() if last.source else ""))
    out["k_source"] = k_source or "command line"
    return out
