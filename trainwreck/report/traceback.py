"""Terminal rendering of a traceback summary (trainwreck.analyze.tracebacks.summary)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from trainwreck.analyze.tracebacks.parse import short_path
from trainwreck.model import cite
from trainwreck.report.safe import one_line, terminal_text


def _cite(src: Optional[Dict[str, Any]]) -> str:
    return cite(src) or "?"


def render_text(summary: Dict[str, Any]) -> str:
    """Compact terminal text: per traceback the root exception, then the innermost user frame, then the chain
    and ranks; an explicit TRUNCATED line when the log ends mid-traceback; then the first failing rank."""
    L: List[str] = []
    tbs = summary.get("tracebacks") or []
    if not tbs:
        L.append(f"No Python traceback in {summary.get('lines', 0)} lines.")
    for n, t in enumerate(tbs, 1):
        e = t["exception"]
        if e["type"]:
            exc = f"{e['type']}: {e['headline']}" if e["headline"] else e["type"]
            L.append(f"{n}. {exc}  ({_cite(e['line'])})")
        else:
            L.append(f"{n}. (exception line not in the log)  traceback starts at {_cite(t['start'])}")
        uf, at = t.get("user_frame"), t.get("raised_at")
        if uf:
            L.append(f"   in your code: {uf['file']}:{uf['line']} in {uf['func']}  ({_cite(uf['log_line'])})")
            if uf.get("code"):
                L.append(f"       {uf['code']}")
        elif at:
            L.append(f"   raised in library code: {short_path(at['file'], 3)}:{at['line']} in {at['func']}"
                     " (no frame from your code)")
        notes = [f"{t['library_frames']} library frame(s) of {t['frames']}" if t["library_frames"] else "",
                 f"{t['cpp_frames']} C++ frame(s) after the message" if t.get("cpp_frames") else "",
                 "JAX removed its internal frames (JAX_TRACEBACK_FILTERING=off shows them)"
                 if t.get("jax_filtered") else ""]
        if any(notes):
            L.append("   " + "; ".join(n for n in notes if n))
        if t.get("chain"):
            parts = []
            for c in t["chain"]:
                tag = (c["type"] or "(cut off)") + (" [root]" if c["root"] else "")
                if c["kind"]:
                    parts.append({"direct-cause": "→ directly caused →", "during-handling": "→ while handling it →",
                                  "embedded": "→ re-raised as →"}.get(c["kind"], "→"))
                parts.append(f"{tag} ({_cite(c['line'])})")
            L.append("   chain: " + " ".join(parts))
        if t.get("sub_exceptions"):
            L.append("   exception group of: " + "; ".join(
                f"{s['type']}: {s['headline']}" for s in t["sub_exceptions"][:5]))
        if t["ranks"]:
            first = t["rank"] if t["rank"] is not None else t["ranks"][0]
            extra = f"; raised the same on {len(t['ranks'])} ranks ({', '.join(map(str, t['ranks']))})" \
                if len(t["ranks"]) > 1 else ""
            L.append(f"   rank {first} printed it first{extra}")
        elif t["count"] > 1:
            L.append(f"   printed {t['count']} times")
        if t.get("hydra_overrides"):
            L.append(f"   hydra overrides: {t['hydra_overrides']}")
        if t.get("interrupted"):
            L.append("   INTERRUPTED: the run was stopped from outside (Ctrl-C / SIGINT / SIGTERM), "
                     "not by a failure of the workload")
        lv = t.get("last_visible") or {}
        num = lv.get("line") if lv.get("line") is not None else "?"
        shown = (lv.get("text") or "").strip()[:160]
        if t["truncated"] and t["cut"] == "end":
            L.append(f"   TRUNCATED: the log ends mid-traceback; last visible line {num}: {shown}")
        elif t["truncated"] and t["cut"] == "gap":
            L.append(f"   CUT: only the head and the tail of this log were read; last line read here {num}: {shown}")
        elif t["truncated"]:
            L.append(f"   INCOMPLETE: no exception line follows (interleaved output); last line of it {num}: {shown}")
    ff = summary.get("first_failure")
    if ff:
        who = f"rank {ff['rank']}" if ff.get("rank") is not None else f"local rank {ff.get('local_rank')}"
        bits = [f"host {ff['host']}" if ff.get("host") else "", f"at {ff['time']}" if ff.get("time") else "",
                f"exitcode {ff['exitcode']}" if ff.get("exitcode") is not None else "",
                ff["signal"] if ff.get("signal") else ""]
        how = "torchrun root cause" if ff.get("root_cause") else {"traceback": "first rank to print a traceback",
                                                                    "elastic-api": "torchelastic"}.get(
            ff.get("source"), "torchrun failures list")
        L.append(f"First failure: {who} " + ", ".join(b for b in bits if b) + f"  [{how}, {_cite(ff['line'])}]")
    return terminal_text("\n".join(one_line(x) for x in L) + "\n")
