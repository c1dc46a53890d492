"""`trainwreck rollback`: the last intact checkpoint before the failure's onset (first non-finite step, start of
divergence, or the precursor that came before them, such as a grad-norm spike), and the resume plan: rewind
there, skip the batches that preceded the onset, lower the learning rate. Checkpoints are checked from their
container format and never loaded. A view of the diagnosis: the same checkpoint `diagnose` recommends."""
from __future__ import annotations

import json
import sys

NAME = "rollback"
ORDER = 45
HELP = "find the last intact checkpoint before the loss spike / NaN onset and print a resume plan"
DESCRIPTION = __doc__


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="run directory (default: most recent run)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-probe", action="store_true", help="accepted for symmetry; rollback never probes")


def plan(result) -> dict:
    d = result.diagnosis
    rb = d.rollback
    out = {"classification": d.classification, "onset_step": rb.get("before_step"),
           "failure_onset_step": d.onset.get("step"), "precursors": d.precursors, "checkpoints": d.checkpoints,
           "rollback_to": rb.get("checkpoint")}
    if rb.get("plan"):
        out["plan"] = rb["plan"]
    return out


def run(args) -> int:
    from trainwreck.pipeline import diagnose
    r = plan(diagnose(args.path, probe=False))
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    onset, before = r["failure_onset_step"], r["onset_step"]
    line = f"classification: {r['classification']}; onset: step {onset if onset is not None else 'unknown'}"
    if before is not None and before != onset:
        first = r["precursors"][0] if r["precursors"] else None
        line += f"; roll back before step {before}" + (f" ({first['summary']}, {first['cite']})" if first else "")
    print(line)
    if not r["checkpoints"]:
        print("no checkpoints found in the run directory (looked for *.pt, *.pth, *.ckpt, *.safetensors, *.bin)")
        return 0
    for c in sorted(r["checkpoints"], key=lambda c: (c["step"] is None, c["step"] or 0)):
        state = "intact" if c["ok"] else ("DAMAGED: " + c["problem"] if c["ok"] is False else "unchecked format")
        print(f"  {c['path']:<40} step {c['step']}  {state}")
    if not r["rollback_to"]:
        print("no intact checkpoint with a known step before the onset", file=sys.stderr)
        return 0
    print("\nPlan:")
    for i, s in enumerate(r["plan"], 1):
        print(f"  {i}. {s}")
    return 0
