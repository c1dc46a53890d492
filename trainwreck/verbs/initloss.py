"""`trainwreck init-loss`: is the first logged loss what a freshly initialised model should give?

For cross-entropy over K classes (or a vocabulary of K tokens) the expected initial loss is ln(K). A first loss
far below it suggests label leakage or a loss averaged differently; far above it, too-large initial logits
(init scale, missing normalisation) or a wrong loss reduction.
"""
from __future__ import annotations

import json
import math

NAME = "init-loss"
ORDER = 40
HELP = "compare the first logged loss with ln(num_classes or vocab) (the expected cross-entropy at init)"
DESCRIPTION = __doc__


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="run directory or log (default: most recent run)")
    p.add_argument("--num-classes", type=int, metavar="K", help="number of classes (default: from the config)")
    p.add_argument("--vocab", type=int, metavar="V", help="vocabulary size for a language model")
    p.add_argument("--json", action="store_true")


def check(bundle, k=None):
    src = None
    if not k:
        e = bundle.config("num_classes", "n_classes", "num_labels", "vocab_size", "n_vocab", "padded_vocab_size")
        if e:
            try:
                k, src = int(float(e.value)), f"{e.path}:{e.line}"
            except ValueError:
                k = None
    s = bundle.best_series("loss")
    pts = [p for p in (s.points if s else []) if math.isfinite(p.value)]
    if not pts:
        return {"ok": None, "why": "no finite loss values were found"}
    first = pts[0]
    out = {"first_loss": first.value, "step": first.step, "cite": first.source.cite()}
    if not k or k < 2:
        out.update(ok=None, why="the number of classes / vocabulary size is unknown: pass --num-classes or --vocab")
        return out
    exp = math.log(k)
    ratio = first.value / exp
    out.update(expected=round(exp, 4), k=k, k_source=src or "command line", ratio=round(ratio, 3))
    if 0.8 <= ratio <= 1.25:
        out.update(ok=True, verdict=f"first loss {first.value:.4g} matches ln({k}) = {exp:.4g}: initialisation and "
                   "loss wiring look right")
    elif ratio < 0.8:
        out.update(ok=False, verdict=f"first loss {first.value:.4g} is well below ln({k}) = {exp:.4g}: the first logged "
                   "step may be late (already learning), labels may leak into inputs, or the loss is not a mean "
                   "cross-entropy over {k} classes")
    else:
        out.update(ok=False, verdict=f"first loss {first.value:.4g} is {ratio:.1f}× ln({k}) = {exp:.4g}: initial logits "
                   "are too large (init scale, missing final norm, temperature) or the loss is summed, not averaged")
    return out


def run(args) -> int:
    from trainwreck.collect import collect
    from trainwreck.locate import locate
    b = collect(locate(args.path))
    r = check(b, args.num_classes or args.vocab)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    if r.get("ok") is None:
        print(f"init-loss: {r['why']}" + (f" (first loss {r['first_loss']:.4g} at {r['cite']})" if "first_loss" in r
                                          else ""))
        return 0 if "first_loss" in r else 2
    print(("OK   " if r["ok"] else "LOOK ") + r["verdict"])
    print(f"     first loss at {r['cite']}; K={r['k']} from {r['k_source']}")
    return 0
