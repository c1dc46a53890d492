"""The worst hostile single-line input (issue 10): each crafted line or file is put in a small run next to a plain
log, and `diagnose` on it is timed against the same run with a plain file in its place. Target: every hostile run
under 2 s (the ratio says how much of that the crafted input costs)."""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import row, timed, trainwreck  # noqa: E402

LOG = "".join(f"step {i} loss={2.3 - i * 1e-3:.4f} lr=3e-4\n" for i in range(200))


def _inputs():
    """(name, file name, hostile bytes or a writer, plain bytes): the shapes the outside probe of issue 10 used."""
    line = 4000
    yield ("4 KB line on the .so pattern", "train.log",
           (("lib.so" * line)[:line] + ": cannot open shared object file: No such file\n").encode(),
           b"ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n")
    yield ("2,000-digit metric line", "train.log", ("loss=" + "1" * 2000 + "x\n").encode() * 50, b"loss=2.31\n" * 50)
    yield ("64 KB line (URL, e-mail shapes)", "train.log",
           (("http://" + "a" * 30000 + ":" + "b" * 30000 + " x@" + "a." * 2000)[:65000] + "\n").encode(),
           b"see http://example.org/docs for help\n")
    yield ("YAML line of 100k spaces", "config.yaml", b"lr: 0.1\nname: a" + b" " * 100000 + b"b\n",
           b"lr: 0.1\nname: ab\n")
    yield ("CSV with 100,000 columns", "metrics.csv",
           (",".join(["step"] + [f"m{i}" for i in range(100000)]) + "\n"
            + "".join(",".join([str(s)] + ["0.5"] * 100000) + "\n" for s in range(3))).encode(),
           b"step,loss\n0,2.3\n1,2.2\n2,2.1\n")
    rnd = __import__("random").Random(3)
    long_lines = "".join(f"step {i} loss 0.{i} " + "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in
                         range(3960)) + "(=1\n" for i in range(500))  # 2 MB of lines a call-like tail ends
    yield ("2 MB of 4,000-char lines ending in a call", "train.log", long_lines.encode(),
           "".join(f"step {i} loss 0.{i}\n" for i in range(500)).encode())
    yield ("8 GB sparse metrics.jsonl", "metrics.jsonl", "sparse",
           "".join(json.dumps({"step": i, "loss": 2.0}) + "\n" for i in range(50)).encode())


def _write(path: str, data) -> None:
    if data == "sparse":
        with open(path, "w") as f:
            f.write("".join(json.dumps({"step": i, "loss": 2.0}) + "\n" for i in range(50)))
        os.truncate(path, 8 << 30)
        with open(path, "a") as f:
            f.write("\n" + json.dumps({"step": 999, "loss": 1.5}) + "\n")
        return
    with open(path, "wb") as f:
        f.write(data)


def main() -> list:
    root = tempfile.mkdtemp(prefix="tw-bench-hostile-")
    rows, worst = [], (0.0, "", 0.0, 0.0)
    try:
        for i, (name, fname, bad, plain) in enumerate(_inputs()):
            times = []
            for kind, data in (("plain", plain), ("hostile", bad)):
                run = os.path.join(root, f"{i}-{kind}")
                os.makedirs(run)
                with open(os.path.join(run, "train.log" if fname != "train.log" else "run.log"), "w") as f:
                    f.write(LOG)
                _write(os.path.join(run, fname), data)
                t, _rss, _out = timed(trainwreck("diagnose", run, "--json", "--no-probe"), n=1)
                times.append(t)
                shutil.rmtree(run, ignore_errors=True)
            ratio = times[1] / times[0]
            if times[1] > worst[2]:
                worst = (ratio, name, times[1], times[0])
            rows.append(f"<!-- {name}: {times[1]:.2f} s vs {times[0]:.2f} s plain -->")
        rows.append(row("worst hostile single-line input vs the same run on a plain input", worst[0], "< 2 s",
                        f"{worst[1]}: {worst[2]:.2f} s vs {worst[3]:.2f} s"))
        return rows
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    print("\n".join(main()))
