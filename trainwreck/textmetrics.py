"""Metrics printed as free text: one log line in, (step, {canonical metric: value}) out.

Many failed runs leave their metrics only in stdout: HF Trainer dicts, Megatron/DeepSpeed iteration lines,
nanoGPT `iter N: loss x`, tqdm postfixes, Keras epoch bars, `key=value` / `key: value` progress lines.
`extract` runs on every line of a log, so it rejects a non-metric line with a few substring tests before
any regular expression runs, and it never raises.

What is never read as a metric value: timestamps (`22:16:00`), dates (`2023-06-07`), versions (`1.2.3`),
`file.py:181:`, `rank 3`, `GPU 0`, `epoch 3/10`, percentages other than accuracy, config dumps
(`TrainingArguments(...)`, `Namespace(...)`), and the run-average `train_loss` of HF's final summary.
"""
from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

from .metricnames import STEP_KEYS, canonical

Result = Tuple[Optional[int], Dict[str, float]]

# -- cheap prefilter -------------------------------------------------------------------------------------------
# A metric line has a key separator and one of these words (lower-cased). Tested with `in`, which is fast.
_KEYWORDS = ("loss", "lr", "learning", "grad", "norm", "scale", "skipped", "iter", "step", "/s", "per_s",
             "per s", "throughput", "mem", "acc", "avg", "rate", "wps", "epoch")
# Lines that echo a configuration, not a measurement.
_CONFIG_MARKERS = ("Arguments(", "Namespace(", "Config(", "weight_decay", "warmup_steps", "num_train_epochs",
                   "per_device_train_batch_size", "betas")

# -- the key / value grammar -----------------------------------------------------------------------------------
_NUM = (r"[-+]?(?:\d{1,3}(?:,\d{3})+(?![\d.])|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
        r"|[-+]?(?i:nan|inf(?:inity)?)(?![A-Za-z])")
_PAIR = re.compile(
    r"(?<![\w./\-])"
    r"(?P<key>[A-Za-z_][\w./\-]*(?: (?:[A-Za-z_][\w./\-]*|\([A-Za-z/%]+\))){0,6})"
    r"['\"]?(?P<sep>[ \t]*[=:][ \t]*|[ \t]+)"
    r"(?:tensor\(|\[\(?|\()?"
    r"(?P<val>" + _NUM + r")"
    r"(?P<unit>[KMGT]i?B|MB|GB)?"
    r"(?P<tail>/[ \t]*\d+|[:%]|(?=[\s,;|)\]}'\"]|$))"
)
_TQDM = re.compile(r"(\d+)/(\d+) \[[\d:]+<[\d:?]+,\s*(?:(?P<rate>[\d.]+)(?P<unit>it/s|s/it))?[^\]]*?(?:, (?P<post>[^\]]*))?\]")
_MM_ITER = re.compile(r"\bIter(?:\(\w+\))? ?\[ *(\d+)/")
_DARKNET = re.compile(r"^\s*(\d+)(?:, [\d.]+)?: (" + _NUM + r"), (" + _NUM + r") avg(?: loss)?, (" + _NUM + r") rate")
_SCALE_TO = re.compile(r"(?:reducing|setting|set|lowering|decreasing|dropping)(?: the)?(?: loss)?(?: scale)? to:? *("
                       + _NUM + r")(?![\w.])")

# Key spellings metricnames does not know but progress lines use.
_ALIASES = {"skipped": "skipped_iterations", "samples/sec": "throughput", "tokens/sec": "throughput",
            "wps": "throughput", "ups": None, "nan_iterations": "nan_iterations"}
_STEP_WORDS = frozenset(STEP_KEYS) | {"global step", "global_steps", "num_updates", "completed step",
                                      "total_steps", "optimizer_step", "iterations"}
# A metric name right after one of these words is a bound or a setting, not a measurement.
_MODIFIERS = frozenset({"best", "min", "minimum", "max", "maximum", "lowest", "highest", "target", "init",
                        "initial", "prev", "previous", "expected", "peak", "clip", "clipping", "attempted",
                        "warmup", "base", "final", "end", "start", "starting", "new", "old", "default", "ema"})
_STEP = "\x00step"

_key_cache: Dict[str, Optional[str]] = {}


def _resolve(key: str) -> Optional[str]:
    """Canonical name for a (possibly multi-word) key: the longest trailing run of words that names a metric
    or a step counter. None when nothing does, or when a bound word precedes it ('best loss', 'max lr')."""
    hit = _key_cache.get(key)
    if hit is not None or key in _key_cache:
        return hit
    words = key.lower().split(" ")
    found: Optional[str] = None
    for i in range(len(words)):
        cand = " ".join(words[i:])
        name = _ALIASES.get(cand) if cand in _ALIASES else canonical(cand)
        if name is None and (cand in _STEP_WORDS or cand.replace(" ", "_") in _STEP_WORDS):
            name = _STEP
        if name is None and cand == "epoch":
            name = "epoch"
        if name is not None:
            if i > 0 and words[i - 1] in _MODIFIERS:
                name = None
            found = name
            break
        if i >= 4:
            break
    if len(_key_cache) > 4096:
        _key_cache.clear()
    _key_cache[key] = found
    return found


def _num(s: str) -> float:
    low = s.lower()
    if "nan" in low:
        return float("nan")
    if "inf" in low:
        return float("-inf") if low.startswith("-") else float("inf")
    return float(s.replace(",", ""))


def _pairs(text: str, out: Dict[str, float]) -> Optional[int]:
    """Fill `out` with the canonical metrics of `text`; return the step named in it, if any."""
    step: Optional[int] = None
    for m in _PAIR.finditer(text):
        name = _resolve(m.group("key"))
        if name is None:
            continue
        val, tail, unit = m.group("val"), m.group("tail"), m.group("unit")
        if name == _STEP:
            if step is None and tail != "%" and not unit and val.isdigit():
                step = int(val)
            continue
        if unit and name != "memory":
            continue
        if tail == ":":
            if name != "epoch" or not val.isdigit():
                continue  # `Validation loss 6312:`, `eta: 2:46:39`, `file.py:181:`
        elif tail == "%":
            if name != "accuracy":
                continue
        elif tail:  # `/total`: `epoch 3/10`, `loss 3/4`
            continue
        if name not in out:
            try:
                out[name] = _num(val)
            except ValueError:
                continue
    return step


def _segment(text: str) -> Optional[Result]:
    low = text.lower()
    if not any(k in low for k in _KEYWORDS):
        if "scale to" not in low:
            return None
    if any(c in text for c in _CONFIG_MARKERS):
        return None
    out: Dict[str, float] = {}
    step: Optional[int] = None
    body = text
    if "s/it" in text or "it/s" in text:  # a tqdm bar: step = n of n/total; metrics from its postfix
        t = _TQDM.search(text)
        if t is not None:
            _pairs(t.group("post") or "", out)
            if out and t.group("rate"):
                rate = float(t.group("rate"))
                if rate > 0:
                    out.setdefault("throughput", rate if t.group("unit") == "it/s" else 1.0 / rate)
            rest = _segment(text[t.end():]) if len(text) > t.end() + 4 else None
            if rest is not None:
                for k, v in rest[1].items():
                    out.setdefault(k, v)
            if not out:
                return None
            return (rest[0] if rest is not None and rest[0] is not None else int(t.group(1))), out
    if "avg" in low and "rate" in low:
        d = _DARKNET.match(text)
        if d is not None:
            out["loss"] = _num(d.group(2))
            out["lr"] = _num(d.group(4))
            return int(d.group(1)), out
    if "scale" in low and " to" in low:
        s = _SCALE_TO.search(text)
        if s is not None:
            out["loss_scale"] = _num(s.group(1))
            body = text[:s.start()]
    named = _pairs(body, out)
    if "train_runtime" in text:  # HF's final summary: train_loss there is the run average, not a point
        out.pop("loss", None)
    if named is None and "Iter" in text:
        mm = _MM_ITER.search(text)
        if mm is not None:
            named = int(mm.group(1))
    if not out or (len(out) == 1 and "epoch" in out):
        return None
    return named, out


def extract(text: str) -> Optional[Result]:
    """(step or None, {canonical name: float}) for one log line, or None when it carries no metrics.

    `\\r`-separated tqdm updates: the last segment that has metrics wins. Never raises."""
    try:
        if "=" not in text and ":" not in text and "scale to" not in text:
            return None
        if "\r" in text:
            for seg in reversed(text.split("\r")):
                if seg.strip():
                    got = _segment(seg)
                    if got is not None:
                        return got
            return None
        return _segment(text)
    except Exception:  # garbage in: no metrics, never a crash of the reader
        return None

