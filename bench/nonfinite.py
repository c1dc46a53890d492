"""First non-finite step in a 1 GB metrics.jsonl vs `grep -c -i nan` on the same file."""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, row, timed, trainwreck  # noqa: E402


def main(gb: float = 1.0) -> list:
    root = tempfile.mkdtemp(prefix="tw-bench-nf-")
    try:
        run = os.path.join(root, "run")
        os.makedirs(run)
        path = os.path.join(run, "metrics.jsonl")
        block = "".join(json.dumps({"step": i, "loss": 2.0 + (i % 13) * 0.01, "grad_norm": 0.9, "lr": 3e-4,
                                    "tokens_per_second": 51234}) + "\n" for i in range(20000)).encode()
        with open(path, "wb") as f:
            n = 0
            while n < gb * (1 << 30):
                f.write(block)
                n += len(block)
            f.write(b'{"step": 999999999, "loss": NaN, "grad_norm": NaN}\n')
        tg, _, _ = timed(["grep", "-c", "-i", "nan", path])
        tt, rss, out = timed(trainwreck("diagnose", run, "--json", "--no-probe"), cwd=ROOT)
        found = json.dumps(json.loads(out)).count("999999999") > 0
        return [row(f"first non-finite in a {gb:g} GB metrics.jsonl vs grep -c -i nan", tt / tg, "≤ 3",
                    f"{tt:.2f} s vs {tg:.2f} s; found the NaN step: {found}; peak RSS {rss:.0f} MB")]
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    print("\n".join(main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)))
