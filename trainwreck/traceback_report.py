"""Traceback summaries: the JSON the `traceback` verb and the evidence bundle print, and its terminal rendering."""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from .model import Line
from .torchrun import pick_first_failure, rank_failures
from .tracebacks import Frame, RankFailure, Traceback, _chain, _dedup, _scan, chain_user_frame, root_exception


def _src(ln: Optional[Line]) -> Optional[Dict[str, Any]]:
    return ln.source().to_json() if ln is not None else None


def _frame_json(f: Optional[Frame]) -> Optional[Dict[str, Any]]:
    if f is None:
        return None
    return {"file": f.file, "line": f.line, "func": f.func, "code": f.code, "user": f.user,
            "log_line": _src(f.log_line)}


def _exc_json(tb: Traceback) -> Dict[str, Any]:
    return {"type": tb.exc_type, "message": tb.message, "headline": tb.headline, "line": _src(tb.exc_line)}


def _tb_json(head: Traceback) -> Dict[str, Any]:
    root = root_exception(head)
    chain = list(reversed(_chain(head)))
    d: Dict[str, Any] = {
        "exception": _exc_json(root),
        "raised_at": _frame_json(root.frames[-1] if root.frames else None),
        "user_frame": _frame_json(chain_user_frame(head)),
        "frames": len(root.frames),
        "library_frames": sum(1 for f in root.frames if not f.user),
        "rank": head.rank, "ranks": sorted(head.ranks), "count": head.count,
        "truncated": head.truncated, "cut": head.cut,
        "last_visible": _src(head.last_visible) if head.truncated else None,
        "interrupted": root.interrupted,
        "start": _src(head.start),
    }
    if len(chain) > 1:
        d["chain"] = [{"type": m.exc_type, "headline": m.headline, "kind": m.chain_kind if i else None,
                       "line": _src(m.exc_line or m.start), "root": m is root} for i, m in enumerate(chain)]
        d["chain"][0]["kind"] = None
        for i in range(1, len(chain)):
            d["chain"][i]["kind"] = chain[i].chain_kind
    if head is not root:
        d["head"] = _exc_json(head)
    for k in ("cpp_frames", "cpp_origin", "jax_filtered", "hydra_overrides", "headless"):
        v = getattr(root, k) or getattr(head, k)
        if v:
            d[k] = v
    group = next((m for m in chain if m.sub_exceptions), None)
    if group is not None:
        d["sub_exceptions"] = [_exc_json(root_exception(s)) for s in group.sub_exceptions]
    return d


def _rf_json(rf: Optional[RankFailure]) -> Optional[Dict[str, Any]]:
    if rf is None:
        return None
    return {"rank": rf.rank, "local_rank": rf.local_rank, "host": rf.host, "exitcode": rf.exitcode,
            "signal": rf.signal, "time": rf.time, "error_file": rf.error_file, "pid": rf.pid,
            "root_cause": rf.root_cause, "source": rf.source, "line": _src(rf.line)}


def summarize(lines: List[Line]) -> Dict[str, Any]:
    """JSON-ready summary: every distinct traceback (root exception, user frame, library frame count, chain,
    ranks, truncation with the last visible line), the first failing rank and torchrun's rank failures."""
    lines = list(lines)
    raw = _scan(lines)
    failures = rank_failures(lines)
    ff = pick_first_failure(failures, raw)
    tbs = _dedup(raw)
    return {"lines": len(lines), "tracebacks": [_tb_json(t) for t in tbs], "first_failure": _rf_json(ff),
            "rank_failures": [_rf_json(f) for f in failures if f.source == "elastic-summary"],
            "interrupted": any(root_exception(t).interrupted for t in tbs)}


def _cite(src: Optional[Dict[str, Any]]) -> str:
    if not src:
        return "?"
    if src.get("line") is not None:
        return f"{src['path']}:{src['line']}"
    return f"{src['path']}@byte {src['byte']}" if src.get("byte") is not None else src["path"]


_PKG_ROOT = re.compile(r"^.*/(?:site-packages|dist-packages|lib/python\d[\d.]*)/")


def short_path(path: str, keep: int = 2) -> str:
    """A path short enough for a claim: the module path inside site-packages, else the last `keep` parts."""
    p = path.replace("\\", "/")
    m = _PKG_ROOT.match(p)
    if m:
        return p[m.end():]
    parts = [x for x in p.split("/") if x]
    return "/".join(parts[-keep:]) if len(parts) > keep else path


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
    return "\n".join(L) + "\n"
