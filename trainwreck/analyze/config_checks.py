"""Config checks: settings that make a failure more likely, each cited by file and line.

Only what the config says is DIRECT; what it implies (e.g. "this lr is high for this model") is a HYPOTHESIS.
"""
from __future__ import annotations

from typing import List, Optional

from trainwreck.analyze.run_setup import optimizer
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, HYPOTHESIS, ConfigEntry, Finding, Source

# the lr above which each optimizer family's lr is called high, and how the claim names the family
HIGH_LR = {"adam": (3e-3, "an Adam-type optimizer"), "sgd": (1.0, "SGD"), "other": (1.0, "most optimizers"),
           None: (1.0, "most setups")}
_NULL = {"", "null", "none", "~", "0", "0.0", "false"}


def _src(e: ConfigEntry) -> Source:
    return e.source()


def _num(e: Optional[ConfigEntry]) -> Optional[float]:
    if e is None:
        return None
    try:
        return float(e.value)
    except ValueError:
        return None


def fp16_entry(bundle: Bundle) -> Optional[ConfigEntry]:
    for e in (bundle.config("fp16", "use_fp16", "half"),):
        if e and e.value.lower() in ("true", "1", "yes"):
            return e
    e = bundle.config("precision", "mixed_precision", "amp_dtype", "dtype", "compute_dtype")
    if e and e.value.lower().strip("'\"") in ("16", "16-mixed", "fp16", "float16", "half", "torch.float16"):
        return e
    return None


def bf16_enabled(bundle: Bundle) -> bool:
    e = bundle.config("bf16", "use_bf16")
    if e and e.value.lower() in ("true", "1", "yes"):
        return True
    e = bundle.config("precision", "mixed_precision", "dtype")
    return bool(e and "bf16" in e.value.lower() or e and "bfloat16" in e.value.lower())


def _high_lr(bundle: Bundle) -> List[Finding]:
    """An lr that is high for the optimizer the run uses. Optimizer-specific words only when the config, a log
    line or a metric name shows the optimizer; an unknown one is never assumed to be Adam."""
    lr_e = bundle.config("lr", "learning_rate", "base_lr", "max_lr", "peak_lr")
    lr = _num(lr_e)
    if lr_e is None or lr is None:
        return []
    opt = optimizer(bundle)
    kind, name, where = opt if opt else (None, "", None)
    limit, what = HIGH_LR.get(kind, HIGH_LR[None])
    if lr < limit:
        return []
    claim = f"lr {lr:g} is high for {what} (optimizer: {name})" if kind else \
        f"lr {lr:g} is high for {what} (the optimizer is not stated)"
    ev = [_src(lr_e)] + ([where] if where is not None else [])
    return [Finding(id="config.high-lr", claim=claim, label=HYPOTHESIS, confidence=0.45 if kind else 0.3,
                    evidence=ev, role="factor", relevant=["NaN", "divergence"],
                    fixes=[f"{lr_e.key}: {lr / 3:.1e} (a third), or add warmup"])]


def detect(bundle: Bundle) -> List[Finding]:
    out: List[Finding] = []
    if not bundle.configs:
        return out
    fp16 = fp16_entry(bundle)
    clip = bundle.config("gradient_clip_val", "max_grad_norm", "clip_grad_norm", "grad_clip", "clip_grad",
                         "gradient_clipping", "clip_norm")
    no_clip = clip is not None and clip.value.lower() in _NULL
    if fp16 and (no_clip or clip is None):
        ev = [_src(fp16)] + ([_src(clip)] if clip else [])
        what = f"{fp16.key.rsplit('.', 1)[-1]}: {fp16.value}" + (
            f" and {clip.key.rsplit('.', 1)[-1]}: {clip.value or 'null'}" if clip else " with no gradient clipping set")
        out.append(Finding(
            id="config.fp16-no-clip", claim=what, label=DIRECT, confidence=0.7, evidence=ev, role="factor",
            relevant=["NaN", "divergence"],
            fixes=[f"{(clip.key if clip else 'gradient_clip_val')}: 1.0  (expect grad_norm to stay bounded)",
                   "bf16 instead of fp16 where the GPUs support it (A100/H100/H200): no loss scaling needed"]))
    elif no_clip:
        out.append(Finding(
            id="config.no-clip", claim=f"{clip.key.rsplit('.', 1)[-1]}: {clip.value or 'null'} (no gradient clipping)",
            label=DIRECT, confidence=0.5, evidence=[_src(clip)], role="factor", relevant=["NaN", "divergence"],
            fixes=[f"{clip.key}: 1.0  (expect grad_norm to stay bounded)"]))
    out.extend(_high_lr(bundle))
    warm = bundle.config("warmup_steps", "warmup_iters", "lr_warmup_steps", "num_warmup_steps", "warmup_ratio",
                         "warmup")
    if warm is not None and warm.value.lower() in _NULL:
        out.append(Finding(
            id="config.no-warmup", claim=f"{warm.key.rsplit('.', 1)[-1]}: {warm.value} (no learning-rate warmup)",
            label=DIRECT, confidence=0.5, evidence=[_src(warm)], role="factor", relevant=["NaN", "divergence"],
            fixes=[f"{warm.key}: 2000 (or ~1–5% of training steps)"]))
    gc = bundle.config("gradient_checkpointing", "activation_checkpointing", "checkpoint_activations",
                       "recompute_activations", "use_gradient_checkpointing")
    if gc is not None and gc.value.lower() in _NULL:
        out.append(Finding(
            id="config.no-activation-checkpointing",
            claim=f"{gc.key.rsplit('.', 1)[-1]}: {gc.value} (activations are kept for the whole backward pass)",
            label=DIRECT, confidence=0.5, evidence=[_src(gc)], role="factor", relevant=["OOM"],
            fixes=[f"{gc.key}: true  (trades ~30% more compute for much less activation memory)"]))
    bs = bundle.config("per_device_train_batch_size", "micro_batch_size", "train_micro_batch_size_per_gpu",
                       "batch_size", "train_batch_size")
    if bs is not None and (_num(bs) or 0) >= 2:
        out.append(Finding(
            id="config.batch-size", claim=f"{bs.key.rsplit('.', 1)[-1]}: {bs.value} per device",
            label=DIRECT, confidence=0.35, evidence=[_src(bs)], role="factor", relevant=["OOM"],
            fixes=[f"{bs.key}: {max(1, int(_num(bs) or 2) // 2)} with gradient accumulation doubled "
                   "(same effective batch, about half the activation memory)"]))
    nw = bundle.config("num_workers", "dataloader_num_workers")
    if nw is not None and (_num(nw) or 0) >= 8:
        out.append(Finding(
            id="config.many-workers", claim=f"{nw.key.rsplit('.', 1)[-1]}: {nw.value} DataLoader workers",
            label=DIRECT, confidence=0.35, evidence=[_src(nw)], role="factor", relevant=["OOM", "crash"],
            fixes=[f"{nw.key}: {max(2, int(_num(nw) or 8) // 2)} (each worker holds its own copy of the dataset "
                   "object and prefetch buffers)"]))
    if bf16_enabled(bundle) and fp16:
        out.append(Finding(id="config.fp16-and-bf16", claim="both fp16 and bf16 are set", label=DIRECT,
                           confidence=0.4, evidence=[_src(fp16)], role="factor", relevant=["crash", "NaN"]))
    for f in out:  # every config check cites the config entries it is about
        f.kind, f.config = "config", list(f.evidence)
    return out
