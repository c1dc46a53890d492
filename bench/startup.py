"""A small run's `diagnose` against `python3 -c "import json, re"` (the cost of starting Python at all).

Runs the two alternately (so a change in machine load hits both), 15 times each after one warm-up run that
writes the bytecode caches (PYTHONDONTWRITEBYTECODE is dropped for these runs, as a pip-installed package
has its .pyc files). The ratio is of the median wall times; the detail also gives the CPU-time ratio
(user + sys), which machine load disturbs less.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, env, row, trainwreck  # noqa: E402

RUN = os.path.join(ROOT, "examples", "runs", "nan-fp16")


def _once(argv, env):
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit(f"{' '.join(argv)} failed (status {status})")
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime


def main(n: int = 15) -> list:
    e = env()
    base = [sys.executable, "-c", "import json, re"]
    diag = trainwreck("diagnose", RUN, "--no-probe")
    _once(diag, e)  # warm-up: bytecode caches, page cache
    b, d = [], []
    for _ in range(n):
        b.append(_once(base, e))
        d.append(_once(diag, e))
    bw, bc = statistics.median(t for t, _ in b), statistics.median(c for _, c in b)
    dw, dc = statistics.median(t for t, _ in d), statistics.median(c for _, c in d)
    return [row("diagnose on a small run (examples/runs/nan-fp16) vs python3 -c 'import json, re' (time)", dw / bw,
                "≤ 2", f"median {dw * 1e3:.0f} ms vs {bw * 1e3:.0f} ms wall; CPU {dc * 1e3:.0f} ms vs "
                f"{bc * 1e3:.0f} ms = {dc / bc:.2f}×")]


if __name__ == "__main__":
    print("\n".join(main()))
