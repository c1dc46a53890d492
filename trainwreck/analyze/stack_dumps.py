"""Stack dumps taken while a run hung (py-spy dump, faulthandler, gdb `py-bt`): where the threads wait.

A dump is itself evidence of a hang — someone took it because the run stopped moving — and the frame a
thread waits in says on what: a collective (another rank is missing), a DataLoader queue (a worker is
stuck), a lock, or the GPU (a kernel that never finishes).
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.catalog import family_ref
from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding, Line

_PYSPY_THREAD = lazy_re(r'^Thread (?:0x[0-9a-fA-F]+|\d+) \((?:idle|active|gil)[^)]*\)')
_FAULTHANDLER = lazy_re(r'^(?:Thread 0x[0-9a-fA-F]+|Current thread 0x[0-9a-fA-F]+) \(most recent call first\):|'
                           r'^Timeout \(\d+:\d\d:\d\d\)!')
_PYSPY_FRAME = lazy_re(r'^\s+(?P<func>[\w<>.]+) \((?P<file>[^():]+):(?P<line>\d+)\)')
_FH_FRAME = lazy_re(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>[\w<>.]+)')
_WAITS = [
    ("a collective (the other ranks never joined it)", lazy_re(
        r"all_reduce|all_gather|reduce_scatter|broadcast|barrier|all_to_all|_wait_for|irecv|recv|send|"
        r"monitored_barrier|allreduce|allgather|distributed_c10d|ProcessGroup|nccl|hccl", re.I)),
    ("the DataLoader (a worker is stuck or dead)", lazy_re(r"_get_data|_try_get_data|_next_data|dataloader", re.I)),
    ("the GPU (a kernel or copy that does not finish)", lazy_re(r"^(?:synchronize|item|cpu|to|numpy|tolist|cuda)$|cuda/__init__", re.I)),
    ("a lock or queue", lazy_re(r"^(?:acquire|get|join|wait)$", re.I)),
]


# the standard library's pipes, sockets and queues: their recv/send/wait is a process or thread waiting on a
# pipe (a DataLoader worker's queue, a subprocess), never a collective; the frames outside them say whose
_STDLIB_IPC = lazy_re(r"(?:^|[/\\])(?:multiprocessing[/\\]\w+|socket|selectors|threading|queue|subprocess)\.py$")


def wait_of(func: str, file: str) -> Optional[Tuple[int, str]]:
    """What a frame waits on, as (precedence, description), or None: a collective, the DataLoader, the GPU, a lock."""
    waits = _WAITS[-1:] if _STDLIB_IPC.search(file) else _WAITS
    return next(((len(_WAITS) - len(waits) + k, w) for k, (w, rx) in enumerate(waits)
                 if rx.search(func) or rx.search(file)), None)


def family_of_wait(what: str):
    return _family(what)


def _family(what: str):
    """The family by meaning of a wait: a collective that never completes, or a loader that delivers nothing."""
    fid = "collective-timeout" if "collective" in what else "data-pipeline-deadlock" if "DataLoader" in what else ""
    return family_ref(fid)


def _dump_files(bundle: Bundle):
    for log in bundle.logs:
        lines = log.head + log.lines
        if any(_PYSPY_THREAD.match(x.text) or _FAULTHANDLER.match(x.text) for x in lines[:4000]):
            yield log.path, lines


def _frames(lines: List[Line], start: int, depth: int = 8) -> List[tuple]:
    """The innermost `depth` frames after a thread header (py-spy and faulthandler print innermost first)."""
    out = []
    for x in lines[start + 1:start + 60]:
        m = _PYSPY_FRAME.match(x.text) or _FH_FRAME.match(x.text)
        if m:
            out.append((x, m))
            if len(out) >= depth:
                break
        elif _PYSPY_THREAD.match(x.text) or _FAULTHANDLER.match(x.text):
            break
    return out


def detect(bundle: Bundle) -> List[Finding]:
    out: List[Finding] = []
    for path, lines in _dump_files(bundle):
        best = None
        for i, x in enumerate(lines):
            if not (_PYSPY_THREAD.match(x.text) or _FAULTHANDLER.match(x.text)):
                continue
            for frame, m in _frames(lines, i):
                where = f"{m.group('func')} ({m.group('file')}:{m.group('line')})"
                w = wait_of(m.group("func"), m.group("file"))
                hit = w[0] if w else None
                if hit is not None:
                    if best is None or hit < best[0]:
                        best = (hit, _WAITS[hit][0], where, x, frame)
                    break
        if best is None:
            out.append(Finding(
                id="dump.hang", claim=f"{path} is a stack dump of the stalled process (no thread waits in a "
                f"collective, loader or lock)", label=DIRECT, confidence=0.55, evidence=[lines[0].source()],
                suggests="stall", role="cause", stage="runtime",
                fixes=["take dumps on every rank (py-spy dump --pid) and compare where each waits"],
                verify_skill="debug", verify_hint="py-spy dump --pid <pid>  # on every rank, twice, a minute apart"))
            continue
        _r, what, where, header, frame = best
        fixes = ["find the rank that is NOT in this collective (py-spy dump on every rank): its stack is the cause",
                 "make every rank run the same collectives in the same order (no rank-dependent branches around "
                 "all_gather/barrier, equal batch counts per rank)",
                 "set TORCH_NCCL_ASYNC_ERROR_HANDLING=1 and a finite timeout so a hang becomes an error"] \
            if "collective" in what else ["rerun with num_workers=0 to see whether the loader is the hang"] \
            if "DataLoader" in what else ["dump again a minute later: the same frame means it is really stuck"]
        out.append(Finding(
            id="dump.blocked", claim=f"stack dump: a thread is blocked in {where}, waiting on {what}",
            label=DIRECT, confidence=0.8, evidence=[frame.source(), header.source()], suggests="stall",
            role="cause", stage="runtime", fixes=fixes, verify_skill="debug",
            verify_hint="py-spy dump --pid <pid> on every rank; the rank not waiting in the collective is the culprit",
            meaning="A stack dump taken while the run made no progress shows where it waits.", family=_family(what)))
    return out
