"""The line scanner: turns a sequence of log lines into Traceback objects (see vocab.py), chains linked.

Real logs interleave the output of many processes. Every line is split into a *stream* (its rank tag:
`[rank3]: `, `[default3]:`, `[1,3]<stderr>:`, `3: `, `stderr: `, optionally after an ISO timestamp; see
trainwreck/collect/ranks.py) and a body; each stream has at most one traceback in progress, so ranks printing
at the same time do not mix. A traceback whose header line carries other text before
`Traceback (most recent call last):` (a logging prefix, a tqdm bar) learns from the next lines whether that
text repeats on every line (logging prefix, compared with digits normalised so timestamps may tick) or was
noise (tqdm). Lines that cannot start or continue a traceback cost two substring tests.
"""
from __future__ import annotations

import re
from collections import deque
from typing import Deque, Dict, List, Optional, Tuple

from trainwreck.analyze.tracebacks.groups import Item, parse_group
from trainwreck.analyze.tracebacks.vocab import (
    CARET,
    CPP_FRAME,
    FRAME,
    HEADER,
    JAX_PSEUDO,
    LOG_RECORD,
    SEPS,
    Frame,
    Traceback,
    chain,
    digit_shape,
    exception_line,
    is_user_path,
    root_type,
    tb_shaped,
)
from trainwreck.collect.ranks import split_stream
from trainwreck.model import Line

_FRAMES, _MESSAGE, _CPP, _GROUP = range(4)
NOISE_MAX = 40  # consecutive foreign lines inside the frames of a traceback before it counts as cut off
MSG_MAX = 200  # continuation lines kept for one exception message
LINK_WINDOW = 40  # lines between an exception and a chain separator that still link them


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


class Scanner:
    """Feed it lines in order (`feed`), then `finish()`: the head of every traceback chain seen."""

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
        kind = SEPS.get(s)
        if kind:
            self._separator(key, kind, index)
            return
        m = FRAME.match(body)
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
            op.lead, op.lead_shape, op.mode = lead, digit_shape(lead), 1
        op.embed_parent, op.embed_quoted = embed_parent, quoted
        self.active[key] = op
        p = self.pending.pop(key, None)
        if p is not None:
            prev, kind, _ = p
            if root_type(prev) in JAX_PSEUDO:
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
            e = exception_line(b)
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
            shaped = len(c) >= len(op.lead) and digit_shape(c[:len(op.lead)]) == op.lead_shape
            if op.mode == 2:
                if not shaped:
                    return self._noise(op, index)
                c = c[len(op.lead):]
            elif shaped and tb_shaped(c[len(op.lead):]):
                op.mode, c = 2, c[len(op.lead):]
            elif tb_shaped(c):
                op.mode = 0
            else:
                return self._noise(op, index)
        if op.state == _FRAMES:
            return self._in_frames(op, c, line, index)
        if op.state == _MESSAGE:
            return self._in_message(op, c, line, index)
        s = c.strip()  # _CPP
        if CPP_FRAME.match(s):
            op.tb.cpp_frames += 1
        elif s.startswith("Exception raised from "):
            op.tb.cpp_origin = op.tb.cpp_origin or s
        else:
            self._close(op)
            return not s
        op.last, op.last_index = line, index
        return True

    def _in_frames(self, op: _Op, c: str, line: Line, index: int) -> bool:
        if HEADER in c or c.strip() in SEPS:
            self._close(op, cut="section")
            return False
        m = FRAME.match(c)
        if m:
            self._frame(op, m, line)
            op.code_ok = True
        elif c[:4] == "    " and c.strip() and op.code_ok or c.startswith("  [Previous line repeated"):
            fr = op.tb.frames
            if fr and not fr[-1].code and not CARET.match(c) and not c.strip().startswith("...<"):
                fr[-1].code = c.strip()
        elif c.lstrip().startswith('File "'):  # a frame line cut short (the log ends in the middle of it)
            op.code_ok = False
        else:
            e = exception_line(c)
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
            quoted = bool(op.msg) and op.msg[-1].strip() == '"""' or root_type(tb).endswith("RemoteTraceback")
            if lead.rstrip().endswith("Original") or quoted:
                self._close(op)
                self._start(op.key, tb.rank, lead, line, index, embed_parent=tb, quoted=quoted and
                            not lead.rstrip().endswith("Original"))
                return True
            self._close(op)
            return False
        kind = SEPS.get(s)
        if kind:
            self._close(op)
            lc = self.last_closed.get(op.key)
            if lc is not None:
                self.pending[op.key] = (lc[0], kind, index)
            return True
        if s.startswith("Exception raised from ") or CPP_FRAME.match(s):
            tb.cpp_origin = s if s.startswith("Exception") else tb.cpp_origin
            tb.cpp_frames += 1 if CPP_FRAME.match(s) else 0
            op.state = _CPP
        elif s.startswith("For simplicity, JAX has removed its internal frames"):
            tb.jax_filtered = True
            if op.msg and set(op.msg[-1].strip()) == {"-"}:
                op.msg.pop()
        elif op.embed_quoted and s == '"""':
            self._close(op)
            return True
        elif LOG_RECORD.match(c) or len(op.msg) >= MSG_MAX:
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
        tb = parse_group(op.group, op.group_at, parse_plain)
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


def parse_plain(items: List[Item], first: Line) -> Optional[Traceback]:
    """The traceback (or the lone exception line) in a clean, single-stream block of lines."""
    sc = Scanner()
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
        e = next(((ln, i, exception_line(t)) for t, ln, i in items if exception_line(t)), None)
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

