"""The run's outcome, decided before its classification: failed | completed | interrupted | running | unknown,
with the line that shows it.

- A real failure found before the end → failed (a NaN run that was then Ctrl-C'd is a NaN run; a run that ran to
  its end with a NaN loss failed too).
- Completed with no failure → `unclear`, confidence ≤ 0.3, "no failure found: the run completed (…)". A message a
  run survived (an OOM the batch-size finder caught, an exception an eval hook logged) is no failure when the run
  went on to complete after it.
- Interrupted (Ctrl-C, a time limit, a preemption, a cancellation, an eviction, SIGTERM) with no earlier failure →
  `unclear`, the headline says who stopped it. The interruption's own lines (the catalog's match on the Slurm
  line, the KeyboardInterrupt traceback, torchrun's death signal and what the launcher said after it) are never
  the cause of a failure class.
- Running: only when the live probe found a process holding the run's files open.
Reads typed Finding fields only (kind, outcome, outcome_by, progress, role, wrapper, evidence)."""
from __future__ import annotations

import shlex
from typing import Any, Dict, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.analyze.outcome_progress import run_progress
from trainwreck.collect.bundle import Bundle
from trainwreck.decide.headline import not_learning, short_num
from trainwreck.decide.survived import GOES_ON
from trainwreck.decide.timeline import StepIndex, when
from trainwreck.model import Finding, Source, cite

NO_FAILURE_MAX_CONFIDENCE = 0.3
_ENDING = lazy_re(r"(?i)\b(?:stop(?:ped|ping|s)?|finish(?:ed|ing)?|done|complete[ds]?|exit(?:ed|ing)?|abort(?:ed)?|"
                  r"kill(?:ed)?|terminat(?:ed|ing)|error|exception|interrupt(?:ed)?|shutting down|end of training)\b")
SURVIVABLE = GOES_ON  # failures a message reports: a run that completed after one survived it
_WHO = {"user": "by the user (Ctrl-C / SIGINT)", "time-limit": "by the scheduler at its time limit",
        "preemption": "by a preemption (the scheduler gave its resources to another job)",
        "cancelled": "by a cancellation (scancel / bkill / an administrator)", "requeue": "by the scheduler's requeue",
        "node-failure": "by the scheduler after a node failure", "eviction": "by a Kubernetes eviction",
        "node-shutdown": "by its node shutting down (spot reclaim or maintenance)",
        "signal": "by SIGTERM from outside (a scheduler, a launcher or kill)",
        "hangup": "by SIGHUP (its terminal or ssh session closed)"}


def markers(findings: List[Finding]) -> List[Finding]:
    return [f for f in findings if f.kind == "outcome" and f.outcome]


def _pos(s: Source) -> Optional[Tuple[str, int]]:
    if s.metric is not None:
        return None
    if s.line is not None:
        return s.path, s.line
    return (s.path, -1 - s.byte) if s.byte is not None else None  # byte offsets sort apart from line numbers


def _before(a: Source, b: Source) -> Optional[bool]:
    """a comes before b in the same file; None when the two cannot be compared."""
    pa, pb = _pos(a), _pos(b)
    if pa is None or pb is None or pa[0] != pb[0] or (pa[1] < 0) != (pb[1] < 0):
        return None
    return pa[1] < pb[1] if pa[1] >= 0 else -pa[1] < -pb[1]


def _before_mark(a: Source, mark: Finding) -> Optional[bool]:
    """a comes before the event the marker reports. A report written after the run (LSF's job report, which
    precedes the job's output in its file: `progress["at_end"]`) comes after everything in its file."""
    if not mark.evidence:
        return None
    if mark.progress.get("at_end"):
        return True if a.path == mark.evidence[0].path else None
    return _before(a, mark.evidence[0])


def _usable(marks: List[Finding], findings: List[Finding]) -> List[Finding]:
    """A plain Slurm cancellation after a launcher's report that a task failed is srun tearing the step down,
    not somebody stopping the run: that marker says nothing about the outcome."""
    wrappers = [f.evidence[0] for f in findings if (f.wrapper or f.kind == "launcher-summary") and f.evidence]
    out = []
    for m in marks:
        if m.outcome_by == "cancelled" and any(_before_mark(w, m) for w in wrappers):
            continue
        out.append(m)
    return out


def end_of_run(findings: List[Finding], marks: List[Finding]) -> List[Finding]:
    """The findings the interruption already explains: the catalog's match on a marker's own line, the
    KeyboardInterrupt traceback, and terminal or wrapper messages that follow the interruption in its own file
    (a timeout in another file, or before it, is a failure of its own)."""
    stops = [m for m in marks if m.outcome == "interrupted"]
    if not stops:
        return []
    lines = [e for m in stops for e in m.evidence]
    out = []
    for f in findings:
        if f.kind == "outcome" or not f.evidence:
            continue
        e = f.evidence[0]
        on_line = any(_pos(e) is not None and _pos(e) == _pos(x) for x in lines)
        endish = f.role == "terminal" or f.wrapper or f.kind in ("launcher-summary", "interrupted")
        after = any(_before_mark(e, m) is False for m in stops)
        if f.kind == "interrupted" or on_line or (endish and after):
            out.append(f)
    return out


def _last(marks: List[Finding], outcome: str) -> Optional[Finding]:
    ms = [m for m in marks if m.outcome == outcome]
    if not ms:
        return None
    placed = [m for m in ms if m.order is not None]
    return max(placed, key=lambda m: m.order) if placed else ms[0]


def _survived(primary: Optional[Finding], done: Finding, idx: StepIndex) -> bool:
    """The failure message came before the run's completion: the run went on after it."""
    if primary is None or not primary.evidence:
        return False
    order = _before_mark(primary.evidence[0], done)
    if order is not None:
        return order
    t, end = when(primary, idx), (done.progress or {}).get("step")
    return t is not None and end is not None and t < float(end)


def _progress_text(p: Dict[str, Any]) -> str:
    parts = []
    if p.get("step") is not None:
        unit = "epoch" if p.get("unit") == "epoch" else "step"
        parts.append(f"final {unit} {p['step']:g}" + (f" of {p['of']}" if p.get("of") else ""))
    if p.get("loss_first") is not None:
        parts.append(f"loss {short_num(p['loss_first'])} → {short_num(p['loss_last'])}")
    return "; ".join(parts)


def _at(p: Dict[str, Any]) -> str:
    if p.get("step") is None:
        return ""
    return f" at {'epoch' if p.get('unit') == 'epoch' else 'step'} {p['step']:g}" + (
        f" of {p['of']}" if p.get("of") else "")


def _record(outcome: str, m: Optional[Finding], why: str, p: Dict[str, Any]) -> Dict[str, Any]:
    ev = m.evidence[0] if m is not None and m.evidence else None
    d: Dict[str, Any] = {"outcome": outcome, "cite": cite(ev) if ev else "", "why": why}
    if m is not None:
        d["by"] = m.outcome_by
        d["evidence"] = [e.to_json() for e in m.evidence[:3]]
    prog = {k: p[k] for k in ("step", "of", "unit", "loss_first", "loss_last", "partway") if p.get(k) is not None}
    if prog:
        d["progress"] = prog
    return d


def resolve(bundle: Bundle, findings: List[Finding], cls: str, primary: Optional[Finding],
            idx: StepIndex) -> Tuple[Dict[str, Any], bool]:
    """(the outcome record, whether the classification must become `unclear`: no failure ended the run)."""
    marks = _usable(markers(findings), findings)
    p = run_progress(bundle)
    done, stop, live = _last(marks, "completed"), _last(marks, "interrupted"), _last(marks, "running")
    if done is not None and done.progress:
        mark = {k: v for k, v in done.progress.items() if v is not None}
        if mark.get("unit") not in (None, p.get("unit")):  # the marker counts in other units: its numbers only
            p = {k: v for k, v in p.items() if k not in ("step", "of", "unit")}
        p.update(mark)
    if done is not None and stop is not None:
        later = _before_mark(done.evidence[0], stop) if done.evidence else None
        done, stop = (None, stop) if later else (done, None)  # the later line is how the run ended
    failure = cls != "unclear"
    if failure and done is not None and cls in SURVIVABLE and not not_learning(cls, primary) \
            and _survived(primary, done, idx):
        failure = False  # the run logged it and still completed
    if failure and done is not None and primary is not None and primary.kind == "spike":
        failure = False  # a spike is transient by definition, and the run went on to its end
    if live is not None:
        state = "alive and progressing" if live.outcome_by == "progressing" else "alive but not progressing"
        return _record("running", live, f"{live.claim} ({state})", p), False
    if failure and done is None and stop is None and _metrics_only(primary, findings) and _ends_in_progress(bundle):
        ev = primary.evidence[0] if primary.evidence else None
        rec = _record("unknown", None, f"a {cls} failure in the logged metrics; no line shows how the run ended "
                                       "(no error, exit or completion message)", p)
        rec["cite"] = cite(ev) if ev else ""
        return rec, False
    if failure and done is not None and (cls in ("NaN", "divergence") or not_learning(cls, primary)):
        # the process ran to its planned end and the failure is the shape of its metrics (a NaN loss, a blow-up,
        # a loss that never moved): the run completed, and what it computed is the failure
        ev = primary.evidence[0] if primary is not None and primary.evidence else None
        where = f" ({cite(ev)})" if ev else ""
        rec = _record("completed", done, f"{done.claim}, but its metrics show a {cls} failure{where}", p)
        return rec, False
    if failure and cls == "stall" and stop is not None and stop.outcome_by == "user" and done is None \
            and primary is not None and not primary.signature:
        # a hang read from the logs (no timeout error ended it) does not end a run: the user who gave up on it did
        # (a time limit that ends a hang is the job failing to finish: failed, see test_outcome)
        rec = _record("interrupted", stop, f"a stall, found before the end of the run; then {stop.claim}", p)
        return rec, False
    if failure:
        end = done or stop
        why = f"{'an' if cls in ('OOM', 'unclear') else 'a'} {cls} failure, found before the end of the run"
        if end is not None:
            why += f"; then {end.claim}" + (f" ({cite(end.evidence[0])})" if end.evidence else "")
        ev = primary.evidence[0] if primary is not None and primary.evidence else None
        rec = _record("failed", None, why, p)
        rec["cite"] = cite(ev) if ev else ""
        return rec, False
    if done is not None:
        why = f"no failure found: {done.claim}"
        if cls != "unclear" and primary is not None:  # say what was logged and survived, with its line
            where = f" ({cite(primary.evidence[0])})" if primary.evidence else ""
            why += f"; the {cls} message logged before it{where} did not stop the run"
        return _record("completed", done, why, p), cls != "unclear"
    if stop is not None:
        return _record("interrupted", stop, f"{stop.claim}; no failure found before it", p), cls != "unclear"
    return _record("unknown", None, "no line says that the run completed or was stopped, and no live process "
                                    "was found" if bundle.probes.get("live", 0) is None else
                   "no line says that the run completed or was stopped (the live-process probe was not run)", p), False


def _metrics_only(primary: Optional[Finding], findings: List[Finding]) -> bool:
    """The failure is a shape of the metrics (a NaN, a blow-up, a loss that does not learn) and no error message
    was logged: the files show the run going wrong, not how it ended."""
    if primary is None or not primary.id.startswith("metric."):
        return False
    return not any(f.signature for f in findings if f.role == "cause")


def _ends_in_progress(bundle: Bundle) -> bool:
    """No log ends on words that say the run stopped (`Early stopping … Stopping.`, `Training finished`, an error):
    the files stop in the middle of training and do not show how it ended."""
    for log in bundle.logs:
        last = next((ln.text for ln in reversed(log.lines or log.head or []) if ln.text.strip()), None)
        if last is not None and _ENDING.search(last):
            return False
    return True


def headline(rec: Dict[str, Any]) -> Optional[str]:
    """The headline of a run whose outcome is not a failure; None for failed and unknown runs."""
    p = rec.get("progress") or {}
    if rec["outcome"] == "completed":
        seen = _progress_text(p)
        return "no failure found: the run completed" + (f" ({seen})" if seen else "")
    if rec["outcome"] == "interrupted":
        who = _WHO.get(rec.get("by") or "", "from outside")
        return f"interrupted {who}{_at(p)}; no failure found before it"
    if rec["outcome"] == "running":
        return f"running: {rec['why']}"
    return None


_NEXT = {
    "user": ("nothing failed before the Ctrl-C. If the run was stopped because it looked stuck, rerun it and take a "
             "stack dump before stopping it (py-spy dump --pid <pid>, every rank)", "debug"),
    "time-limit": ("nothing failed before the time limit: resume from the last checkpoint with a longer limit (Slurm "
                   "--time, LSF -W, PBS -l walltime) or save checkpoints often enough to resume", "debug"),
    "preemption": ("nothing failed: resume from the last checkpoint (--requeue with automatic resume), or use a "
                   "partition / QOS that is not preemptible", "debug"),
    "requeue": ("nothing failed: the scheduler requeued the job; check that it resumes from its last checkpoint",
                "debug"),
    "cancelled": ("nothing failed before the cancellation: find who cancelled it and why (sacct -j <jobid> "
                  "--format=JobID,State,ExitCode; bhist -l <jobid>)", "debug"),
    "eviction": ("the pod was evicted: kubectl describe node <node> shows which resource ran low; set the pod's "
                 "requests to what it uses so it is not the one evicted", "debug"),
    "node-failure": ("a node failed under the job: resume from the last checkpoint on other nodes, and report the "
                     "node to the cluster's administrators", "debug"),
    "node-shutdown": ("the node was reclaimed or shut down: resume from the last checkpoint; on spot / preemptible "
                      "nodes save checkpoints often and resume automatically", "debug"),
    "signal": ("something outside sent SIGTERM: find out what (scheduler log, sacct State, the launcher), and save a "
               "checkpoint on SIGTERM so a resume loses nothing", "debug"),
    "hangup": ("the terminal or ssh session closed: run training under nohup, tmux or the scheduler", "debug"),
}


def next_step(rec: Dict[str, Any], verification: Dict[str, Any], bundle: Bundle) -> None:
    """What to do after a run that did not fail: never a hang probe for a run that completed or was stopped."""
    if rec["outcome"] == "completed":
        verification["next_probe"] = (
            "nothing failed and the run completed. If its result is still wrong, the question is what it learned: "
            "compare its final loss and eval metrics with what the task should reach, and check data and labels "
            "(/trainwreck:overfit-single-batch, /trainwreck:init-loss-check)")
        verification["command"] = f"trainwreck curve {shlex.quote(bundle.target or bundle.root)}"
    elif rec["outcome"] == "interrupted":
        probe, skill = _NEXT.get(rec.get("by") or "", _NEXT["signal"])
        verification["next_probe"] = probe
        verification["skill"] = skill
        verification["command"] = (f"ls -la {shlex.quote(bundle.target or bundle.root)}  # the last checkpoint to "
                                   "resume from")


def cap_confidence(conf: float) -> float:
    return min(conf, NO_FAILURE_MAX_CONFIDENCE)
