"""Decide: weigh every finding into one Diagnosis.

Principles (DESIGN.md): score all evidence, never stop at the first matching line; prefer the first real
failure over downstream noise (an OOM after the loss went NaN is a consequence; rank 0's NCCL timeout after
rank 3 raised is rank 3's error); cross-check logs against trajectories; say `unclear` with the next probe
when the evidence is thin.
"""
from __future__ import annotations

import math
import re
import shlex
from typing import Dict, List, Optional, Tuple

from trainwreck.collect.bundle import Bundle
from trainwreck.decide.next_steps import next_probe, onset_step, rollback_checkpoint, verify_command
from trainwreck.model import DIRECT, HYPOTHESIS, Diagnosis, Finding, Source

ROLE_WEIGHT = {"cause": 1.0, "symptom": 0.9, "terminal": 0.45, "factor": 0.0, "context": 0.0}
# When two classes score alike, the one earlier in this list is the more specific diagnosis.
PRECEDENCE = ["NaN", "OOM", "crash", "divergence", "stall"]
DEFAULT_SKILL = {"NaN": "loss-spike-rollback", "divergence": "loss-spike-rollback", "OOM": "activation-recompute",
                 "stall": "debug", "crash": "debug", "unclear": "debug"}
UNCLEAR_BELOW = 0.3


def _strength(f: Finding) -> float:
    return max(0.0, min(1.0, f.confidence)) * ROLE_WEIGHT.get(f.role, 0.0)


def _same_place(a: Source, b: Source) -> bool:
    return a.path == b.path and a.line is not None and a.line == b.line


def _merge_traceback_signatures(findings: List[Finding]) -> List[Finding]:
    """A traceback whose exception line is also matched by a catalog signature is that signature's failure:
    keep the signature (specific class, fixes) and give it the traceback's location evidence and stage."""
    sigs = [f for f in findings if f.signature]
    out = []
    for f in findings:
        if f.id == "traceback.root-exception" and f.evidence:
            exc = f.evidence[0]
            match = next((s for s in sigs if any(_same_place(exc, e) for e in s.evidence)
                          or (exc.text and any(e.text and e.text.strip() == exc.text.strip() for e in s.evidence))),
                         None)
            if match is not None:
                for e in f.evidence[1:]:
                    if not any(_same_place(e, x) for x in match.evidence):
                        match.evidence.append(e)
                if f.stage and (not match.stage or match.stage == "runtime"):
                    match.stage = f.stage
                if match.rank is None:
                    match.rank = f.rank
                match.confidence = min(1.0, match.confidence + 0.05)
                continue
        out.append(f)
    return out


def _same_event(a: Finding, b: Finding, span: int = 12) -> bool:
    """Two findings that cite nearby lines of one file on the same rank describe one event."""
    if not a.evidence or not b.evidence:
        return False
    x, y = a.evidence[0], b.evidence[0]
    if x.path != y.path or x.line is None or y.line is None or abs(x.line - y.line) > span:
        return False
    return a.rank is None or b.rank is None or a.rank == b.rank


_WRAPPER = re.compile(r"(?i)exited with non-zero (?:exit )?(?:status|code)|returned non-zero exit status|"
                      r"died with <Signals\.|non-zero exit status \d+|exited with (?:return )?code [1-9]")


def _spikes_are_divergence(findings: List[Finding]) -> List[Finding]:
    """By definition a finite loss spike is divergence. A spike counts as the run's failure only when nothing
    stronger explains the run (its weight stays low); otherwise it remains a contributing factor."""
    for f in findings:
        if f.id == "metric.loss-spike" and f.suggests is None:
            f.suggests, f.role = "divergence", "symptom"
            f.confidence = min(f.confidence, 0.45)
            f.relevant = ["divergence", "NaN"]
    return findings


def _demote_wrappers(findings: List[Finding]) -> List[Finding]:
    """An exception that only says a child process failed ("Step 1 exited with non-zero status 1",
    CalledProcessError) is the launcher reporting, not the failure: it becomes context, so the child's own
    error (or `unclear`, with the probe to find it) decides."""
    for f in findings:
        if f.suggests == "crash" and not f.signature and _WRAPPER.search(f.claim):
            f.role, f.suggests = "context", None
            f.claim = f"{f.claim} — a launcher reporting that a child process failed; the child's own error is elsewhere"
    return findings


def _fold_timeouts(findings: List[Finding]) -> List[Finding]:
    """An error raised by a collective that timed out IS the timeout: when a timeout (stall, usually marked
    terminal) and a generic crash cite the same event, the timeout explains it and the run is a stall."""
    timeouts = [f for f in findings if f.suggests == "stall" and f.role == "terminal" and f.signature]
    if not timeouts:
        return findings
    drop = set()
    for t in timeouts:
        same = [f for f in findings if f.suggests == "crash" and f is not t and _same_event(t, f)]
        if same and not any(f.suggests == "crash" and f.role == "cause" and not _same_event(t, f)
                             and _strength(f) >= 0.6 for f in findings):
            t.role = "cause"
            for f in same:
                drop.add(id(f))
                for e in f.evidence[:1]:
                    if not any(_same_place(e, x) for x in t.evidence):
                        t.evidence.append(e)
    return [f for f in findings if id(f) not in drop]


def _loss_stays_finite(bundle: Bundle) -> Optional[bool]:
    """Cross-check a NaN message against the loss trajectory: True when every logged loss is finite."""
    series = bundle.best_series("loss")
    if not series or not series.points:
        return None
    if any(not math.isfinite(p.value) for p in series.points):
        return False
    return True


def _score(bundle: Bundle, findings: List[Finding]) -> Tuple[Dict[str, float], Dict[str, List[Finding]]]:
    by_class: Dict[str, List[Finding]] = {}
    for f in findings:
        if f.suggests and ROLE_WEIGHT.get(f.role, 0) > 0:
            by_class.setdefault(f.suggests, []).append(f)
    # terminal events only count fully when nothing else explains the run
    non_terminal_classes = {c for c, fs in by_class.items() if any(f.role != "terminal" and _strength(f) >= 0.4
                                                                    for f in fs)}
    scores: Dict[str, float] = {}
    for cls, fs in by_class.items():
        best = 0.0
        for f in fs:
            s = _strength(f)
            if f.role == "terminal" and not (non_terminal_classes - {cls}):
                s = max(0.0, min(1.0, f.confidence)) * 0.85  # the only failure we can see
            if cls == "NaN" and f.signature and _loss_stays_finite(bundle):
                s *= 0.6  # a NaN message while the logged loss stays finite: transient or skipped steps
            best = max(best, s)
        # corroboration: several independent findings for one class
        n_indep = len({f.id for f in fs if _strength(f) >= 0.3})
        scores[cls] = min(1.0, best + 0.05 * max(0, n_indep - 1))
    # a NaN trajectory means a NaN run even when an OOM or crash ends it
    return scores, by_class


def _step_index(bundle: Bundle) -> Dict[str, List[Tuple[int, int]]]:
    """Per log file, (line, step) of every metric line in it: places a log line on the training timeline."""
    cached = bundle.__dict__.get("_step_index")
    if cached is not None:
        return cached
    idx: Dict[str, List[Tuple[int, int]]] = {}
    for series in bundle.series.values():
        for s in series:
            for p in s.points:
                if p.source.line is not None and p.step is not None:
                    idx.setdefault(p.source.path, []).append((p.source.line, p.step))
    for v in idx.values():
        v.sort()
    bundle.__dict__["_step_index"] = idx
    return idx


def _when(f: Finding, idx: Dict[str, List[Tuple[int, int]]]) -> Optional[float]:
    """The training step at which a finding's first evidence happened, when it can be known."""
    if not f.evidence:
        return None
    e = f.evidence[0]
    if e.metric is not None and e.step is not None:
        return float(e.step)
    if e.line is None or e.path not in idx:
        return None
    prior = [st for ln, st in idx[e.path] if ln <= e.line]
    return float(max(prior)) + 0.5 if prior else None  # after the last step logged before it


def _earliest(fs: List[Finding], idx) -> Optional[float]:
    times = [t for t in (_when(f, idx) for f in fs if _strength(f) >= 0.5) if t is not None]
    return min(times) if times else None


def _pick(scores: Dict[str, float], by_class: Dict[str, List[Finding]], bundle: Bundle) -> str:
    if not scores or max(scores.values()) < UNCLEAR_BELOW:
        return "unclear"
    top = max(scores.values())
    # The first real failure wins: a NaN (or divergence) that a crash or OOM follows is that NaN's run.
    idx = _step_index(bundle)
    for early in ("NaN", "divergence"):
        if scores.get(early, 0.0) < 0.55:
            continue
        t0 = _earliest(by_class.get(early, []), idx)
        rivals = [c for c, v in scores.items() if c != early and v > scores[early]]
        if all((lambda t: t is None or t0 is None or t0 <= t)(_earliest(by_class.get(c, []), idx)) for c in rivals):
            if early == "divergence" and scores.get("NaN", 0.0) >= 0.55:
                continue  # a divergence that ends in NaN is a NaN run: decided above
            return early
    close = [c for c in PRECEDENCE if c in scores and scores[c] >= top - 0.08]
    return close[0] if close else max(scores, key=scores.get)


def _order_key(f: Finding) -> Tuple[int, float]:
    return (0 if f.order is not None else 1, f.order if f.order is not None else 0.0)


def _headline(cls: str, primary: Optional[Finding], stage: str, bundle: Bundle, onset: Optional[int],
              _truncated: Optional[Finding] = None, _launcher: Optional[Finding] = None) -> str:
    where = {"startup": "at startup", "compile": "while compiling the graph", "runtime": "during training",
             "checkpoint": "while saving or loading a checkpoint", "evaluation": "during evaluation"}.get(stage, "")
    if cls == "unclear":
        if primary is None and _truncated is not None:
            line = _truncated.evidence[0].line if _truncated.evidence else None
            return (f"unclear: the log is cut off mid-traceback{f' at line {line}' if line else ''}; the exception "
                    "that ended the run is not in it")
        if _launcher is not None:
            return ("unclear: the launcher reports that a worker process failed, but that worker's own error is not "
                    "in these logs")
        steps = [p.step for ss in bundle.series.values() for x in ss for p in x.points if p.step is not None]
        if bundle.logs or steps:
            at = f" at step {max(steps)}" if steps else ""
            return (f"unclear: the run stops{at} with no error in the logs (a hang, or a kill from outside "
                    f"such as the OOM killer or the scheduler)")
        return "unclear: no logs or metrics to diagnose"
    what = {"NaN": "NaN", "OOM": "Out of memory", "divergence": "Divergence", "stall": "Stall", "crash": "Crash"}[cls]
    if cls == "stall" and primary is not None and primary.id.startswith(("metric.plateau", "metric.chance")):
        what = "Not learning (stall)"
    at = f" at step {onset}" if onset is not None else ""
    rank = f" on rank {primary.rank}" if primary is not None and primary.rank is not None else ""
    head = f"{what}{at}{rank}"
    if primary is not None and cls in ("crash", "stall", "OOM"):
        claim = primary.claim if len(primary.claim) <= 100 else primary.claim[:100].rsplit(" ", 1)[0] + "…"
        head += f": {claim}"
    return f"{head}, {where}" if where and cls in ("NaN", "divergence") else (f"{head} ({where})" if where else head)


_PREFIX = re.compile(r"^(?:\s*(?:\[[^\]]{1,60}\]|\(\w+ pid=\d+\)|\d{4}-\d\d-\d\d[ T][\d:.,]+|"
                     r"[\w.-]+:\d+:\d+ \[\d+\]|[A-Z]\d{4} [\d:.]+ \d+ \S+\])[:\s-]*)+")


def _core_message(f: Finding) -> str:
    """The matched log line without rank/time prefixes, for a cause summary that quotes the message itself."""
    if not f.signature or not f.evidence or f.evidence[0].metric is not None:
        return ""
    text = _PREFIX.sub("", f.evidence[0].text.strip()).strip()
    return text[:160] + ("…" if len(text) > 160 else "")


_TOPICS = [("clip", re.compile(r"(?i)clip|max_grad_norm")), ("warmup", re.compile(r"(?i)warm-?up")),
           ("bf16", re.compile(r"(?i)\bbf16|bfloat16")), ("recompute", re.compile(r"(?i)checkpointing|recompute")),
           ("alloc", re.compile(r"(?i)expandable_segments|PYTORCH_CUDA_ALLOC_CONF")),
           ("lr", re.compile(r"(?i)^(?:lower|reduce|decrease)?\s*(?:the\s+)?(?:peak\s+)?(?:lr|learning[ _]rate)\b|\blr\b.*:"))]


def _fix_topic(text: str) -> str:
    """Fixes that change the same knob count once, whoever proposed them."""
    for topic, rx in _TOPICS:
        if rx.search(text):
            return topic
    return text.split("(")[0].strip().lower()


def decide(bundle: Bundle, findings: List[Finding]) -> Diagnosis:
    findings = _merge_traceback_signatures(findings)
    findings = _fold_timeouts(findings)
    findings = _demote_wrappers(findings)
    findings = _spikes_are_divergence(findings)
    scores, by_class = _score(bundle, findings)
    cls = _pick(scores, by_class, bundle)
    stack: List[str] = []
    for f in findings:
        for s in f.stack:
            if s not in stack and f.id == "context.stack":
                stack.append(s)
    for f in findings:
        for s in f.stack:
            if not any(x.split(" ")[0] == s.split(" ")[0] for x in stack):
                stack.append(s)

    cands = sorted(by_class.get(cls, []), key=lambda f: (-_strength(f), _order_key(f)))
    # the first real failure: among strong causes of the class, the earliest
    strong = [f for f in cands if _strength(f) >= (_strength(cands[0]) - 0.1)] if cands else []
    primary = min(strong, key=_order_key) if strong else None
    if primary is not None and primary.role == "terminal":
        non_term = [f for f in strong if f.role != "terminal"]
        primary = non_term[0] if non_term else primary
    causes: List[Finding] = ([primary] if primary else []) + [f for f in cands if f is not primary]
    # one line of evidence backs one cause: a catalog match on the very line a detector already cited folds in
    # (its other evidence, e.g. the exception line a traceback contributed, joins the finding that stays)
    kept_by_line: Dict[Tuple[str, int], Finding] = {}
    folded: List[Finding] = []
    for f in causes:
        key = (f.evidence[0].path, f.evidence[0].line) if f.evidence and f.evidence[0].line else None
        if key and key in kept_by_line and f is not primary:
            kept = kept_by_line[key]
            for e in f.evidence[1:]:
                if len(kept.evidence) < 6 and not any(_same_place(e, x) for x in kept.evidence):
                    kept.evidence.append(e)
            continue
        if key:
            kept_by_line[key] = f
        folded.append(f)
    causes = folded
    # precursors and factors that bear on this class
    factors = [f for f in findings if f.role == "factor" and f not in causes
               and (cls in f.relevant or (not f.relevant and f.suggests in (None, cls)))]
    factors += [f for f in findings if f.role == "cause" and f.suggests is None and f not in causes]
    factors.sort(key=lambda f: (f.label != DIRECT, -f.confidence))
    terminal = [f for f in findings if f.suggests and f.suggests != cls and f.role in ("cause", "symptom", "terminal")
                and ROLE_WEIGHT.get(f.role, 0) > 0]
    terminal.sort(key=_order_key)
    unique_terminal, seen_t = [], set()
    for f in terminal:  # one line of evidence is one event, however many detectors saw it
        key = (f.evidence[0].path, f.evidence[0].line) if f.evidence else id(f)
        if key not in seen_t:
            seen_t.add(key)
            unique_terminal.append(f)
    terminal = unique_terminal
    context = [f for f in findings if f.role == "context" and f.id != "context.stack"]

    stage = (primary.stage if primary and primary.stage else None)
    if not stage:
        stage = next((f.stage for f in causes if f.stage), None)
    if not stage:
        has_steps = any(p.step for ss in bundle.series.values() for s in ss for p in s.points[:3])
        stage = "runtime" if has_steps or cls in ("NaN", "divergence") else ("unknown" if cls == "unclear" else
                                                                             "runtime")
    onset = onset_step(cls, primary, causes)
    ckpt = rollback_checkpoint(bundle, onset)

    # confidence: the winner's score, less when a rival class is close, more when trajectory and log agree
    conf = scores.get(cls, 0.0) if cls != "unclear" else 0.0
    # rivals that came later are consequences (see _pick), not competing explanations
    idx = _step_index(bundle)
    t_cls = _earliest(by_class.get(cls, []), idx)
    rivals = sorted((v for k, v in scores.items() if k != cls and not (
        t_cls is not None and (_earliest(by_class.get(k, []), idx) or -1) > t_cls)), reverse=True)
    if rivals and cls != "unclear":
        conf -= max(0.0, 0.15 - (conf - rivals[0])) if rivals[0] > 0.3 else 0.0
    kinds = {("metric" if f.id.startswith("metric.") else "log") for f in causes}
    if len(kinds) == 2:
        conf += 0.05
    conf = max(0.05, min(0.97, conf)) if cls != "unclear" else round(max(scores.values(), default=0.1), 2)

    truncated = next((f for f in findings if f.id == "traceback.truncated"), None)
    launcher = next((f for f in findings if f.id in ("torchrun-child-failed", "traceback.first-failing-rank")
                     or (f.role == "context" and "launcher reporting" in f.claim)), None)
    fixes: List[dict] = []
    seen = set()

    def add_fix(text: str, why: Finding, label: str) -> None:
        k = _fix_topic(text)
        if k in seen:
            return
        seen.add(k)
        fixes.append({"fix": text, "because": why.claim, "source": why.id, "label": label,
                      "evidence": [e.cite() for e in why.evidence[:2]]})

    for f in factors:
        if f.label == DIRECT:
            for x in f.fixes[:1]:
                add_fix(x, f, DIRECT)
    if primary:
        for x in primary.fixes:
            add_fix(x, primary, HYPOTHESIS if primary.label == HYPOTHESIS else DIRECT)
    for f in causes[1:] + factors:
        for x in f.fixes:
            add_fix(x, f, HYPOTHESIS)
    fixes = fixes[:8]
    for i, fx in enumerate(fixes, 1):
        fx["rank"] = i

    skill = (primary.verify_skill if primary and primary.verify_skill else DEFAULT_SKILL[cls])
    if cls == "stall" and primary is not None and primary.id.startswith(("metric.plateau", "metric.chance")):
        skill = "init-loss-check"
    verification = {"skill": skill, "command": verify_command(cls, primary, bundle, onset, ckpt)}
    if cls == "unclear" and launcher is not None and truncated is None:
        verification["command"] = ("torchrun --redirects 3 --log-dir logs <your usual arguments>  "
                                   "# each rank's stdout/stderr in logs/, then: trainwreck diagnose logs")
    if cls == "unclear" and truncated is not None and truncated.evidence:
        verification["command"] = (f"ls -la {shlex.quote(bundle.target)}  # look for the rest of the stderr "
                                   f"(*.err, rank logs); tail -n 40 {shlex.quote(truncated.evidence[0].path)}")
    if ckpt and cls in ("NaN", "divergence"):
        verification["checkpoint"] = ckpt["path"]
    if cls == "unclear":
        verification["next_probe"] = next_probe(bundle, truncated, launcher)

    notes = list(bundle.notes)
    headline = _headline(cls, primary, stage, bundle, onset, truncated, launcher)

    def fjson(f: Finding) -> dict:
        d = f.cause_json()
        quote = _core_message(f)
        if quote and quote.lower() not in f.claim.lower():
            d["summary"] = f"{f.claim} — {quote}"
        d["id"] = f.id
        if f.rank is not None:
            d["rank"] = f.rank
        if f.stage:
            d["stage"] = f.stage
        if f.meaning:
            d["meaning"] = f.meaning
        return d

    setup = next((f.meaning.split(" · ") for f in findings if f.id == "context.stack" and f.meaning), [])
    terminal_json = []
    for f in terminal[:6]:
        d = fjson(f)
        claim = f.claim if f.rank is None or "rank" in f.claim else f"{f.claim} on rank {f.rank}"
        d["summary"] = f"{claim}: a consequence, not the cause" if cls != "unclear" else claim
        terminal_json.append(d)
    return Diagnosis(
        classification=cls,
        confidence=round(conf, 3),
        failure_stage=stage,
        stack=stack,
        primary_cause=fjson(primary) if primary else None,
        causes=[fjson(f) for f in causes[:8]],
        contributing_factors=[fjson(f) for f in factors[:8]] + [fjson(f) for f in context[:4]],
        fix_candidates=fixes,
        verification=verification,
        notes=notes,
        evidence_files=[r.to_json() for r in bundle.files],
        headline=headline,
        terminal_events=terminal_json,
        setup=setup,
    )
