"""Traceback summaries: the JSON the `traceback` verb and the evidence bundle print (rendered by report.traceback)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from trainwreck.analyze.tracebacks.parse import chain_user_frame, dedup, root_exception, scan
from trainwreck.analyze.tracebacks.torchrun import pick_first_failure, rank_failures
from trainwreck.analyze.tracebacks.vocab import Frame, RankFailure, Traceback, chain
from trainwreck.model import Line


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
    members = list(reversed(chain(head)))
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
    if len(members) > 1:
        d["chain"] = [{"type": m.exc_type, "headline": m.headline, "kind": m.chain_kind if i else None,
                       "line": _src(m.exc_line or m.start), "root": m is root} for i, m in enumerate(members)]
        d["chain"][0]["kind"] = None
        for i in range(1, len(members)):
            d["chain"][i]["kind"] = members[i].chain_kind
    if head is not root:
        d["head"] = _exc_json(head)
    for k in ("cpp_frames", "cpp_origin", "jax_filtered", "hydra_overrides", "headless"):
        v = getattr(root, k) or getattr(head, k)
        if v:
            d[k] = v
    group = next((m for m in members if m.sub_exceptions), None)
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
    raw = scan(lines)
    failures = rank_failures(lines)
    ff = pick_first_failure(failures, raw)
    tbs = dedup(raw)
    return {"lines": len(lines), "tracebacks": [_tb_json(t) for t in tbs], "first_failure": _rf_json(ff),
            "rank_failures": [_rf_json(f) for f in failures if f.source == "elastic-summary"],
            "interrupted": any(root_exception(t).interrupted for t in tbs)}
