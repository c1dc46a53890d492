"""Numbers read from metric files, checked in one place so that every reader agrees on what a malformed number is.

JSON integers have no size limit: `json.loads` turns a 401-digit integer into an int that `float()` refuses
(OverflowError). A step must be a finite count: `"step": Infinity`, NaN or a 400-digit integer is no step.
Each check returns (the number or None, why it was refused or None); the reader turns the why into a note.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

MAX_STEP = 1 << 63  # no trainer counts past an int64; a larger "step" is a corrupt or hostile value


def _shown(v) -> str:
    if isinstance(v, float):
        return "NaN" if v != v else ("-Infinity" if v < 0 else "Infinity") if math.isinf(v) else f"{v:g}"
    digits = len(str(abs(v))) if v.bit_length() < 10_000 else int(v.bit_length() * 0.30103) + 1
    return f"a {digits}-digit integer"


def value(v) -> Tuple[Optional[float], Optional[str]]:
    """A JSON value as a metric value: (float, None); (None, None) when it is not a number; (None, why) for an
    integer too large for a float (it is not infinity: reading it as one would invent a non-finite value)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None, None
    if isinstance(v, float):
        return v, None
    try:
        return float(v), None
    except OverflowError:
        return None, "integer too large"


def text_value(cell: str) -> Tuple[Optional[float], Optional[str]]:
    """A text cell (CSV, a table row, a log's `key=value`) as a metric value. A number that overflows a float
    (`1111…1`, `1e999`) is refused as in JSON: it is too large, not an infinity; `inf` written as such stays one."""
    c = cell.strip()
    try:
        v = float(c)
    except ValueError:
        return None, None
    if math.isinf(v) and "inf" not in c.lower():
        return None, "integer too large" if c.lstrip("+-").isdigit() else "number too large"
    return v, None


def step(v, key: str = "step") -> Tuple[Optional[int], Optional[str]]:
    """A JSON or text value as a step: (int, None); (None, None) when it is not a number; (None, why) for a number
    that is no step (non-finite, or beyond any trainer's counter)."""
    if isinstance(v, str):
        try:
            v = int(v) if v.strip().lstrip("+-").isdigit() and len(v) < 4000 else float(v)
        except ValueError:
            return None, None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None, None
    if isinstance(v, float) and not math.isfinite(v):
        return None, f"{key} is {_shown(v)}, not a step number; read without a step"
    if not -MAX_STEP < v < MAX_STEP:
        return None, f"{key} is {_shown(v)}, out of range; read without a step"
    return int(v), None
