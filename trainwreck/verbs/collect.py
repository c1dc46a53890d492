"""`trainwreck collect`: the evidence bundle a person or an agent reasons from, with a quick classification.

Prints what was read, every finding with its label and citation, traceback and metric summaries, the settings
that matter, and the last lines of each log (redacted, with line numbers). `--json` for the same as JSON.
"""
from __future__ import annotations

import sys

from trainwreck.model import cite as _cite
from trainwreck.model import printable
from trainwreck.report import outcome_line
from trainwreck.report.safe import json_text, one_line, terminal_text

NAME = "collect"
ORDER = 10
HELP = "print the evidence bundle (files, findings, tracebacks, metrics, config, log tails) and a quick classification"
DESCRIPTION = __doc__
CONFIG_KEYS = ("lr", "learning_rate", "fp16", "bf16", "precision", "gradient_clip_val", "max_grad_norm", "warmup_steps",
               "batch_size", "per_device_train_batch_size", "micro_batch_size", "gradient_accumulation_steps",
               "gradient_checkpointing", "num_workers", "max_steps", "seed", "optimizer", "num_classes", "vocab_size",
               "max_seq_len", "seq_len", "zero_stage", "stage", "loss_scale", "initial_scale_power")


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="run directory or log file (default: most recent run)")
    p.add_argument("--json", action="store_true", help="print the bundle as JSON")
    p.add_argument("--tail", type=int, default=30, metavar="N", help="log lines to show from the end of each log "
                   "(default 30)")
    p.add_argument("--no-probe", action="store_true", help="do not look at the live machine")


def bundle_json(result, tail: int) -> dict:
    b = result.bundle
    d = result.diagnosis.to_json()
    findings = []
    for f in result.findings:
        if f.kind == "stack":
            continue
        brief = f.brief()
        brief["evidence"] = brief["evidence"][:3]
        findings.append(brief)
    config = {}
    for path, entries in b.configs.items():
        for e in entries:
            if e.key.rsplit(".", 1)[-1] in CONFIG_KEYS:
                config[e.key] = {"value": e.value, "cite": f"{path}:{e.line}"}
    tails = {}
    for log in b.logs:
        tails[log.path] = [{"line": x.line, "text": x.text} for x in log.lines[-tail:]]
    tb = None
    try:
        from trainwreck.analyze.tracebacks.summary import summarize
        lines = [x for log in b.logs for x in (log.head + log.lines)] + list(b.extra_lines)
        tb = summarize(lines)
    except ImportError:
        pass
    return printable({"run": d["run"], "target": d["target"], "files": d["evidence_files"],
                      "classification": d["classification"],
            "confidence": d["confidence"], "headline": d["headline"], "outcome": d.get("outcome"), "stack": d["stack"],
            "findings": findings,
            "tracebacks": tb, "metrics_summary": d.get("metrics_summary"), "config": config,
            "checkpoints": d["checkpoints"], "onset": d["onset"], "rollback": d["rollback"],
            "first_failing_rank": d["first_failing_rank"], "chance": d["chance"], "log_tails": tails,
            "notes": d["notes"], "diagnosis": d})  # log paths and tails: a name that is not UTF-8 shown escaped


def render(j: dict) -> str:
    L = [f"trainwreck collect · {j['target']}" + (f" · {' + '.join(j['stack'])}" if j["stack"] else ""), ""]
    L.append(f"Quick classification: {j['classification']} (confidence {j['confidence']:.2f}) — {j['headline']}")
    L.append(outcome_line(j.get("diagnosis") or j))
    on, rb, ffr = j.get("onset") or {}, j.get("rollback") or {}, j.get("first_failing_rank")
    if on.get("step") is not None:
        L.append(f"Onset: step {on['step']} ({on.get('cite')})" + (f"; instability from step {on['precursor_step']}"
                                                                   if on.get("precursor_step") is not None else ""))
    if ffr:
        L.append(f"First failing rank: {ffr['rank']} ({ffr['cite']})")
    if rb.get("checkpoint"):
        L.append(f"Rollback checkpoint: {rb['checkpoint']['path']} (last intact before step {rb['before_step']})")
    L.append("")
    L.append(f"Files read ({len(j['files'])}):")
    for f in j["files"][:30]:
        L.append(f"  {f['path']}  [{f['kind']}, {f['size']} bytes, {f['hashed']}]")
    L += ["", "Findings (label · role · citation · what was seen):"]
    if not j["findings"]:
        L.append("  none")
    for f in j["findings"][:40]:
        cite = _cite(f["evidence"][0]) if f["evidence"] else "-"
        L.append(f"  [{f['label']}] {f['role']:<8} {cite:<28} {f['claim']}")
        for e in f["evidence"][:1]:
            if "metric" not in e and e.get("text"):
                L.append(f"      │ {e['text'].strip()[:160]}")
    tb = j.get("tracebacks")
    if tb:
        try:
            from trainwreck.report.traceback import render_text
            txt = render_text(tb).strip()
            if txt:
                L += ["", "Tracebacks:"] + ["  " + x for x in txt.splitlines()[:30]]
        except ImportError:
            pass
    ms = j.get("metrics_summary") or {}
    if ms:
        L += ["", "Metrics:"]
        for name, s in ms.items():
            if isinstance(s, dict):
                L.append("  " + name + ": " + ", ".join(f"{k}={v}" for k, v in s.items() if v is not None))
    if j["config"]:
        L += ["", "Config (settings that matter):"]
        for k, v in j["config"].items():
            L.append(f"  {k}: {v['value']}  ({v['cite']})")
    if j["checkpoints"]:
        L += ["", "Checkpoints:"]
        for c in j["checkpoints"][:12]:
            state = "ok" if c["ok"] else ("DAMAGED: " + c["problem"] if c["ok"] is False else "unchecked")
            L.append(f"  {c['path']}  step={c['step']}  {c['size']} bytes  {state}")
    for path, lines in j["log_tails"].items():
        if not lines:
            continue
        L += ["", f"Last {len(lines)} lines of {path}:"]
        for x in lines:
            L.append(f"  {x['line'] if x['line'] else '?':>7}: {x['text'][:300]}")
    if j["notes"]:
        L += ["", "Notes:"] + [f"  - {n}" for n in j["notes"]]
    v = j["diagnosis"].get("verification") or {}
    first = "".join(f"set {k}=<{x}> first, then: " for k, x in (v.get("variables") or {}).items())
    L += ["", f"Suggested verification: /trainwreck:{v.get('skill')} — {first}{v.get('command')}"]
    return terminal_text("\n".join(one_line(x) for x in L) + "\n")  # a run's newline never starts a line


def run(args) -> int:
    from trainwreck.pipeline import diagnose
    result = diagnose(args.path, probe=not args.no_probe)
    j = bundle_json(result, max(0, args.tail))
    if args.json:
        sys.stdout.write(json_text(j) + "\n")
    else:
        sys.stdout.write(render(j))
    return 0
