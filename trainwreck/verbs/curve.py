"""`trainwreck curve`: loss / grad-norm / lr / loss-scale trajectories and what they show: the first non-finite
step and what preceded it, divergence, spikes, plateaus at chance level, schedule anomalies, stalled steps.

A view of the diagnosis: the per-series verdicts and findings `diagnose` weighed, never a second analysis."""
from __future__ import annotations

import json
import sys

from trainwreck.model import cite

NAME = "curve"
ORDER = 30
HELP = "analyze metric trajectories (first non-finite step, spikes, divergence, plateau, lr anomalies)"
DESCRIPTION = __doc__


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="run directory, metrics file or log (default: most recent run)")
    p.add_argument("--metric", metavar="NAME", help="only this metric (loss, grad_norm, lr, loss_scale, …)")
    p.add_argument("--json", action="store_true", help="print summary and findings as JSON")


def view(result, metric=None) -> dict:
    d = result.diagnosis
    traj = {k: v for k, v in d.trajectories.items() if metric is None or k == metric}
    findings = sorted((f for v in traj.values() for f in v["findings"]), key=lambda f: f["seq"])
    return {"summary": {k: v["summary"] for k, v in traj.items() if v["summary"]}, "findings": findings,
            "verdicts": {k: v["verdict"] for k, v in traj.items()}, "classification": d.classification,
            "headline": d.headline, "onset": d.onset, "precursors": d.precursors, "notes": list(result.bundle.notes)}


def run(args) -> int:
    from trainwreck.pipeline import diagnose
    r = diagnose(args.path, probe=False)
    v = view(r, args.metric)
    if args.json:
        print(json.dumps(v, indent=2))
        return 0
    if not r.bundle.series:
        print(f"no metrics found in {args.path or r.bundle.target} (looked for metrics.jsonl, trainer_state.json, "
              "metrics.csv and metric lines in logs)")
        return 0
    print(f"trainwreck curve · {r.bundle.target}\n")
    for name, s in v["summary"].items():
        if isinstance(s, dict):
            print(f"  {name:<12} " + ", ".join(f"{k}={x}" for k, x in s.items() if x is not None))
    print()
    if not v["findings"]:
        if v["classification"] in ("NaN", "divergence"):
            print(f"No anomaly in the trajectories themselves; the diagnosis rests on the logs: {v['headline']}")
        else:
            print("No anomaly in the trajectories: finite throughout, no divergence, spike, plateau or stall found.")
    for f in v["findings"]:
        print(f"  [{f['label']}] {f['claim']}  ({cite((f['evidence'] or [None])[0])})")
    for n in v["notes"]:
        print(f"note: {n}", file=sys.stderr)
    return 0
