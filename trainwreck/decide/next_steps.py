"""What to do next: the onset step, the checkpoint to roll back to, the command that verifies a fix, and for
`unclear` runs the probe that would decide them."""
from __future__ import annotations

import os
import shlex
from typing import Any, Dict, Optional

from trainwreck.collect.bundle import Bundle
from trainwreck.model import Finding


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


def verify_command(cls: str, primary: Optional[Finding], bundle: Bundle, onset: Optional[int],
                    ckpt: Optional[dict]) -> str:
    hydra = any(p.startswith(".hydra/") for p in bundle.configs)
    run = shlex.quote(bundle.target or os.path.relpath(bundle.single_file or bundle.root))
    if primary is not None and primary.verify_hint:
        return primary.verify_hint
    if cls in ("NaN", "divergence"):
        clip = bundle.config("gradient_clip_val", "max_grad_norm", "clip_grad_norm", "grad_clip")
        key = clip.key if clip else "trainer.gradient_clip_val"
        stop = (onset or 0) + 50
        resume = f" ckpt={ckpt['path']}" if ckpt else ""
        if hydra:
            return f"python train.py {'+' if not clip else ''}{key}=1.0 trainer.max_steps={stop}{resume}"
        return (f"rerun from {ckpt['path'] if ckpt else 'the last checkpoint before the onset'} to step {stop} "
                f"with gradient clipping 1.0 and compare grad_norm/loss against {run}")
    if cls == "OOM":
        return "rerun one step at micro-batch 1 and print torch.cuda.max_memory_allocated(); then scale the batch up"
    if cls == "stall":
        return ("py-spy dump --pid <trainer pid> (every rank) to see where it waits; "
                "rerun with NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL on one node")
    if cls == "crash":
        return "rerun the failing step alone on one GPU with CUDA_LAUNCH_BLOCKING=1 to get the exact failing call"
    if not bundle.logs and not bundle.series:
        return f"trainwreck diagnose {run} after copying the job's stdout/stderr capture (e.g. slurm-*.out) into it"
    return ("ps -o pid,stat,etime,cmd -C python; py-spy dump --pid <pid>  # alive: hung, see where; gone: "
            "dmesg -T | grep -i -E 'killed process|out of memory'; sacct -j <jobid> --format=State,ExitCode,MaxRSS")


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
            ends.append(f"{log.path} ends at line {last.line if last.line else '?'}: {last.text.strip()[:100]!r}")
    probe = ("the logs end without an error, so the files cannot say why. If the process is still alive the run "
             "is hung: take a stack dump (py-spy dump) of every rank. If it is gone, something outside killed it: "
             "the kernel's OOM killer (dmesg), the scheduler's time limit or a preemption (sacct / job events)")
    return probe + (f"; {ends[0]}" if ends else "")
