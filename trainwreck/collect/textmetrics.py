"""Metrics printed as free text: one log line in, (step, {canonical metric: value}) out.

Many failed runs leave their metrics only in stdout: HF Trainer dicts, Megatron/DeepSpeed iteration lines,
nanoGPT `iter N: loss x`, tqdm postfixes, Keras epoch bars, `key=value` / `key: value` / `key -> value` (XLM) / `loss is 0.17` progress lines.
`extract` runs on every line of a log, so it rejects a non-metric line with a few substring tests before
any regular expression runs, and it never raises.

What is never read as a metric value: timestamps (`22:16:00`), dates (`2023-06-07`), versions (`1.2.3`),
`file.py:181:`, `rank 3`, `GPU 0`, `epoch 3/10`, percentages other than accuracy, config dumps
(`TrainingArguments(...)`, `Namespace(...)`), and the run-average `train_loss` of HF's final summary.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.collect import showexpr
from trainwreck.collect.metricnames import SPLIT_WORDS, STEP_KEYS, core, extra, role
from trainwreck.collect.numbers import text_value

Result = Tuple[Optional[int], Dict[str, float]]

# -- cheap prefilter -------------------------------------------------------------------------------------------
# A metric line has a key separator, one of a few words (tested with `in` on the lower-cased line: the
# fastest test Python has) and a digit, `nan` or `inf`.
_DIGIT = lazy_re(r"\d")
_WS_ONLY = lazy_re(r"(?i)(?:^|[\s|_])loss[ \t]+[-+]?\d*\.\d")  # `loss 7.512` in a line without `:` or `=`

# -- the key / value grammar -----------------------------------------------------------------------------------
_NUM = (r"[-+]?(?:\d{1,3}(?:,\d{3})+(?![\d.])|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
        r"|[-+]?(?:nan|NaN|NAN|Infinity|infinity|inf|Inf|INF)(?![A-Za-z])")
_TAIL = r"(?P<unit>[KMGT]i?B)?(?P<tail>/[ \t]*\d+|:[ \t]*|%|(?=[\s,;|)\]}'\"]|\.(?:\s|$)|$))"  # (`Loss is: 0.18.`)
# `key=value` / `key: value`: found at the separator; the key is read backwards from there (see _pairs).
_SEPVAL = lazy_re(r"(?:[=:]|(?<= )->|(?<= )is:?(?= ))[ \t]*(?:tensor\(|\[\(?|\()?(?P<val>" + _NUM + r")" + _TAIL)
# The key, matched on the reversed line from just before the separator: optional blanks and closing quote,
# then up to 7 words separated by single spaces, each a whole word that starts (in reading order) with a
# letter, or a `(unit)` word.
_RKEY = lazy_re(r"[ \t]*['\"]?((?:[\w./\-]*[A-Za-z_]|\)[A-Za-z/%]+\()(?![\w./\-])"
                   r"(?: (?:[\w./\-]*[A-Za-z_]|\)[A-Za-z/%]+\()(?![\w./\-])){0,6})")
# `key value` without a separator, only for a few keys (`iter 100:`, `loss 2.34`, `Iteration 78000,`), matched
# on the lower-cased line; a qualifier word before it (`train loss`, `val loss`, `global step`) is read in _pairs.
# A counter may sit in brackets (`Step [20]  train Loss : …`, `Epoch [3/10]`).
_WSPAIR = lazy_re(r"(loss|lr|steps?|iter(?:ation)?|epoch)[ \t]+(?:(?<=p |r |h |n )(?<!lr )\[[ \t]*)?(?P<val>" + _NUM + r")"
                  + _TAIL)
_WS_QUALIFIERS = ("train", "training", "val", "valid", "validation", "eval", "test", "lm", "total", "avg", "global",
                  "completed")
_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}
_KEYCHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-")
_TQDM = lazy_re(r"(?<!\d)(\d+)/(\d+) \[[\d:]+<[\d:?]+,\s*(?:(?P<rate>[\d.]+)(?P<unit>it/s|s/it))?[^\]]*?(?:, (?P<post>[^\]]*))?\]")
_MM_ITER = lazy_re(r"\bIter(?:\(\w+\))? ?\[ *(\d+)/")
_DARKNET = lazy_re(r"^\s*(\d+)(?:, [\d.]+)?: (" + _NUM + r"), (" + _NUM + r") avg(?: loss)?, (" + _NUM + r") rate")
# HF's `trainer.log_metrics("train", metrics)` block after "***** train metrics *****":
# `print(f"  {key: <{k_width}} = {value:>{v_width}}")` — its train_loss is the run average, like the summary dict's.
_HF_TRAIN_METRICS_LOSS = lazy_re(r"^  train_loss +=  *\S+\s*$")
_SCALE_TO = lazy_re(r"(?:reducing|setting|set|lowering|decreasing|dropping)(?: the)?(?: loss)?(?: scale)? to:? *("
                       + _NUM + r")(?![\w.])")

# a call's keyword argument after a positional one (`attention(q, k, v, scale=0.12)`; a record's repr,
# `StepMetrics(step=1, loss=2.49)`, has keywords only and stays a metric line), or a Python literal passed by
# keyword (on a continuation line too: `v, scale=0.12, is_causal=True)`); linear: a name starts only after a
# character that cannot be part of one
_CALL_KWARG = lazy_re(r"(?<![\w.])[A-Za-z_][\w.]*\((?:[^()=\n]|\([^()\n]*\))+?,[ \t]*[a-z_]\w*=[-+.\d]"
                      r"|(?<![\w.])[a-z_]\w*=(?:True|False|None)[,)]")
# Key spellings metricnames does not know but progress lines use.
_ALIASES = {"skipped": "skipped_iterations", "samples/sec": "throughput", "tokens/sec": "throughput",
            "wps": "throughput", "ups": None, "nan_iterations": "nan_iterations"}
_STEP_WORDS = frozenset(STEP_KEYS) | {"global step", "global_steps", "num_updates", "completed step",
                                      "total_steps", "optimizer_step", "iterations"}
# A metric name right after one of these words is a bound or a setting, not a measurement.
_MODIFIERS = frozenset({"best", "min", "minimum", "max", "maximum", "lowest", "highest", "target", "init",
                        "initial", "prev", "previous", "expected", "peak", "clip", "clipping", "attempted",
                        "warmup", "base", "final", "end", "start", "starting", "new", "old", "default", "ema"})
_STEP = "\x00step"  # an optimizer-step counter (`step`, `global_step`, `num_updates`)
_ITER = "\x00iter"  # an iteration counter: the step only when the line names no `step` (`iter 77 step 39`)
_ITER_WORDS = frozenset({"iter", "iteration", "iterations", "it"})

_key_cache: Dict[str, Optional[str]] = {}


# The split a multi-word key names before its metric (`val acc`, `Test Instance Accuracy`, `validation loss`): kept,
# so a held-out accuracy never joins the training accuracy's series.
_SPLIT_WORDS = SPLIT_WORDS
_SPLIT_KEEPS = frozenset({"accuracy", "loss"})
# words before `loss` that qualify the total (its split, an average, a language-model loss), not name a term of it
_LOSS_QUALIFIERS = frozenset(_SPLIT_WORDS) | frozenset(_WS_QUALIFIERS) | {
    "training", "average", "mean", "running", "batch", "epoch", "step", "smoothed", "overall", "current", "cur",
    "the", "my", "final", "new", "iter", "iteration", "train", "model", "and", "of", "is", "with", "sum", "weighted"}


def _with_split(name: str, cand: str, before: List[str]) -> str:
    split = next((w for w in reversed(before[-3:]) if w in _SPLIT_WORDS), None)
    if split is None:
        return name
    split = {"evaluation": "eval", "dev": "val"}.get(split, split)
    return core(f"{split} {cand}") or extra(f"{split}_{cand.replace(' ', '_')}") or name


def _kind(key: Optional[str]) -> Optional[str]:
    last = key.lower().rsplit(" ", 1)[-1] if key else ""
    return "accuracy" if last in ("acc", "accuracy") else "loss" if last == "loss" else None


def _carried(key: Optional[str], name: Optional[str], carry: Optional[Tuple[str, Optional[str]]],
             field: bool = False) -> Tuple[Optional[Tuple[str, Optional[str]]], Optional[str]]:
    """(carry, name): a line's later keys without a split of their own share the split (or the bound) an earlier
    loss or accuracy key of the line named — keys of the same kind always (`Test Instance Accuracy: 0.04, Class
    Accuracy: 0.025` is two test accuracies; `Best Instance Accuracy: 0.04, Class Accuracy: 0.025` two bests, a bound
    carrying to qualified names only: `best loss: 0.3, loss: 0.5` ends with the loss), a loss and an accuracy
    only within one field (`Validation Loss: 0.69 Acc: 0.00`), not across a `|` (`Val Acc: 0.81 | Loss: 0.30`
    ends with the training loss). `Train Loss` after `Val Loss` keeps its own split."""
    words = key.lower().split(" ") if key else []
    own = next((w for w in words if w in _SPLIT_WORDS or w in ("train", "training") or w in _MODIFIERS), None)
    if own is not None:
        return ("bound" if own in _MODIFIERS else own, _kind(key)), name
    if carry is None or carry[0] in ("train", "training") or name not in _SPLIT_KEEPS or carry[1] is None or (
            carry[1] != _kind(key) and field):
        return carry, name
    if carry[0] == "bound":  # a bare `loss` after `best loss` is the loss itself; `Class Accuracy` is the best's
        return carry, (None if len(words) > 1 else name)
    return carry, _with_split(name, name, [carry[0]])


def _terms(keys: List[Optional[str]], names: List[Optional[str]]) -> None:
    """`Cls loss: a. Reg loss: b. Total loss: c`: beside a total on the same line, a loss named by a word that is
    no qualifier of the total (`cls`, `reg`, `g`) is a term of it; alone (`Combined loss: 2.30`) it is the loss."""
    at = [i for i, n in enumerate(names) if n == "loss"]
    if len(at) < 2:
        return
    word = {i: (keys[i] or "").lower().split(" ")[-2:-1] for i in at}
    named = {i: w[0] for i, w in word.items() if w and w[0].isalpha() and w[0] not in _LOSS_QUALIFIERS}
    if len(named) == len(at):
        return  # no total among them (`G loss: 0.5, D loss: 0.3`): the first is the loss, as before
    for i, w in named.items():
        part = extra(f"{w}_loss")
        if part is not None and role(part) == "component":
            names[i] = part


def _resolve(key: str) -> Optional[str]:
    """Canonical name for a (possibly multi-word) key: the longest trailing run of words that names a metric
    or a step counter. None when nothing does, or when a bound word precedes it ('best loss', 'max lr')."""
    hit = _key_cache.get(key)
    if hit is not None or key in _key_cache:
        return hit
    words = key.lower().split(" ")
    found: Optional[str] = None
    # a core name at any suffix first (`avg train loss` is the loss), then components / task metrics
    for lookup in (core, extra):
        for i in range(len(words)):
            cand = " ".join(words[i:])
            if lookup is core:
                name = _ALIASES.get(cand) if cand in _ALIASES else core(cand)
                if name is None and (cand in _STEP_WORDS or cand.replace(" ", "_") in _STEP_WORDS):
                    name = _ITER if cand in _ITER_WORDS else _STEP
                if name is None and cand == "epoch":
                    name = "epoch"
            else:
                name = extra(cand) if len(words) - i <= 3 else None
            if name is not None:
                if i > 0 and (words[i - 1] in _MODIFIERS or (name in _SPLIT_KEEPS and _MODIFIERS.intersection(words[:i]))):
                    name = None  # `max lr`; `Best Instance Accuracy`: a bound, not a measurement
                elif name in _SPLIT_KEEPS and i > 0:
                    name = _with_split(name, cand, words[:i])
                found = name
                break
            if i >= 4:
                break
        if found is not None or any(w in _MODIFIERS for w in words[-2:-1]):
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
    v, why = text_value(s.replace(",", ""))  # `1111…1`, `1e999`: too large for a float, not an infinity
    if v is None:
        raise ValueError(why or s[:20])
    return v


def _accept(name: str, val: str, unit: Optional[str], tail: str, out: Dict[str, float]) -> Optional[int]:
    """Store one value of metric `name` (the first one wins); return it as a step when `name` is the step."""
    if name == _STEP or name == _ITER:
        return int(val) if val.isdigit() and tail != "%" and not unit else None
    if unit and name != "memory":
        return None
    if tail:
        if tail[0] == ":" and len(tail) > 1 and "." in val and name != "epoch":
            pass  # `Total loss: 146300.96875:  24%|`: a tqdm description ends in ": " before its bar
        elif tail[0] == ":":
            if name != "epoch" or not val.isdigit():
                return None  # `Validation loss 6312:`, `eta: 2:46:39`, `file.py:181:`
        elif tail == "%":
            if name != "accuracy" and not (name.endswith(("_acc", "_accuracy")) and role(name) == "task"):
                return None  # an accuracy of any split may be printed in percent; nothing else is read so
        else:  # `/total`: `epoch 3/10`, `loss 3/4`
            return None
    if name not in out:
        try:
            out[name] = _num(val)
        except ValueError:
            pass
    return None


Plan = Tuple[Tuple[Optional[str], ...], Tuple[Optional[str], ...]]


def _plan(text: str, low: str) -> Plan:
    """The metric name behind each `key: value` match and each `key value` match of a line (None: not a
    metric). Lines printed by one logging call share their plan, so it is computed once per layout."""
    sep: List[Optional[str]] = []
    carry: Optional[Tuple[str, Optional[str]]] = None
    keys: List[Optional[str]] = []
    if "=" in text or ":" in text or "->" in text or " is " in text:
        rev = text[::-1]
        n = len(text)
        prev = 0
        for m in _SEPVAL.finditer(text):
            k = _RKEY.match(rev, n - m.start())
            key = k.group(1)[::-1] if k is not None else None
            if key is not None and " for " in key:  # `loss for discriminator is 1.4e12`: the discriminator's loss
                what, whose = key.rsplit(" for ", 1)
                whose = whose.replace(" ", "_")
                key = (whose if whose.lower().endswith("loss") else f"{whose}_loss") if what.lower().endswith(
                    "loss") else key
            name = _resolve(key) if key is not None else None
            carry, name = _carried(key, name, carry, "|" in text[prev:m.start()])
            prev = m.end()
            sep.append(name)
            keys.append(key)
        _terms(keys, sep)
    ws: List[Optional[str]] = []
    if "loss " in low or "lr " in low or "step" in low or "iter" in low or "epoch " in low or "loss\t" in low:
        for m in _WSPAIR.finditer(low):
            k0 = m.start()
            key: Optional[str] = m.group(1)
            if k0:
                before = low[k0 - 1]
                if before == " " or before == "_":
                    prev = low[max(0, k0 - 12):k0 - 1].rsplit(" ", 1)[-1]
                    if prev in _WS_QUALIFIERS:
                        key = f"{prev} {key}"
                    elif before == "_":
                        key = None  # `nll_loss 9.5`: another metric
                elif before in _KEYCHARS:
                    key = None  # `3ms/step 5`, `world 3`: inside a word
            ws.append(_resolve(key) if key is not None else None)
    return tuple(sep), tuple(ws)


_plans: Dict[bytes, Plan] = {}


_UNCACHED = ((), ())  # the plan of a layout whose metric names hold digits is not kept


def _pairs(text: str, low: str, out: Dict[str, float]) -> Optional[int]:
    """Fill `out` with the canonical metrics of `text`; return the step named in it, if any."""
    if len(low) != len(text):  # str.lower() changed the length (e.g. 'İ'): lower ASCII only, keep positions
        low = text.translate(_ASCII_LOWER)
    layout = text.encode("utf-8", "surrogatepass").translate(None, b"0123456789")  # the line less its digits
    plan = _plans.get(layout)
    if plan is None or plan is _UNCACHED:
        plan = _plan(text, low)
        if len(_plans) >= 2048:
            _plans.clear()
        # names with digits (`dsn1_loss`, `dsn5_loss`) share a digit-less layout: plan each such line afresh
        _plans[layout] = _UNCACHED if any(n and any(c.isdigit() for c in n) for ns in plan for n in ns) else plan
    sep_names, ws_names = plan
    found: List[Tuple[Optional[str], Tuple[str, str, str]]] = []
    if sep_names:
        vals = _SEPVAL.findall(text)
        if len(vals) != len(sep_names):  # pragma: no cover - same layout, same matches
            sep_names = _plan(text, low)[0]
        found.extend(zip(sep_names, vals))
    if ws_names:
        vals = [m[1:] for m in _WSPAIR.findall(low)]
        if len(vals) != len(ws_names):  # pragma: no cover
            ws_names = _plan(text, low)[1]
        found.extend(zip(ws_names, vals))
    step: Optional[int] = None
    named_step = False
    for name, (val, unit, tail) in found:
        if name is not None:
            got = _accept(name, val, unit, tail, out)
            if got is not None and (step is None or (name == _STEP and not named_step)):
                step, named_step = got, name == _STEP
    return step


def _segment(text: str, low: str) -> Optional[Result]:
    # a line that echoes a configuration (`TrainingArguments(…)`, argparse `Namespace(…)`) is not a measurement
    if "Arguments(" in text or "Namespace(" in text or "Config(" in text or "weight_decay" in text \
            or "warmup_steps" in text or "num_train_epochs" in text or "betas" in text:
        return None
    # a line of source code (a script copied into its own log, a traceback's source line): keyword arguments of
    # a call, `attention(q, k, v, scale=0.12)` or `…, scale=0.12, is_causal=True)`, are settings, not measurements
    if "(" in text and "=" in text and _CALL_KWARG.search(text) is not None:
        return None
    out: Dict[str, float] = {}
    body = text
    if "s/it" in text or "it/s" in text:  # a tqdm bar: step = n of n/total; metrics from its postfix
        t = _TQDM.search(text)
        if t is not None:
            # metrics in the postfix, or in a description before the bar (`set_description(f"loss {x}")`)
            post = (t.group("post") or "") + " | " + text[:t.start()]
            _pairs(post, post.lower(), out)
            if t.group("rate") and any(k != "epoch" for k in out):
                rate = float(t.group("rate"))
                if rate > 0:
                    out.setdefault("throughput", rate if t.group("unit") == "it/s" else 1.0 / rate)
            rest_text = text[t.end():]
            rest = _segment(rest_text, rest_text.lower()) if len(rest_text) > 4 else None
            if rest is not None:
                for k, v in rest[1].items():
                    out.setdefault(k, v)
            if not out or (len(out) == 1 and "epoch" in out):
                return None
            return (rest[0] if rest is not None and rest[0] is not None else int(t.group(1))), out
    if "avg" in low and "rate" in low:
        d = _DARKNET.match(text)
        if d is not None:
            try:
                out["loss"] = _num(d.group(2))
                out["lr"] = _num(d.group(4))
            except ValueError:
                return None
            return int(d.group(1)), out
    if "scale" in low and " to" in low:
        s = _SCALE_TO.search(text)
        if s is not None:
            try:
                out["loss_scale"] = _num(s.group(1))
            except ValueError:
                pass
            body = text[:s.start()]
            low = low[:s.start()]
    named = _pairs(body, low, out)
    if "train_runtime" in text:  # HF's final summary: train_loss there is the run average, not a point
        out.pop("loss", None)
    elif "loss" in out and text.startswith("  train_loss") and _HF_TRAIN_METRICS_LOSS.match(text):
        out.pop("loss", None)
    if named is None and "Iter" in text:
        mm = _MM_ITER.search(text)
        if mm is not None:
            named = int(mm.group(1))
    if not out or (len(out) == 1 and "epoch" in out):
        return None
    return named, out


def _candidate(text: str) -> Optional[str]:
    """The lower-cased line when it may hold metrics, else None (the cheap prefilter)."""
    low = text.lower()
    if not ("loss" in low or "lr" in low or "learning" in low or "grad" in low or "norm" in low
            or "scale" in low or "iter" in low or "step" in low or "epoch" in low or "/s" in low
            or "per_s" in low or "per s" in low or "throughput" in low or "mem" in low or "acc" in low
            or "avg" in low or "skipped" in low or "wps" in low or "bleu" in low or "score" in low
            or "map" in low or "iou" in low or "dice" in low or "f1" in low or "recall" in low or "precision" in low
            or "auc" in low or "rew" in low or "kl" in low  # task metrics, rewards, a KL on a line of their own
            or "l1" in low or "mse" in low or "mae" in low):  # a loss named by its function (EDSR's `[L1: 5.98]`)
        return None
    if _DIGIT.search(text) is None and "nan" not in low and "inf" not in low:
        return None
    return low


def extract(text: str) -> Optional[Result]:
    """(step or None, {canonical name: float}) for one log line, or None when it carries no metrics.

    `\\r`-separated tqdm updates: the last segment that has metrics wins. Never raises."""
    try:
        if ")" in text and "=" in text:  # `loss(x, y) = 0.2`, `(i, loss(x)) = (1, 0.2)`: Julia's @show layout
            text = showexpr.rewrite(text) or text
        if "=" not in text and ":" not in text and "scale to" not in text and " is " not in text and not (
                ("oss " in text or "oss\t" in text or "OSS " in text) and _WS_ONLY.search(text)):
            return None  # (an epoch summary such as `| epoch 003 | loss 7.512 | ppl 182.5` has no separator)
        if "\r" in text:
            for seg in reversed(text.split("\r")):
                low = _candidate(seg)
                if low is not None:
                    got = _segment(seg, low)
                    if got is not None:
                        return got
            return None
        low = _candidate(text)
        return None if low is None else _segment(text, low)
    except Exception:  # garbage in: no metrics, never a crash of the reader
        return None

