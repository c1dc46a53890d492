"""Checkpoints: listed with size, mtime and step; integrity checked from the container format alone.

Never unpickled and never loaded: a torch zip checkpoint must start with a local-file header and end with an
end-of-central-directory record; a safetensors file must hold its declared header and data.
"""
from __future__ import annotations

import json
import re
import struct
from typing import Tuple

from trainwreck import lazy_re

ORDER = 60
SUFFIXES = (".pt", ".pth", ".ckpt", ".safetensors", ".bin", ".distcp", ".pkl", ".npz", ".msgpack")
_STEP = lazy_re(r"(?:step|iter|checkpoint|ckpt|global_step|epoch)[=_\-]?(\d+)", re.I)


def claims(rel: str, name: str) -> bool:
    return name.endswith(SUFFIXES) and not name.startswith("events.")


def _step(rel: str):
    found = _STEP.findall(rel)
    return int(found[-1]) if found else None


def _data_end(meta) -> Tuple[int, str]:
    """(where the tensor data ends, "") from a safetensors header, or (0, what is wrong with it). The format
    (huggingface/safetensors, docs "format"): a JSON object of tensor name -> {"dtype", "shape", "data_offsets":
    [begin, end]} plus an optional "__metadata__" object of strings."""
    if not isinstance(meta, dict):
        return 0, f"is a JSON {_json_type(meta)}, not an object"
    end = 0
    for k, v in meta.items():
        if k == "__metadata__":
            continue
        shown = repr(k[:40])
        if not isinstance(v, dict):
            return 0, f"describes tensor {shown} with a {_json_type(v)}, not an object"
        offs = v.get("data_offsets")
        if not (isinstance(offs, list) and len(offs) == 2
                and all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offs) and offs[0] <= offs[1]):
            return 0, f"gives tensor {shown} data_offsets that are not a [begin, end] pair of byte offsets"
        end = max(end, offs[1])
    return end, ""


def _json_type(v) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "number")


def check(f, name: str):
    """(ok, problem): ok is None when the format cannot be checked without loading it. `f`: a BoundedFile."""
    size = f.size
    if size == 0:
        return False, "empty file (0 bytes)"
    head = f.raw(0, 16)
    if name.endswith(".safetensors"):
        if len(head) < 8:
            return False, "shorter than the safetensors header length field"
        (n,) = struct.unpack("<Q", head[:8])
        if n > 100 << 20 or 8 + n > size:
            return False, f"header claims {n} bytes but the file has {size}: truncated or not safetensors"
        try:
            meta = json.loads(f.raw(8, n))
        except (ValueError, RecursionError):
            return False, "header is not valid JSON: truncated or corrupt"
        end, problem = _data_end(meta)
        if problem:
            return False, f"header {problem}: corrupt, or not a safetensors file"
        if end > size:
            return False, f"tensors need {8 + n + end if end < 1 << 63 else 'more'} bytes, file has {size}: truncated"
        if 8 + n + end != size:
            return False, f"tensors need {8 + n + end} bytes, file has {size}: truncated"
        return True, ""
    if head[:4] == b"PK\x03\x04":
        tail = f.raw(max(0, size - 65536 - 22), min(size, 65536 + 22))
        if b"PK\x05\x06" not in tail:
            return False, "zip container has no end-of-central-directory record: truncated (save interrupted?)"
        return True, ""
    return None, "legacy or unknown format: not checked (never unpickled)"


def read(bundle, entry, ctx) -> None:
    with ctx.open(entry) as f:
        ok, problem = check(f, entry.rel)
        bundle.checkpoints.append({"path": entry.rel, "size": f.size, "mtime": f.mtime, "step": _step(entry.rel),
                                   "ok": ok, "problem": problem})
        ctx.record(f, "checkpoint")
