"""The knobs a fix turns, and a fix's alternatives.

A fix text (from the catalog or a detector, never from the logs) may offer alternatives ("use bf16 instead of
fp16, or keep the loss in float32"; "clip gradients (max_norm=1.0); switch fp16 to bf16"). The claim checks drop
an alternative that the run's own evidence contradicts, and decide counts two fixes that turn the same knob once.
"""
from __future__ import annotations

from typing import List, Tuple

from trainwreck import lazy_re

KNOBS = [
    ("clip", lazy_re(r"(?i)clip|max_grad_norm")),
    ("schedule", lazy_re(r"(?i)\bscheduler\b")),
    ("warmup", lazy_re(r"(?i)warm-?up")),
    # advice that changes the precision (a fix that only mentions fp16, "fp16-sensitive ops", does not)
    ("precision", lazy_re(r"(?i)bf16|bfloat16|mixed[ _-]precision|mixed_float16|half[ -]precision|\bautocast\b|"
                          r"\bfloat32\b|\bfp32\b")),
    ("recompute", lazy_re(r"(?i)checkpointing|recompute|\bremat\b|jax\.checkpoint")),
    ("alloc", lazy_re(r"(?i)expandable_segments|_ALLOC_CONF|max_split_size|TF_GPU_ALLOCATOR")),
    ("batch", lazy_re(r"(?i)batch[ _-]?size|micro[ _-]?batch|effective batch")),
    ("shard", lazy_re(r"(?i)\bZeRO\b|\bFSDP\b|\bshard")),
    ("workers", lazy_re(r"(?i)num_workers|\bworkers?\b|prefetch_factor")),
    ("shm", lazy_re(r"(?i)shm-size|--ipc=host|/dev/shm")),
    ("seq", lazy_re(r"(?i)sequence length|seq_len|resolution")),
    ("gpu-sharing", lazy_re(r"(?i)other processes|CUDA_VISIBLE_DEVICES|one process per GPU")),
    ("lr", lazy_re(r"(?i)^(?:lower|reduce|decrease|halve)?\s*(?:the\s+)?(?:peak\s+)?(?:lr|learning[ _]rate)\b|"
                   r"\blr\b.*:|\b(?:lower|reduce|decrease|halve) the (?:peak )?(?:lr|learning[ _]rate)\b")),
]
_SEPARATORS = ("; ", ", or ")
_LIST = (", ",)  # a list inside one alternative ("fewer workers, mmap checkpoints, stream the dataset")


def knobs(text: str) -> List[str]:
    """Every knob the text turns, in KNOBS order; [] when it names none of them."""
    return [k for k, rx in KNOBS if rx.search(text)]


def knob_key(text: str) -> frozenset:
    """What a fix changes: its knobs, or (when it names none) its own words before any parenthesis."""
    ks = knobs(text)
    return frozenset(ks) if ks else frozenset([text.split("(")[0].strip().lower()])


def covered(part: str, seen: set) -> bool:
    """True when an earlier fix already turns every knob this alternative turns, and it says nothing else (every
    item of a comma list names a knob: "fewer workers, mmap checkpoints" still has something new to say; a
    leading phrase such as "on older PyTorch, set …" is not an item of its own)."""
    if not knob_key(part) <= seen:
        return False
    items = [p for _s, p in split(part, _LIST)]
    return len(items) == 1 or all(knobs(p) for p in items[1:])


def alternatives(text: str) -> List[Tuple[str, str]]:
    """The fix split at top-level '; ' and ', or ' (never inside brackets or quotes): [(separator before, part)]."""
    return split(text, _SEPARATORS)


def split(text: str, separators: Tuple[str, ...]) -> List[Tuple[str, str]]:
    if not any(s in text for s in separators):  # no separator anywhere: one part (most fixes; the loop is per char)
        return [("", text.strip())] if text.strip() else []
    parts: List[Tuple[str, str]] = []
    depth, quote, start, sep, i = 0, "", 0, "", 0
    while i < len(text):
        c = text[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"`":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0:
            hit = next((s for s in separators if text.startswith(s, i)), None)
            if hit:
                parts.append((sep, text[start:i]))
                sep, start = hit, i + len(hit)
                i += len(hit)
                continue
        i += 1
    parts.append((sep, text[start:]))
    return [(s, p.strip()) for s, p in parts if p.strip()]


def join(parts: List[Tuple[str, str]]) -> str:
    """The inverse of alternatives(); the first kept part loses its separator."""
    out = ""
    for n, (sep, part) in enumerate(parts):
        out += (sep if n else "") + part
    return out
