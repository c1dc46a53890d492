"""Key/value blocks: the console tables of Stable-Baselines3 and OpenAI baselines (their `HumanOutputFormat`).

Each logger dump is one block between lines of dashes, one `| key | value |` row per metric; SB3 groups keys
under a section row (`| rollout/ | |`) and indents them (`|    ep_rew_mean | 1.43 |` is `rollout/ep_rew_mean`),
baselines prints full keys (`| loss/value_loss | 0.0626 |`). A row carries no step, so a block's rows take the
step of its timestep counter (`time/total_timesteps`, `misc/total_timesteps`, `total_timesteps`). A block opens
with a line of dashes only: a Markdown table (rule lines hold `|`) or a hyperparameter table is never read here.
"""
from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Tuple

from trainwreck import lazy_re
from trainwreck.collect.metricnames import canonical
from trainwreck.collect.numbers import step as numbers_step
from trainwreck.collect.numbers import text_value
from trainwreck.model import Line

_DASHES = lazy_re(r"^\s*-{10,}\s*$")
# the key starts on a non-space, so the indent and the key never trade spaces (linear on a line of spaces)
_ROW = lazy_re(r"^\s*\|( *)([^|\s][^|]{0,79}?)\s*\|\s*([^|]{0,40}?)\s*\|\s*$")
_STEPS = ("time/total_timesteps", "misc/total_timesteps", "total_timesteps", "timesteps_total")
MAX_ROWS = 200  # a block longer than this is not a logger dump


def _num(cell: str) -> Optional[float]:
    return text_value(cell)[0]


def _flush(rows: List[Tuple[Line, str, float]]) -> Iterator[Tuple[Line, Optional[int], Dict[str, float]]]:
    # a counter cell that is `inf` or out of range is no step (numbers.step), never an OverflowError
    step = next((s for _l, k, v in rows if k in _STEPS and (s := numbers_step(v)[0]) is not None and s >= 0
                 and s == v), None)
    for line, key, value in rows:
        name = canonical(key)
        if name is not None and name != "epoch":
            yield line, step, {name: value}


def blocks(lines: List[Line]) -> Iterator[Tuple[Line, Optional[int], Dict[str, float]]]:
    """(row line, step, {canonical metric: value}) for every metric row of every block."""
    rows: List[Tuple[Line, str, float]] = []
    open_, section = False, ""
    for line in lines:
        text = line.text
        if "|" not in text:
            if open_ and rows:
                yield from _flush(rows)
            rows, section = [], ""
            open_ = len(text) < 300 and bool(_DASHES.match(text))
            continue
        m = _ROW.match(text) if open_ and len(text) < 300 else None
        if m is None or len(rows) >= MAX_ROWS:
            open_, rows = False, []
            continue
        indent, key, cell = m.group(1), m.group(2), m.group(3)
        if not cell:
            section = key if key.endswith("/") else ""
            continue
        value = _num(cell)
        if value is not None:
            rows.append((line, section + key if section and len(indent) > 1 else key, value))
    if open_ and rows:
        yield from _flush(rows)
