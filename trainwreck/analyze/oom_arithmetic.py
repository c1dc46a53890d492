"""The numbers in an out-of-memory message, and what they do and do not show.

The formats, from PyTorch's c10/cuda/CUDACachingAllocator.cpp (and torch_npu's copy of it):
  2.1+:  "CUDA out of memory. Tried to allocate S. GPU d has a total capacity of T of which F is free.
          [Process P has U memory in use. ]…[Including non-PyTorch memory, this process has U memory in use. ]
          [L allowed; ]Of the allocated memory A is allocated by PyTorch, [with X allocated in private pools
          (e.g., CUDA Graphs), ]and R is reserved by PyTorch but unallocated."  (2.1 spells it "capacty")
          The process list is NVML's; the trainer is "this process" only when NVML's pid equals getpid(), so inside
          a container (another PID namespace) the trainer itself is listed as "Process P".
  1.x:   "Tried to allocate S (GPU d; T total capacity; A already allocated; F free; [L allowed; ]R reserved in total
          by PyTorch)"  — reserved-but-unallocated is R − A.  torch_npu adds "X current active;" after A.
  0.4:   "… A already allocated; F free; C cached)" — what "cached" counted changed between versions: not used.
The same wording serves HIP, XPU, MUSA and NPU builds ("HIP out of memory", "GPU"/"NPU"/"device").
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from trainwreck import lazy_re, record

UNITS = {"bytes": 1, "b": 1, "kib": 1 << 10, "kb": 1 << 10, "mib": 1 << 20, "mb": 1 << 20, "gib": 1 << 30,
         "gb": 1 << 30, "tib": 1 << 40, "tb": 1 << 40}
_SZ = r"(\d+(?:\.\d+)?) ?(bytes|[KMGT]i?B|B)\b"
_REQUEST = lazy_re(r"out of memory\. Tried to allocate " + _SZ)
_NEW_TOTAL = lazy_re(r"has a total capac(?:i)?ty of " + _SZ + r" of which " + _SZ + r" is free")
_PROC = lazy_re(r"Process (\d+) has " + _SZ + r" memory in use")
_SELF = lazy_re(r"this process has " + _SZ + r" memory in use")
_NEW_ALLOC = lazy_re(r"Of the allocated memory " + _SZ + r" is allocated by PyTorch")
_NEW_UNALLOC = lazy_re(r"and " + _SZ + r" is reserved by PyTorch but unallocated")
_OLD = lazy_re(r"\((?:GPU|NPU|device) \d+; " + _SZ + r" total capacity; " + _SZ + r" already allocated;"
               r"(?: " + _SZ + r" current active;)? " + _SZ + r" free;(?: " + _SZ + r" allowed;)? " + _SZ +
               r" reserved in total by PyTorch\)")

FRAG_SHARE = 0.03  # reserved-but-unallocated below this share of the card: defragmenting would gain too little
SELF_SLACK = 32 << 20  # rounding in the message: PyTorch's reserved bytes may print a little above NVML's usage
CONTEXT_SHARE, CONTEXT_MAX = 1.25, 4 << 30  # a trainer's usage ≤ PyTorch's × this + this (CUDA context, NCCL …)
ROUNDING = 16 << 20  # the message prints sizes to 2 decimals: sums within this (+0.5 %) of the request are a tie

DIRECT_OK, HYPOTHESIS_ONLY, CONTRADICTED = "direct", "hypothesis", "contradicted"


def size(num: str, unit: str) -> int:
    return int(float(num) * UNITS[unit.lower()])


def human(n: Optional[int]) -> str:
    """Bytes in the message's own style (PyTorch's format_size)."""
    if n is None:
        return "?"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} bytes"


@record
class OomNumbers:
    def __init__(self, request: Optional[int], total: Optional[int] = None, free: Optional[int] = None,
                 allocated: Optional[int] = None, unallocated: Optional[int] = None,
                 processes: Optional[List[Tuple[str, int]]] = None, self_usage: Optional[int] = None) -> None:
        self.request = request
        self.total = total
        self.free = free
        self.allocated = allocated  # by PyTorch (incl. private pools)
        self.unallocated = unallocated  # reserved by PyTorch but unallocated
        self.processes = [] if processes is None else processes  # (pid, usage) of "Process P has U"
        self.self_usage = self_usage  # "this process has U" (None: NVML did not match the trainer's pid)

    @property
    def pytorch(self) -> Optional[int]:
        """What PyTorch's caching allocator holds on the device: allocated + reserved-but-unallocated."""
        if self.allocated is None or self.unallocated is None:
            return None
        return self.allocated + self.unallocated


def parse(text: str) -> Optional[OomNumbers]:
    """The numbers of the first out-of-memory message in `text`; None when it holds no request size."""
    m = _REQUEST.search(text)
    if not m:
        return None
    rest = text[m.end():]
    n = OomNumbers(size(*m.groups()))
    t = _NEW_TOTAL.search(rest)
    if t:
        n.total, n.free = size(t.group(1), t.group(2)), size(t.group(3), t.group(4))
        n.processes = [(p.group(1), size(p.group(2), p.group(3))) for p in _PROC.finditer(rest)]
        s = _SELF.search(rest)
        n.self_usage = size(*s.groups()) if s else None
        a, u = _NEW_ALLOC.search(rest), _NEW_UNALLOC.search(rest)
        n.allocated = size(*a.groups()) if a else None
        n.unallocated = size(*u.groups()) if u else None
        return n
    o = _OLD.search(rest)
    if o:
        g = o.groups()
        n.total, n.allocated, n.free = size(g[0], g[1]), size(g[2], g[3]), size(g[6], g[7])
        reserved = size(g[10], g[11])
        n.unallocated = max(0, reserved - n.allocated)
    return n


def fragmentation(n: OomNumbers) -> Optional[Tuple[str, str]]:
    """(verdict, why) for "the OOM is (partly) fragmentation"; None when the message lacks the numbers."""
    if n.request is None or n.unallocated is None:
        return None
    u, r = n.unallocated, n.request
    share = u / n.total if n.total else None
    on_card = f" ({share:.1%} of the {human(n.total)} card)" if share is not None else ""
    if u >= r:
        if share is None or share >= FRAG_SHARE:
            return DIRECT_OK, (f"that covers the {human(r)} request{on_card}: the memory was there, but not in "
                               "one block")
        return HYPOTHESIS_ONLY, (f"{human(u)} reserved but unallocated covers the {human(r)} request, but it is only "
                                 f"{share:.1%} of the {human(n.total)} card: defragmenting would gain little")
    if n.free is not None and u + n.free >= r - ROUNDING - r // 200:
        return HYPOTHESIS_ONLY, (f"{human(u)} reserved but unallocated is less than the {human(r)} request; only "
                                 f"together with the {human(n.free)} free would it fit")
    free = f" + {human(n.free)} free = {human(u + n.free)}" if n.free is not None else ""
    return CONTRADICTED, (f"not fragmentation: {human(u)} reserved by PyTorch but unallocated{free} is less than "
                          f"the {human(r)} request; the run needed more memory than the card had left")


def _could_be_trainer(n: OomNumbers, usage: int) -> bool:
    """A process's usage covers PyTorch's own allocated + reserved memory (less rounding)."""
    return n.pytorch is not None and usage >= n.pytorch * 0.99 - SELF_SLACK


def _surely_trainer(n: OomNumbers, usage: int) -> bool:
    """…and is no more than PyTorch plus a plausible context / NCCL / library overhead, or the card could not
    hold both it and a separate trainer."""
    pt = n.pytorch or 0
    return _could_be_trainer(n, usage) and (usage <= pt * CONTEXT_SHARE + CONTEXT_MAX or
                                            (n.total is not None and usage + pt > n.total))


def trainer_pid(n: OomNumbers) -> Optional[str]:
    """The pid among "Process P" that is the trainer itself: when NVML did not name "this process", the process
    whose usage is PyTorch's own allocated + reserved memory plus its overhead (the smallest such one)."""
    if n.self_usage is not None or not n.processes or n.pytorch is None:
        return None
    cands = [(u, pid) for pid, u in n.processes if _surely_trainer(n, u)]
    return min(cands)[1] if cands else None


def other_processes(n: OomNumbers) -> Optional[Tuple[str, List[Tuple[str, int]], str]]:
    """(verdict, the other processes, why) for "another process holds GPU memory"; None when the message names no
    process or lacks the numbers to tell the trainer from the others."""
    if not n.processes:
        return None
    if n.self_usage is None and n.pytorch is None:
        return None
    me = trainer_pid(n)
    others = [(pid, u) for pid, u in n.processes if pid != me]
    if me is None and n.self_usage is None and any(_could_be_trainer(n, u) for _, u in others):
        pid, u = next((pid, u) for pid, u in others if _could_be_trainer(n, u))
        return HYPOTHESIS_ONLY, others, (f"process {pid} holds {human(u)}; it may be the trainer itself (PyTorch "
                                         f"holds {human(n.pytorch)}, NVML did not name \"this process\") or "
                                         "another process")
    if not others:
        pt = human(n.pytorch)
        return CONTRADICTED, [], (f"process {me} is the trainer itself, not another process: its "
                                  f"{human(dict(n.processes)[me])} is PyTorch's {human(n.allocated)} allocated + "
                                  f"{human(n.unallocated)} reserved ({pt}) plus memory outside PyTorch's allocator "
                                  f"(CUDA context, NCCL, libraries); NVML named it by its pid outside the container")
    held = sum(u for _, u in others)
    names = ", ".join(f"process {pid} holds {human(u)}" for pid, u in others[:3])
    if n.free is None or held + n.free >= n.request:
        return DIRECT_OK, others, names
    return CONTRADICTED, others, (f"{names}, but even without it the {human(n.request)} request would not fit "
                                  f"({human(n.free)} free): another process does not explain this OOM")
