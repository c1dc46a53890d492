"""diagnose cost vs log size: logs of 10 KB, 1 MB, 100 MB, 1 GB and 4 GB with the same failing tail (a CUDA OOM),
each as a ratio to the 10 KB log's time, and the peak RSS of each (target: time ≤ 1.5× the 10 KB log's, peak RSS
under 100 MB, the same answer at every size).

usage: python3 bench/logsize.py [LARGEST_GB]     (sizes above LARGEST_GB are skipped; bench/run --quick: 0.1)
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import row, timed, trainwreck  # noqa: E402

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


def main(largest_gb: float = 4.0) -> list:
    root = tempfile.mkdtemp(prefix="tw-bench-log-")
    rows, first = [], None
    try:
        for label, size in SIZES:
            if size > largest_gb * (1 << 30) * 1.001:
                break
            d = make(root, label, size)
            t, rss, out = timed(trainwreck("diagnose", d, "--json", "--no-probe"))
            cls = json.loads(out)["classification"]
            shutil.rmtree(d, ignore_errors=True)  # keep at most one big log on disk
            if first is None:
                first = t
            rows.append(row(f"diagnose, {label} log vs 10 KB log (time)", t / first, "≤ 1.5",
                            f"{t:.2f} s vs {first:.2f} s; peak RSS {rss:.0f} MB (target < 100); answer {cls}"))
        return rows
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    print("\n".join(main(float(sys.argv[1]) if len(sys.argv) > 1 else 4.0)))
