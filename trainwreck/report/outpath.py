"""Where --out may write: nowhere that resolves into the run directory.

Checking the folder named is not enough: `out/meta -> RUN`, an `out/artifacts` that is the run itself (--out set to
the parent of a run kept in `artifacts/`), a symlinked component of the --out path, or a planted
`out/report.json -> RUN/file` would each put a file into the run. So every path the snapshot writes, and every
folder it writes into, is resolved (realpath, every component, dangling links included) and refused when it lands
inside the run; the folders that exist are also compared by device and inode with the run and its ancestors, which
catches a bind mount of the run that a path comparison cannot see.
"""
from __future__ import annotations

import os
from typing import Optional

# what write_snapshot writes, relative to --out (folders first)
FOLDERS = ("", "meta", "artifacts")
FILES = ("report.json", "report.md", "meta/failure-profile.json", "meta/root-causes.json",
         "artifacts/failure.lock.json", "artifacts/curves.png")


def _inside(path_real: str, root_real: str) -> bool:
    return path_real == root_real or path_real.startswith(root_real.rstrip(os.sep) + os.sep)


def _ident(path: str):
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _same_as_run(folder_real: str, run_ident) -> bool:
    """An existing folder (or one of its ancestors) that is the run, by device and inode."""
    d = folder_real
    while True:
        if os.path.isdir(d) and _ident(d) == run_ident:
            return True
        up = os.path.dirname(d)
        if up == d:
            return False
        d = up


def refusal(out: str, run_root: str) -> Optional[str]:
    """Why --out `out` must not be written for the run at `run_root`, as one line; None when it may."""
    try:
        root_real = os.path.realpath(run_root)
        out_abs = os.path.abspath(out)
    except (OSError, ValueError) as exc:
        return f"--out {out}: cannot resolve ({exc})"
    run_ident = _ident(root_real)
    for rel in FOLDERS + FILES:
        target = os.path.join(out_abs, rel) if rel else out_abs
        try:
            real = os.path.realpath(target)
        except (OSError, ValueError, RuntimeError) as exc:
            return f"--out {out}: cannot resolve {rel or 'it'} ({exc})"
        inside = _inside(real, root_real) or (rel in FOLDERS and run_ident is not None
                                              and _same_as_run(real, run_ident))
        if not inside:
            continue
        if not rel:
            return f"--out {out} is inside the run directory; trainwreck never writes there. Choose another folder."
        return (f"--out {out}: {rel} resolves into the run directory ({real}); trainwreck never writes there. "
                "Choose another folder.")
    return None
