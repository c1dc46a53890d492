"""Claim checks: run once after every detector (analyze() calls check()). A finding keeps the label DIRECT only
when the numbers and the config it cites bear it out; otherwise it is demoted to HYPOTHESIS, rewritten to what
the evidence does show, or dropped. Its fixes lose the alternatives the run's own setup contradicts.

- OOM arithmetic (oom_arithmetic.py): fragmentation only when the reserved-but-unallocated memory covers the
  request and is a real share of the card; "another process" only for a process that is not the trainer itself.
- Precision advice ("use bf16/fp16 mixed precision", "switch fp16 to bf16") only when the config, the launch
  arguments, the log lines and the metric names do not already show that precision (run_setup.py).
- "Peak" means the series maximum: a value that the same series exceeds later is no peak.
- A setting is a cause only when its mechanism fits a failure the run shows: DataLoader workers use host
  memory and shared memory, never GPU memory; batch size and activation checkpointing are GPU memory.
What cannot be checked is HYPOTHESIS. The checks read typed fields, the catalog ids they are about, and the
numbers in the cited lines; they never change a finding's classification (`suggests`) except to drop it.
"""
from __future__ import annotations

import math
from typing import List, Optional, Set

from trainwreck import lazy_re
from trainwreck.analyze import oom_arithmetic as oa
from trainwreck.analyze.knobs import alternatives, join, knobs
from trainwreck.analyze.run_setup import REDUCED, precision
from trainwreck.analyze.trajectory_stats import fmt
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, HYPOTHESIS, Finding

FRAGMENTATION = ("cuda-oom-fragmentation",)  # catalog entries whose claim is "this OOM is fragmentation"
OTHER_PROCESS = ("cuda-oom-other-process",)  # … "another process holds GPU memory"
PEAK_CLAIMS = ("metric.lr-peak-before-nan",)  # detectors whose first evidence point is claimed to be the peak
# the memory a setting's mechanism acts on: a config factor only bears on a failure in that memory
MECHANISM = {"config.many-workers": "host", "config.batch-size": "device",
             "config.no-activation-checkpointing": "device"}
FAILURE_CLASSES = ("OOM", "crash")
FAILURE_ROLES = ("cause", "symptom", "terminal")
PEAK_MARGIN = 1e-3  # a later value above peak × (1 + this) shows the claimed peak was not the maximum

_DEVICE = lazy_re(r"(?i)\b(?:CUDA|HIP|NPU|XPU|MUSA|MPS|Metal)\b[^\n]{0,40}out of memory|CUDA_ERROR_OUT_OF_MEMORY|"
                  r"RESOURCE_EXHAUSTED|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_ALLOC_FAILED|device:GPU|GPU memory|"
                  r"out of memory on device|OutOfMemoryError: (?:CUDA|HIP)|^(?:cuda|hip|npu|mps|metal|xla|jax|cublas|"
                  r"cudnn|tpu)[\w-]*(?:oom|alloc|exhausted|out-of-memory)")
_HOST = lazy_re(r"(?i)device:CPU|DefaultCPUAllocator|MemoryError|bad_alloc|Unable to allocate|host[- ]oom|oom[- _]kill|"
                r"Out of memory: Kill|Killed process|SIGKILL|killed by signal|shared memory|/dev/shm|\bshm\b|bus error|"
                r"paging file|Cannot allocate memory|OOMKilled|memory monitor|host memory|exceeded (?:its )?memory|"
                r"cpu-alloc|dataloader-worker-killed")
_MIXED_ADVICE = lazy_re(r"(?i)\b(?:use|enable|try|turn on|train with)\b.*(?:mixed[ _-]precision|bf16/fp16|fp16/bf16|"
                        r"half[ -]precision|mixed_float16)")
_BF16_ADVICE = lazy_re(r"(?i)bf16 instead of fp16|fp16 to bf16|switch to bf16|train in bf16|use bf16\b|"
                       r"\bbf16 \(or fp32\)|instead of fp16")


def check(bundle: Bundle, findings: List[Finding]) -> List[Finding]:
    """The findings, each checked; those the evidence contradicts outright are dropped."""
    domains = failure_domains(findings)
    prec = precision(bundle)
    run_oom = next((n for f in findings if f.suggests == "OOM" for n in [_numbers(f)] if n is not None), None)
    out: List[Finding] = []
    for f in findings:
        if f.signature in FRAGMENTATION or f.id in FRAGMENTATION:
            _check_fragmentation(f, _numbers(f) or run_oom)
        elif f.signature in OTHER_PROCESS or f.id in OTHER_PROCESS:
            _check_other_process(f, _numbers(f) or run_oom)
        if f.id in PEAK_CLAIMS:
            _check_peak(bundle, f)
        if f.id in MECHANISM and not _mechanism_fits(f, MECHANISM[f.id], domains):
            continue
        if f.fixes:
            f.fixes = [x for x in (_gate_fix(x, prec, _numbers(f) or run_oom) for x in f.fixes) if x]
        out.append(f)
    return out


# ---- which memory a failure is about ------------------------------------------------------------------------
def memory_domain(f: Finding) -> Optional[str]:
    """'device' (GPU/accelerator memory), 'host' (RAM, shared memory, a DataLoader worker), or None."""
    texts = [f.signature or f.id, f.claim] + [e.text for e in f.evidence[:2] if e.text]
    for t in texts:
        if _DEVICE.search(t[:4000]):
            return "device"
    for t in texts:
        if _HOST.search(t[:4000]):
            return "host"
    return None


def failure_domains(findings: List[Finding]) -> Optional[Set[str]]:
    """The memory domains of the run's OOM / crash findings; None when the run shows no such failure at all."""
    fails = [f for f in findings if f.suggests in FAILURE_CLASSES and f.role in FAILURE_ROLES]
    if not fails:
        return None
    return {d for d in (memory_domain(f) for f in fails) if d}


def _mechanism_fits(f: Finding, mechanism: str, domains: Optional[Set[str]]) -> bool:
    """Keep a setting as a factor only when a failure in the memory it acts on is shown (DIRECT), or when the run
    shows no failure to check it against (then it is only a HYPOTHESIS). False drops it."""
    if domains is None:
        f.label = HYPOTHESIS
        return True
    return mechanism in domains


# ---- OOM arithmetic -------------------------------------------------------------------------------------------
def _numbers(f: Finding) -> Optional[oa.OomNumbers]:
    for e in f.evidence[:3]:
        if e.text and "out of memory" in e.text.lower():
            n = oa.parse(e.text)
            if n is not None:
                return n
    return None


def _as_context(f: Finding, why: str) -> None:
    """What the numbers do show replaces a claim they contradict; it stays as context, with no fixes."""
    f.claim, f.label, f.role, f.suggests, f.meaning = why, DIRECT, "context", None, ""
    f.fixes, f.relevant, f.verify_skill, f.verify_hint = [], [], None, None


def _demote(f: Finding, why: str) -> None:
    f.label, f.confidence = HYPOTHESIS, round(f.confidence * 0.6, 3)
    f.meaning = f"Hypothesis: {f.meaning}" if f.meaning else f.meaning
    f.add_note(why)


def _check_fragmentation(f: Finding, n: Optional[oa.OomNumbers]) -> None:
    got = oa.fragmentation(n) if n is not None else None
    if got is None:
        _demote(f, "the message's numbers (request, reserved but unallocated) could not be checked")
        return
    verdict, why = got
    if verdict == oa.DIRECT_OK:
        f.add_note(why)
    elif verdict == oa.HYPOTHESIS_ONLY:
        _demote(f, why)
    else:
        _as_context(f, why)


def _check_other_process(f: Finding, n: Optional[oa.OomNumbers]) -> None:
    got = oa.other_processes(n) if n is not None else None
    if got is None:
        _demote(f, "whether the process named is the trainer itself could not be checked")
        return
    verdict, others, why = got
    if verdict == oa.DIRECT_OK:
        f.claim = f"another process holds GPU memory ({why})"
    elif verdict == oa.HYPOTHESIS_ONLY:
        f.claim = f"another process may hold GPU memory ({why})"
        _demote(f, "the numbers do not tell the trainer from another process")
    else:
        _as_context(f, why)


# ---- advice the run's setup contradicts -----------------------------------------------------------------------
def _gate_fix(text: str, prec, n: Optional[oa.OomNumbers]) -> Optional[str]:
    """The fix less the alternatives that are pure precision advice the run already follows, or allocator
    settings against a fragmentation the OOM numbers rule out; None when nothing is left."""
    frag = oa.fragmentation(n) if n is not None else None
    parts = alternatives(text)
    keep = []
    for sep, part in parts:
        ks = set(knobs(part))
        if ks == {"precision"} and prec is not None and _precision_moot(part, prec[0]):
            continue
        if "alloc" in ks and frag is not None and frag[0] == oa.CONTRADICTED:
            continue
        keep.append((sep, part))
    if not keep:
        return None
    return text if len(keep) == len(parts) else join(keep)


def _precision_moot(advice: str, current: str) -> bool:
    if _BF16_ADVICE.search(advice):
        return current == "bf16"
    if _MIXED_ADVICE.search(advice):
        return current in REDUCED
    return False


# ---- "peak" is the series maximum -----------------------------------------------------------------------------
def _check_peak(bundle: Bundle, f: Finding) -> None:
    ev = f.evidence[0] if f.evidence else None
    if ev is None or ev.metric is None or not isinstance(ev.value, (int, float)) or not math.isfinite(ev.value):
        f.label = HYPOTHESIS
        return
    top = None
    for s in bundle.series.get(ev.metric) or []:
        if not any(p.source is not None and p.source.path == ev.path for p in s.points[:1] + s.points[-1:]):
            continue
        for p in s.points:
            if isinstance(p.value, float) and math.isfinite(p.value) and (top is None or p.value > top.value):
                top = p
    if top is None or top.value <= ev.value * (1 + PEAK_MARGIN):
        return  # the claimed peak is the series maximum
    at = f"step {ev.step}" if ev.step is not None else ev.cite()
    later = f"step {top.step}" if top.step is not None else top.source.cite() if top.source else "later"
    after = f" after the first {f.precursor_of}" if f.precursor_of else ""
    f.claim = (f"{ev.metric} was still rising at {at} ({fmt(ev.value)}), not at its peak: it kept rising{after} "
               f"to {fmt(top.value)} at {later}")
    f.label, f.confidence, f.kind, f.precursor_of = HYPOTHESIS, round(min(f.confidence, 0.2), 3), "", None
    f.meaning = ("Hypothesis: the run became unstable during the warmup, below the lr it was heading for; a lower "
                 "peak lr or a longer warmup may still help.")
