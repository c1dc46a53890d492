#!/usr/bin/env python3
"""Write the labelled Stop-hook dataset: one JSON file per case under cases/.

usage: python3 tests/hooks/dataset/build_dataset.py      (rewrites cases/)

A case file holds
  id, category, expected ("block" | "allow"), note
  payload      the Stop payload; "<TRANSCRIPT>" stands for the transcript's path
  transcript   {"kind": "jsonl", "records": [...], "partial_tail"?: str, "filler_mb"?: int,
                "expand"?: {marker: [text, count]}}
               {"kind": "missing"} | {"kind": "directory"} | {"kind": "raw", "text": str}
  stdin        (optional) raw text sent instead of the JSON payload
The scorer (tests/hooks/score.py) writes the transcript to a temporary file and runs the
hook through the exact hooks.json command.
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import generic  # noqa: E402
import multilingual  # noqa: E402
import phrasing  # noqa: E402
import scenarios  # noqa: E402
from transcripts import Transcript, stop_payload  # noqa: E402

CASES = []


def add(category, expected, note, transcript=None, message=None, active=False, tkind=None, extra=None,
        payload_over=None, stdin=None):
    n = len(CASES) + 1
    cid = "%03d-%s" % (n, category)
    sid = "case-%03d-%s" % (n, "5e1d")
    if transcript is not None:
        transcript.sid = sid
        for r in transcript.records:
            if "sessionId" in r:
                r["sessionId"] = sid
    payload = stop_payload(sid, "<TRANSCRIPT>", "/home/dev/proj", message, active=active)
    if payload_over:
        payload.update(payload_over)
    if tkind is None:
        tspec = {"kind": "jsonl", "records": transcript.records if transcript else []}
    else:
        tspec = dict(tkind)
        if transcript is not None and "records" not in tspec and tspec["kind"] == "jsonl":
            tspec["records"] = transcript.records
    if extra:
        tspec.update(extra)
    case = {"id": cid, "category": category, "expected": expected, "note": note, "payload": payload,
            "transcript": tspec}
    if stdin is not None:
        case["stdin"] = stdin
    CASES.append(case)


def run_probes(t, probes, thinking=None):
    for i, (tool, inp, out, lead) in enumerate(probes):
        if tool == "Read" and isinstance(out, str):
            t.read(inp["file_path"], out, lead_text=lead, offset=inp.get("offset", 1))
        else:
            t.tool(tool, inp, out, lead_text=lead, thinking=thinking if i == 0 else None)


def session(s, probes=True, seed="", thinking=None, earlier=None):
    t = Transcript(seed=s["key"] + seed)
    if earlier:
        earlier(t)
    t.prompt(s["prompt"])
    if probes:
        run_probes(t, s["probes"], thinking=thinking)
    return t


def finish(t, message):
    t.say(message)
    return t


def scenario_cases():
    for s in scenarios.ALL:
        k = s["key"]
        for i, m in enumerate(s["backed"]):
            t = finish(session(s, seed="b%d" % i, thinking="The log has what I need." if i % 2 else None), m)
            add("backed", "allow", "%s: claim quotes only what the probes printed" % k, t, m)
        for i, m in enumerate(s["backed"][:2]):
            t = finish(session(s, probes=False, seed="u%d" % i), m)
            add("unbacked", "block", "%s: same claim, but no tool ran in this turn" % k, t, m)
        for i, m in enumerate(s["fabricated"]):
            t = finish(session(s, seed="f%d" % i), m)
            add("fabricated", "block", "%s: quotes a line no tool printed" % k, t, m)
        for i, m in enumerate(s["misquoted"]):
            t = finish(session(s, seed="m%d" % i), m)
            add("misquoted", "block", "%s: quotes a real line with a number changed" % k, t, m)
        for i, m in enumerate(s["hedged"]):
            t = finish(session(s, probes=False, seed="h%d" % i), m)
            add("hedged", "allow", "%s: hypothesis, question or plan; nothing ran" % k, t, m)
        m = s["hedged"][0]
        t = finish(session(s, seed="hp"), m)
        add("hedged", "allow", "%s: hedged reply after probes" % k, t, m)


def multilingual_cases():
    by_key = {s["key"]: s for s in scenarios.ALL}
    for lang, key, kind, m in multilingual.REPLIES:
        s = by_key[key]
        probes = kind in ("backed", "fabricated")
        t = finish(session(s, probes=probes, seed=lang + kind), m)
        expected = "allow" if kind in ("backed", "hedged") else "block"
        add("lang-%s-%s" % (lang, kind), expected, "%s reply (%s) for %s" % (lang, kind, key), t, m)


def phrasing_cases():
    for i, (prompt, reply, is_claim) in enumerate(phrasing.REPLIES):
        t = Transcript(seed="phr%d" % i)
        t.prompt(prompt)
        t.say(reply)
        add("phrasing-claim" if is_claim else "phrasing-other", "block" if is_claim else "allow",
            "one-turn reply, nothing ran: " + ("an unbacked claim" if is_claim else "not a claim"), t, reply)


def main():
    scenario_cases()
    multilingual_cases()
    generic.build(add, scenarios, Transcript, run_probes)
    phrasing_cases()
    out = os.path.join(HERE, "cases")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for c in CASES:
        with open(os.path.join(out, c["id"] + ".json"), "w", encoding="utf-8") as f:
            json.dump(c, f, ensure_ascii=False, indent=1)
            f.write("\n")
    counts = {}
    for c in CASES:
        counts[c["expected"]] = counts.get(c["expected"], 0) + 1
    print("%d cases (%s) in %s" % (len(CASES), ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items())), out))


if __name__ == "__main__":
    main()
