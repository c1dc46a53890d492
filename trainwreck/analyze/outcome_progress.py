"""How far the run got, and whether that is its planned end: HF's final summary and `global_step == max_steps`
in trainer_state.json, or the last logged step / epoch equal to the length the config sets (max_steps,
train_iters, max_iters …; epochs, num_train_epochs, max_epochs …) or HF Trainer announces ("Num Epochs = 3",
"Total optimization steps = 750").

`run_progress` is the one reading of "final step N of M; loss X → Y" that the outcome markers and the
headline share."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterator, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, ConfigEntry, Finding, Point, Source

STEP_KEYS = ("max_steps", "train_iters", "max_iters", "max_iter", "total_steps", "num_training_steps", "max_update",
             "total_iters", "num_train_steps", "training_steps", "max_iterations")
# (never `n_steps`: Stable-Baselines3's is the rollout per update, d3rlpy's the N of an N-step return)
EPOCH_KEYS = ("num_train_epochs", "max_epochs", "epochs", "num_epochs", "n_epochs", "max_epoch", "total_epochs")


def _int(text: Any) -> Optional[int]:
    try:
        v = float(str(text).strip().strip("'\""))
    except (TypeError, ValueError):
        return None
    return int(v) if math.isfinite(v) and v > 0 and v == int(v) else None


# transformers Trainer._inner_training_loop's "***** Running training *****" block:
# logger.info(f"  Num Epochs = {num_train_epochs:,}"), logger.info(f"  Total optimization steps = {max_steps:,}")
_HF_PLAN = lazy_re(r"^(?:.*\] )?\s+(Num Epochs|Total optimization steps) = ([\d,]+)\s*$")


def _planned_in_log(bundle: Bundle, unit: str) -> Tuple[Optional[int], Optional[Source]]:
    want = "Num Epochs" if unit == "epoch" else "Total optimization steps"
    for ln in bundle.all_lines():
        if want in ln.text:
            m = _HF_PLAN.match(ln.text)
            if m is not None and m.group(1) == want:
                return _int(m.group(2).replace(",", "")), ln.source()
    return None, None


# Keras ProgbarLogger: print_msg(f"Epoch {epoch + 1}/{self.epochs}") then the Progbar's
# f"{current}/{target} [" + "=" * n + "]" (Keras 3 draws "━"); the PyTorch tutorials' print
# ('Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}'.format(epoch + 1, num_epochs, i + 1, total_step, loss.item()))
_KERAS_EPOCH = lazy_re(r"^Epoch (\d+)/(\d+)\s*$")
# verbose=2 prints one line per epoch and no bar: `1875/1875 - 3s - 1ms/step - loss: …` (TF2 / Keras 3), or, in
# Keras 1-2, `275s - loss: 0.0466 - acc: 0.9857` (the epoch's seconds, then its metrics)
_KERAS_BAR = lazy_re(r"^\s*(\d+)/(\d+) (?:\[=+\]|━+|- \d)")
_KERAS_V2 = lazy_re(r"^\s*\d+s - \w+: ")
_EPOCH_STEP = lazy_re(r"Epoch \[(\d+)/(\d+)\], Step \[(\d+)/(\d+)\]")


def _epoch_counter(bundle: Bundle) -> List[Finding]:
    """The last epoch of N printed and finished: Keras's `Epoch N/N` followed by a full progress bar, or
    `Epoch [N/N], Step [M/M]`. One marker per file, from its last epoch line."""
    state: Dict[str, Any] = {}  # path -> (epoch line, k, n, finished line)
    for ln in bundle.all_lines():
        t = ln.text
        if "Epoch" in t:
            m = _KERAS_EPOCH.match(t)
            if m is not None:
                state[ln.path] = [ln, int(m.group(1)), int(m.group(2)), None, "keras"]
                continue
            m = _EPOCH_STEP.search(t)
            if m is not None:
                k, n, i, total = (int(g) for g in m.groups())
                state[ln.path] = [ln, k, n, ln if i == total else None, "log"]
                continue
        st = state.get(ln.path)
        if st is not None and st[4] == "keras" and "/" in t:
            b = _KERAS_BAR.match(t.rsplit("\r", 1)[-1])  # a captured bar holds every \r update: the last counts
            if b is not None and b.group(1) == b.group(2):
                st[3] = ln
        elif st is not None and st[4] == "keras" and " - " in t and _KERAS_V2.match(t):
            st[3] = ln
    out = []
    for head, k, n, done, by in state.values():
        if k == n and done is not None:
            ev = [done.source()] + ([head.source()] if head is not done else [])
            out.append(_marker(f"the last epoch printed is {k}/{n} and it ran to its last step", ev,
                               {"step": k, "of": n, "unit": "epoch"}, by))
    return out


def _fact(bundle: Bundle, key: str) -> Optional[Source]:
    return (bundle.facts or {}).get(key)


def _setting(src: Source, n: int) -> str:
    """`epochs: 30` for the claim, rebuilt from the key trainwreck matched and the number it read, never the line
    itself (log and config text is quoted as evidence, not spoken as trainwreck's words)."""
    m = _KEY.match(src.text)
    key = m.group(1) if m is not None and m.group(1) in STEP_KEYS + EPOCH_KEYS else None
    return f"{key}: {n}" if key else ("Num Epochs" if "Num Epochs" in src.text else "planned length") + f" = {n}"


_KEY = lazy_re(r"""^\s*["']?(?:[\w.\-]*\.)?([A-Za-z_]+)["']?\s*[:=]""")  # `epochs: 30`, `"n_steps": 500000,`


def _configured(bundle: Bundle, keys: Tuple[str, ...]) -> Tuple[Optional[int], Optional[Source]]:
    e: Optional[ConfigEntry] = bundle.config(*keys)
    n = _int(e.value) if e is not None else None
    if n is not None and e is not None:
        return n, e.source()
    return _planned_in_log(bundle, "epoch" if keys is EPOCH_KEYS else "step")


def _last_step(bundle: Bundle) -> Optional[Point]:
    """The last logged training step: the loss series' last point, else any series' furthest point."""
    s = bundle.best_series("loss")
    pts = [p for p in (s.points if s else []) if p.step is not None]
    if not pts:
        pts = [p for ss in bundle.series.values() for x in ss for p in x.points if p.step is not None]
    return max(pts, key=lambda p: p.step) if pts else None


def _furthest_step(bundle: Bundle) -> Tuple[Optional[Point], Optional[int]]:
    """(the furthest step a measured series logged, the first step logged): the last evaluation may come after the
    last training loss. Schedules (lr, loss scale, eta) are planned ahead, not measured: they are left out."""
    pts = [x.points for name, ss in bundle.series.items() if name not in _PLANNED for x in ss]
    ends = [p[-1] for p in pts if p and p[-1].step is not None]
    starts = [q.step for p in pts for q in p[:1] if q.step is not None]
    return (max(ends, key=lambda p: p.step) if ends else None), (min(starts) if starts else None)


_PLANNED = frozenset({"lr", "learning_rate", "loss_scale", "eta_seconds", "epoch", "momentum", "weight_decay"})


def _last_epoch(bundle: Bundle) -> Tuple[Optional[Point], Optional[Point]]:
    """(first, last) point of the longest epoch series: the epochs a metrics file or a log records."""
    cands = [x for x in bundle.series.get("epoch") or [] if x.finite()]
    if not cands:
        return None, None
    pts = max(cands, key=lambda x: len(x.points)).finite()
    return pts[0], max(pts, key=lambda p: p.value)


def _epochs(first: Point, last: Point) -> float:
    """Epochs done, not the last index: a 0-based integral counter (yolov5, Lightning) ends at n - 1."""
    return last.value + 1 if first.value == 0 and float(last.value).is_integer() else last.value


def run_progress(bundle: Bundle) -> Dict[str, Any]:
    """{"step", "of", "unit", "loss_first", "loss_last"}: what is known of the run's length and its loss."""
    out: Dict[str, Any] = {}
    gs, ms = _fact(bundle, "trainer_state.global_step"), _fact(bundle, "trainer_state.max_steps")
    last = _last_step(bundle)
    if gs is not None:
        out.update(step=_int(gs.value) or 0, unit="step")
    elif last is not None:
        out.update(step=last.step, unit="step")
    of, _src = (_int(ms.value), ms) if ms is not None and _int(ms.value) else _configured(bundle, STEP_KEYS)
    if of is not None and out.get("unit") == "step":
        out["of"] = of
    if "step" not in out:
        first, le = _last_epoch(bundle)
        if le is not None and first is not None:
            out.update(step=_epochs(first, le), unit="epoch")
            n, _src = _configured(bundle, EPOCH_KEYS)
            if n is not None:
                out["of"] = n
    s = bundle.best_series("loss")
    fin = s.finite() if s else []
    if fin:
        out.update(loss_first=fin[0].value, loss_last=fin[-1].value)
    part = partway(bundle)
    if part is not None:
        out["partway"] = part
    return out


# a loop's position counter: tqdm's `| 150/1125 [01:02<06:44`, the bracketed `[4523/5000]` / `[ 10/5005]` of
# PyTorch's examples, mmcv / mmengine's `Epoch [1][50/500]` and the CSAIL / imagenet style `Epoch: [1][4523/5000]`
_TQDM = r"\|\s*(\d{1,9})/(\d{1,9}) \["
TQDM = lazy_re(_TQDM)  # tqdm: ` 45%|████▌     | 9/20 [00:10<00:12, …]` (also decide/survived's progress counter)
_COUNTER = lazy_re(_TQDM + r"|\[\s*(\d{1,9})/(\d{1,9})[\]\s]")
_TAIL = 5  # the counter must be on one of a log's last lines: the log ends on progress


def _tail_counters(bundle: Bundle, rx) -> Iterator[Tuple[Any, str, Any]]:
    """(line, the text searched, the last match of `rx`) for each log: from the last of its final _TAIL lines that
    holds a match (in its last `\r` segment: a tqdm line redrawn in place shows its latest state last)."""
    for log in bundle.logs:
        for ln in reversed([ln for ln in log.lines[-_TAIL:] if ln.text.strip()]):
            if "/" not in ln.text:
                continue
            seg = ln.text[:4000].rsplit("\r", 1)[-1]
            ms = list(rx.finditer(seg))
            if ms:
                yield ln, seg, ms[-1]
                break


def partway(bundle: Bundle) -> Optional[Dict[str, Any]]:
    """Where a log that ends on loop progress stops, when that loop had not reached its end: {"at", "of",
    "cite"} from the last position counter on the log's last lines (150/1125 of a tqdm bar, [4523/5000]).
    A finished loop's last counter reads N/N; one that stops short says the run did not end at a loop's end."""
    for ln, _seg, m in _tail_counters(bundle, _COUNTER):
        k, n = (int(g) for g in (m.group(1, 2) if m.group(1) else m.group(3, 4)))
        if 0 < n and k < n:
            return {"at": k, "of": n, "cite": f"{ln.path}:{ln.line}" if ln.line is not None else ln.path}
    return None


def _marker(claim: str, evidence: List[Source], progress: Dict[str, Any], by: str) -> Finding:
    return Finding(id="outcome.completed", kind="outcome", role="context", label=DIRECT, confidence=0.85, claim=claim,
                   evidence=evidence, outcome="completed", outcome_by=by, progress=progress)


def _epochs_done(first: Point, last: Point, n: int) -> bool:
    """The last epoch recorded is the configured one: 0-based counters (yolov5, Lightning) end at n - 1,
    1-based ones (ultralytics) and fractional ones (HF's epoch 3.0) at n."""
    integral = float(first.value).is_integer() and float(last.value).is_integer()
    if integral and first.value == 0:
        return last.value >= n - 1
    return last.value >= n - 0.005


def progress_markers(bundle: Bundle) -> List[Finding]:
    """Completion markers that rest on facts, counters and series rather than on a message."""
    return _state_or_length(bundle) + _epoch_counter(bundle) + _eta_zero(bundle) + _step_counter_end(bundle)


# a global step counter printed with its total: modded-nanogpt's `step:5625/5625 val_loss:3.279`, `Step 3000/3000 |`,
# `iter 5000/5000`, mmengine's `Iter(train) [5000/5000]`. (An epoch's own batch counter, `Batch [3811/3811]` or
# `Epoch [3][50/50]`, ends every epoch, and `Epoch 3/3` is printed before the last epoch runs: neither is the end;
# nor is a step counter beside an epoch counter short of its total — `Epoch [1/5], Step [600/600]` — or one of an
# evaluation or accumulation loop — `Validation step 50/50`.)
_STEP_OF = lazy_re(r"(?i)\b(?:global[_ ]step|step|iter(?:ation)?|it)(?:\(train\))?[ \t]{0,4}[:=#]?[ \t]{0,4}\[?[ \t]{0,4}"
                   r"(\d{1,9})[ \t]{0,4}/[ \t]{0,4}(\d{1,9})\b")
_EPOCH_OF = lazy_re(r"(?i)\bepoch\W{0,3}(\d{1,9})[ \t]{0,4}/[ \t]{0,4}(\d{1,9})\b")
_NOT_TRAIN = lazy_re(r"(?i)\b(?:val(?:idation|id)?|eval(?:uation|uate)?|test(?:ing)?|accum\w*|warm-?up|predict\w*)\W{0,3}$")


def _step_counter_end(bundle: Bundle) -> List[Finding]:
    """The log's last step counter reads N/N: the training loop printed its final step."""
    for ln, seg, m in _tail_counters(bundle, _STEP_OF):
        k, n = int(m.group(1)), int(m.group(2))
        if _NOT_TRAIN.search(seg[max(0, m.start() - 24):m.start()]) or any(
                int(e.group(1)) < int(e.group(2)) for e in _EPOCH_OF.finditer(seg)):
            continue  # an evaluation's or one epoch's loop, not the run's
        if 1 < n == k:
            return [_marker(f"the log's last step counter reads {k}/{n}: the training loop printed its final step",
                            [ln.source()], {"step": k, "of": n, "unit": "step"}, "counter")]
    return []


def _eta_zero(bundle: Bundle) -> List[Finding]:
    """The trainer's own time-left estimate reaches 0 at the run's last logged step (detectron2 writes
    `eta_seconds` with every metrics record: (max_iter - iter - 1) × the mean iteration time)."""
    out = []
    for s in bundle.series.get("eta_seconds") or []:
        pts = [p for p in s.finite() if p.step is not None]
        last = _last_step(bundle)
        if len(pts) < 2 or last is None:
            continue
        end = max(pts, key=lambda p: p.step)
        if end.value <= 0.5 and end.step >= last.step and max(p.value for p in pts) > end.value:
            out.append(_marker(f"the trainer's estimate of the time left is 0 at its last logged step {end.step}",
                               [end.source], {"step": end.step, "unit": "step"}, "eta"))
    return out


def _state_or_length(bundle: Bundle) -> List[Finding]:
    summary = _fact(bundle, "hf.train_summary")
    gs, ms = _fact(bundle, "trainer_state.global_step"), _fact(bundle, "trainer_state.max_steps")
    g, m = (_int(gs.value) if gs else None), (_int(ms.value) if ms else None)
    prog = {"step": g, "of": m, "unit": "step"} if g is not None else {}
    if summary is not None and g is not None and m is not None and g < m and summary.path != gs.path:
        summary = None  # a results file left by an earlier run in the same folder: the state says this one is short
    if summary is not None:
        return [_marker("HF Trainer wrote its final training summary (train_runtime, run-average train_loss)",
                        [summary] + [s for s in (gs, ms) if s is not None], prog, "hf-trainer")]
    if g is not None and m is not None and g >= m:
        return [_marker(f"trainer_state.json: global_step {g} reached max_steps {m}", [gs, ms], prog, "hf-trainer")]
    if g is not None:
        return []  # the state says how far it got, and it is short of the end
    last, first = _furthest_step(bundle)
    n, src = _configured(bundle, STEP_KEYS)
    # `for step in range(max_iters)` logs step n - 1 last (a loop counted from 0); a step far past n is another run's
    # length (a settings file of another job), not this one's end
    if last is not None and n is not None and (last.step >= n or (last.step == n - 1 and first == 0)) \
            and last.step <= 1.05 * n + 1:
        return [_marker(f"the last logged step {last.step} reaches the configured length ({_setting(src, n)})"
                        + (" (a loop counted from 0 ends at n - 1)" if last.step == n - 1 else ""),
                        [last.source, src], {"step": last.step, "of": n, "unit": "step"}, "length")]
    first, le = _last_epoch(bundle)
    n, src = _configured(bundle, EPOCH_KEYS)
    if le is not None and first is not None and n is not None and _epochs_done(first, le, n):
        base0 = " (counted from 0)" if first.value == 0 and float(le.value).is_integer() else ""
        return [_marker(f"the last recorded epoch {le.value:g}{base0} completes the configured {_setting(src, n)}",
                        [le.source, src], {"step": _epochs(first, le), "of": n, "unit": "epoch"},
                        "length")]
    return []
