"""Decide: weigh every finding into one Diagnosis, and derive every fact the views show, once.

Principles (DESIGN.md): score all evidence, never stop at the first matching line; prefer the first real
failure over downstream noise (an OOM after the loss went NaN is a consequence; rank 0's NCCL timeout after
rank 3 raised is rank 3's error); cross-check logs against trajectories; say `unclear` with the next probe
when the evidence is thin. The stages, each its own module: fold (one event, one finding) → score (classes,
pick, primary cause, confidence) → timeline (onset, precursors, rollback step, first failing rank) → fixes →
headline → next_steps (verification, rollback plan, next probe) → views (per-series verdicts, chance level).
Decide reads typed Finding fields only: never a finding's prose, never a detector's id.
"""
from __future__ import annotations

from typing import List, Optional

from trainwreck.collect.bundle import Bundle
from trainwreck.decide import fold, outcome, score, survived, timeline, views
from trainwreck.decide.fixes import rank_fixes
from trainwreck.decide.headline import finding_json, headline, not_learning, terminal_json
from trainwreck.decide.next_steps import rollback
from trainwreck.decide.next_steps import verification as verification_block
from trainwreck.model import DIRECT, Diagnosis, Finding

DEFAULT_SKILL = {"NaN": "loss-spike-rollback", "divergence": "loss-spike-rollback", "OOM": "activation-recompute",
                 "stall": "debug", "crash": "debug", "unclear": "debug"}


def _stack(findings: List[Finding]) -> List[str]:
    """The software stack: the stack detector's order first, then what other findings name (one per product)."""
    stack: List[str] = []
    for f in findings:
        if f.kind == "stack":
            stack += [s for s in f.stack if s not in stack]
    for f in findings:
        for s in f.stack:
            if not any(x.split(" ")[0] == s.split(" ")[0] for x in stack):
                stack.append(s)
    return stack


def _stage(cls: str, primary: Optional[Finding], causes: List[Finding], bundle: Bundle) -> str:
    stage = primary.stage if primary and primary.stage else next((f.stage for f in causes if f.stage), None)
    if stage:
        return stage
    has_steps = any(p.step for ss in bundle.series.values() for s in ss for p in s.points[:3])
    return "runtime" if has_steps or cls in ("NaN", "divergence") or cls != "unclear" else "unknown"


def _metrics_summary(bundle: Bundle) -> dict:
    try:
        from trainwreck.analyze.trajectory import summarize
        return summarize(bundle)
    except Exception as exc:  # the summary is a convenience; the diagnosis stands without it
        bundle.note(f"metric summary unavailable ({type(exc).__name__})")
        return {}


def decide(bundle: Bundle, findings: List[Finding]) -> Diagnosis:
    findings = fold.merge_traceback_signatures(findings)
    findings = fold.fold_timeouts(findings, score.strength)
    findings = fold.demote_wrappers(findings)
    findings = fold.spikes_are_divergence(findings)
    findings = survived.demote_survived(bundle, findings)  # messages the run went on past
    ended = outcome.end_of_run(findings, outcome.markers(findings))  # how the run was stopped: never its cause
    ended_ids = {id(f) for f in ended}
    weighed = [f for f in findings if id(f) not in ended_ids and f.kind != "outcome"]
    scores, by_class = score.score(bundle, weighed)
    idx = timeline.step_index(bundle)
    cls = score.pick(scores, by_class, idx)
    first_primary, _ = score.rank_causes(cls, by_class)
    ended_as, no_failure = outcome.resolve(bundle, findings, cls, first_primary, idx)
    if no_failure:
        cls = "unclear"

    primary, causes = score.rank_causes(cls, by_class)
    causes = fold.fold_same_line(causes, primary)
    # precursors and factors that bear on this class
    factors = [f for f in findings if f.role == "factor" and f not in causes
               and (cls in f.relevant or (not f.relevant and f.suggests in (None, cls)))]
    factors += [f for f in findings if f.role == "cause" and f.suggests is None and f not in causes]
    factors.sort(key=lambda f: (f.label != DIRECT, -f.confidence))
    terminal = [f for f in weighed if f.suggests and f.suggests != cls and f.role in ("cause", "symptom", "terminal")
                and score.ROLE_WEIGHT.get(f.role, 0) > 0]
    terminal = fold.one_per_event(sorted(terminal, key=score.order_key))
    for f in terminal if cls != "unclear" else []:
        f.consequence_of = cls
    context = [f for f in findings if f.role == "context" and f.kind not in ("stack", "outcome")]
    stage = _stage(cls, primary, causes, bundle)

    onset = timeline.onset(cls, primary, causes)
    precursors = timeline.precursors(cls, findings, onset["step"])
    if precursors:
        onset["precursor_step"] = precursors[0]["step"]
    plan = rollback(bundle, onset["step"], timeline.rollback_before(onset["step"], precursors))
    ckpt = plan["checkpoint"]
    conf = score.confidence(cls, scores, by_class, causes, idx)
    if ended_as["outcome"] in ("completed", "interrupted") and cls == "unclear":
        conf = outcome.cap_confidence(conf)

    truncated = next((f for f in findings if f.kind == "truncated-traceback"), None)
    launcher = next((f for f in findings if f.kind == "launcher-summary" or f.wrapper), None)
    skill = "init-loss-check" if not_learning(cls, primary) else (
        primary.verify_skill if primary and primary.verify_skill else DEFAULT_SKILL[cls])
    verification = verification_block(cls, primary, bundle, onset["step"], ckpt, skill, truncated, launcher,
                                      not_learning(cls, primary), _stack(findings))

    outcome.next_step(ended_as, verification, bundle)
    summary = _metrics_summary(bundle)
    return Diagnosis(
        classification=cls,
        confidence=round(conf, 3),
        failure_stage=stage,
        stack=_stack(findings),
        primary_cause=finding_json(primary) if primary else None,
        causes=[finding_json(f) for f in causes[:8]],
        contributing_factors=[finding_json(f) for f in factors[:8]] + [finding_json(f) for f in context[:4]],
        fix_candidates=rank_fixes(primary, causes, factors),
        verification=verification,
        notes=list(bundle.notes),
        evidence_files=[r.to_json() for r in bundle.files],
        headline=(outcome.headline(ended_as) if cls == "unclear" else None)
        or headline(cls, primary, stage, bundle, onset["step"], truncated, launcher, ended_as.get("progress")),
        outcome=ended_as,
        terminal_events=terminal_json(terminal, cls),
        metrics_summary=summary,
        setup=next((list(f.setup.values()) for f in findings if f.kind == "stack" and f.setup), []),
        onset=onset,
        precursors=precursors,
        trajectories=views.trajectories(summary, findings),
        rollback=plan,
        chance=views.chance(bundle, findings),
        first_failing_rank=timeline.first_failing_rank(findings, primary),
        checkpoints=list(bundle.checkpoints),
    )
