"""`trainwreck init-loss`: is the first logged loss what a freshly initialised model should give?

For cross-entropy over K classes (or a vocabulary of K tokens) the expected initial loss is ln(K). A first loss
far below it suggests label leakage or a loss averaged differently; far above it, too-large initial logits
(init scale, missing normalisation) or a wrong loss reduction. Also says whether the loss stays at chance level
(the same verdict `diagnose` reached: one chance-level module decides both).
"""
from __future__ import annotations

import json

NAME = "init-loss"
ORDER = 40
HELP = "compare the first logged loss with ln(num_classes or vocab) (the expected cross-entropy at init)"
DESCRIPTION = __doc__


def _count(text: str) -> int:
    """An argparse type: a number of classes, an integer of at least 2 (a usage error otherwise, exit 2)."""
    import argparse

    from trainwreck.analyze.chance_level import MAX_CLASSES
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not an integer") from None
    if not 2 <= k <= MAX_CLASSES:
        raise argparse.ArgumentTypeError(f"{text[:40]} is not a number of classes (an integer from 2 to "
                                         f"{MAX_CLASSES:.0e})")
    return k


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="run directory or log (default: most recent run)")
    p.add_argument("--num-classes", type=_count, metavar="K", help="number of classes (default: from the config)")
    p.add_argument("--vocab", type=_count, metavar="V", help="vocabulary size for a language model")
    p.add_argument("--json", action="store_true")


def check(result, k=None) -> dict:
    """The diagnosis' chance-level verdict; with K given on the command line, the same check for that K."""
    if not k:
        return dict(result.diagnosis.chance)
    from trainwreck.decide.views import chance
    return chance(result.bundle, result.findings, k)


def run(args) -> int:
    from trainwreck.pipeline import diagnose
    r = check(diagnose(args.path, probe=False), args.num_classes or args.vocab)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    stuck = r.get("finding") if r.get("at_chance") else None
    if r.get("ok") is None:
        print(f"init-loss: {r['why']}" + (f" (first loss {r['first_loss']:.4g} at {r['cite']})" if "first_loss" in r
                                          else ""))
        if stuck:
            print(f"LOOK the loss stays at chance level: {stuck['claim']} ({stuck['cite']})")
        return 0 if "first_loss" in r else 2
    print(("OK   " if r["ok"] else "LOOK ") + r["verdict"])
    print(f"     first loss at {r['cite']}; K={r['k']} from {r['k_source']}")
    if stuck:
        print(f"LOOK the loss stays at chance level: {stuck['claim']} ({stuck['cite']})")
    return 0
