"""diagnose cost vs log size: logs of 10 KB, 1 MB, 100 MB, 1 GB and 4 GB with the same failing tail (a CUDA OOM),
each as a ratio to the 10 KB log's time, and the peak RSS of each (target: time ≤ 1.5× the 10 KB log's, peak RSS
under 100 MB, the same answer at every size).

Each size runs alternately with the 10 KB log (N times each, so a change in machine load hits both) and the
ratio is of the median wall times; the detail also gives the CPU-time ratio, which load disturbs less.

usage: python3 bench/logsize.py [LARGEST_GB]     (sizes above LARGEST_GB are skipped; bench/run --quick: 0.1)
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import row, run_once, trainwreck  # noqa: E402

TAIL = ("Traceback (most recent call last):\n  File \"train.py\", line 120, in <module>\n    loss.backward()\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of "
        "79.10 GiB of which 1.20 GiB is free.\n")
SIZES = [("10 KB", 10 << 10), ("1 MB", 1 << 20), ("100 MB", 100 << 20), ("1 GB", 1 << 30), ("4 GB", 4 << 30)]


def make(root: str, name: str, size: int) -> str:
    """A run directory whose train.log holds `size` bytes of progress lines, then the OOM traceback."""
    body = "".join(f"[rank0] step {i} loss={2.0 + (i % 7) * 0.01:.4f} lr=3e-4 tokens/s=51234\n"
                   for i in range(16000)).encode()
    d = os.path.join(root, name.replace(" ", ""))
    os.makedirs(d)
    with open(os.path.join(d, "train.log"), "wb") as f:
        n = 0
        while n < size:
            chunk = body[:size - n]
            chunk = chunk[:chunk.rfind(b"\n") + 1] or chunk
            f.write(chunk)
            n += len(chunk)
        f.write(TAIL.encode())
    return d


def _median(xs):
    return statistics.median(xs)


def main(largest_gb: float = 4.0, n: int = 7) -> list:
    root = tempfile.mkdtemp(prefix="tw-bench-log-")
    rows = []
    try:
        small = make(root, SIZES[0][0], SIZES[0][1])
        small_argv = trainwreck("diagnose", small, "--json", "--no-probe")
        run_once(small_argv)  # warm-up: bytecode caches, page cache
        for label, size in SIZES:
            if size > largest_gb * (1 << 30) * 1.001:
                break
            d = small if size == SIZES[0][1] else make(root, label, size)
            argv = trainwreck("diagnose", d, "--json", "--no-probe")
            base, this = [], []
            for _ in range(n):
                base.append(run_once(small_argv))
                this.append(run_once(argv))
            if d != small:
                shutil.rmtree(d, ignore_errors=True)  # keep at most one big log on disk
            bw, bc = _median(r[0] for r in base), _median(r[1] for r in base)
            tw, tc = _median(r[0] for r in this), _median(r[1] for r in this)
            rss = max(r[2] for r in this)
            cls = json.loads(this[-1][3])["classification"]
            rows.append(row(f"diagnose, {label} log vs 10 KB log (time)", tw / bw, "≤ 1.5",
                            f"median {tw:.2f} s vs {bw:.2f} s wall; CPU {tc / bc:.2f}×; peak RSS {rss:.0f} MB "
                            f"(target < 100); answer {cls}"))
        return rows
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    print("\n".join(main(float(sys.argv[1]) if len(sys.argv) > 1 else 4.0)))
