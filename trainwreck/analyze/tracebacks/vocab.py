"""The vocabulary of Python tracebacks in logs: what a traceback is (Frame, Traceback, RankFailure), the
header and chain-separator lines, what an exception line and a library path look like, and the chain links.

The line scanner (scanner.py) builds these objects; the public API (parse.py) reads them.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from trainwreck import lazy_re, record
from trainwreck.model import Line

HEADER = "Traceback (most recent call last):"
SEP_CAUSE = "The above exception was the direct cause of the following exception:"
SEP_HANDLING = "During handling of the above exception, another exception occurred:"
SEPS = {SEP_CAUSE: "direct-cause", SEP_HANDLING: "during-handling"}

FRAME = lazy_re(r'\s*File "([^"]*)", line (\d+)(?:, in (.*?))?\s*$')
CARET = lazy_re(r"\s*[~^][\s~^]*$")  # (not [~^]+[\s~^]*: both take a caret, every split is tried)
CPP_FRAME = lazy_re(r"frame #\d+: ")
# a line that starts a new log record (or a shell prompt): the end of a multi-line exception message
LOG_RECORD = lazy_re(r"(?:\^C)?(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ |\[titan\]"
                         r"|wandb: |\S+:\d+:\d+ \[\d+\] NCCL |\(\S+\) \S+@\S+:|\S+@[\w.-]+:[~/]|.*\d%\|"
                         r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:|\[(?:DEBUG|INFO|WARNING|ERROR)\|"
                         r"|\S+\.py:\d+: \w*Warning: )")
_DIGIT = lazy_re(r"\d")
_EXC = lazy_re(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\([\w.]*\))?)(?::(.*))?$")
_LIBPATH = lazy_re(r"(?:site|dist)-packages/|/bin/[^/.]+$|/lib(?:64)?/python\d|/usr/lib/python|/conda-bld/|/jax/_src/"
                      r"|/torch/(?:_dynamo|_inductor|_functorch|distributed|nn|utils|autograd|cuda|fx|optim|"
                      r"multiprocessing|_tensor\.py|_utils\.py|serialization\.py)|\.(?:pyx|pxi|pyd|so)$")
_EXC_SUFFIXES = ("Error", "Exception", "Interrupt", "Exit", "Iteration", "Warning", "Failure", "Failed", "Timeout",
                 "Group", "Fault", "Abort", "Exhausted", "Empty", "Unsupported", "Traceback", "StackTrace")
# JAX's notes about frame filtering, printed as if they were exceptions: never a chain's root
JAX_PSEUDO = ("SimplifiedTraceback", "FilteredStackTrace", "UnfilteredStackTrace")


@record
class Frame:
    def __init__(
            self, file: str, line: Optional[int], func: str, code: str = "", user: bool = False,
            log_line: Optional[Line] = None
    ) -> None:
        self.file = file
        self.line = line
        self.func = func
        self.code = code
        self.user = user  # not a library frame (site-/dist-packages, lib/pythonX, <frozen …>, torch internals)
        self.log_line = log_line  # the `File "…", line N, in f` line of the log


@record
class Traceback:
    def __init__(
            self, exc_type: str = "", message: str = "", frames: Optional[List[Frame]] = None,
            start: Optional[Line] = None, exc_line: Optional[Line] = None, rank: Optional[int] = None,
            truncated: bool = False, last_visible: Optional[Line] = None, chained_from: Optional["Traceback"] = None,
            chain_kind: Optional[str] = None, count: int = 1, ranks: Optional[List[int]] = None, cpp_frames: int = 0,
            cpp_origin: str = "", jax_filtered: bool = False, hydra_overrides: str = "", headless: bool = False,
            cut: str = "", sub_exceptions: Optional[List["Traceback"]] = None, end: Optional[Line] = None,
            start_index: int = 0, exc_index: Optional[int] = None, end_index: Optional[int] = None
    ) -> None:
        self.exc_type = exc_type  # as printed, e.g. torch.OutOfMemoryError; "" when the log was cut before it
        self.message = message  # first line plus continuation lines (C++ backtraces and JAX notes left out)
        self.frames = [] if frames is None else frames
        self.start = start  # the "Traceback (most recent call last):" line (first frame when headless)
        self.exc_line = exc_line
        self.rank = rank
        self.truncated = truncated  # the log ends (or another section starts) before the exception line
        self.last_visible = last_visible  # when truncated: the last visible line of this traceback
        self.chained_from = chained_from  # the earlier exception of the chain
        self.chain_kind = chain_kind  # "direct-cause" | "during-handling" | "embedded" (link to chained_from)
        self.count = count  # identical tracebacks (type, message with digits normalised, frames) seen
        self.ranks = [] if ranks is None else ranks
        self.cpp_frames = cpp_frames  # `frame #N:` lines of a C++ backtrace that followed the message
        self.cpp_origin = cpp_origin  # "Exception raised from … (most recent call first):" (or the old "(… at file:line)")
        self.jax_filtered = jax_filtered  # JAX removed its internal frames from this traceback
        self.hydra_overrides = hydra_overrides  # from "Error executing job with overrides: [...]" just before it
        self.headless = headless  # the header is not in the log (the text starts inside the frames)
        self.cut = cut  # why it is truncated: "end" of the log, another "section" (traceback) started in its stream,
        # "noise" (too many foreign lines), or a "gap" in the collected text (head and tail of a big log)
        self.sub_exceptions = [] if sub_exceptions is None else sub_exceptions  # exception groups
        self.end = end  # the last line that belongs to it
        self.start_index = start_index  # positions in the sequence of lines analysed
        self.exc_index = exc_index
        self.end_index = end_index

    @property
    def headline(self) -> str:
        """The first line of the message that says something (ChildFailedError's starts with a ==== rule)."""
        for ln in self.message.split("\n"):
            if any(c.isalnum() for c in ln):
                return ln.strip()
        return ""

    @property
    def interrupted(self) -> bool:
        """Stopped from outside (Ctrl-C, SIGINT/SIGTERM from a scheduler or launcher), not a workload failure."""
        t = self.exc_type.rsplit(".", 1)[-1]
        if t == "KeyboardInterrupt":
            return True
        return t == "SignalException" and bool(re.search(r"signal:? *(?:2|15|SIGINT|SIGTERM)\b", self.message))

    def exception_text(self) -> str:
        return f"{self.exc_type}: {self.headline}" if self.headline else self.exc_type


@record
class RankFailure:
    def __init__(
            self, rank: Optional[int], local_rank: Optional[int], host: Optional[str], exitcode: Optional[int],
            error_file: Optional[str], time: Optional[str], line: Line, signal: Optional[str] = None,
            root_cause: bool = False, pid: Optional[int] = None, source: str = "elastic-summary",
            lines: Optional[List[Line]] = None
    ) -> None:
        self.rank = rank
        self.local_rank = local_rank
        self.host = host
        self.exitcode = exitcode
        self.error_file = error_file
        self.time = time
        self.line = line  # the "rank : 3 (local_rank: 3)" line (or the line the failure was read from)
        self.signal = signal
        self.root_cause = root_cause  # listed under "Root Cause (first observed failure):"
        self.pid = pid
        self.source = source  # elastic-summary | elastic-api | traceback
        self.lines = [] if lines is None else lines  # every line of the entry, for citations


# ---------------------------------------------------------------- what a line or a path is

def _plausible_type(name: str) -> bool:
    base = name.split("(", 1)[0]
    last = base.rsplit(".", 1)[-1]
    if "." in base:
        return last[:1].isupper() or last.endswith(_EXC_SUFFIXES)
    if last.endswith(_EXC_SUFFIXES) or last in ("KeyboardInterrupt", "SystemExit", "StopIteration"):
        return True
    return last[:1].isupper() and any(c.islower() for c in last) and sum(c.isupper() for c in last) >= 2


def exception_line(body: str) -> Optional[Tuple[str, str]]:
    """(type, first message line) when `body` reads as the `Type: message` line of a traceback."""
    if not body or not (body[0].isalpha() or body[0] == "_"):
        return None
    m = _EXC.match(body.rstrip())
    if not m or not _plausible_type(m.group(1)):
        return None
    return m.group(1), (m.group(2) or "").strip()


def is_user_path(path: str) -> bool:
    """Not a library path (site-/dist-packages, lib/pythonX, <frozen …>, torch internals, compiled modules)."""
    p = path.replace("\\", "/")
    return not (p.startswith("<") or _LIBPATH.search(p.lower()))


def digit_shape(s: str) -> str:
    """Every digit made 0: a logging prefix still matches its next line when the timestamp ticks."""
    return _DIGIT.sub("0", s)


def tb_shaped(s: str) -> bool:
    """Could this text be a line of a traceback (frame, indented code, header, exception line)?"""
    return bool(FRAME.match(s) or s[:1] in (" ", "\t") or HEADER in s or exception_line(s))


def root_type(tb: Traceback) -> str:
    """The exception's class name without module or group suffix (`torch.OutOfMemoryError` -> OutOfMemoryError)."""
    return tb.exc_type.split("(", 1)[0].rsplit(".", 1)[-1]


def chain(tb: Traceback) -> List[Traceback]:
    """The exceptions of a chain, the last one printed (tb) first."""
    out, seen = [tb], {id(tb)}
    while out[-1].chained_from is not None and id(out[-1].chained_from) not in seen:
        out.append(out[-1].chained_from)
        seen.add(id(out[-1]))
    return out  # head first
