"""Python tracebacks in training logs: root exception, innermost user frame, chains, ranks, truncation.

API: find_tracebacks(lines) -> [Traceback] (one per chain, the last exception printed, de-duplicated across
ranks), scan/dedup (the same in two steps), root_exception(tb), innermost_user_frame(tb), chain_user_frame(tb),
rank_failures(lines) / first_failure(lines) -> RankFailure, summarize(lines) -> JSON-ready dict,
render_text(summary) -> terminal text. Lines that cannot start or continue a traceback cost two substring
tests; 50,000 ordinary lines take a few tens of milliseconds.

Real logs interleave the output of many processes. Every line is split into a *stream* (its rank tag:
`[rank3]: `, `[default3]:`, `[1,3]<stderr>:`, `3: `, `stderr: `, optionally after an ISO timestamp) and a
body; each stream has at most one traceback in progress, so ranks printing at the same time do not mix.
A traceback whose header line carries other text before `Traceback (most recent call last):` (a logging
prefix, a tqdm bar) learns from the next lines whether that text repeats on every line (logging prefix,
compared with digits normalised so timestamps may tick) or was noise (tqdm).

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

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Deque, Dict, List, Optional, Tuple

from trainwreck.model import Line

HEADER = "Traceback (most recent call last):"
SEP_CAUSE = "The above exception was the direct cause of the following exception:"
SEP_HANDLING = "During handling of the above exception, another exception occurred:"
_SEPS = {SEP_CAUSE: "direct-cause", SEP_HANDLING: "during-handling"}

_TAGS = re.compile(r"(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+)?"
                   r"((?:^rank\d+\]:[ ]?|\[rank\d+\]:[ ]?|\[default\d+\]:|\[\d+,\d+\]<std(?:err|out)>:|std(?:err|out): |\d{1,4}: )+)")
_RANK = re.compile(r"\[?rank(\d+)\]|\[default(\d+)\]|\[\d+,(\d+)\]<|^(\d+):")
_FRAME = re.compile(r'\s*File "([^"]*)", line (\d+)(?:, in (.*?))?\s*$')
_EXC = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\([\w.]*\))?)(?::(.*))?$")
_CARET = re.compile(r"\s*[~^]+[\s~^]*$")
_CPPFRAME = re.compile(r"frame #\d+: ")
# a line that starts a new log record (or a shell prompt): the end of a multi-line exception message
_LOGREC = re.compile(r"(?:\^C)?(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ |\[titan\]"
                     r"|wandb: |\S+:\d+:\d+ \[\d+\] NCCL |\(\S+\) \S+@\S+:|\S+@[\w.-]+:[~/]|.*\d%\|"
                     r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:|\[(?:DEBUG|INFO|WARNING|ERROR)\|"
                     r"|\S+\.py:\d+: \w*Warning: )")
_DIGIT = re.compile(r"\d")
_NUMBER = re.compile(r"\d+")
_LIBPATH = re.compile(r"(?:site|dist)-packages/|/bin/[^/.]+$|/lib(?:64)?/python\d|/usr/lib/python|/conda-bld/|/jax/_src/"
                      r"|/torch/(?:_dynamo|_inductor|_functorch|distributed|nn|utils|autograd|cuda|fx|optim|"
                      r"multiprocessing|_tensor\.py|_utils\.py|serialization\.py)|\.(?:pyx|pxi|pyd|so)$")
_EXC_SUFFIXES = ("Error", "Exception", "Interrupt", "Exit", "Iteration", "Warning", "Failure", "Failed", "Timeout",
                 "Group", "Fault", "Abort", "Exhausted", "Empty", "Unsupported", "Traceback", "StackTrace")
# exceptions that code catches on purpose (fallbacks, iteration, optional imports, queue polling)
_BOOKKEEPING = {"StopIteration", "StopAsyncIteration", "KeyError", "AttributeError", "IndexError", "ImportError",
                "ModuleNotFoundError", "Empty", "Full", "TimeoutError", "CancelledError", "GeneratorExit"}
_JAX_PSEUDO = ("SimplifiedTraceback", "FilteredStackTrace", "UnfilteredStackTrace")
_FRAMES, _MESSAGE, _CPP, _GROUP = range(4)
NOISE_MAX = 40  # consecutive foreign lines inside the frames of a traceback before it counts as cut off
MSG_MAX = 200  # continuation lines kept for one exception message
LINK_WINDOW = 40  # lines between an exception and a chain separator that still link them


@dataclass
class Frame:
    file: str
    line: Optional[int]
    func: str
    code: str = ""
    user: bool = False  # not a library frame (site-/dist-packages, lib/pythonX, <frozen …>, torch internals)
    log_line: Optional[Line] = None  # the `File "…", line N, in f` line of the log


@dataclass
class Traceback:
    exc_type: str = ""  # as printed, e.g. torch.OutOfMemoryError; "" when the log was cut before it
    message: str = ""  # first line plus continuation lines (C++ backtraces and JAX notes left out)
    frames: List[Frame] = field(default_factory=list)
    start: Optional[Line] = None  # the "Traceback (most recent call last):" line (first frame when headless)
    exc_line: Optional[Line] = None
    rank: Optional[int] = None
    truncated: bool = False  # the log ends (or another section starts) before the exception line
    last_visible: Optional[Line] = None  # when truncated: the last visible line of this traceback
    chained_from: Optional["Traceback"] = None  # the earlier exception of the chain
    chain_kind: Optional[str] = None  # "direct-cause" | "during-handling" | "embedded" (link to chained_from)
    count: int = 1  # identical tracebacks (type, message with digits normalised, frames) seen
    ranks: List[int] = field(default_factory=list)
    cpp_frames: int = 0  # `frame #N:` lines of a C++ backtrace that followed the message
    cpp_origin: str = ""  # "Exception raised from … (most recent call first):" (or the old "(… at file:line)")
    jax_filtered: bool = False  # JAX removed its internal frames from this traceback
    hydra_overrides: str = ""  # from "Error executing job with overrides: [...]" just before it
    headless: bool = False  # the header is not in the log (the text starts inside the frames)
    cut: str = ""  # why it is truncated: "end" of the log, another "section" (traceback) started in its stream,
    # "noise" (too many foreign lines), or a "gap" in the collected text (head and tail of a big log)
    sub_exceptions: List["Traceback"] = field(default_factory=list)  # exception groups
    end: Optional[Line] = None  # the last line that belongs to it
    start_index: int = 0  # positions in the sequence of lines analysed
    exc_index: Optional[int] = None
    end_index: Optional[int] = None

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


@dataclass
class RankFailure:
    rank: Optional[int]
    local_rank: Optional[int]
    host: Optional[str]
    exitcode: Optional[int]
    error_file: Optional[str]
    time: Optional[str]
    line: Line  # the "rank : 3 (local_rank: 3)" line (or the line the failure was read from)
    signal: Optional[str] = None
    root_cause: bool = False  # listed under "Root Cause (first observed failure):"
    pid: Optional[int] = None
    source: str = "elastic-summary"  # elastic-summary | elastic-api | traceback
    lines: List[Line] = field(default_factory=list)  # every line of the entry, for citations


# ---------------------------------------------------------------- line classification

def split_stream(text: str) -> Tuple[str, Optional[int], str]:
    """(stream key, rank, body) of one line."""
    m = _TAGS.match(text)
    if not m:
        return "", None, text
    tags = m.group(1)
    r = _RANK.search(tags)
    rank = int(next(g for g in r.groups() if g is not None)) if r else None
    key = tags.replace(" ", "")
    return ("[" + key if key.startswith("rank") else key), rank, text[m.end():]


def _plausible_type(name: str) -> bool:
    base = name.split("(", 1)[0]
    last = base.rsplit(".", 1)[-1]
    if "." in base:
        return last[:1].isupper() or last.endswith(_EXC_SUFFIXES)
    if last.endswith(_EXC_SUFFIXES) or last in ("KeyboardInterrupt", "SystemExit", "StopIteration"):
        return True
    return last[:1].isupper() and any(c.islower() for c in last) and sum(c.isupper() for c in last) >= 2


def _exception(body: str) -> Optional[Tuple[str, str]]:
    """(type, first message line) when `body` reads as the `Type: message` line of a traceback."""
    if not body or not (body[0].isalpha() or body[0] == "_"):
        return None
    m = _EXC.match(body.rstrip())
    if not m or not _plausible_type(m.group(1)):
        return None
    return m.group(1), (m.group(2) or "").strip()


def is_user_path(path: str) -> bool:
    p = path.replace("\\", "/")
    return not (p.startswith("<") or _LIBPATH.search(p.lower()))


def _shape(s: str) -> str:
    return _DIGIT.sub("0", s)


def _tb_shaped(s: str) -> bool:
    return bool(_FRAME.match(s) or s[:1] in (" ", "\t") or HEADER in s or _exception(s))


def _root_type(tb: Traceback) -> str:
    return tb.exc_type.split("(", 1)[0].rsplit(".", 1)[-1]


# ---------------------------------------------------------------- the scanner

class _Op:
    """A traceback in progress in one stream."""

    __slots__ = ("tb", "key", "lead", "lead_shape", "mode", "state", "noise", "last", "last_index", "msg",
                 "embed_parent", "embed_quoted", "group", "group_at", "code_ok")

    def __init__(self, tb: Traceback, key: str, line: Line, index: int):
        self.tb, self.key, self.last, self.last_index = tb, key, line, index
        self.lead, self.lead_shape, self.mode = "", "", 0  # mode: 0 no lead, 1 undecided, 2 every line has it
        self.state, self.noise, self.msg, self.code_ok = _FRAMES, 0, [], False
        self.embed_parent: Optional[Traceback] = None
        self.embed_quoted = False
        self.group: List[Tuple[str, Line, int]] = []
        self.group_at = 0


class _Scanner:
    def __init__(self) -> None:
        self.active: Dict[str, _Op] = {}
        self.done: List[Traceback] = []
        self.not_head: set = set()
        self.embedded_in: Dict[int, Traceback] = {}
        self.last_closed: Dict[str, Tuple[Traceback, int]] = {}
        self.pending: Dict[str, Tuple[Traceback, str, int]] = {}
        self.recent: Deque[Tuple[int, Line]] = deque(maxlen=12)
        self.prev: Optional[Line] = None

    # -- driving
    def feed(self, index: int, line: Line) -> None:
        text = line.text if isinstance(line.text, str) else str(line.text)
        prev, self.prev = self.prev, line
        if prev is not None and self.active and _gap(prev, line):
            for op in list(self.active.values()):
                self._close(op, cut="gap")
        if "\n" in text or "\r" in text.rstrip("\r"):  # several lines in one (tqdm redraws, JSON fields)
            for part in re.split(r"[\r\n]", text):
                self._one(index, Line(line.path, line.line, part, line.byte))
            return
        self._one(index, line)

    def _one(self, index: int, line: Line) -> None:
        t = line.text.rstrip()
        if not self.active and not self.pending and "Traceback" not in t and "above exception" not in t \
                and 'File "' not in t:
            self.recent.append((index, line))
            return
        if self.pending:
            for k in [k for k, p in self.pending.items() if index - p[2] > 8]:
                del self.pending[k]
        key, rank, body = split_stream(t)
        op = self.active.get(key)
        if op is None or not self._continue(op, body, line, index):
            self._idle(key, rank, body, line, index)
        self.recent.append((index, line))

    def finish(self) -> List[Traceback]:
        for op in list(self.active.values()):
            self._close(op, cut="end")
        return [tb for tb in self.done if id(tb) not in self.not_head]

    # -- a line in a stream with nothing in progress
    def _idle(self, key: str, rank: Optional[int], body: str, line: Line, index: int) -> None:
        h = body.find(HEADER)
        if h >= 0:
            lead = body[:h]
            if lead.rstrip().endswith("+ Exception Group") and not lead.rstrip()[:-len("+ Exception Group")].strip():
                op = _Op(Traceback(start=line, rank=rank, start_index=index), key, line, index)
                op.state, op.group, op.group_at = _GROUP, [(body, line, index)], lead.index("+")
                self.active[key] = op
                return
            self._start(key, rank, lead, line, index)
            return
        s = body.strip()
        kind = _SEPS.get(s)
        if kind:
            self._separator(key, kind, index)
            return
        m = _FRAME.match(body)
        if m and body.startswith(" "):
            tb = Traceback(start=line, rank=rank, start_index=index, headless=True)
            op = _Op(tb, key, line, index)
            self.active[key] = op
            self._frame(op, m, line)

    def _start(self, key: str, rank: Optional[int], lead: str, line: Line, index: int,
               embed_parent: Optional[Traceback] = None, quoted: bool = False) -> _Op:
        tb = Traceback(start=line, rank=rank, start_index=index)
        op = _Op(tb, key, line, index)
        if lead.rstrip().endswith("Original"):
            lead = ""
        if lead.strip():
            op.lead, op.lead_shape, op.mode = lead, _shape(lead), 1
        op.embed_parent, op.embed_quoted = embed_parent, quoted
        self.active[key] = op
        p = self.pending.pop(key, None)
        if p is not None:
            prev, kind, _ = p
            if _root_type(prev) in _JAX_PSEUDO:
                tb.jax_filtered = True
                self.not_head.add(id(prev))
            else:
                self._link(tb, prev, kind)
        for _, ln in list(self.recent)[-3:]:
            i = ln.text.find("Error executing job with overrides:")
            if i >= 0:
                tb.hydra_overrides = ln.text[i + len("Error executing job with overrides:"):].strip()
        return op

    def _link(self, tb: Traceback, prev: Traceback, kind: str) -> None:
        tb.chained_from, tb.chain_kind = prev, kind
        self.not_head.add(id(prev))
        parent = self.embedded_in.pop(id(prev), None)
        if parent is not None:  # the chain continues inside a worker traceback embedded in a message
            parent.chained_from = tb
            self.embedded_in[id(tb)] = parent
            self.not_head.add(id(tb))

    def _separator(self, key: str, kind: str, index: int) -> None:
        lc = self.last_closed.get(key)
        if lc is not None and index - lc[1] <= 3:
            prev: Optional[Traceback] = lc[0]
        else:
            prev = self._headerless(key, index, lc[0] if lc is not None else None)
            if prev is None and lc is not None and index - lc[1] <= LINK_WINDOW:
                prev = lc[0]
        if prev is not None:
            self.pending[key] = (prev, kind, index)

    def _headerless(self, key: str, index: int, closed: Optional[Traceback]) -> Optional[Traceback]:
        """A chained exception printed without a traceback (e.g. JAX's SimplifiedTraceback): its lone line."""
        for i, ln in reversed(self.recent):
            if index - i > 6:
                break
            k, r, b = split_stream(ln.text.rstrip())
            if k != key or not b.strip():
                continue
            if closed is not None and closed.end is ln:
                return closed
            e = _exception(b)
            if not e:
                return None
            tb = Traceback(exc_type=e[0], message=e[1], start=ln, exc_line=ln, rank=r, end=ln,
                           start_index=i, exc_index=i)
            self.done.append(tb)
            return tb
        return None

    # -- a line in a stream with a traceback in progress; False: the line is not part of it
    def _continue(self, op: _Op, body: str, line: Line, index: int) -> bool:
        if op.state == _GROUP:
            s = body.lstrip()
            if s[:1] in ("|", "+") and len(body) - len(s) >= op.group_at:
                op.group.append((body, line, index))
                op.last, op.last_index = line, index
                return True
            self._finish_group(op)
            return False
        c = body
        if op.mode:
            shaped = len(c) >= len(op.lead) and _shape(c[:len(op.lead)]) == op.lead_shape
            if op.mode == 2:
                if not shaped:
                    return self._noise(op, index)
                c = c[len(op.lead):]
            elif shaped and _tb_shaped(c[len(op.lead):]):
                op.mode, c = 2, c[len(op.lead):]
            elif _tb_shaped(c):
                op.mode = 0
            else:
                return self._noise(op, index)
        if op.state == _FRAMES:
            return self._in_frames(op, c, line, index)
        if op.state == _MESSAGE:
            return self._in_message(op, c, line, index)
        s = c.strip()  # _CPP
        if _CPPFRAME.match(s):
            op.tb.cpp_frames += 1
        elif s.startswith("Exception raised from "):
            op.tb.cpp_origin = op.tb.cpp_origin or s
        else:
            self._close(op)
            return not s
        op.last, op.last_index = line, index
        return True

    def _in_frames(self, op: _Op, c: str, line: Line, index: int) -> bool:
        if HEADER in c or c.strip() in _SEPS:
            self._close(op, cut="section")
            return False
        m = _FRAME.match(c)
        if m:
            self._frame(op, m, line)
            op.code_ok = True
        elif c[:4] == "    " and c.strip() and op.code_ok or c.startswith("  [Previous line repeated"):
            fr = op.tb.frames
            if fr and not fr[-1].code and not _CARET.match(c) and not c.strip().startswith("...<"):
                fr[-1].code = c.strip()
        elif c.lstrip().startswith('File "'):  # a frame line cut short (the log ends in the middle of it)
            op.code_ok = False
        else:
            e = _exception(c)
            if not e:
                return self._noise(op, index)
            tb = op.tb
            tb.exc_type, tb.exc_line, tb.exc_index = e[0], line, index
            op.msg, op.state = [e[1]], _MESSAGE
            m2 = re.search(r"\s\(\w+ at \S+:\d+\)$", e[1])  # old c10::Error format: "msg (func at file:line)"
            if m2:
                tb.cpp_origin = m2.group(0).strip()
            if ":" not in c[len(e[0]):len(e[0]) + 1]:  # a bare type (KeyboardInterrupt): str(exc) is empty
                op.last, op.last_index = line, index
                self._close(op)
                return True
        op.noise, op.last, op.last_index = 0, line, index
        return True

    def _in_message(self, op: _Op, c: str, line: Line, index: int) -> bool:
        tb, s = op.tb, c.strip()
        if not s:
            self._close(op)
            return True
        h = c.find(HEADER)
        if h >= 0:
            lead = c[:h]
            quoted = bool(op.msg) and op.msg[-1].strip() == '"""' or _root_type(tb).endswith("RemoteTraceback")
            if lead.rstrip().endswith("Original") or quoted:
                self._close(op)
                self._start(op.key, tb.rank, lead, line, index, embed_parent=tb, quoted=quoted and
                            not lead.rstrip().endswith("Original"))
                return True
            self._close(op)
            return False
        kind = _SEPS.get(s)
        if kind:
            self._close(op)
            lc = self.last_closed.get(op.key)
            if lc is not None:
                self.pending[op.key] = (lc[0], kind, index)
            return True
        if s.startswith("Exception raised from ") or _CPPFRAME.match(s):
            tb.cpp_origin = s if s.startswith("Exception") else tb.cpp_origin
            tb.cpp_frames += 1 if _CPPFRAME.match(s) else 0
            op.state = _CPP
        elif s.startswith("For simplicity, JAX has removed its internal frames"):
            tb.jax_filtered = True
            if op.msg and set(op.msg[-1].strip()) == {"-"}:
                op.msg.pop()
        elif op.embed_quoted and s == '"""':
            self._close(op)
            return True
        elif _LOGREC.match(c) or len(op.msg) >= MSG_MAX:
            self._close(op)
            return False
        else:
            op.msg.append(c)
        op.last, op.last_index = line, index
        return True

    def _frame(self, op: _Op, m: "re.Match[str]", line: Line) -> None:
        path = m.group(1)
        op.tb.frames.append(Frame(path, int(m.group(2)), (m.group(3) or "").strip(), "", is_user_path(path), line))

    def _noise(self, op: _Op, index: int) -> bool:
        if op.state != _FRAMES:
            self._close(op)
            return False
        op.noise += 1
        op.code_ok = False
        if op.noise > NOISE_MAX:
            self._close(op, cut="noise")
            return False
        return True

    def _close(self, op: _Op, cut: str = "") -> None:
        if self.active.get(op.key) is op:
            del self.active[op.key]
        if op.state == _GROUP:
            self._finish_group(op)
            return
        tb = op.tb
        tb.message = "\n".join([op.msg[0]] + [x.rstrip() for x in op.msg[1:]]).strip() if op.msg else ""
        tb.end, tb.end_index = op.last, op.last_index
        if not tb.exc_type:
            tb.truncated, tb.last_visible, tb.cut = True, op.last, cut or "end"
        if tb.headless and not tb.exc_type:
            return  # a few frame-like lines without header or exception: not enough to call it a traceback
        self.done.append(tb)
        self.last_closed[op.key] = (tb, op.last_index)
        parent = op.embed_parent
        if parent is not None:
            parent.chained_from, parent.chain_kind = tb, "embedded"
            self.not_head.add(id(tb))
            if op.embed_quoted:
                self.last_closed[op.key] = (parent, op.last_index)
            else:
                self.embedded_in[id(tb)] = parent

    # -- exception groups (Python 3.11+): "  + Exception Group Traceback", "  | …", "  +-+---- 1 ----"
    def _finish_group(self, op: _Op) -> None:
        if self.active.get(op.key) is op:
            del self.active[op.key]
        tb = _parse_group(op.group, op.group_at)
        if tb is None:
            return
        tb.rank, tb.start_index = op.tb.rank, op.tb.start_index
        self.done.append(tb)
        self.last_closed[op.key] = (tb, op.last_index)


def _gap(prev: Line, cur: Line) -> bool:
    """The collected text is not contiguous here (another file, or the head and the tail of a big log)."""
    if prev.path != cur.path:
        return True
    if prev.line is None:
        return cur.line is not None
    return cur.line is None or not (prev.line <= cur.line <= prev.line + 1)


_Item = Tuple[str, Line, int]  # (text, log line, position in the lines analysed)


def _parse_group(items: List[_Item], at: int) -> Optional[Traceback]:
    own: List[_Item] = []
    subs: List[List[_Item]] = []
    cur: Optional[List[_Item]] = None
    for body, line, index in items:
        ch = body[at:at + 1]
        if ch == "|" and cur is None:
            own.append((body[at + 2:], line, index))
        elif ch == "+" and body[at + 1:at + 2] == "-":  # "+-+---- 1 ----": the sub-exceptions start
            cur = []
            subs.append(cur)
        elif ch == "+" and cur is None:  # "+ Exception Group Traceback (most recent call last):"
            own.append((body[at + 2:].replace("Exception Group Traceback", "Traceback"), line, index))
        elif cur is not None:
            if body[at + 2:at + 4] == "+-" and body[at + 2:at + 5] != "+-+":  # "+---- 2 ----" / closing "+----"
                cur = []
                subs.append(cur)
            else:
                cur.append((body, line, index))
    tb = _parse_plain(own, items[0][1])
    if tb is None:
        return None
    for sub in subs:
        if not sub:
            continue
        b0 = sub[0][0]
        if b0[at + 2:at + 3] == "|" and "Exception Group Traceback" in b0:  # a nested group
            st = _parse_group([(b0[:at + 2] + "+" + b0[at + 3:], sub[0][1], sub[0][2])] + sub[1:], at + 2)
        else:
            st = _parse_plain([(b[at + 4:], ln, i) for b, ln, i in sub], sub[0][1])
        if st is not None:
            tb.sub_exceptions.append(st)
    return tb


def _parse_plain(items: List[_Item], first: Line) -> Optional[Traceback]:
    """The traceback (or the lone exception line) in a clean, single-stream block of lines."""
    sc = _Scanner()
    orig: Dict[int, Line] = {}
    keep = []
    for text, ln, i in items:
        sub = Line(ln.path, ln.line, text, ln.byte)
        keep.append(sub)
        orig[id(sub)] = ln
        sc.feed(i, sub)
    heads = sc.finish()
    if heads:
        tb = heads[-1]
    else:
        e = next(((ln, i, _exception(t)) for t, ln, i in items if _exception(t)), None)
        if e is None:
            return None
        return Traceback(exc_type=e[2][0], message=e[2][1], start=e[0], exc_line=e[0], end=e[0],
                         start_index=e[1], exc_index=e[1])
    for m in chain(tb):  # cite the verbatim log lines, not the text with the group's "| " margin removed
        for attr in ("start", "exc_line", "end", "last_visible"):
            v = getattr(m, attr)
            if v is not None:
                setattr(m, attr, orig.get(id(v), v))
        for f in m.frames:
            if f.log_line is not None:
                f.log_line = orig.get(id(f.log_line), f.log_line)
    tb.start = tb.start or first
    return tb


# ---------------------------------------------------------------- public API

def scan(lines: List[Line]) -> List[Traceback]:
    """Every traceback chain in the lines, in order of appearance, NOT de-duplicated (one per rank)."""
    sc = _Scanner()
    for i, ln in enumerate(lines):
        sc.feed(i, ln)
    return sorted(sc.finish(), key=lambda t: (t.start_index, t.exc_index if t.exc_index is not None else -1))


def norm_message(s: str) -> str:
    """The message with every number replaced by # (ranks, device ids, sizes and pids differ across ranks)."""
    return _NUMBER.sub("#", s)


_norm = norm_message


def _key(tb: Traceback) -> Tuple:
    return (tb.exc_type, _norm(tb.message), tb.truncated,
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


def chain(tb: Traceback) -> List[Traceback]:
    """The exceptions of a chain, the last one printed (tb) first."""
    out, seen = [tb], {id(tb)}
    while out[-1].chained_from is not None and id(out[-1].chained_from) not in seen:
        out.append(out[-1].chained_from)
        seen.add(id(out[-1]))
    return out  # head first


def root_exception(tb: Traceback) -> Traceback:
    """The exception the failure began with (see the module docstring for the rule and why)."""
    cur = tb
    for prev in chain(tb)[1:]:
        if _root_type(prev) in _JAX_PSEUDO or not prev.exc_type:
            continue
        if cur.chain_kind == "during-handling" and _root_type(prev) in _BOOKKEEPING and cur.exc_type:
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



_PKG_ROOT = re.compile(r"^.*/(?:site-packages|dist-packages|lib/python\d[\d.]*)/")


def short_path(path: str, keep: int = 2) -> str:
    """A path short enough for a claim: the module path inside site-packages, else the last `keep` parts."""
    p = path.replace("\\", "/")
    m = _PKG_ROOT.match(p)
    if m:
        return p[m.end():]
    parts = [x for x in p.split("/") if x]
    return "/".join(parts[-keep:]) if len(parts) > keep else path
