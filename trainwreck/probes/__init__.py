"""Live-system probes (skipped with --no-probe): GPU state through NVML, free disk and /dev/shm, and a live
process that holds the run's files open (probes/live.py: the only evidence that a run is still running).

Each probe has its own time limit and reports cleanly when its capability is missing (no GPU, no driver,
nvidia-ml-py not installed): the diagnosis never fails because a probe could not run.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Dict, List

from trainwreck.collect.bundle import Bundle
from trainwreck.model import DIRECT, Finding, Source
from trainwreck.probes.live import live_writer


def _with_timeout(fn, seconds: float) -> Dict[str, Any]:
    box: Dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except Exception as exc:  # report, never raise
            box["error"] = f"{type(exc).__name__}: {exc}"

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        return {"error": f"timed out after {seconds:.0f} s"}
    return box


def gpu_state() -> Dict[str, Any]:
    """NVML facts per GPU; {'available': False, 'why': …} when there is no NVML, driver or GPU."""
    try:
        import pynvml  # package nvidia-ml-py
    except ImportError:
        return {"available": False, "why": "nvidia-ml-py is not installed (pip install nvidia-ml-py)"}
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        return {"available": False, "why": f"NVML could not start ({type(exc).__name__}: {exc}): no NVIDIA driver or GPU"}
    try:
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            name = pynvml.nvmlDeviceGetName(h)
            g = {"index": i, "name": name.decode() if isinstance(name, bytes) else name,
                 "memory_used_mib": mem.used >> 20, "memory_total_mib": mem.total >> 20}
            try:
                g["utilization_pct"] = pynvml.nvmlDeviceGetUtilizationRates(h).gpu
            except Exception:
                pass
            try:
                g["processes"] = len(pynvml.nvmlDeviceGetComputeRunningProcesses(h))
            except Exception:
                pass
            gpus.append(g)
        return {"available": True, "gpus": gpus}
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def probe_system(bundle: Bundle) -> List[Finding]:
    notes: List[str] = []
    out: List[Finding] = []
    r = _with_timeout(gpu_state, 5.0)
    gpu = r.get("value") or {"available": False, "why": r.get("error", "unknown")}
    if not gpu.get("available"):
        notes.append(f"GPU probe: {gpu.get('why')}")
    for path, label in ((bundle.root, "run directory"), ("/dev/shm", "/dev/shm")):
        try:
            st = os.statvfs(path)
        except OSError:
            continue
        free = st.f_bavail * st.f_frsize
        total = st.f_blocks * st.f_frsize
        if total and free / total < 0.02:
            out.append(Finding(
                id="probe.disk-full", claim=f"{label} filesystem is {100 - 100 * free / total:.1f}% full now "
                f"({free >> 20} MiB free)", label=DIRECT, confidence=0.5, role="factor",
                evidence=[Source(path, None, f"statvfs: {free >> 20} MiB free of {total >> 20} MiB")],
                relevant=["crash", "OOM"], fixes=[f"free space on the {label} filesystem"]))
    bundle.probes = {"gpu": gpu, "notes": notes}
    r = _with_timeout(lambda: live_writer(bundle), 3.0)
    bundle.probes["live"] = r.get("value")  # None: no live process holds the run's files
    return out
