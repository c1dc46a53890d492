"""Fold findings that describe one event into one, before scoring: a traceback on a catalog-matched line, a crash
raised by a timed-out collective, a launcher's wrapper message, a catalog match on a line a detector already cited.

Every rule reads typed fields (kind, wrapper, timeout, evidence places), never a finding's wording or id."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from trainwreck.model import Finding, Source


def same_place(a: Source, b: Source) -> bool:
    return a.path == b.path and a.line is not None and a.line == b.line


def same_event(a: Finding, b: Finding, span: int = 12) -> bool:
    """Two findings that cite nearby lines of one file on the same rank describe one event."""
    if not a.evidence or not b.evidence:
        return False
    x, y = a.evidence[0], b.evidence[0]
    if x.path != y.path or x.line is None or y.line is None or abs(x.line - y.line) > span:
        return False
    return a.rank is None or b.rank is None or a.rank == b.rank


def merge_traceback_signatures(findings: List[Finding]) -> List[Finding]:
    """A traceback whose exception line is also matched by a catalog signature is that signature's failure:
    keep the signature (specific class, fixes) and give it the traceback's location evidence and stage."""
    sigs = [f for f in findings if f.signature]
    out = []
    for f in findings:
        if f.kind == "traceback" and f.evidence:
            exc = f.evidence[0]
            match = next((s for s in sigs if any(same_place(exc, e) for e in s.evidence)
                          or (exc.text and any(e.text and e.text.strip() == exc.text.strip() for e in s.evidence))),
                         None)
            if match is not None:
                for e in f.evidence[1:]:
                    if not any(same_place(e, x) for x in match.evidence):
                        match.evidence.append(e)
                if f.stage and (not match.stage or match.stage == "runtime"):
                    match.stage = f.stage
                if match.rank is None:
                    match.rank = f.rank
                match.confidence = min(1.0, match.confidence + 0.05)
                continue
        out.append(f)
    return out


def fold_timeouts(findings: List[Finding], strength: Callable[[Finding], float]) -> List[Finding]:
    """An error raised by a collective that timed out IS the timeout: when a timeout (a stall, usually marked
    terminal) and a generic crash cite the same event, the timeout explains it and the run is a stall."""
    timeouts = [f for f in findings if f.timeout and f.suggests and f.role == "terminal"]
    if not timeouts:
        return findings
    drop = set()
    for t in timeouts:
        same = [f for f in findings if f.suggests == "crash" and f is not t and same_event(t, f)]
        if same and not any(f.suggests == "crash" and f.role == "cause" and not same_event(t, f)
                             and strength(f) >= 0.6 for f in findings):
            t.role = "cause"
            for f in same:
                drop.add(id(f))
                f.consequence_of = t.suggests
                for e in f.evidence[:1]:
                    if not any(same_place(e, x) for x in t.evidence):
                        t.evidence.append(e)
    return [f for f in findings if id(f) not in drop]


def _is_marker(f: Finding) -> bool:
    """A detector's note that a line is a launcher's wrapper message (it names no failure of its own)."""
    return f.wrapper and f.suggests is None and f.role == "context" and not f.signature


def demote_wrappers(findings: List[Finding]) -> List[Finding]:
    """An exception that only says a child process failed ("Step 1 exited with non-zero status 1",
    CalledProcessError) is the launcher reporting, not the failure: it becomes context, so the child's own
    error (or `unclear`, with the probe to find it) decides. The wrapper-line notes themselves fold away."""
    marks = [f.evidence[0] for f in findings if _is_marker(f) and f.evidence]
    out = []
    for f in findings:
        if _is_marker(f):
            continue
        on_mark = bool(f.evidence) and any(same_place(f.evidence[0], m) for m in marks)
        if f.suggests == "crash" and not f.signature and (f.wrapper or on_mark):
            f.role, f.suggests, f.wrapper = "context", None, True
            f.add_note("a launcher reporting that a child process failed; the child's own error is elsewhere")
        out.append(f)
    return out


def spikes_are_divergence(findings: List[Finding]) -> List[Finding]:
    """By definition a finite loss spike is divergence. A spike counts as the run's failure only when nothing
    stronger explains the run (its weight stays low); otherwise it remains a contributing factor."""
    for f in findings:
        if f.kind == "spike" and f.suggests is None:
            f.suggests, f.role = "divergence", "symptom"
            f.confidence = min(f.confidence, 0.45)
            f.relevant = ["divergence", "NaN"]
    return findings


def fold_same_line(causes: List[Finding], primary: Optional[Finding]) -> List[Finding]:
    """One line of evidence backs one cause: a catalog match on the very line a detector already cited folds in
    (its other evidence, e.g. the exception line a traceback contributed, joins the finding that stays)."""
    kept_by_line: Dict[Tuple[str, int], Finding] = {}
    folded: List[Finding] = []
    for f in causes:
        key = (f.evidence[0].path, f.evidence[0].line) if f.evidence and f.evidence[0].line else None
        if key and key in kept_by_line and f is not primary:
            kept = kept_by_line[key]
            if kept.step is None:
                kept.step = f.step  # the event keeps its place on the timeline (e.g. the first non-finite step)
            for e in f.evidence[1:]:
                if len(kept.evidence) < 6 and not any(same_place(e, x) for x in kept.evidence):
                    kept.evidence.append(e)
            continue
        if key:
            kept_by_line[key] = f
        folded.append(f)
    return folded


def one_per_event(findings: List[Finding]) -> List[Finding]:
    """One line of evidence is one event, however many detectors saw it."""
    out, seen = [], set()
    for f in findings:
        key = (f.evidence[0].path, f.evidence[0].line) if f.evidence else id(f)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
