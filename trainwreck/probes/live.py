"""Is the run still going? A live process that holds one of the run's files open for writing, and how long ago
the newest file it writes was modified.

Only this probe may say that a run is `running`: the files alone cannot tell a live run from one that stopped a
minute ago. Linux /proc only; bounded in processes and time; reads nothing but /proc links and stat; never
signals a process. The command line it reports is redacted like every other text."""
from __future__ import annotations

import os
import time
from typing import Any, Dict, Optional

from trainwreck.collect.bundle import Bundle
from trainwreck.collect.redact import redact

MAX_PROCS = 5000  # /proc entries looked at
MAX_FDS = 512  # open files looked at per process
BUDGET_S = 1.5  # wall-clock bound on the whole scan
STUCK_AFTER_S = 600  # a live writer silent this long is alive but not progressing


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(4096)
    except OSError:
        return ""
    text = raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()
    return redact(text[:300])


def _writes(pid: str, fd: str) -> bool:
    """The descriptor was opened for writing (O_WRONLY / O_RDWR): `tail -f train.log` or an editor reading the
    log is no sign that the run is alive."""
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}", "r") as f:
            for ln in f:
                if ln.startswith("flags:"):
                    return bool(int(ln.split()[1], 8) & 0o3)
    except (OSError, ValueError, IndexError):
        return False
    return False


def live_writer(bundle: Bundle, now: Optional[float] = None) -> Optional[Dict[str, Any]]:
    """{"pid", "cmd", "path" (relative to the run), "age_s", "progressing"} for the process that holds the run's
    most recently modified file open for writing; None when no process does (or /proc is not there)."""
    root = os.path.realpath(bundle.root)
    if not os.path.isdir("/proc") or not os.path.isdir(root):
        return None
    me = str(os.getpid())
    t0 = time.monotonic()
    best: Optional[Dict[str, Any]] = None
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit() and p != me][:MAX_PROCS]
    except OSError:
        return None
    for pid in pids:
        if time.monotonic() - t0 > BUDGET_S:
            break
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)[:MAX_FDS]
        except OSError:  # not ours to look at, or gone
            continue
        for fd in fds:
            try:
                target = os.readlink(f"{fd_dir}/{fd}")
            except OSError:
                continue
            if not target.startswith(root + os.sep) or not _writes(pid, fd):
                continue
            try:
                st = os.stat(target)
            except OSError:
                continue
            if best is None or st.st_mtime > best["mtime"]:
                best = {"pid": int(pid), "path": os.path.relpath(target, root), "mtime": st.st_mtime}
    if best is None:
        return None
    age = max(0.0, (time.time() if now is None else now) - best.pop("mtime"))
    best.update(cmd=_cmdline(str(best["pid"])), age_s=round(age, 1), progressing=age < STUCK_AFTER_S)
    return best
