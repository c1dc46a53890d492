"""A run stopped by hand while it waited: the interrupt's traceback says where the run was stuck.

Someone presses Ctrl-C (or a launcher sends SIGINT/SIGTERM) because the run stopped moving; the traceback
that follows is a stack dump taken at that moment. When its innermost frames wait on the DataLoader's queue
or inside a collective, the run had stalled there: a data-pipeline deadlock or a collective that never
completed. Only interrupts are read this way (an exception raised by the code is its own failure), including
a traceback the log cuts off after a `^C` (with other processes' headers and tracebacks printed between them).
A DataLoader worker's own traceback says nothing: an interrupt stops every worker, most of them idle in
index_queue.get(), in a healthy run as much as in a stuck one.
"""
from __future__ import annotations

from typing import List, Optional

from trainwreck import lazy_re
from trainwreck.analyze.stack_dumps import family_of_wait, wait_of
from trainwreck.analyze.tracebacks.parse import find_tracebacks
from trainwreck.analyze.tracebacks.vocab import Traceback
from trainwreck.collect.bundle import Bundle
from trainwreck.model import HYPOTHESIS, Finding, Line

_INNERMOST = 6  # frames from the innermost outwards that say what the main thread waited on
_WORKER_LOOPS = ("_worker_loop",)  # torch.utils.data worker processes' main function
_STOPS = ("collective", "DataLoader")  # waits that mean the run was stuck (a lock or .item() alone says less)


# what an interrupt prints before the traceback of a process it stops: multiprocessing's "Process Process-3:" header,
# other processes' traceback lines interleaved with it (frames, source lines), blanks
_TEARDOWN = lazy_re(r'^\s*(?:\^C)*\s*(?:Process [\w.-]+:|Traceback \(most recent call last\):|File "|KeyboardInterrupt\s*$|$)|^\s{2,}\S')
_LOOKBACK = 60  # lines of teardown at most between the ^C and the traceback it belongs to


def _interrupt(tb: Traceback, lines: List[Line], index: dict) -> bool:
    """The traceback is an interrupt's: KeyboardInterrupt, or a traceback the log cuts off after a ^C with only
    the interrupt's teardown (other processes' headers and tracebacks) between them."""
    if tb.interrupted:
        return True
    if not tb.truncated or tb.start is None:
        return False
    i = index.get(id(tb.start))
    if i is None:
        return False
    if tb.start.text.lstrip().startswith("^C"):
        return True
    for x in reversed(lines[max(0, i - _LOOKBACK):i]):
        if "^C" in x.text:
            return True
        if not _TEARDOWN.search(x.text):
            return False
    return False


def _segments(bundle: Bundle):
    for log in bundle.logs:
        for part in (log.head, log.lines):
            if part:
                yield part


def detect(bundle: Bundle) -> List[Finding]:
    out: List[Finding] = []
    for lines in _segments(bundle):
        if not any("Traceback" in x.text for x in lines):
            continue
        index = {id(x): i for i, x in enumerate(lines)}
        for tb in find_tracebacks(lines):
            if not _interrupt(tb, lines, index):
                continue
            hit = _blocked(tb)
            if hit is None:
                continue
            what, frame = hit
            where = f"{frame.func} ({frame.file.rsplit('/', 1)[-1]}:{frame.line})"
            ev = [frame.log_line.source()] if frame.log_line is not None else []
            for x in (tb.exc_line, tb.start):
                if x is not None and len(ev) < 3:
                    ev.append(x.source())
            loader = "DataLoader" in what
            out.append(Finding(
                id="interrupt.blocked-wait", kind="stack-dump", label=HYPOTHESIS, confidence=0.55,
                claim=f"the run was interrupted while blocked in {where}, waiting on {what}: stuck there if it had stopped "
                      "moving before the interrupt",
                evidence=ev, suggests="stall", role="cause", stage="runtime", rank=tb.rank, family=family_of_wait(what),
                meaning="An interrupt's traceback is a stack dump taken when someone gave up waiting: the frame the "
                        "main thread was blocked in is where the run had stalled.",
                fixes=(["rerun with num_workers=0 (or a DataLoader timeout=) to see whether a worker hangs, and "
                        "py-spy dump --pid <worker pid> to see where",
                        "avoid forking with open file handles or locks (HDF5/LMDB/cv2 threads): open them in "
                        "worker_init_fn, or use multiprocessing_context='spawn'"] if loader else
                       ["find the rank that is not in this collective (py-spy dump on every rank): its stack is the cause",
                        "set a finite process-group timeout and TORCH_NCCL_ASYNC_ERROR_HANDLING=1 so a hang becomes "
                        "an error that names the collective"]),
                verify_skill="debug",
                verify_hint=("py-spy dump --pid <pid> --subprocesses  # while it hangs: the main process and each "
                             "DataLoader worker" if loader else "py-spy dump --pid <pid>  # on every rank while it hangs")))
            break
    return out


def _blocked(tb: Traceback) -> Optional[tuple]:
    if any(f.func in _WORKER_LOOPS for f in tb.frames):
        return None  # a DataLoader worker's own traceback: an interrupt stops every worker wherever it is (most
        # wait in index_queue.get() for work, in a healthy run too), so it says nothing about a stall
    for frame in list(reversed(tb.frames))[:_INNERMOST]:
        w = wait_of(frame.func, frame.file)
        if w and any(s in w[1] for s in _STOPS):
            return w[1], frame
    return None
