"""diagnose cost vs log size: a 4 GB log against a 1 MB log with the same tail. Also peak RSS of the big case."""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, row, timed, trainwreck  # noqa: E402

TAIL = ("Traceback (most recent call last):\n  File \"train.py\", line 120, in <module>\n    loss.backward()\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of "
        "79.10 GiB of which 1.20 GiB is free.\n")


def make(root: str, name: str, size: int) -> str:
    body = "".join(f"[rank0] step {i} loss={2.0 + (i % 7) * 0.01:.4f} lr=3e-4 tokens/s=51234\n"
                   for i in range(16000)).encode()
    d = os.path.join(root, name)
    os.makedirs(d)
    with open(os.path.join(d, "train.log"), "wb") as f:
        n = 0
        while n < size:
            f.write(body)
            n += len(body)
        f.write(TAIL.encode())
    return d


def main(big_gb: float = 4.0) -> list:
    root = tempfile.mkdtemp(prefix="tw-bench-log-")
    try:
        small = make(root, "small", 1 << 20)
        big = make(root, "big", int(big_gb * (1 << 30)))
        ts, rs, o1 = timed(trainwreck("diagnose", small, "--json", "--no-probe"), cwd=ROOT)
        tb, rb, o2 = timed(trainwreck("diagnose", big, "--json", "--no-probe"), cwd=ROOT)
        tp, rp, _ = timed([sys.executable, "-c", "pass"])
        for o in (o1, o2):
            assert json.loads(o)["classification"] == "OOM"
        return [row(f"diagnose, {big_gb:g} GB log vs 1 MB log (time)", tb / ts, "≤ 1.3",
                    f"{tb:.2f} s vs {ts:.2f} s"),
                row("diagnose peak RSS, 4 GB log (MB)", rb, "≤ 150", f"{rb:.0f} MB (python -c pass: {rp:.0f} MB)")]
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    print("\n".join(main(float(sys.argv[1]) if len(sys.argv) > 1 else 4.0)))
