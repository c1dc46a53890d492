"""`trainwreck eval CORPUS`: accuracy per class on the dev and the frozen test split, each batch's first look.

A corpus is a folder of cases; each case folder holds the run's artifacts and a `case.json` with
`classification` (the true label), `cause` (lowercase phrases; the primary cause is a hit when one of them
appears in its summary, signature id or meaning), and optionally `outcome` (failed, completed, interrupted,
running, unknown) and `evidence_line` (a unique part of the decisive line: a hit when a cited evidence line of
the primary cause, a ranked cause or the outcome holds it).

Two optional files in the corpus make the figures honest:
  split.json    {"test": [case folders]}: the frozen test split. Its misses are not listed (only counted) unless
                --show-test-misses is given: tune on dev, report test.
  batches.json  {"batches": [{"name", "range": [lo, hi] or "ranges": [[lo, hi], …], "first_look"}]}: the accuracy each
                batch of cases had at its first look, before any change made because of it. Printed next to the
                batch's accuracy today.
"""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Dict, List, Optional

from trainwreck.model import CLASSIFICATIONS

NAME = "eval"
ORDER = 90
HELP = "score the diagnoser on a labelled corpus (dev and frozen test split, per class, per batch, misses)"
DESCRIPTION = __doc__


def add_arguments(p) -> None:
    p.add_argument("corpus", metavar="CORPUS", help="folder of case folders, each with case.json")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")
    p.add_argument("-k", metavar="SUBSTR", help="only cases whose folder name contains SUBSTR")
    p.add_argument("--show-test-misses", action="store_true",
                   help="also list the test split's misses (only when reporting, never while tuning)")


def _hit(diag: dict, phrases: List[str]) -> bool:
    pc = diag.get("primary_cause") or {}
    hay = " ".join(str(pc.get(k) or "") for k in ("summary", "signature", "id", "meaning")).lower()
    hay += " " + (diag.get("headline") or "").lower()
    hay = hay.replace("\u201c", "").replace("\u201d", "")  # the marks around quoted log text are not words
    return any(p.lower() in hay for p in phrases)


def _evidence_hit(diag: dict, needle: str) -> bool:
    needle = needle.lower()
    for c in [diag.get("primary_cause") or {}] + list(diag.get("causes") or []) + [diag.get("outcome") or {}]:
        if any(needle in str(e.get("text") or "").lower() for e in c.get("evidence") or []):
            return True
    return False


def _load(path: str) -> Optional[dict]:
    try:
        with open(path, encoding="utf-8") as f:
            got = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    return got if isinstance(got, dict) else None


def _span(r) -> bool:
    return isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in r)


def _batches(corpus: str) -> List[dict]:
    """The well-formed entries of batches.json: a name and a [lo, hi] range of case numbers (or `ranges`, a list
    of them, for a batch whose numbers were given out in several blocks)."""
    got = (_load(os.path.join(corpus, "batches.json")) or {}).get("batches")
    out = []
    for b in got if isinstance(got, list) else []:
        if not (isinstance(b, dict) and isinstance(b.get("name"), str)
                and isinstance(b.get("first_look"), (dict, type(None)))):
            continue
        spans = [b["range"]] if _span(b.get("range")) else b.get("ranges")
        if isinstance(spans, list) and spans and all(_span(r) for r in spans):
            out.append(dict(b, spans=spans, range=[min(r[0] for r in spans), max(r[1] for r in spans)]))
    return out


def _in(b: dict, num: int) -> bool:
    return any(lo <= num <= hi for lo, hi in b["spans"])


def _ranges(b: dict) -> str:
    return ", ".join(f"{lo:03d}–{hi:03d}" for lo, hi in b["spans"])


MAX_LABEL = 1 << 20  # a case.json larger than this is not a label


def _label(path: str):
    """(the case's label, None) or (None, why it cannot be used): a case.json that is not a JSON object with a
    `classification` of the known ones, phrase lists of strings and string fields, is skipped and named."""
    try:
        if os.path.getsize(path) > MAX_LABEL:
            return None, f"case.json is larger than {MAX_LABEL >> 20} MB"
        with open(path, encoding="utf-8") as f:
            label = json.load(f)
    except OSError as exc:
        return None, f"case.json cannot be read ({exc.strerror or exc})"
    except (ValueError, RecursionError):
        return None, "case.json is not valid JSON"
    if not isinstance(label, dict):
        return None, f"case.json holds a JSON {type(label).__name__}, not an object"
    want = label.get("classification")
    if not isinstance(want, str) or want not in CLASSIFICATIONS:
        return None, (f"classification {json.dumps(want)[:40]} is not one of {', '.join(CLASSIFICATIONS)}"
                      if "classification" in label else "case.json has no classification")
    cause = label.get("cause")
    if isinstance(cause, str):
        label["cause"] = [cause]  # one phrase written without its list
    elif cause is not None and not (isinstance(cause, list) and all(isinstance(c, str) for c in cause)):
        return None, "cause is not a list of phrases (strings)"
    for key in ("outcome", "evidence_line"):
        if label.get(key) is not None and not isinstance(label[key], str):
            return None, f"{key} is not a string"
    return label, None


def _number(case: str) -> Optional[int]:
    m = re.match(r"(\d+)", case)
    return int(m.group(1)) if m else None


def _rate(a: List[int]) -> Optional[float]:
    return a[0] / a[1] if a[1] else None


class _Tally:
    def __init__(self) -> None:
        self.per: Dict[str, Dict[str, int]] = {c: {"n": 0, "ok": 0} for c in CLASSIFICATIONS}
        self.cause = [0, 0]
        self.outcome = [0, 0]
        self.evidence = [0, 0]
        self.confusion: Dict[str, Dict[str, int]] = {}

    def add(self, want: str, got: str, cause_hit, outcome_ok, evidence_ok) -> None:
        self.per.setdefault(want, {"n": 0, "ok": 0})
        self.per[want]["n"] += 1
        self.per[want]["ok"] += got == want
        self.confusion.setdefault(want, {}).setdefault(got, 0)
        self.confusion[want][got] += 1
        for acc, v in ((self.cause, cause_hit), (self.outcome, outcome_ok), (self.evidence, evidence_ok)):
            if v is not None:
                acc[0] += bool(v)
                acc[1] += 1

    def json(self) -> Dict:
        n = sum(v["n"] for v in self.per.values())
        ok = sum(v["ok"] for v in self.per.values())
        return {"cases": n, "correct": ok, "accuracy": ok / n if n else 0.0,
                "per_class": {k: {**v, "accuracy": (v["ok"] / v["n"]) if v["n"] else None}
                              for k, v in self.per.items()},
                "cause_hit_rate": _rate(self.cause), "cause_cases": self.cause[1],
                "outcome_accuracy": _rate(self.outcome), "outcome_cases": self.outcome[1],
                "evidence_hit_rate": _rate(self.evidence), "evidence_cases": self.evidence[1],
                "confusion": self.confusion}


def evaluate(corpus: str, only: str = None, show_test_misses: bool = False) -> Dict:
    from trainwreck.locate import NotFound
    from trainwreck.pipeline import diagnose

    cases = sorted(d for d in os.listdir(corpus) if os.path.isfile(os.path.join(corpus, d, "case.json")))
    if only:
        cases = [c for c in cases if only in c]
    split = _load(os.path.join(corpus, "split.json")) or {}
    test = split.get("test")
    test = {t for t in test if isinstance(t, str)} if isinstance(test, list) else set()
    batches = _batches(corpus)
    tallies = {"all": _Tally(), "dev": _Tally(), "test": _Tally()}
    per_batch = {b["name"]: _Tally() for b in batches}
    misses, hidden, skipped = [], 0, []
    for i, case in enumerate(cases, 1):
        d = os.path.join(corpus, case)
        label, why = _label(os.path.join(d, "case.json"))
        if label is None:
            skipped.append({"case": case, "why": why})
            continue
        want = label["classification"]
        try:
            diag = diagnose(d, probe=False, hide=frozenset({"case.json"})).diagnosis.to_json()
            got = diag["classification"]
        except NotFound as exc:
            diag, got = {}, f"error: {exc}"
        except Exception as exc:  # one case the engine fails on is a miss with its error, not the end of the eval
            diag, got = {}, f"error: {type(exc).__name__}: {' '.join(str(exc).split())[:120]}"
        ok = got == want
        hit = None
        if label.get("cause") and want != "unclear":
            hit = ok and _hit(diag, label["cause"])
        out_ok = (diag.get("outcome") or {}).get("outcome") == label["outcome"] if label.get("outcome") else None
        ev_ok = _evidence_hit(diag, label["evidence_line"]) if label.get("evidence_line") else None
        part = "test" if case in test else "dev"
        for t in (tallies["all"], tallies[part]):
            t.add(want, got, hit, out_ok, ev_ok)
        num = _number(case)
        for b in batches:
            if num is not None and _in(b, num):
                per_batch[b["name"]].add(want, got, hit, out_ok, ev_ok)
        if not ok or hit is False:
            if part == "test" and not show_test_misses:
                hidden += 1
            else:
                pc = (diag.get("primary_cause") or {}).get("summary", "")
                misses.append({"case": case, "split": part, "want": want, "got": got, "cause_hit": hit,
                               "primary": pc[:120], "want_cause": label.get("cause")})
        if sys.stderr.isatty():
            print(f"\r  {i}/{len(cases)} cases", end="", file=sys.stderr)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    r = tallies["all"].json()
    r.update({"dev": tallies["dev"].json(), "test": tallies["test"].json(), "misses": misses,
              "test_misses_hidden": hidden, "skipped": skipped,
              "batches": [{"name": b["name"], "range": b["range"], "ranges": b["spans"],
                           "first_look": b.get("first_look"), "note": b.get("note"),
                           "now": per_batch[b["name"]].json()} for b in batches]})
    return r


def table(r: Dict, title: str = None) -> str:
    L = [f"**{title}**\n"] if title else []
    L += ["| classification | cases | correct | accuracy |", "|---|---:|---:|---:|"]
    for k, v in r["per_class"].items():
        if v["n"]:
            L.append(f"| {k} | {v['n']} | {v['ok']} | {100 * v['accuracy']:.0f}% |")
    L.append(f"| **overall** | {r['cases']} | {r['correct']} | **{100 * r['accuracy']:.0f}%** |")
    if r["cause_hit_rate"] is not None:
        L.append(f"\nCause hit rate (correct class and the labelled cause named in the primary cause): "
                 f"{100 * r['cause_hit_rate']:.0f}% of {r['cause_cases']} cases")
    for key, what in (("outcome", "Outcome accuracy (failed / completed / interrupted / running / unknown)"),
                      ("evidence", "Cited-evidence hit (the decisive line is among the cited evidence)")):
        rate = r.get(f"{key}_accuracy" if key == "outcome" else f"{key}_hit_rate")
        if rate is not None:
            L.append(f"{what}: {100 * rate:.0f}% of {r[f'{key}_cases']} cases")
    return "\n".join(L)


def batch_table(r: Dict) -> str:
    L = ["| batch | cases | first look | now |", "|---|---:|---:|---:|"]
    for b in r["batches"]:
        fl = (b.get("first_look") or {}).get("accuracy")
        now = b["now"]
        if not now["cases"]:
            continue
        L.append(f"| {b['name']} ({_ranges(dict(b, spans=b.get('ranges') or [b['range']]))}) | {now['cases']} | "
                 f"{'—' if fl is None else f'{100 * fl:.0f}%'} | {100 * now['accuracy']:.0f}% |")
    return "\n".join(L)


def run(args) -> int:
    if not os.path.isdir(args.corpus):
        print(f"trainwreck: {args.corpus}: not a folder", file=sys.stderr)
        return 2
    r = evaluate(args.corpus, args.k, args.show_test_misses)
    for sk in r["skipped"]:
        print(f"trainwreck: {sk['case']}: skipped, {sk['why']}", file=sys.stderr)
    if not r["cases"]:
        print(f"trainwreck: no usable cases (folders with a valid case.json) in {args.corpus}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    if r["test"]["cases"]:
        print(table(r["dev"], f"dev ({r['dev']['cases']} cases: tune on these)"))
        print()
        print(table(r["test"], f"test ({r['test']['cases']} cases, frozen split: report, never tune)"))
        print()
    print(table(r, f"all {r['cases']} cases" if r["test"]["cases"] else None))
    if r["batches"]:
        print("\nEach batch: accuracy at its first look (before any change made because of it) and now\n")
        print(batch_table(r))
    if r["misses"]:
        print(f"\nMisses ({len(r['misses'])}):")
        for m in r["misses"]:
            tag = "class" if m["want"] != m["got"] else "cause"
            where = " [test]" if m["split"] == "test" else ""
            print(f"  {m['case']}{where}: want {m['want']}, got {m['got']} [{tag}] — "
                  f"{m['primary'] or '(no primary cause)'}")
    if r["test_misses_hidden"]:
        print(f"\n{r['test_misses_hidden']} test-split misses not listed (frozen split; --show-test-misses to "
              f"list them when reporting)")
    return 0
