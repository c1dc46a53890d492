"""`trainwreck rollback`: the last intact checkpoint before the failure's onset (first non-finite step, start of
divergence or of a loss spike), and the resume plan: rewind there, skip the batches that preceded the onset,
lower the learning rate. Checkpoints are checked from their container format and never loaded."""
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
    from trainwreck.decide.next_steps import onset_step, rollback_checkpoint
    d = result.diagnosis
    b = result.bundle
    onset = None
    prim = next((f for f in result.findings if f.id == (d.primary_cause or {}).get("id")), None)
    onset = onset_step(d.classification, prim, [f for f in result.findings if f.suggests == d.classification])
    precursor = ("spike", "collapse", "before-nan", "divergence", "explosion", "blowup")
    for f in result.findings:  # an earlier precursor (grad-norm spike, loss spike) moves the onset back
        if f.id.startswith("metric.") and any(w in f.id for w in precursor) and f.order is not None:
            if onset is None or f.order < onset:
                onset = int(f.order)
    ck = rollback_checkpoint(b, onset)
    out = {"classification": d.classification, "onset_step": onset, "checkpoints": b.checkpoints,
           "rollback_to": ck}
    if ck:
        skip_from = ck["step"]
        out["plan"] = [f"resume from {ck['path']} (step {ck['step']}, {ck['size']} bytes, container intact)",
                       f"skip or reshuffle the data between steps {skip_from} and {onset if onset else '?'} "
                       "(the batches that preceded the onset)",
                       "lower the peak learning rate by 2–3× (or lengthen warmup) and enable gradient clipping 1.0",
                       "watch grad_norm and loss_scale for the first 100 steps after resuming"]
    return out


def run(args) -> int:
    from trainwreck.pipeline import diagnose
    r = plan(diagnose(args.path, probe=False))
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"classification: {r['classification']}; onset: step {r['onset_step'] if r['onset_step'] is not None else 'unknown'}")
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
