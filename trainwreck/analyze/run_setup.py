"""What the run was set up with, read from its config, its arguments, its log lines and its metric names:
the numeric precision (bf16, fp16, mixed, fp32) and the optimizer family (Adam-type, SGD, other).

Advice about either is only given when it does not contradict these (claim_checks.py, config_checks.py). Each
answer carries the Source that shows it, so the report can cite where it came from. Nothing here guesses: no
evidence gives None, and an unknown optimizer is never assumed to be Adam.
"""
from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.collect.bundle import Bundle
from trainwreck.model import ConfigEntry, Source

MAX_LINES = 50000  # log lines scanned for precision / optimizer statements (the bundle is bounded already)
REDUCED = ("bf16", "fp16", "mixed")  # precisions that are already "mixed precision" for memory advice

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")
_PREC_KEYS = ("precision", "mixed_precision", "amp_dtype", "autocast_dtype", "train_dtype")
_DTYPE_KEYS = ("torch_dtype", "dtype", "compute_dtype", "param_dtype", "model_dtype", "bnb_4bit_compute_dtype")
_BF16_FLAGS = ("bf16", "use_bf16", "bfloat16")
_FP16_FLAGS = ("fp16", "use_fp16", "half")
_AMP_FLAGS = ("amp", "use_amp", "enable_amp", "mixed_precision_training", "autocast")

_BF16_VALUE = lazy_re(r"(?i)^(?:torch\.)?(?:bf16[\w-]*|bfloat16)$")
_FP16_VALUE = lazy_re(r"(?i)^(?:torch\.)?(?:fp16|float16|half|16(?:-mixed|-true)?|mixed_float16|o[123])$")
_FP32_VALUE = lazy_re(r"(?i)^(?:torch\.)?(?:32(?:-true)?|fp32|float32|full|no|64(?:-true)?|fp64|float64)$")

# precision as a log line or a launch argument states it (value checks keep `bf16=False` from counting)
_PREC_LINES = [
    ("bf16", lazy_re(r"(?i)using bfloat16 automatic mixed precision|mixed precision type:\s*bf16|"
                     r"mixed precision compatibility check \(mixed_bfloat16\)")),
    ("fp16", lazy_re(r"(?i)using 16bit (?:\w+ )?automatic mixed precision|mixed precision type:\s*fp16|"
                     r"mixed precision compatibility check \(mixed_float16\)|using native amp|"
                     r"using (?:apex|native) automatic mixed precision")),
    ("bf16", lazy_re(r"(?i)(?:^|[\s,({'\"-])(?:bf16|bfloat16_enabled|bf16_enabled)['\"]?\s*(?:[:=]|\.{3,})\s*"
                     r"['\"]?(?:true|1)\b")),
    ("fp16", lazy_re(r"(?i)(?:^|[\s,({'\"-])(?:fp16|fp16_enabled)['\"]?\s*(?:[:=]|\.{3,})\s*['\"]?(?:true|1)\b")),
    ("mixed", lazy_re(r"(?i)(?:^|[\s,({'\"-])(?:amp_enabled|use_amp|amp)['\"]?\s*(?:[:=]|\.{3,})\s*['\"]?(?:true|1)\b")),
    ("bf16", lazy_re(r"(?i)--bf16\b(?![=\s]+(?:false|0)\b)")),
    ("fp16", lazy_re(r"(?i)--(?:fp16|amp|half)\b(?![=\s]+(?:false|0)\b)")),
    ("bf16", lazy_re(r"(?i)\b(?:mixed_precision|precision|torch_dtype|amp_dtype)['\"]?\s*[:=]\s*['\"]?(?:torch\.)?"
                     r"(?:bf16(?:-mixed|-true)?|bfloat16)\b")),
    ("fp16", lazy_re(r"(?i)\b(?:mixed_precision|precision|torch_dtype|amp_dtype)['\"]?\s*[:=]\s*['\"]?(?:torch\.)?"
                     r"(?:fp16|float16|16-mixed)\b")),
    ("bf16", lazy_re(r"(?i)\"bf16\"\s*:\s*\{\s*\"enabled\"\s*:\s*true")),
    ("fp16", lazy_re(r"(?i)\"fp16\"\s*:\s*\{\s*\"enabled\"\s*:\s*true")),
]
_PREC_GATES = ("bf16", "fp16", "bfloat16", "float16", "precision", "amp", "half", "16bit")

_ADAM = lazy_re(r"(?i)adam|lamb")
_SGD = lazy_re(r"(?i)\bsgd|sgd\b|nesterov")
_OTHER = lazy_re(r"(?i)lion|adafactor|rmsprop|adagrad|adadelta|sophia|muon|shampoo|lars|novograd|lbfgs|schedule_?free")
_OPT_KEYS = ("optimizer", "optim", "opt", "optimizer_name", "optimizer_type", "optimizer_class", "optim_type",
             "solver", "optimizer_cls")
_OPT_PARENTS = ("optimizer", "optim", "opt", "optimizer_config", "optimizer_cfg", "optim_cfg")
_OPT_SUBKEYS = ("_target_", "name", "type", "class_path", "_name_", "class", "cls")
_OPT_LINES = [
    lazy_re(r"(?i)\boptim(?:izer)?(?:_name|_type|_cls)?['\"]?\s*[:=]\s*(?:dict\(\s*type\s*=\s*)?['\"]?"
            r"(?:OptimizerNames\.)?([A-Za-z_][\w.]*)"),
    lazy_re(r"^\s*(Adam\w*|AdamW|SGD|RMSprop|Adagrad|Adadelta|Adafactor|Lion\w*|LAMB|Lamb|FusedAdam|"
            r"DeepSpeedCPUAdam|FusedLAMB)\s*\($"),
    lazy_re(r"(?i)\blr-(Adam\w*|SGD|RMSprop|Adagrad|Adafactor|Lion\w*|LAMB|Lamb|FusedAdam)\b"),
]
_OPT_GATES = ("optim", "adam", "sgd", "lr-", "lamb", "lion", "rmsprop", "adagrad", "adafactor")


def _entries(bundle: Bundle) -> Iterator[ConfigEntry]:
    """Every config entry, resolved configs first (the order Bundle.config uses)."""
    for path in sorted(bundle.configs, key=lambda p: (p.endswith("overrides.yaml"), p.count("/"), p)):
        yield from bundle.configs[path]


def _value(e: ConfigEntry) -> str:
    return e.value.strip().strip("'\"").strip()


def _texts(bundle: Bundle) -> Iterator[Source]:
    """Lines that may state the setup: log lines, facts (launch args, wandb metadata, CSV headers), and the
    first line of every metric file (its column names)."""
    for n, line in enumerate(bundle.all_lines()):
        if n >= MAX_LINES:
            break
        yield line.source()
    for src in bundle.facts.values():
        yield src
    for series in bundle.series.values():
        for s in series:
            if s.points and s.points[0].source is not None:
                yield s.points[0].source


def _config_precision(bundle: Bundle) -> Tuple[Optional[Tuple[str, Source]], Optional[Tuple[str, Source]]]:
    """(reduced precision the config shows, fp32 the config shows); either may be None."""
    reduced, full = None, None
    for e in _entries(bundle):
        parts = e.key.lower().split(".")
        last, parent = parts[-1], parts[-2] if len(parts) > 1 else ""
        v = _value(e)
        low = v.lower()
        got = None
        if last in _PREC_KEYS:
            got = "bf16" if _BF16_VALUE.match(v) else "fp16" if _FP16_VALUE.match(v) else (
                "fp32" if _FP32_VALUE.match(v) else None)
        elif last in _DTYPE_KEYS:
            got = "bf16" if _BF16_VALUE.match(v) else "fp16" if _FP16_VALUE.match(v) and not v.isdigit() else None
        elif last in _BF16_FLAGS or (last == "enabled" and parent in _BF16_FLAGS):
            got = "bf16" if low in _TRUE else "fp32?" if low in _FALSE else None
        elif last in _FP16_FLAGS or (last == "enabled" and parent in _FP16_FLAGS):
            got = "fp16" if low in _TRUE else "fp32?" if low in _FALSE else None
        elif last in _AMP_FLAGS or (last == "enabled" and parent in _AMP_FLAGS):
            got = "mixed" if low in _TRUE else "fp32?" if low in _FALSE else None
        elif last in ("fp16_opt_level", "opt_level", "amp_level") and low in ("o1", "o2", "o3"):
            got = "fp16"
        if got in REDUCED and reduced is None:
            reduced = (got, e.source())
        elif got in ("fp32", "fp32?") and full is None:
            full = ("fp32", e.source())
    return reduced, full


def precision(bundle: Bundle) -> Optional[Tuple[str, Source]]:
    """('bf16' | 'fp16' | 'mixed' | 'fp32', where it shows), or None when nothing shows it.

    Reduced precision from any source wins over an fp32 setting (a `fp16: false` next to `bf16: true`); fp32 is
    said only from the config (a precision key, or flags that are all off)."""
    memo = bundle.__dict__.setdefault("_run_setup", {})
    if "precision" in memo:
        return memo["precision"]
    reduced, full = _config_precision(bundle)
    if reduced is None:
        reduced = _line_precision(bundle)
    if reduced is None and (bundle.series.get("loss_scale") or []):
        s = bundle.series["loss_scale"][0]
        if s.points:
            reduced = ("fp16", s.points[0].source)  # a dynamic loss scale is logged only for fp16 AMP
    memo["precision"] = reduced or full
    return memo["precision"]


def _line_precision(bundle: Bundle) -> Optional[Tuple[str, Source]]:
    for src in _texts(bundle):
        text = src.text or ""
        low = text[:2000].lower()
        if not any(g in low for g in _PREC_GATES):
            continue
        for kind, rx in _PREC_LINES:
            if rx.search(text[:2000]):
                return kind, src
    return None


def classify_optimizer(name: str) -> Optional[str]:
    """'adam' (Adam, AdamW, LAMB and their fused / 8-bit variants), 'sgd', 'other', or None for no optimizer name."""
    if _ADAM.search(name):
        return "adam"
    if _SGD.search(name):
        return "sgd"
    if _OTHER.search(name):
        return "other"
    return None


def optimizer(bundle: Bundle) -> Optional[Tuple[str, str, Source]]:
    """(family, name as written, where it shows), or None when neither config, log lines nor metric names name
    the optimizer. A `momentum` setting with no Adam `betas` is SGD-type evidence of last resort."""
    memo = bundle.__dict__.setdefault("_run_setup", {})
    if "optimizer" in memo:
        return memo["optimizer"]
    memo["optimizer"] = _config_optimizer(bundle) or _line_optimizer(bundle) or _momentum_hint(bundle)
    return memo["optimizer"]


def _config_optimizer(bundle: Bundle) -> Optional[Tuple[str, str, Source]]:
    for e in _entries(bundle):
        parts = e.key.lower().split(".")
        last, parent = parts[-1], parts[-2] if len(parts) > 1 else ""
        if last in _OPT_KEYS or (parent in _OPT_PARENTS and last in _OPT_SUBKEYS):
            v = _value(e)
            kind = classify_optimizer(v)
            if kind:
                return kind, v, e.source()
    return None


def _line_optimizer(bundle: Bundle) -> Optional[Tuple[str, str, Source]]:
    for src in _texts(bundle):
        text = (src.text or "")[:2000]
        low = text.lower()
        if not any(g in low for g in _OPT_GATES):
            continue
        for rx in _OPT_LINES:
            m = rx.search(text)
            if m:
                kind = classify_optimizer(m.group(1))
                if kind:
                    return kind, m.group(1), src
    return None


def _momentum_hint(bundle: Bundle) -> Optional[Tuple[str, str, Source]]:
    keys: List[ConfigEntry] = list(_entries(bundle))
    if any(e.key.lower().rsplit(".", 1)[-1] in ("betas", "beta1", "adam_beta1", "beta_1") for e in keys):
        return None
    for e in keys:
        parts = e.key.lower().split(".")
        if parts[-1] != "momentum" or any(w in p for p in parts[:-1] for w in ("bn", "norm", "ema", "swa")):
            continue
        try:
            if float(_value(e)) > 0:
                return "sgd", f"momentum {_value(e)}", e.source()
        except ValueError:
            continue
    return None
