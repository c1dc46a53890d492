"""A message the run went on past is not the run's failure, whatever the outcome (completed, interrupted, unknown).

- A warning-level line (logging `[WARNING]` / `WARNING:` / ` - WARNING - `, c10's `[W file.cpp:N]`, glog's
  `W1129 11:04:57`, Python's `…Warning:`, a C library's `libibverbs: Warning:`) that training progress follows in the same file is a message the run
  survived; so is a bare exception line (no traceback around it), or a catalog message that the launch failed
  (`python: command not found`, a missing module at startup), that progress follows: another attempt ran.
- An exception the program itself logged at warning level (torch._dynamo's "WON'T CONVERT … BackendCompilerFailed"
  before it falls back to eager) was caught: it is no crash even when the log stops after it.
- Progress means at least two advancing steps after the line: series points that carry a step or epoch, or a
  tqdm counter (a scheduler's resource summary holds numbers, not steps). One progress bar after a traceback
  is tqdm closing as the exception unwinds (teardown), not the run going on.
- NaN and divergence are never survived: a loss that went non-finite or ran away is the run's failure even when
  steps go on being logged. Wrappers (a launcher's report that a child failed) keep their meaning.

Such a finding becomes context: it is still shown, it no longer scores."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.analyze.outcome_progress import TQDM
from trainwreck.analyze.tracebacks import vocab
from trainwreck.collect.bundle import Bundle
from trainwreck.model import Finding, Line, Source

GOES_ON = ("crash", "OOM", "stall")  # classes a message reports (a run may go on past one); NaN / divergence are read from the trajectory
_LEVEL = lazy_re(
    r"\[(?:WARNING|WARN|W)\b"  # [WARNING] (logging, torch._dynamo), [W socket.cpp:…] (c10)
    r"|(?:^|[\s|:])(?:WARNING|WARN)(?::|\s+[-|]|\s*\|)"  # WARNING:root: · - WARNING - · | WARNING |
    r"|^\s*W\d{4} \d\d:\d\d:\d\d"  # glog: W1129 11:04:57.123456
    r"|(?:^|\d: )W \S+\.\w+:\d+\]"  # TensorFlow: 2020-09-24 21:35:23.363348: W tensorflow/…/bfc_allocator.cc:246]
    r"|\b[A-Z]\w*Warning: "  # warnings.warn: file.py:12: UserWarning: …
    r"|(?:^|[\s:])Warning: ")  # a C library's own: "libibverbs: Warning: couldn't load driver …"
_EXC = lazy_re(r"\b[A-Z]\w*(?:Error|Exception|Failed|Interrupt)\b")
MIN_STEPS_AFTER = 2


def warning_level(text: str) -> bool:
    """The line was written at warning level: its level word comes before any exception name in it."""
    m = _LEVEL.search(text[:2000])
    if m is None:
        return False
    e = _EXC.search(text[:2000])
    return e is None or m.start() <= e.start()


def _text_lines(f: Finding) -> List[Source]:
    return [e for e in f.evidence if e.metric is None and (e.line is not None or e.byte is not None)]


def _key(s: Source) -> Tuple[int, int]:
    return (0, s.line) if s.line is not None else (1, s.byte or 0)


def _counts_after(lines: List[Line], after: Source) -> List[int]:
    out: List[int] = []
    for ln in lines:
        if ln.path != after.path or _key(ln.source())[0] != _key(after)[0] or not _key(ln.source()) > _key(after):
            continue
        if "/" in ln.text and "|" in ln.text:
            out += [int(m.group(1)) for m in TQDM.finditer(ln.text) if int(m.group(1)) <= int(m.group(2))]
    return out


def progress_after(bundle: Bundle, after: Source) -> Optional[Source]:
    """The first line of training progress that follows `after` in its file, when at least two advancing steps
    follow it there (a series' points or a tqdm counter); None otherwise."""
    pts = sorted((p for ss in bundle.series.values() for s in ss for p in s.points
                  if p.source.path == after.path and p.source.line is not None and after.line is not None
                  and p.source.line > after.line), key=lambda p: p.source.line or 0)
    seen: Dict[float, Source] = {}
    for p in pts:  # only points placed on the training timeline: a job report's numbers are no steps
        if p.step is not None:
            seen.setdefault(float(p.step), p.source)
    if len(seen) >= MIN_STEPS_AFTER and max(seen) > min(seen):
        return seen[min(seen)]
    lines = [ln for log in bundle.logs if log.path == after.path
             for ln in log.head + [x for w in (log.middle or []) for x in w] + log.lines]
    counts = _counts_after(lines, after)
    if len(set(counts)) >= MIN_STEPS_AFTER and max(counts) > min(counts):
        first = next((ln for ln in lines if ln.path == after.path and _key(ln.source()) > _key(after)
                      and TQDM.search(ln.text)), None)
        return first.source() if first is not None else None
    return None


def _went_on(bundle: Bundle, f: Finding, ended_by: Optional[Finding] = None,
             finished: Optional[Finding] = None) -> Optional[str]:
    """Why the run is known to have gone on past `f`, or None."""
    if f.suggests not in GOES_ON or f.kind == "outcome" or f.wrapper or f.kind == "launcher-summary" \
            or f.role not in ("cause", "symptom", "terminal"):
        return None
    lines = _text_lines(f)
    if not lines:
        return None
    warned = all(warning_level(e.text) for e in lines)
    startup = f.signature is not None and f.stage == "startup" and f.kind == "signature"
    if not warned and f.kind != "exception-line" and not startup:
        return None
    last = max(lines, key=_key)
    nxt = progress_after(bundle, last)
    if nxt is not None:
        where = f"{nxt.path}:{nxt.line}" if nxt.line is not None else nxt.path
        return f"training progress follows it ({where})"
    if f.kind == "exception-line":
        return _bare_went_on(bundle, last, ended_by)
    if warned and f.suggests == "crash" and f.kind in ("signature", "traceback"):
        return "it was logged at warning level: the program caught the exception and went on"
    if warned and finished is not None:  # a warning (a stall inspector's, a watchdog's) the run went on to finish
        where = finished.evidence[0].cite() if finished.evidence else "its logs"
        return f"it was logged at warning level and the run went on to finish ({where})"
    return None


# warnings.warn's own format from the program's code (not the interpreter's or a library's clean-up at exit, such
# as multiprocessing's resource_tracker "leaked semaphore" warning after a crash)
_PROGRAM_WARNING = lazy_re(r"^(\S+\.py):\d+: [A-Z]\w*Warning: ")


def _bare_went_on(bundle: Bundle, at: Source, ended_by: Optional[Finding]) -> Optional[str]:
    """An exception line with no traceback (a message a program or a shell tool printed and went on from) that
    the job outlived: its own program's code ran after it (a warning from a script's file; not a progress bar,
    which tqdm draws once more as it closes after an exception), or
    the scheduler stopped the job at its time limit with nothing failing after it in that file."""
    lines = [ln for log in bundle.logs if log.path == at.path for ln in log.lines]
    for ln in lines:
        if _key(ln.source()) <= _key(at) or ".py:" not in ln.text:
            continue
        m = _PROGRAM_WARNING.match(ln.text)
        if m is not None and vocab.is_user_path(m.group(1)):
            return f"the program's own output follows it ({ln.path}:{ln.line})"
    if ended_by is not None and ended_by.outcome_by == "time-limit" and ended_by.evidence \
            and ended_by.evidence[0].path == at.path and _key(ended_by.evidence[0]) > _key(at):
        return "the job ran on after it until the scheduler's time limit stopped it"
    return None


def demote_survived(bundle: Bundle, findings: List[Finding]) -> List[Finding]:
    """Findings the run went on past become context, with the reason added to their claim."""
    ended_by = next((f for f in findings if f.kind == "outcome" and f.outcome == "interrupted"), None)
    finished = next((f for f in findings if f.kind == "outcome" and f.outcome == "completed"), None)
    for f in findings:
        why = _went_on(bundle, f, ended_by, finished)
        if why is not None:
            f.role = "context"
            f.claim = f"{f.claim} — not the run's failure: {why}"
    return findings
