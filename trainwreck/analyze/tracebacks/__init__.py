"""Detector: the Python tracebacks of the logs.

One finding per distinct ROOT exception (`traceback.root-exception`, the chain rule is documented in
trainwreck/analyze/tracebacks/parse.py), the run interrupted from outside (`traceback.interrupted`), a log that ends in the
middle of a traceback (`traceback.truncated`) and the rank that failed first (`traceback.first-failing-rank`).

The head and the tail of a partially read log are not contiguous: each is analysed on its own, and a
traceback cut at the end of the head is a property of what was read, not of the log, so it is not reported.
"""
from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.analyze.tracebacks.parse import (
    chain_user_frame,
    dedup,
    norm_message,
    root_exception,
    scan,
    short_path,
)
from trainwreck.analyze.tracebacks.torchrun import pick_first_failure, rank_failures
from trainwreck.analyze.tracebacks.vocab import RankFailure, Traceback, chain
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding, Line, quoted

_COMPILE_PATHS = ("/_inductor/", "/_dynamo/convert_frame", "/_dynamo/symbolic_convert", "/_dynamo/output_graph",
                  "/_dynamo/variables/", "/_functorch/aot_autograd.py", "/triton/compiler/", "/_export/")
_COMPILE_TYPES = ("BackendCompilerFailed", "InductorError", "LoweringException", "CompilationError", "Unsupported")
_CKPT_FUNCS = {"load_state_dict", "_load_from_state_dict", "load_checkpoint", "save_checkpoint", "_save_checkpoint",
               "save_pretrained", "_load_rng_state", "_load_optimizer_and_scheduler", "load_sharded_checkpoint",
               "_load_pretrained_model", "_load_state_dict_into_meta_model", "resume_from_checkpoint", "save_model",
               "_save", "load_model", "save_state", "load_state"}
_CKPT_PATHS = ("/torch/serialization.py", "/safetensors/", "/distributed/checkpoint/", "/checkpoint_engine/")
_CKPT_CODE = lazy_re(r"\btorch\.(?:load|save)\(|\.load_state_dict\(|\bsave_checkpoint\(|\bload_checkpoint\(")
_EVAL_FUNCS = {"evaluate", "evaluation_loop", "prediction_loop", "validation_step", "validation_epoch_end",
               "validate", "_validate", "run_validation", "eval_step", "val_step", "test_step", "predict_step",
               "prediction_step", "_run_sanity_check", "run_evaluation", "evaluate_model", "eval_epoch", "eval",
               "validation", "_evaluation_step"}
_TRAIN_FUNCS = {"train_step", "training_step", "_inner_training_loop", "backward", "train_one_epoch", "run_epoch",
                "optimizer_step", "run_training_epoch", "_run_train", "train_epoch", "fit_loop", "step"}
_STARTUP_FUNCS = {"parse_args", "parse_known_args", "_parse_known_args", "init_process_group", "from_pretrained",
                  "get_dataset", "load_dataset", "main_process_first", "instantiate", "compose", "get_config_from_file",
                  "parse_config", "load_config", "configure_optimizers", "build_model", "prepare_model"}
_SETUP_FUNCS = {"__init__", "__post_init__", "setup", "<module>"}
_INTERRUPT_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def _segments(bundle: Bundle) -> Iterator[Tuple[List[Line], int, bool]]:
    """(lines, offset of the first in the iteration order of bundle.all_lines(), is the head of a partial log)."""
    offset = 0
    for log in bundle.logs:
        if log.head:
            yield log.head, offset, True
            offset += len(log.head)
        yield log.lines, offset, False
        offset += len(log.lines)
    if bundle.extra_lines:
        yield bundle.extra_lines, offset, False


def infer_stage(head: Traceback) -> str:
    """startup | compile | checkpoint | evaluation | runtime, from the frames: a compile frame anywhere wins;
    otherwise the innermost recognisable activity, the root exception's frames first, then its successors'."""
    members = list(reversed(chain(head)))  # root side first
    frames = [f for m in members for f in reversed(m.frames)]  # innermost first
    types = " ".join(m.exc_type for m in members)
    if any(p in f.file.replace("\\", "/") for f in frames for p in _COMPILE_PATHS) \
            or any(t in types for t in _COMPILE_TYPES) or "torch._dynamo" in types or "torch._inductor" in types:
        return "compile"
    for f in frames:
        fn, path = f.func, f.file.replace("\\", "/")
        if fn in _CKPT_FUNCS or any(p in path for p in _CKPT_PATHS) or f.user and _CKPT_CODE.search(f.code):
            return "checkpoint"
        if fn in _EVAL_FUNCS or f.user and fn.startswith(("eval", "valid", "val_")):
            return "evaluation"
        if fn in _TRAIN_FUNCS or f.user and "train" in fn.lower() or fn == "fit":
            return "runtime"
        if fn in _STARTUP_FUNCS:
            return "startup"
    if any(f.file.startswith("<frozen importlib") for f in frames) \
            or any(f.func in _SETUP_FUNCS and f.code.startswith(("import ", "from ")) for f in frames[:3]) \
            or any(f.func in ("__init__", "__post_init__", "setup") for f in frames[:3]):
        return "startup"
    return "runtime"


def _where(head: Traceback, root: Traceback) -> Tuple[str, str]:
    """(" raised in file:line (func)", trailing note) for the claim."""
    uf = chain_user_frame(head)
    if uf is not None:
        return f" raised in {short_path(uf.file)}:{uf.line} ({uf.func})", ""
    if root.frames:
        f = root.frames[-1]
        return f" raised in library code at {short_path(f.file, 3)}:{f.line} ({f.func})", \
            "; no frame from the run's own code in the traceback"
    return "", ""


def _exc(t: Traceback, limit: int, whole: bool = False) -> str:
    """`“Type: message”`: the exception line as the run printed it, the run's words, quoted; the message (or with
    `whole` the whole line) cut to `limit` characters."""
    if not t.headline:
        return t.exc_type or ""
    text = f"{t.exc_type}: {t.headline}" if whole else t.headline
    text = text if len(text) <= limit else text[:limit - 3] + "..."
    return quoted(text if whole else f"{t.exc_type}: {text}")


def _ranks_text(ranks: List[int], first: Optional[int], count: int) -> str:
    if len(ranks) > 1:
        return f" on rank {first if first is not None else ranks[0]} first; {len(ranks)} ranks raised the same"
    if len(ranks) == 1:
        return f" on rank {ranks[0]}"
    return f" ({count} times)" if count > 1 else ""


def _chain_text(head: Traceback, root: Traceback) -> str:
    if head is root or not head.exc_type:
        return ""
    what = _exc(head, 120, whole=True)
    if any(root is s or root in chain(s) for s in head.sub_exceptions):
        return f"; one of {len(head.sub_exceptions)} sub-exceptions of {what}"
    verb = {"direct-cause": "it then caused", "during-handling": "while handling it the code raised",
            "embedded": "the main process re-raised it as"}.get(head.chain_kind or "", "then")
    return f"; {verb} {what}"


class _Group:
    def __init__(self, head: Traceback, order: int):
        self.head, self.order, self.count, self.ranks = head, order, 0, []  # type: Traceback, int, int, List[int]


def detect(bundle: Bundle) -> List[Finding]:
    groups: Dict[tuple, _Group] = {}
    truncated: List[Tuple[Traceback, int]] = []
    failures: List[RankFailure] = []
    raw_all: List[Traceback] = []
    for lines, offset, is_head in _segments(bundle):
        if not lines:
            continue
        raw = scan(lines)
        raw_all += [t for t in raw if t.rank is not None]
        heads = dedup(raw)
        failures += rank_failures(lines)
        for t in heads:
            if t.truncated and t.cut == "end" and not is_head:
                truncated.append((t, offset))
            root = root_exception(t)
            if not root.exc_type or root.exc_line is None:
                continue
            uf = chain_user_frame(t)
            key = (root.exc_type, norm_message(root.headline), (uf.file, uf.line) if uf else None)
            g = groups.get(key)
            if g is None:
                g = groups[key] = _Group(t, offset + (root.exc_index if root.exc_index is not None else t.start_index))
            g.count += t.count
            g.ranks += [r for r in t.ranks if r not in g.ranks]
    findings: List[Finding] = []
    interrupted: List[_Group] = []
    for g in sorted(groups.values(), key=lambda x: x.order):
        root = root_exception(g.head)
        if root.interrupted:
            interrupted.append(g)
            continue
        findings.append(_root_finding(g, root))
    ff = pick_first_failure(failures, raw_all)
    if interrupted or (ff is not None and ff.root_cause and ff.signal in _INTERRUPT_SIGNALS):
        findings.append(_interrupted_finding(interrupted, ff))
    for t, offset in truncated:
        findings.append(_truncated_finding(t, offset))
    rf = _rank_finding(ff, {r for t in raw_all for r in ([t.rank] if t.rank is not None else [])}, bundle)
    if rf is not None:
        findings.append(rf)
    return findings


def _root_finding(g: _Group, root: Traceback) -> Finding:
    head = g.head
    uf = chain_user_frame(head)
    exc = _exc(root, 240)
    where, note = _where(head, root)
    claim = exc + where + _ranks_text(sorted(g.ranks), head.rank, g.count) + _chain_text(head, root) + note
    evidence = [root.exc_line.source()]
    if uf is not None and uf.log_line is not None:
        evidence.append(uf.log_line.source())
    for m in chain(head):
        if m is not root and m.exc_line is not None and len(evidence) < 5:
            evidence.append(m.exc_line.source())
    notes = []
    if root.cpp_frames or root.cpp_origin:
        notes.append(f"a C++ backtrace of {root.cpp_frames} frame(s) follows the message"
                     + (f" ({root.cpp_origin})" if root.cpp_origin else ""))
    if root.jax_filtered or head.jax_filtered:
        notes.append("JAX removed its internal frames (set JAX_TRACEBACK_FILTERING=off to see them)")
    if head.hydra_overrides:
        notes.append(f"hydra overrides: {head.hydra_overrides}")
    if root.sub_exceptions or head.sub_exceptions:
        notes.append("raised inside an exception group; the first sub-exception is reported")
    launcher = root.exc_type.endswith("ChildFailedError")
    if launcher:
        notes.append("torchrun's own report that a worker process failed: the worker's error is the cause")
    return Finding(id="traceback.root-exception", kind="traceback", claim=claim, label=DIRECT,
                   confidence=0.4 if launcher else (0.85 if uf is not None else 0.75),
                   evidence=evidence, suggests="crash", role="symptom" if launcher else "cause",
                   stage=infer_stage(head), order=float(g.order), rank=head.rank if head.rank is not None else
                   (sorted(g.ranks)[0] if g.ranks else None), meaning="; ".join(notes))


def _interrupted_finding(groups: List[_Group], ff: Optional[RankFailure]) -> Finding:
    parts, evidence, order = [], [], None
    for g in groups:
        root = root_exception(g.head)
        what = _exc(root, 10 ** 6)
        n = len(g.ranks)
        parts.append(f"{what} on {n} ranks" if n > 1 else (f"{what} on rank {g.ranks[0]}" if n == 1 else what))
        evidence.append(root.exc_line.source())
        order = g.order if order is None else min(order, g.order)
    if ff is not None and ff.root_cause and ff.signal in _INTERRUPT_SIGNALS:
        parts.append(f"torchrun: rank {ff.rank} ended by {ff.signal}")
        evidence.append(ff.line.source())
    return Finding(id="traceback.interrupted", kind="interrupted", label=DIRECT, confidence=0.3, suggests="crash", role="terminal",
                   claim="the run was interrupted from outside (" + "; ".join(parts) + "), "
                         "not a failure of the workload itself",
                   evidence=evidence[:5], order=float(order) if order is not None else None,
                   rank=groups[0].head.rank if groups else (ff.rank if ff else None))


def _truncated_finding(t: Traceback, offset: int) -> Finding:
    lv = t.last_visible or t.end or t.start
    num = lv.line if lv.line is not None else (f"byte {lv.byte}" if lv.byte is not None else "?")
    text = lv.text.strip()
    text = quoted(text if len(text) <= 200 else text[:197] + "...")
    uf = next((f for f in reversed(t.frames) if f.user), None)
    where = f" (the visible frames end in {short_path(uf.file)}:{uf.line} ({uf.func}))" if uf else ""
    evidence = [lv.source()] + ([t.start.source()] if t.start is not None and t.start is not lv else [])
    if uf is not None and uf.log_line is not None and uf.log_line is not lv:
        evidence.append(uf.log_line.source())
    order = offset + (t.end_index if t.end_index is not None else t.start_index)
    return Finding(id="traceback.truncated", kind="truncated-traceback", label=DIRECT, confidence=0.9, role="context",
                   claim=f"log cut off mid-traceback; last visible line {num}: {text}{where}; "
                         "the exception line is not in the log",
                   evidence=evidence, stage=infer_stage(t) if t.frames else None, order=float(order), rank=t.rank)


def _rank_finding(ff: Optional[RankFailure], ranks_seen: set, bundle: Bundle) -> Optional[Finding]:
    if ff is None or ff.rank is None and ff.source != "elastic-api":
        return None
    code = "" if ff.exitcode is None else f" with exitcode {ff.exitcode}" + (f" ({ff.signal})" if ff.signal else "")
    host = f" (host {ff.host})" if ff.host else ""
    when = f" at {ff.time}" if ff.time else ""
    evidence = [ff.line.source()] + [x.source() for x in ff.lines if x is not ff.line and
                                     re.search(r"exitcode|traceback\s*:", x.text)][:2]
    if ff.source == "elastic-summary" and ff.root_cause:
        claim = f"rank {ff.rank}{host} failed first{when}{code}; other ranks' errors are consequences"
        conf = 0.85
    elif ff.source == "traceback":
        if len(ranks_seen) < 2:
            return None
        claim = (f"rank {ff.rank} printed its traceback first of {len(ranks_seen)} ranks; "
                 "the other ranks' errors may be consequences")
        conf = 0.5
    elif ff.source == "elastic-summary":
        claim = f"torchrun lists rank {ff.rank}{host} as failed{when}{code} (its root-cause entry is not in the log)"
        conf = 0.4
    else:
        claim = f"torchelastic: local rank {ff.local_rank} failed first{code}"
        conf = 0.5
    return Finding(id="traceback.first-failing-rank", kind="launcher-summary", claim=claim, label=DIRECT, confidence=conf, role="context",
                   evidence=evidence, rank=ff.rank, order=_order_of(ff.line, bundle))


def _order_of(line: Line, bundle: Bundle) -> Optional[float]:
    for i, ln in enumerate(bundle.all_lines()):
        if ln is line:
            return float(i)
    return None
