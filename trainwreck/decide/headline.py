"""The words of a diagnosis: its one-line headline, and each finding as the report shows it (a catalog match
quotes the matched message itself, without its rank or time prefix)."""
from __future__ import annotations

from typing import Dict, List, Optional

from trainwreck.collect.bundle import Bundle
from trainwreck.collect.ranks import strip_prefixes
from trainwreck.model import Finding, clip_words

NOT_LEARNING_KINDS = ("plateau", "chance")  # a stall that is a model not learning, not a hung process
_WHERE = {"startup": "at startup", "compile": "while compiling the graph", "runtime": "during training",
          "checkpoint": "while saving or loading a checkpoint", "evaluation": "during evaluation"}
_WHAT = {"NaN": "NaN", "OOM": "Out of memory", "divergence": "Divergence", "stall": "Stall", "crash": "Crash"}


def not_learning(cls: str, primary: Optional[Finding]) -> bool:
    return cls == "stall" and primary is not None and primary.kind in NOT_LEARNING_KINDS


def headline(cls: str, primary: Optional[Finding], stage: str, bundle: Bundle, onset: Optional[int],
             truncated: Optional[Finding] = None, launcher: Optional[Finding] = None,
             progress: Optional[Dict] = None) -> str:
    where = _WHERE.get(stage, "")
    if cls == "unclear":
        if primary is None and truncated is not None:
            line = truncated.evidence[0].line if truncated.evidence else None
            return (f"unclear: the log is cut off mid-traceback{f' at line {line}' if line else ''}; the exception "
                    "that ended the run is not in it")
        if launcher is not None:
            return ("unclear: the launcher reports that a worker process failed, but that worker's own error is not "
                    "in these logs")
        if bundle.logs or bundle.series:
            return _ended_unknown(progress or {}, bool(bundle.logs))
        return "unclear: no logs or metrics to diagnose"
    what = "Not learning (stall)" if not_learning(cls, primary) else _WHAT[cls]
    at = f" at step {onset}" if onset is not None else ""
    rank = f" on rank {primary.rank}" if primary is not None and primary.rank is not None else ""
    head = f"{what}{at}{rank}"
    if primary is not None and cls in ("crash", "stall", "OOM"):  # log text in a claim is already “quoted”
        head += ": " + clip_words(primary.claim, 100)
    return f"{head}, {where}" if where and cls in ("NaN", "divergence") else (f"{head} ({where})" if where else head)


def short_num(v: float) -> str:
    """A loss or metric value as the headline and the outcome say it: four significant digits."""
    return f"{v:.4g}"


def _ended_unknown(p: Dict, logs: bool) -> str:
    """An unclear run whose end nothing shows: what it got to, without asserting how it ended. A run that stops
    short of its planned length is a hang or a kill from outside; one whose length is unknown may also simply
    have finished (a healthy run's log need not say so)."""
    what = "the logs" if logs else "the logged metrics"
    unit = "epoch" if p.get("unit") == "epoch" else "step"
    loss = (f" (loss {short_num(p['loss_first'])} → {short_num(p['loss_last'])})" if p.get("loss_first") is not None
            and p.get("loss_last") is not None else "")
    part = p.get("partway")
    if part:
        at = f" at {unit} {p['step']:g}" if p.get("step") is not None else ""
        return (f"unclear: no error in {what}, which stop{at}{loss} part-way through a loop ({part['at']}/"
                f"{part['of']} at {part['cite']}), before its end (a hang, a kill from outside such as the OOM "
                "killer or the scheduler, or a run still going)")
    if p.get("step") is not None and p.get("of") and p["step"] < p["of"]:
        return (f"unclear: no error in {what}, which stop at {unit} {p['step']:g} of {p['of']}{loss}, before the "
                "planned end (a hang, or a kill from outside such as the OOM killer or the scheduler)")
    at = f", which end at {unit} {p['step']:g}{loss}" if p.get("step") is not None else loss
    return (f"unclear: no failure found in {what}{at}; no line says how the run ended (finished, hung, or killed "
            "from outside, e.g. by the OOM killer or the scheduler)")


def core_message(f: Finding) -> str:
    """The matched log line without rank/time prefixes, for a cause summary that quotes the message itself."""
    if not f.signature or not f.evidence or f.evidence[0].metric is not None:
        return ""
    return strip_prefixes(f.evidence[0].text.strip())[1].strip()


def finding_json(f: Finding) -> Dict:
    return f.to_json(core_message(f))


def terminal_json(terminal: List[Finding], cls: str) -> List[Dict]:
    """What happened after the failure: each event once, said to be a consequence (unless nothing was decided)."""
    out = []
    for f in terminal[:6]:
        d = finding_json(f)
        d["summary"] = f"{f.with_rank()}: a consequence, not the cause" if cls != "unclear" else f.with_rank()
        out.append(d)
    return out
