"""torchrun / torchelastic failure summaries: which rank failed first, when, on which host, with what exit code
("Root Cause (first observed failure)", "Failures:" sections, `failed (exitcode: N) local_rank: R` lines)."""
from __future__ import annotations

import re
from typing import List, Optional

from trainwreck import lazy_re
from trainwreck.analyze.tracebacks.parse import scan
from trainwreck.analyze.tracebacks.vocab import RankFailure, Traceback
from trainwreck.collect.ranks import split_stream
from trainwreck.model import Line

_ENTRY = lazy_re(r"\[(\d+)\]:$")
_FIELD = lazy_re(r"(time|host|rank|exitcode|error_file|traceback)\s*:\s?(.*)$")
_API_FAIL = lazy_re(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\)")
_SIGNAL = lazy_re(r"Signal (\d+) \((SIG\w+)\)")
_SIGNAMES = {1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL",
             11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}


def rank_failures(lines: List[Line]) -> List[RankFailure]:
    """Every entry of torchrun's `ChildFailedError` summaries ("Failures:" and "Root Cause") and every
    torchelastic "failed (exitcode: N) local_rank: K" line, in order of appearance."""
    out: List[RankFailure] = []
    section = ""  # "", "failures", "root"
    cur: Optional[RankFailure] = None
    for ln in lines:
        t = ln.text if isinstance(ln.text, str) else str(ln.text)
        if not section and "Root Cause" not in t and "Failures:" not in t and "exitcode" not in t \
                and not t.rstrip().endswith("]:"):
            continue
        s = split_stream(t.rstrip())[2].strip()
        if s.startswith("Root Cause (first observed failure)"):
            section, cur = "root", None
            continue
        if s == "Failures:":
            section, cur = "failures", None
            continue
        m = _ENTRY.match(s)
        if m:
            cur = RankFailure(None, None, None, None, None, None, ln, root_cause=section == "root", lines=[ln])
            section = section or "failures"
            out.append(cur)
            continue
        m = _FIELD.match(s)
        if m and cur is not None:
            _set_field(cur, m.group(1), m.group(2).strip(), ln)
            continue
        m = _API_FAIL.search(t)
        if m:
            code = int(m.group(1))
            out.append(RankFailure(None, int(m.group(2)), None, code, None, None, ln, _signame(code),
                                   pid=int(m.group(3)), source="elastic-api", lines=[ln]))
            continue
        if section and (not s or set(s) <= {"-", "="} or s.startswith("<NO_OTHER_FAILURES>")):
            if s and set(s) == {"="}:
                section, cur = "", None
            continue
        section, cur = "", None
    return out


def _signame(code: Optional[int]) -> Optional[str]:
    if code is None or code >= 0:
        return None
    return _SIGNAMES.get(-code, f"signal {-code}")


def _set_field(rf: RankFailure, name: str, value: str, ln: Line) -> None:
    rf.lines.append(ln)
    if name == "time":
        rf.time = value
    elif name == "host":
        rf.host = value
    elif name == "rank":
        m = re.match(r"(\d+)(?:\s*\(local_rank:\s*(\d+)\))?", value)
        if m:
            rf.rank = int(m.group(1))
            rf.local_rank = int(m.group(2)) if m.group(2) else None
            rf.line = ln
    elif name == "exitcode":
        m = re.match(r"(-?\d+)(?:\s*\(pid:\s*(\d+)\))?", value)
        if m:
            rf.exitcode = int(m.group(1))
            rf.pid = int(m.group(2)) if m.group(2) else None
            rf.signal = rf.signal or _signame(rf.exitcode)
    elif name == "error_file":
        rf.error_file = None if value in ("<N/A>", "") else value
    elif name == "traceback":
        m = _SIGNAL.search(value)
        if m:
            rf.signal = m.group(2)


def pick_first_failure(failures: List[RankFailure], raw: List[Traceback]) -> Optional[RankFailure]:
    roots = [f for f in failures if f.root_cause and f.rank is not None]
    if roots:
        return roots[-1]  # the latest attempt's summary when a log holds several runs
    ranked = sorted((tb for tb in raw if tb.rank is not None and tb.start is not None), key=lambda t: t.start_index)
    if ranked:
        tb = ranked[0]
        line = tb.exc_line or tb.start
        return RankFailure(tb.rank, None, None, None, None, None, line, source="traceback", lines=[line])
    listed = [f for f in failures if f.rank is not None]
    if listed:
        return listed[0]
    api = [f for f in failures if f.source == "elastic-api"]
    return api[0] if api else None


def first_failure(lines: List[Line]) -> Optional[RankFailure]:
    """The rank that failed first: the "Root Cause (first observed failure)" of torchrun's summary (the last
    summary in the log), else the first rank whose traceback appears in `[rank N]:`-style output, else the
    first "Failures:" entry, else the first torchelastic "failed (exitcode …)" line."""
    lines = list(lines)
    return pick_first_failure(rank_failures(lines), scan(lines))


