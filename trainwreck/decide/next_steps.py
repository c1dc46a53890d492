"""What to do next: the onset step, the checkpoint to roll back to, the command that verifies a fix, and for
`unclear` runs the probe that would decide them."""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

from trainwreck.collect.bundle import Bundle
from trainwreck.decide.command import Plan, absolute, build, halve, q, render, value_of
from trainwreck.decide.hints import ANOMALY, MEMORY, adapt_hint, hang_command, rank_logs_command, silent_end_command
from trainwreck.decide.launch import Launch, reconstruct
from trainwreck.model import Finding, quoted

TORCH_STACK = {"PyTorch", "DeepSpeed", "Megatron", "Lightning", "HF", "Accelerate", "torch_npu", "torchrun"}


def rollback_checkpoint(bundle: Bundle, before: Optional[int]) -> Optional[dict]:
    """The last intact checkpoint saved strictly before step `before` (the newest intact one when it is None):
    a checkpoint saved at the failing step already holds the broken state."""
    good = [c for c in bundle.checkpoints if c.get("ok") is not False and c.get("step") is not None
            and (before is None or c["step"] < before)]
    if not good:
        return None
    return max(good, key=lambda c: c["step"])


def rollback(bundle: Bundle, onset: Optional[int], before: Optional[int]) -> Dict[str, Any]:
    """The rollback checkpoint and the resume plan (what `rollback` shows and `diagnose` recommends)."""
    ck = rollback_checkpoint(bundle, before)
    out: Dict[str, Any] = {"before_step": before, "onset_step": onset, "checkpoint": ck}
    if ck:
        out["plan"] = [f"resume from {ck['path']} (step {ck['step']}, {ck['size']} bytes, container intact)",
                       f"skip or reshuffle the data between steps {ck['step']} and {before if before else '?'} "
                       "(the batches that preceded the onset)",
                       "lower the peak learning rate by 2–3× (or lengthen warmup) and enable gradient clipping 1.0",
                       "watch grad_norm and loss_scale for the first 100 steps after resuming"]
    return out


def verification(cls: str, primary: Optional[Finding], bundle: Bundle, onset: Optional[int], ckpt: Optional[dict],
                 skill: str, truncated: Optional[Finding] = None, launcher: Optional[Finding] = None,
                 not_learning: bool = False, stack: Sequence[str] = ()) -> Dict[str, Any]:
    """The `verification` block: the skill, a command that runs on this run's own launch, the checkpoint it resumes
    from, the launch it was built on (and what of it the run does not show), and for `unclear` the next probe."""
    out: Dict[str, Any] = {"skill": skill}
    try:
        la = reconstruct(bundle)
        out["command"] = _command(cls, primary, bundle, onset, ckpt, la, truncated, launcher, not_learning, stack)
        out["launch"] = {"command": build(la, [], fresh=False)[0], "source": la.source or None, "style": la.style,
                         "unknown": list(la.unknown)}
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as exc:
        # the run's text is untrusted: a launch that cannot be pieced together degrades, it never aborts
        bundle.note(f"the verification command could not be built from the run ({type(exc).__name__})")
        out["command"] = f"ls -la {q(bundle.root)}  # the run's launch command could not be read from it"
    if ckpt and cls in ("NaN", "divergence"):
        out["checkpoint"] = ckpt["path"]
    if cls == "unclear":
        out["next_probe"] = next_probe(bundle, truncated, launcher)
    return out


def _command(cls: str, primary: Optional[Finding], bundle: Bundle, onset: Optional[int], ckpt: Optional[dict],
             la: Launch, truncated: Optional[Finding], launcher: Optional[Finding], not_learning: bool,
             stack: Sequence[str]) -> str:
    if cls == "unclear" and launcher is not None and truncated is None:
        return rank_logs_command(la)
    if cls == "unclear" and truncated is not None and truncated.evidence:
        return (f"ls -la {q(bundle.root)}; tail -n 40 {q(absolute(bundle.root, truncated.evidence[0].path))}"
                "  # look for the rest of the stderr (.err files, the other ranks' logs)")
    return verify_command(cls, primary, bundle, onset, ckpt, la, not_learning, uses_torch(stack))


def uses_torch(stack: Sequence[str]) -> bool:
    """The stack names PyTorch or a library on it: a torch preamble (anomaly detection, memory summary) applies."""
    return any(s.split(" ")[0] in TORCH_STACK for s in stack)


def verify_command(cls: str, primary: Optional[Finding], bundle: Bundle, onset: Optional[int],
                   ckpt: Optional[dict], la: Optional[Launch] = None, not_learning: bool = False,
                   torch: bool = True) -> str:
    """The probe that fits the class, on the run's own launch (see decide/command.py for how settings are set).
    `torch`: the run is a PyTorch run, so the rerun may switch on anomaly detection or print a memory summary."""
    la = la if la is not None else reconstruct(bundle)
    plan = class_plan(cls, la, bundle, onset, ckpt, not_learning, torch)
    if primary is not None and primary.verify_hint:
        adapted, prose = adapt_hint(primary.verify_hint, la, bundle, primary, plan)
        if adapted:
            return adapted
        if prose:
            la.unknown.insert(0, prose)  # the signature's advice in words, said with the class's probe
    if plan is not None:
        return render(la, plan.sets, env=plan.env, pre=plan.pre, notes=plan.notes)
    if cls == "stall":
        return hang_command(la, bundle)
    if not bundle.logs and not bundle.series:
        return (f"ls -la {q(bundle.root)}  # no logs or metrics in it: copy the job's stdout/stderr capture (the "
                "scheduler's .out/.err file) into it and diagnose it again")
    return silent_end_command(la, bundle)


def class_plan(cls: str, la: Launch, bundle: Bundle, onset: Optional[int], ckpt: Optional[dict],
               not_learning: bool, torch: bool) -> Optional[Plan]:
    """The rerun that tests the class: what it sets, with which environment and Python preamble, and what to
    look for. None for the probes that are not a rerun (a hang's stack dump, a silent end's kill record)."""
    ck = absolute(bundle.root, ckpt["path"]) if ckpt else None
    if not_learning:
        lr = value_of(la, "lr")
        return Plan([("overfit", "1"), ("steps", "200")],
                    notes=["one batch, 200 steps: the loss must fall toward 0; if it stays flat the labels, the "
                           "loss wiring or the learning rate" + (f" ({lr})" if lr else "") + " are wrong"])
    if cls in ("NaN", "divergence"):
        sets = [("resume", ck)] if ck else []
        if onset is not None:
            sets.append(("steps", str(onset + 50)))
        if not _positive_at_most(value_of(la, "clip"), 1.0):
            sets.append(("clip", "1.0"))
        lr = halve(value_of(la, "lr"))
        if lr:
            sets.append(("lr", lr))
        where = f"past step {onset}" if onset is not None else "this time"
        notes = [f"the loss must stay finite and fall {where} with clipping 1.0" + (" and half the lr" if lr else "")
                 + ("; anomaly detection names the backward op that produced the first NaN/Inf" if torch else "")]
        if not ck:
            notes.append("no intact checkpoint from before the onset is in the run: this reruns from the start")
        return Plan(sets, pre=ANOMALY if torch else "", notes=notes)
    if cls == "OOM":
        return Plan([("batch", "1"), ("steps", "1")], pre=MEMORY if torch else "",
                    notes=["one step at batch 1 must fit; then double the batch until it fails"
                           + (" (the memory summary's peak usage tells how far the card goes)" if torch else "")])
    if cls == "crash":
        sets = []
        if onset is not None:
            sets = ([("resume", ck)] if ck and ckpt.get("step", onset) < onset else []) + [("steps", str(onset + 1))]
        return Plan(sets, env=["CUDA_LAUNCH_BLOCKING=1"],
                    notes=["reruns to the failing step; CUDA_LAUNCH_BLOCKING=1 makes a CUDA error point at the "
                           "call that raised it"])
    return None


def _positive_at_most(value: Optional[str], limit: float) -> bool:
    try:
        return value is not None and 0 < float(value) <= limit
    except ValueError:
        return False


def next_probe(bundle: Bundle, truncated: Optional[Finding] = None, launcher: Optional[Finding] = None) -> str:
    if launcher is not None and truncated is None:
        where = launcher.evidence[0].cite() if launcher.evidence else "the log"
        return ("the launcher only reports that a worker exited non-zero (" + where + "): the worker's own stderr "
                "holds the error. Rerun with torchrun --redirects 3 --log-dir LOGS (or --tee 3), or look in the "
                "per-rank log files and error files (TORCHELASTIC_ERROR_FILE) of the failed rank")
    if truncated is not None:
        return ("the traceback is cut off, so its exception (the actual error) is missing: find the complete stderr "
                "of that process (the rank's own log, the scheduler's .err file, torchrun --redirects/--log-dir "
                f"output) or rerun to reproduce. What is visible: {truncated.claim}")
    if not bundle.logs and not bundle.series:
        return "no logs or metrics were found: point trainwreck at the job's stdout/stderr capture (e.g. slurm-*.out)"
    ends = []
    for log in bundle.logs:
        last = next((x for x in reversed(log.lines) if x.text.strip()), None)
        if last is not None:
            ends.append(f"{log.path} ends at line {last.line if last.line else '?'}: {quoted(last.text.strip()[:100])}")
    probe = ("the logs end without an error, so the files cannot say why. If the process is still alive the run "
             "is hung: take a stack dump (py-spy dump) of every rank. If it is gone, something outside killed it: "
             "the kernel's OOM killer (dmesg), the scheduler's time limit or a preemption (sacct / job events)")
    return probe + (f"; {ends[0]}" if ends else "")
