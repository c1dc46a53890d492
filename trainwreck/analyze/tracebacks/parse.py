"""Python tracebacks in training logs: root exception, innermost user frame, chains, ranks, truncation.

API: find_tracebacks(lines) -> [Traceback] (one per chain, the last exception printed, de-duplicated across
ranks), scan/dedup (the same in two steps), root_exception(tb), innermost_user_frame(tb), chain_user_frame(tb),
chain(tb), norm_message(s), short_path(path); torchrun.py: rank_failures(lines) / first_failure(lines) ->
RankFailure; summary.py: summarize(lines) -> JSON-ready dict (rendered by trainwreck.report.traceback).
The objects are defined in vocab.py and built by the line scanner in scanner.py (exception groups:
groups.py); 50,000 ordinary lines take a few tens of milliseconds.

Chain root rule (`root_exception`), for "The above exception was the direct cause of the following
exception:" and "During handling of the above exception, another exception occurred:" alike:
  * the root is the FIRST exception printed in the chain: Python prints the cause/context before the
    exception that followed it, so the earliest one is where the failure began (OSError: no space left,
    then the RuntimeError of the half-written checkpoint; the KeyError behind hydra's InstantiationException);
  * except across a "During handling" link whose earlier exception is routinely caught on purpose
    (StopIteration, KeyError, AttributeError, ImportError, queue.Empty, ...): that one is the code's
    fallback machinery, so the later exception is the root (queue.Empty -> "DataLoader worker exited
    unexpectedly"; StopIteration at the end of an epoch -> StopIteration again = the loader is empty);
  * JAX's pseudo-exceptions (SimplifiedTraceback, FilteredStackTrace, UnfilteredStackTrace) are notes
    about frame filtering, never the root; the traceback they precede gets `jax_filtered=True`;
  * a worker traceback embedded in the message ("Original Traceback (most recent call last):" of a
    DataLoader worker, multiprocessing's RemoteTraceback) is linked with chain_kind "embedded" and is
    followed like a cause: the worker's own error is the root;
  * for an exception group, the root is the root of its first sub-exception.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.analyze.tracebacks.scanner import Scanner
from trainwreck.analyze.tracebacks.vocab import (
    HEADER,
    JAX_PSEUDO,
    SEP_CAUSE,
    SEP_HANDLING,
    Frame,
    RankFailure,
    Traceback,
    chain,
    root_type,
)
from trainwreck.model import Line

__all__ = ["HEADER", "SEP_CAUSE", "SEP_HANDLING", "Frame", "RankFailure", "Traceback", "chain", "chain_user_frame",
           "dedup", "find_tracebacks", "innermost_user_frame", "norm_message", "root_exception", "scan", "short_path"]

_NUMBER = lazy_re(r"\d+")
# exceptions that code catches on purpose (fallbacks, iteration, optional imports, queue polling)
_BOOKKEEPING = {"StopIteration", "StopAsyncIteration", "KeyError", "AttributeError", "IndexError", "ImportError",
                "ModuleNotFoundError", "Empty", "Full", "TimeoutError", "CancelledError", "GeneratorExit"}


def scan(lines: List[Line]) -> List[Traceback]:
    """Every traceback chain in the lines, in order of appearance, NOT de-duplicated (one per rank)."""
    sc = Scanner()
    for i, ln in enumerate(lines):
        sc.feed(i, ln)
    return sorted(sc.finish(), key=lambda t: (t.start_index, t.exc_index if t.exc_index is not None else -1))


def norm_message(s: str) -> str:
    """The message with every number replaced by # (ranks, device ids, sizes and pids differ across ranks)."""
    return _NUMBER.sub("#", s)


def _key(tb: Traceback) -> Tuple:
    return (tb.exc_type, norm_message(tb.message), tb.truncated,
            tuple((f.file, f.line, f.func) for f in tb.frames),
            _key(tb.chained_from) if tb.chained_from is not None else None, tb.chain_kind,
            tuple(_key(s) for s in tb.sub_exceptions))


def dedup(raw: List[Traceback]) -> List[Traceback]:
    """Fold identical tracebacks (type, message with digits normalised, frames, chain) into count/ranks."""
    groups: Dict[Tuple, Traceback] = {}
    out: List[Traceback] = []
    for tb in raw:
        k = _key(tb)
        first = groups.get(k)
        if first is None:
            groups[k] = tb
            tb.count, tb.ranks = 1, ([tb.rank] if tb.rank is not None else [])
            out.append(tb)
        elif first.rank is None and tb.rank is not None:  # let a copy that names its rank represent them all
            tb.count, tb.ranks = first.count + 1, [tb.rank]
            groups[k] = tb
            out[next(i for i, x in enumerate(out) if x is first)] = tb
        else:
            first.count += 1
            if tb.rank is not None and tb.rank not in first.ranks:
                first.ranks.append(tb.rank)
    return out


def find_tracebacks(lines: List[Line]) -> List[Traceback]:
    """Every traceback in the lines, in order of appearance: one per chain (the last exception printed, with
    `chained_from` links to the earlier ones), identical ones across ranks folded into `count`/`ranks`."""
    return dedup(scan(list(lines)))


def root_exception(tb: Traceback) -> Traceback:
    """The exception the failure began with (see the module docstring for the rule and why)."""
    cur = tb
    for prev in chain(tb)[1:]:
        if root_type(prev) in JAX_PSEUDO or not prev.exc_type:
            continue
        if cur.chain_kind == "during-handling" and root_type(prev) in _BOOKKEEPING and cur.exc_type:
            break
        cur = prev
    if cur.sub_exceptions:
        return root_exception(cur.sub_exceptions[0])
    return cur


def innermost_user_frame(tb: Traceback) -> Optional[Frame]:
    return next((f for f in reversed(tb.frames) if f.user), None)


def chain_user_frame(tb: Traceback) -> Optional[Frame]:
    """The innermost user frame of the root exception, else of the nearest exception after it in the chain."""
    root = root_exception(tb)
    f = innermost_user_frame(root)
    if f is not None:
        return f
    members = chain(tb)
    idx = next((i for i, m in enumerate(members) if m is root), len(members))
    for m in reversed(members[:idx]):
        f = innermost_user_frame(m)
        if f is not None:
            return f
    return None


_PKG_ROOT = lazy_re(r"^.*/(?:site-packages|dist-packages|lib/python\d[\d.]*)/")


def short_path(path: str, keep: int = 2) -> str:
    """A path short enough for a claim: the module path inside site-packages, else the last `keep` parts."""
    p = path.replace("\\", "/")
    m = _PKG_ROOT.match(p)
    if m:
        return p[m.end():]
    parts = [x for x in p.split("/") if x]
    return "/".join(parts[-keep:]) if len(parts) > keep else path
