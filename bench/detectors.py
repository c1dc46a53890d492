"""Trajectory detectors vs the number of points: time per point at 10^3 … 10^7 points, in memory.

Each size N builds N points in memory, shared by seven synthetic series (a loss that falls, spikes and goes NaN near the end, a grad norm
that explodes before it, an lr with a warmup over the whole run — the worst case for jump detection — and a
cosine decay, a halving loss scale, a cumulative skipped-iterations counter, throughput) and times
  - `analyze` : trainwreck.analyze.analyze() on a bundle holding them (every detector, as `diagnose` runs them)
  - `series`  : trajectory.analyze_series() on each series at full length (the `curve` verb: no decimation)
Prints, per size, seconds per point; the row's ratio is the largest size's per-point cost over the smallest's
(linear ⇒ ≈ 1, quadratic ⇒ ≈ the size ratio). Times below 20 ms are repeated so the smallest size is not noise.

usage: python3 bench/detectors.py [--max 1e7] [--row]
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, row  # noqa: E402

sys.path.insert(0, ROOT)
from trainwreck.analyze import analyze, trajectory  # noqa: E402
from trainwreck.collect.bundle import Bundle, Series  # noqa: E402
from trainwreck.model import Point, Source  # noqa: E402

NAMES = ("loss", "grad_norm", "lr", "lr_cosine", "loss_scale", "skipped_iterations", "throughput")


def series(total: int, seed: int = 0):
    """name -> list of Points, `total` points in all. One Source per series (memory ~0.2 KB per point)."""
    rnd = random.Random(seed)
    n = total // len(NAMES)
    out = {}
    nan_at = n - max(3, n // 100)
    for name in NAMES:
        src = Source(path="metrics.jsonl", metric=name.replace("_cosine", ""))
        pts = []
        for i in range(n):
            t = i / n
            if name == "loss":
                v = 2.0 + 8.0 * math.exp(-5 * t) + 0.05 * rnd.random()
                if i % 997 == 500:
                    v *= 3.0  # a transient spike
                if i >= nan_at:
                    v = math.nan
            elif name == "grad_norm":
                v = 1.0 + 0.1 * rnd.random()
                if nan_at - 20 <= i < nan_at:
                    v = 1e4 * (i - nan_at + 21)
                if i >= nan_at:
                    v = math.nan
            elif name == "lr":
                v = 3e-4 * (i + 1) / n  # a warmup as long as the run: every point rises
            elif name == "lr_cosine":
                w = max(1, n // 10)
                v = 3e-4 * (i + 1) / w if i < w else 1.5e-4 * (1 + math.cos(math.pi * (i - w) / (n - w)))
            elif name == "loss_scale":
                v = float(2 ** max(0, 16 - max(0, i - (nan_at - 17))))
            elif name == "skipped_iterations":
                v = float(i // 50)
            else:
                v = 5e4 * (1.0 + 0.05 * rnd.random())
            pts.append(Point(i + 1, v, src))
        out[name] = pts
    return out


def bundle(data) -> Bundle:
    b = Bundle("/nonexistent-run", "/nonexistent-run")
    for name, pts in data.items():
        key = "lr" if name == "lr" else name
        if name == "lr_cosine":
            continue
        b.series.setdefault(key, []).append(Series(key, "metrics.jsonl", pts, len(pts)))
    return b


def timed(fn):
    """Seconds per call (repeated until 20 ms have passed; the minimum of the repetitions)."""
    best, spent = math.inf, 0.0
    while True:
        gc.collect()
        t = time.perf_counter()
        fn()
        dt = time.perf_counter() - t
        best, spent = min(best, dt), spent + dt
        if spent >= 0.02:
            return best


def measure(n: int):
    data = series(n)
    b = bundle(data)
    t_an = timed(lambda: analyze(b))
    t_se = timed(lambda: [trajectory.analyze_series(pts, name.replace("_cosine", "")) for name, pts in data.items()])
    return t_an, t_se


def main(argv=None) -> list:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=float, default=1e7)
    ap.add_argument("--row", action="store_true", help="print only the summary rows")
    a = ap.parse_args(argv)
    sizes = [10 ** k for k in range(3, 8) if 10 ** k <= a.max]
    measure(700)  # warm-up: lazy imports, the catalog, regexes compiled on first use
    res = []
    for n in sizes:
        t_an, t_se = measure(n)
        res.append((n, t_an, t_se))
        if not a.row:
            print(f"  {n:>10,} points: analyze {t_an:8.3f} s ({t_an / n * 1e6:7.2f} µs/point)   "
                  f"series {t_se:8.3f} s ({t_se / n * 1e6:7.2f} µs/point)", file=sys.stderr, flush=True)
    (n0, a0, s0), (n1, a1, s1) = res[0], res[-1]
    per = lambda t, n: t / n * 1e6  # noqa: E731
    curve_a = ", ".join(f"{n:.0e}: {per(t, n):.2f}" for n, t, _ in res)
    curve_s = ", ".join(f"{n:.0e}: {per(t, n):.2f}" for n, _, t in res)
    return [row(f"analyze (all detectors), µs/point at {n1:.0e} vs {n0:.0e} points", per(a1, n1) / per(a0, n0),
                "≈ 1 (linear)", f"µs/point {curve_a}"),
            row(f"trajectory.analyze_series (curve), µs/point at {n1:.0e} vs {n0:.0e} points",
                per(s1, n1) / per(s0, n0), "≈ 1 (linear)", f"µs/point {curve_s}")]


if __name__ == "__main__":
    print("\n".join(main()))
