#!/usr/bin/env python3
"""Stop-hook latency against a 50 MB transcript, next to the start-up of a bare interpreter.

Builds a transcript of about 50 MB (tool-result filler, then a real-format session at the
end), runs the Stop hook command from hooks/hooks.json through the shell exactly as Claude
Code does, and prints p50/p95 of the hook, of `python3 -c pass`, and their ratio.  Also
times the worst case for the reader: a claim whose quote is found nowhere, so the hook
reads back up to its cap (16 MB; past it the quote may sit earlier, so the stop is let through).  Prints figures only; asserts nothing.

usage: python3 bench/hook_latency.py [--runs N] [--mb SIZE]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hook_command(event="Stop"):
    spec = json.load(open(os.path.join(ROOT, "hooks", "hooks.json")))
    for group in spec["hooks"][event]:
        for h in group["hooks"]:
            if h.get("type", "command") == "command" and h.get("command"):
                return h["command"]
    raise SystemExit("no %s command in hooks/hooks.json" % event)


def session_records(sid):
    """A small real-format session: prompt, attachments, a Bash call with its result."""
    recs = [
        {"type": "queue-operation", "operation": "enqueue", "sessionId": sid, "content": "why is my loss NaN?"},
        {"type": "user", "uuid": "u-prompt", "sessionId": sid, "isSidechain": False,
         "message": {"role": "user", "content": "why is my loss NaN? the run is in runs/exp1"}},
        {"type": "attachment", "uuid": "a1", "attachment": {"type": "date", "date": "2026-11-29"}},
        {"type": "assistant", "uuid": "as1", "message": {"id": "msg_1", "role": "assistant", "content": [
            {"type": "text", "text": "Checking the log first."}]}},
        {"type": "assistant", "uuid": "as2", "message": {"id": "msg_1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash",
             "input": {"command": "grep -n -i nan runs/exp1/train.log"}}]}},
        {"type": "user", "uuid": "tr1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3:step 120 loss=nan lr=3.0",
             "is_error": False}]},
         "toolUseResult": {"stdout": "3:step 120 loss=nan lr=3.0", "stderr": "", "interrupted": False}},
    ]
    return recs


def build(path, mb, sid):
    filler = json.dumps({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_x", "content": "step 1 loss=2.3\n" * 2000}]}}) + "\n"
    with open(path, "w") as f:
        n = 0
        while n < mb << 20:
            f.write(filler)
            n += len(filler)
        for r in session_records(sid):
            f.write(json.dumps(r) + "\n")


def timings(argv, shell, data, runs, env):
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, shell=shell, input=data, capture_output=True, text=True, timeout=60, env=env)
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2], ts[int(0.95 * (len(ts) - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--row", action="store_true", help="print one Markdown table row (for bench/run)")
    ap.add_argument("--hostile", action="store_true", help="print the row of the worst hostile payload "
                    "(tests/hooks/hostile.py) as a ratio to a plain payload")
    args = ap.parse_args()
    if args.hostile:
        return hostile_row(args.runs)
    d = tempfile.mkdtemp(prefix="tw-hook-bench-")
    try:
        sid = "bench-session"
        tpath = os.path.join(d, "transcript.jsonl")
        build(tpath, args.mb, sid)
        env = dict(os.environ, CLAUDE_PLUGIN_ROOT=ROOT, CLAUDE_PLUGIN_DATA=os.path.join(d, "data"))
        cmd = hook_command()
        base = {"session_id": sid, "transcript_path": tpath, "cwd": d, "hook_event_name": "Stop",
                "stop_hook_active": False}
        cases = [
            ("backed claim", "The root cause is a learning rate that is too high; the loss went NaN at step 120."),
            ("no claim", "I added the missing import and the tests pass."),
            ("fabricated quote (reads to the cap)",
             "The log shows `step 130 loss=nan lr=3.0`, so the root cause is the learning rate."),
        ]
        p50b, p95b = timings(["python3", "-c", "pass"], False, "", args.runs, env)
        if args.row:                    # the slowest of the three cases (issue 11's target: 1.5)
            p95 = max(timings(cmd, True, json.dumps(dict(base, last_assistant_message=m)), args.runs, env)[1]
                      for _name, m in cases)
            print("| Stop hook p95 (slowest case), %d MB transcript, vs python3 -c pass | %.2f | ≤ 1.5 | %.0f ms vs "
                  "%.0f ms |" % (args.mb, p95 / p95b, p95 * 1e3, p95b * 1e3))
            return 0
        print("transcript: %.1f MB   runs per case: %d" % (os.path.getsize(tpath) / 1e6, args.runs))
        print("python3 -c pass          p50 %6.1f ms   p95 %6.1f ms" % (p50b * 1e3, p95b * 1e3))
        for name, msg in cases:
            data = json.dumps(dict(base, last_assistant_message=msg))
            p50, p95 = timings(cmd, True, data, args.runs, env)
            out = subprocess.run(cmd, shell=True, input=data, capture_output=True, text=True, timeout=60, env=env).stdout
            print("hook: %-36s p50 %6.1f ms   p95 %6.1f ms   p95 ratio %.2f   -> %s" % (
                name, p50 * 1e3, p95 * 1e3, p95 / p95b, "block" if '"block"' in out else "allow"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return 0


def hostile_row(runs):
    """The Stop hook on each hostile payload of tests/hooks/hostile.py against the plain one, p50 of `runs`."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "hooks"))
    import hostile
    d = tempfile.mkdtemp(prefix="tw-hook-hostile-")
    try:
        env = dict(os.environ, CLAUDE_PLUGIN_ROOT=ROOT, CLAUDE_PLUGIN_DATA=os.path.join(d, "data"))
        cmd = hook_command()
        n = max(3, runs // 4)
        plain, _ = timings(cmd, True, json.dumps(hostile.payload(d, hostile.plain)), n, env)
        worst = max((timings(cmd, True, json.dumps(hostile.payload(d, c)), n, env)[0], c.__name__)
                    for c in hostile.HOSTILE)
        print("| Stop hook, worst hostile payload (%s) vs a plain one | %.2f | < 1 s | %.0f ms vs %.0f ms |"
              % (worst[1], worst[0] / plain, worst[0] * 1e3, plain * 1e3))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
