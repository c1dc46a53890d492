"""Metric tables printed as text: a header of column names, then rows of numbers (fastai's fit table,
`epoch  train_loss  valid_loss  accuracy`, pandas-style dumps, `|`-separated progress tables).

A row line carries no names, so the per-line parser cannot read it; this pass pairs rows with their header.
Ultralytics' (YOLO) console tables are read too (YOLOv5/v7's `box obj cls total` loss columns, `mAP@.5`): the tqdm bar that ends each header or row is cut off, the
`Box(P  R  mAP50  mAP50-95)` validation header names precision / recall / mAP columns, and an `epoch` cell
`3/50` gives the epoch. Markdown tables (`| Training Loss | Epoch | Step | Validation Loss |`, the training
results of an HF model card) are read too.
"""
from __future__ import annotations

import math
from typing import Dict, Iterator, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.collect import kvtables
from trainwreck.collect.metricnames import canonical
from trainwreck.collect.numbers import text_value
from trainwreck.model import Line

_SPLIT = lazy_re(r"\t+|\s{2,}|\s*\|\s*")
_NAME = lazy_re(r"^[A-Za-z_][\w/.\-]*$")
_ALPHA = lazy_re(r"[^\W\d_]")
_STEP_COLS = {"step", "iter", "iteration", "global_step", "steps", "update", "updates"}  # not epochs
_BAR = lazy_re(r"(?::\s+|(?<!\s)\s+)\d{1,3}%\|.*$")  # a tqdm bar at the end of a table line (`640: 100%|███| 69/69 …`)
_RULE = lazy_re(r"^:?-{3,}:?$")
_OF = lazy_re(r"^(\d+)/(\d+)$")  # `3/50`: the epoch of an Ultralytics row
_COUNTER = lazy_re(r"(?i)^\s*(?:iter(?:ation)?|step|epoch)\s+(\d+)\s*:\s*([-+]?(?:\d+\.\d*|\.\d+)(?:e[-+]?\d+)?|nan|inf)"
                   r"(?![\w.])")
_KEYED = lazy_re(r"[=:]\s*[-+]?\d")  # another `key: value` later on the line: not an unnamed value
COUNTER_LINES = 3
PENDING_ROWS = 8  # lines above a log's first table header looked at as rows of that table
_AT = lazy_re(r"@(0?\.\d+)")
_YOLO_PARTS = {"box", "obj", "cls", "dfl", "seg", "kpt", "kobj", "total"}
_PAREN = {"box(p": "precision", "mask(p": "precision", "p": "precision", "r": "recall"}


def _cells(text: str) -> List[str]:
    if "%|" in text:
        text = _BAR.sub("", text)
    return [c for c in _SPLIT.split(text.strip()) if c]


def _name(cell: str) -> str:
    c = cell.rstrip("):").lower()
    if "@" in c:  # YOLOv5/v7's `mAP@.5`, `mAP@.5:.95`
        c = _AT.sub(lambda m: "50" if m.group(1) in (".5", "0.5") else m.group(1).lstrip("0."), c)
        c = c.replace(":.95", "-95").replace(":0.95", "-95")
    return _PAREN.get(c, c).replace(" ", "_")  # `Training Loss` in a Markdown header


def _yolo_losses(cells: List[str]) -> List[str]:
    """YOLOv5/v7's training header (`Epoch gpu_mem box obj cls total labels img_size`) names its loss columns by
    the component alone: they are the box / objectness / class losses and their total."""
    if "gpu_mem" not in cells:
        return cells
    return [("loss" if c == "total" else c + "_loss") if c in _YOLO_PARTS else c for c in cells]


def _num(cell: str) -> Optional[float]:
    c = cell.strip().lower()
    if c in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity"):
        return float(c.replace("infinity", "inf"))
    return text_value(c)[0]  # digits that overflow a float are too large, not an infinity


def _header(text: str) -> Optional[List[str]]:
    cells = _yolo_losses([_name(c) for c in _cells(text)])
    if len(cells) < 2 or len(cells) > 30 or not all(_NAME.match(c) for c in cells):
        return None
    if not any(canonical(c) for c in cells):
        return None
    return cells


def counter_rows(lines: List[Line]) -> Iterator[Tuple[Line, Optional[int], Dict[str, float]]]:
    """`Iter 1600: 0.075390` lines (`print(f"Iter {i}: {loss:.6f}")`, a run report quoting them): a counter and one
    unnamed value. Read as the loss, only when at least COUNTER_LINES such lines exist and the text names a loss
    and no other metric is logged that way; the unnamed value is never guessed to be anything else."""
    hits = []
    for line in lines:
        if len(line.text) > 200 or ":" not in line.text:
            continue
        m = _COUNTER.match(line.text)
        if m is not None and not _KEYED.search(line.text, m.end()):
            hits.append((line, int(m.group(1)), _num(m.group(2))))
    if len(hits) < COUNTER_LINES or not any("loss" in ln.text.lower() for ln in lines[:2000]):
        return
    for line, step, v in hits:
        if v is not None:
            yield line, step, {"loss": v}


def rows(lines: List[Line]) -> Iterator[Tuple[Line, Optional[int], Dict[str, float]]]:
    """(row line, step, {canonical metric: value}) for every table row found under a metric header, then the
    unnamed per-iteration values of `counter_rows`."""
    yield from _table_rows(lines)
    yield from counter_rows(lines)
    yield from kvtables.blocks(lines)  # Stable-Baselines / baselines `| key | value |` dumps


def _table_rows(lines: List[Line]) -> Iterator[Tuple[Line, Optional[int], Dict[str, float]]]:
    header: Optional[List[str]] = None
    seen_header = False
    before: List[Line] = []  # rows above the first header: an excerpt that starts inside a table
    for line in lines:
        text = line.text
        if len(text) > 400:
            header = None
            continue
        h = _header(text) if _ALPHA.search(text) else None
        if h:
            header = h
            seen_header = True
            left = []
            for b in before:  # a repeated header (YOLO prints one per epoch) names the rows cut above it
                got = _row(header, _cells(b.text))
                if got and got[1]:
                    yield b, got[0], got[1]
                else:
                    left.append(b)
            before = left
            continue
        if header is None:
            if not seen_header and len(before) < PENDING_ROWS and text.strip():
                before.append(line)
            continue
        cells = _cells(text)
        if cells and all(_RULE.match(c) for c in cells):
            continue  # the |:---:|---| line under a Markdown header
        if len(cells) != len(header):
            words = text.split()  # numbers hold no spaces: a row whose columns lost their padding (`184.500 0.505`)
            if len(words) == len(header) and all(_num(w) is not None for w in words):
                cells = words
            else:
                header = None if cells else header
                continue
        got = _row(header, cells)
        if got is None:  # mostly words: not a row of this table
            header = None
            continue
        if got[1]:
            yield line, got[0], got[1]


def _row(header: List[str], cells: List[str]) -> Optional[Tuple[Optional[int], Dict[str, float]]]:
    """(step, {canonical metric: value}) of a row of the table under `header`; None when it is not one."""
    if len(cells) != len(header):
        return None
    values: Dict[str, float] = {}
    step = None
    numeric = 0
    for name, cell in zip(header, cells):
        v = _num(cell)
        if v is None:
            of = _OF.match(cell) if name == "epoch" else None
            if of is not None:
                values["epoch"] = float(of.group(1))
                numeric += 1
            continue
        numeric += 1
        if name.lower() in _STEP_COLS and math.isfinite(v) and step is None:
            step = int(v)
            continue
        c = canonical(name)
        if c and c not in values:
            values[c] = v
    if numeric * 2 < len(cells):
        return None
    return step, values
