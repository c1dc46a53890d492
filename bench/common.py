"""Helpers for the benchmarks: run a command, time it, read its peak RSS. Ratios only, against baselines
measured in the same run on the same machine."""
from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def env() -> dict:
    """The environment the measured commands run in: this checkout importable, bytecode caches written (an
    installed package has its .pyc files; PYTHONDONTWRITEBYTECODE would make every run compile the sources)."""
    e = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    e["PYTHONPATH"] = ROOT + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def timed(argv, n=3, **kw):
    """Median wall seconds and max peak RSS (MB) of `argv` over n runs."""
    ts, rss = [], 0.0
    kw.setdefault("cwd", ROOT)
    kw.setdefault("env", env())
    for _ in range(n):
        t = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, **kw)
        out = p.stdout.read()
        _, _status, ru = os.wait4(p.pid, 0)
        ts.append(time.perf_counter() - t)
        rss = max(rss, ru.ru_maxrss / 1024)
    return statistics.median(ts), rss, out


def run_once(argv, **kw):
    """(wall seconds, CPU seconds (user + sys), peak RSS in MB, stdout) of one run of `argv`."""
    kw.setdefault("cwd", ROOT)
    kw.setdefault("env", env())
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, **kw)
    out = p.stdout.read()
    _, _status, ru = os.wait4(p.pid, 0)
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, out


def trainwreck(*args):
    return [sys.executable, "-m", "trainwreck", *args]


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def row(name: str, ratio: float, want: str, detail: str) -> str:
    return f"| {name} | {ratio:.2f} | {want} | {detail} |"
