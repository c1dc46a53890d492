#!/usr/bin/env python3
"""Score the evidence guard on the labelled dataset in tests/hooks/dataset/cases/.

Each case's transcript is written to a temporary file, the Stop hook runs through the
exact hooks.json command (fresh CLAUDE_PLUGIN_DATA per case), and its decision is
compared with the label.  Prints accuracy, the false-block rate (blocked, should allow),
the miss rate (allowed, should block), a per-category table and every wrong case.

usage: python3 tests/hooks/score.py [-v] [-j JOBS] [--set all|synthetic|blind|dev|test] [CASE_ID_SUBSTRING ...]
  --set test prints the frozen split's figures and per-category counts only, never which cases it gets wrong
"""
import glob
import json
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from hookrun import decision, run_hook  # noqa: E402
from transcripts import filler_turns  # noqa: E402

CASES_DIR = os.path.join(HERE, "dataset", "cases")


BLIND_DIR = os.path.join(HERE, "blind")
SPLIT = os.path.join(BLIND_DIR, "split.json")


def load_split():
    """The frozen test split of the blind batches: {"rule": ..., "test": [case ids]}."""
    with open(SPLIT, encoding="utf-8") as f:
        return json.load(f)


def load_cases(filters=(), which="all"):
    """Cases of the labelled sets. which: "all"; "synthetic" (dataset/cases/, written by build_dataset.py);
    "blind" (tests/hooks/blind/*.jsonl: recorded from the real CLI by helpers who never saw the hook);
    "dev" / "test" (the blind cases outside / inside the frozen test split)."""
    cases = []
    if which in ("all", "synthetic"):
        for p in sorted(glob.glob(os.path.join(CASES_DIR, "*.json"))):
            with open(p, encoding="utf-8") as f:
                cases.append(json.load(f))
    if which in ("all", "blind", "dev", "test"):
        test = set(load_split()["test"])
        for p in sorted(glob.glob(os.path.join(BLIND_DIR, "*.jsonl"))):
            with open(p, encoding="utf-8") as f:
                for line in f:
                    c = json.loads(line)
                    if which == "all" or which == "blind" or (which == "test") == (c["id"] in test):
                        cases.append(c)
    return [c for c in cases if not filters or any(s in c["id"] for s in filters)]


def _subst(obj, old, new):
    if isinstance(obj, str):
        return obj.replace(old, new)
    if isinstance(obj, list):
        return [_subst(x, old, new) for x in obj]
    if isinstance(obj, dict):
        return {k: _subst(v, old, new) for k, v in obj.items()}
    return obj


def _expand(obj, expand):
    """Replace each marker in the record's strings by text * count (keeps huge outputs out of the repo)."""
    if isinstance(obj, str):
        for marker, (text, count) in expand.items():
            if marker in obj:
                obj = obj.replace(marker, text * count)
        return obj
    if isinstance(obj, list):
        return [_expand(x, expand) for x in obj]
    if isinstance(obj, dict):
        return {k: _expand(v, expand) for k, v in obj.items()}
    return obj


class Workspace:
    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="tw-hook-score-")
        self._fillers = {}

    def filler(self, mb):
        if mb not in self._fillers:
            p = os.path.join(self.root, "filler-%d.jsonl" % mb)
            with open(p, "w", encoding="utf-8") as f:
                f.write(filler_turns(mb << 20))
            self._fillers[mb] = p
        return self._fillers[mb]

    def materialise(self, case):
        d = tempfile.mkdtemp(dir=self.root, prefix=case["id"][:3] + "-")
        spec = case["transcript"]
        path = os.path.join(d, "session.jsonl")
        kind = spec.get("kind")
        if kind == "missing":
            path = os.path.join(d, "does-not-exist.jsonl")
        elif kind == "directory":
            path = d
        elif kind == "raw":
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(spec.get("text", ""))
        elif spec.get("session_id"):              # recorded from the real CLI: <project>/<session>.jsonl + side files
            proj = os.path.join(d, "project")
            os.makedirs(proj)
            path = os.path.join(proj, spec["session_id"] + ".jsonl")
            with open(path, "w", encoding="utf-8") as out:
                for r in spec.get("records", []):
                    out.write(json.dumps(_subst(r, "<PROJECT_DIR>", proj), ensure_ascii=False) + "\n")
            for rel, text in (spec.get("files") or {}).items():
                full = os.path.join(proj, rel)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w", encoding="utf-8") as out:
                    out.write(text.replace("<PROJECT_DIR>", proj))
        else:
            with open(path, "wb") as out:
                if spec.get("filler_mb"):
                    with open(self.filler(spec["filler_mb"]), "rb") as fin:
                        shutil.copyfileobj(fin, out)
                expand = spec.get("expand") or {}
                for r in spec.get("records", []):
                    if expand:
                        r = _expand(r, expand)
                    out.write((json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8"))
                if spec.get("partial_tail"):
                    out.write(spec["partial_tail"].encode("utf-8"))
        payload = dict(case["payload"])
        if "project" in os.listdir(d):
            payload = _subst(payload, "<PROJECT_DIR>", os.path.join(d, "project"))
        if payload.get("transcript_path") == "<TRANSCRIPT>":
            payload["transcript_path"] = path
        payload["cwd"] = d
        stdin = case.get("stdin", payload)
        return stdin, os.path.join(d, "plugin-data")

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


def run_case(ws, case):
    stdin, data = ws.materialise(case)
    rc, out, err = run_hook("Stop", stdin, data_dir=data)
    got = decision(out) if rc == 0 else "allow"
    reason = ""
    if got == "block":
        reason = json.loads(out).get("reason", "")
    return {"id": case["id"], "category": case["category"], "expected": case["expected"], "got": got,
            "rc": rc, "stderr": err.strip()[-300:], "reason": reason, "note": case.get("note", "")}


def score(cases=None, jobs=8):
    cases = load_cases() if cases is None else cases
    ws = Workspace()
    try:
        for c in cases:                     # build fillers up front, not in parallel
            if c["transcript"].get("filler_mb"):
                ws.filler(c["transcript"]["filler_mb"])
        with ThreadPoolExecutor(max_workers=jobs) as ex:
            results = list(ex.map(lambda c: run_case(ws, c), cases))
    finally:
        ws.close()
    n = len(results)
    should_allow = [r for r in results if r["expected"] == "allow"]
    should_block = [r for r in results if r["expected"] == "block"]
    false_blocks = [r for r in should_allow if r["got"] == "block"]
    misses = [r for r in should_block if r["got"] == "allow"]
    return {
        "n": n, "allow": len(should_allow), "block": len(should_block),
        "accuracy": (n - len(false_blocks) - len(misses)) / n if n else 0.0,
        "false_block_rate": len(false_blocks) / len(should_allow) if should_allow else 0.0,
        "miss_rate": len(misses) / len(should_block) if should_block else 0.0,
        "false_blocks": false_blocks, "misses": misses, "results": results,
        "nonzero_exit": [r for r in results if r["rc"] != 0],
    }


def main(argv):
    verbose = "-v" in argv
    jobs = 8
    args = [a for a in argv if a != "-v"]
    if "-j" in args:
        i = args.index("-j")
        jobs = int(args[i + 1])
        del args[i:i + 2]
    which = "all"
    if "--set" in args:
        i = args.index("--set")
        which = args[i + 1]
        del args[i:i + 2]
    if which == "test" and "--show-test-misses" not in args:
        # the frozen split is measured, never tuned on: its figures are printed, its wrong cases are not
        s = score(load_cases(args, which), jobs)
        s["false_blocks"], s["misses"] = [], []
        for r in s["results"]:
            r["note"] = ""
        verbose = False
        print("(frozen test split: per-case results hidden)")
    else:
        args = [a for a in args if a != "--show-test-misses"]
        s = score(load_cases(args, which), jobs)
    cats = {}
    for r in s["results"]:
        c = cats.setdefault(r["category"], [0, 0])
        c[0] += 1
        c[1] += r["got"] == r["expected"]
    print("%-22s %5s %7s" % ("category", "cases", "correct"))
    for k in sorted(cats):
        print("%-22s %5d %7d" % (k, cats[k][0], cats[k][1]))
    for r in s["false_blocks"]:
        print("FALSE BLOCK %s (%s)\n    %s" % (r["id"], r["note"], r["reason"][:300]))
    for r in s["misses"]:
        print("MISS        %s (%s)" % (r["id"], r["note"]))
    for r in s["nonzero_exit"]:
        print("EXIT %d      %s: %s" % (r["rc"], r["id"], r["stderr"]))
    if verbose:
        for r in s["results"]:
            if r["got"] == "block":
                print("block %s: %s" % (r["id"], r["reason"][:200]))
    print("cases %d (should allow %d, should block %d)" % (s["n"], s["allow"], s["block"]))
    print("accuracy %.1f%%   false-block rate %.1f%%   miss rate %.1f%%"
          % (100 * s["accuracy"], 100 * s["false_block_rate"], 100 * s["miss_rate"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
