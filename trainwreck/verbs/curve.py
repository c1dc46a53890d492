"""`trainwreck curve`: loss / grad-norm / lr / loss-scale trajectories and what they show: the first non-finite
step and what preceded it, divergence, spikes, plateaus at chance level, schedule anomalies, stalled steps."""
from __future__ import annotations

import json
import sys

NAME = "curve"
ORDER = 30
HELP = "analyze metric trajectories (first non-finite step, spikes, divergence, plateau, lr anomalies)"
DESCRIPTION = __doc__


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="run directory, metrics file or log (default: most recent run)")
    p.add_argument("--metric", metavar="NAME", help="only this metric (loss, grad_norm, lr, loss_scale, …)")
    p.add_argument("--json", action="store_true", help="print summary and findings as JSON")


def run(args) -> int:
    from trainwreck.analyze import trajectory
    from trainwreck.collect import collect
    from trainwreck.locate import locate
    b = collect(locate(args.path))
    if args.metric:
        b.series = {k: v for k, v in b.series.items() if k == args.metric}
    summary = trajectory.summarize(b)
    findings = trajectory.detect(b)
    if args.json:
        print(json.dumps({"summary": summary, "findings": [
            {"id": f.id, "label": f.label, "claim": f.claim, "suggests": f.suggests, "role": f.role,
             "evidence": [e.to_json() for e in f.evidence]} for f in findings], "notes": b.notes}, indent=2))
        return 0
    if not b.series:
        print(f"no metrics found in {args.path or b.target} (looked for metrics.jsonl, trainer_state.json, "
              "metrics.csv and metric lines in logs)")
        return 0
    print(f"trainwreck curve · {b.target}\n")
    for name, s in summary.items():
        if isinstance(s, dict):
            print(f"  {name:<12} " + ", ".join(f"{k}={v}" for k, v in s.items() if v is not None))
    print()
    if not findings:
        print("No anomaly in the trajectories: finite throughout, no divergence, spike, plateau or stall found.")
    for f in findings:
        e = f.evidence[0].cite() if f.evidence else ""
        print(f"  [{f.label}] {f.claim}  ({e})")
    for n in b.notes:
        print(f"note: {n}", file=sys.stderr)
    return 0
