"""`trainwreck eval CORPUS`: accuracy of the classification per class and overall, cause hit rate, every miss.

A corpus is a folder of cases; each case folder holds the run's artifacts and a `case.json` with
`classification` (the true label) and `cause` (lowercase phrases; the primary cause is a hit when one of them
appears in its summary, signature id or meaning).
"""
from __future__ import annotations

import json
import os
import sys
from typing import Dict, List

from trainwreck.model import CLASSIFICATIONS

NAME = "eval"
ORDER = 90
HELP = "score the diagnoser on a labelled corpus (accuracy per class, cause hit rate, misses)"
DESCRIPTION = __doc__


def add_arguments(p) -> None:
    p.add_argument("corpus", metavar="CORPUS", help="folder of case folders, each with case.json")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")
    p.add_argument("-k", metavar="SUBSTR", help="only cases whose folder name contains SUBSTR")


def _hit(diag: dict, phrases: List[str]) -> bool:
    pc = diag.get("primary_cause") or {}
    hay = " ".join(str(pc.get(k) or "") for k in ("summary", "signature", "id", "meaning")).lower()
    hay += " " + (diag.get("headline") or "").lower()
    return any(p.lower() in hay for p in phrases)


def evaluate(corpus: str, only: str = None) -> Dict:
    from trainwreck.locate import NotFound
    from trainwreck.pipeline import diagnose

    cases = sorted(d for d in os.listdir(corpus) if os.path.isfile(os.path.join(corpus, d, "case.json")))
    if only:
        cases = [c for c in cases if only in c]
    per: Dict[str, Dict[str, int]] = {c: {"n": 0, "ok": 0} for c in CLASSIFICATIONS}
    misses, cause_hits, cause_n = [], 0, 0
    confusion: Dict[str, Dict[str, int]] = {}
    for i, case in enumerate(cases, 1):
        d = os.path.join(corpus, case)
        label = json.load(open(os.path.join(d, "case.json"), encoding="utf-8"))
        want = label["classification"]
        try:
            diag = diagnose(d, probe=False).diagnosis.to_json()
            got = diag["classification"]
        except NotFound as exc:
            diag, got = {}, f"error: {exc}"
        per.setdefault(want, {"n": 0, "ok": 0})
        per[want]["n"] += 1
        confusion.setdefault(want, {}).setdefault(got, 0)
        confusion[want][got] += 1
        ok = got == want
        per[want]["ok"] += ok
        hit = None
        if label.get("cause") and want != "unclear":
            cause_n += 1
            hit = ok and _hit(diag, label["cause"])
            cause_hits += bool(hit)
        if not ok or hit is False:
            pc = (diag.get("primary_cause") or {}).get("summary", "")
            misses.append({"case": case, "want": want, "got": got, "cause_hit": hit, "primary": pc[:120],
                           "want_cause": label.get("cause")})
        if sys.stderr.isatty():
            print(f"\r  {i}/{len(cases)} cases", end="", file=sys.stderr)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    n = sum(v["n"] for v in per.values())
    ok = sum(v["ok"] for v in per.values())
    return {"cases": n, "accuracy": ok / n if n else 0.0,
            "per_class": {k: {**v, "accuracy": (v["ok"] / v["n"]) if v["n"] else None} for k, v in per.items()},
            "cause_hit_rate": cause_hits / cause_n if cause_n else None, "cause_cases": cause_n,
            "confusion": confusion, "misses": misses}


def table(r: Dict) -> str:
    L = ["| classification | cases | correct | accuracy |", "|---|---:|---:|---:|"]
    for k, v in r["per_class"].items():
        if v["n"]:
            L.append(f"| {k} | {v['n']} | {v['ok']} | {100 * v['accuracy']:.0f}% |")
    L.append(f"| **overall** | {r['cases']} | {sum(v['ok'] for v in r['per_class'].values())} | "
             f"**{100 * r['accuracy']:.0f}%** |")
    if r["cause_hit_rate"] is not None:
        L.append(f"\nCause hit rate (correct class and the labelled cause named in the primary cause): "
                 f"{100 * r['cause_hit_rate']:.0f}% of {r['cause_cases']} cases")
    return "\n".join(L)


def run(args) -> int:
    if not os.path.isdir(args.corpus):
        print(f"trainwreck: {args.corpus}: not a folder", file=sys.stderr)
        return 2
    r = evaluate(args.corpus, args.k)
    if not r["cases"]:
        print(f"trainwreck: no cases (folders with case.json) in {args.corpus}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(table(r))
    if r["misses"]:
        print(f"\nMisses ({len(r['misses'])}):")
        for m in r["misses"]:
            tag = "class" if m["want"] != m["got"] else "cause"
            print(f"  {m['case']}: want {m['want']}, got {m['got']} [{tag}] — {m['primary'] or '(no primary cause)'}")
    return 0
