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

from trainwreck import path_inside

# what write_snapshot writes, relative to --out (folders first)
FOLDERS = ("", "meta", "artifacts")
FILES = ("report.json", "report.md", "meta/failure-profile.json", "meta/root-causes.json",
         "artifacts/failure.lock.json", "artifacts/curves.png")




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
        inside = path_inside(real, root_real) or (rel in FOLDERS and run_ident is not None
                                              and _same_as_run(real, run_ident))
        if not inside:
            continue
        if not rel:
            return f"--out {out} is inside the run directory; trainwreck never writes there. Choose another folder."
        return (f"--out {out}: {rel} resolves into the run directory ({real}); trainwreck never writes there. "
                "Choose another folder.")
    return None


# -- the same rule for a folder held open (report/outdir.py): checked by its descriptor, not by a path that a swap
# of a component for a link could redirect between the check and the write -------------------------------------

_UP = getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_PATH", os.O_RDONLY)


def kernel_path(fd: int) -> Optional[str]:
    """Where the kernel says the folder open at `fd` is now (Linux, /proc/self/fd); None where it cannot say."""
    try:
        where = os.readlink(f"/proc/self/fd/{fd}")
    except (OSError, ValueError):
        return None
    return where if where.startswith(os.sep) else None


def _chain(fd: int) -> list:
    """(device, inode) of the folder open at `fd` and of every folder above it, walked up by '..' from the
    descriptor itself; as far as it can be walked."""
    idents, cur = [], fd
    try:
        for _ in range(4096):
            st = os.fstat(cur)
            if (st.st_dev, st.st_ino) in idents:  # the root is its own parent
                break
            idents.append((st.st_dev, st.st_ino))
            up = os.open("..", _UP, dir_fd=cur)
            if cur != fd:
                os.close(cur)
            cur = up
    except OSError:
        pass
    finally:
        if cur != fd:
            os.close(cur)
    return idents


def run_chain(run_root: str) -> set:
    """(device, inode) of the run and of every folder above it: a folder with one of them is or holds the run."""
    root_real = os.path.realpath(run_root)
    try:
        fd = os.open(root_real, _UP)
    except OSError:
        ident = _ident(root_real)
        return {ident} if ident else set()
    try:
        return set(_chain(fd))
    finally:
        os.close(fd)


def fd_refusal(fd: int, out: str, run_root: str) -> Optional[str]:
    """refusal() for a folder held open: why --out `out` must not be written into the folder open at `fd`, as one
    line; None when it may. Refused when the kernel's path of it lies in the run, or when it or any folder above it
    (walked by '..') is the run by device and inode, which a bind mount of the run does not hide."""
    root_real = os.path.realpath(run_root)
    where, run_ident = kernel_path(fd), _ident(root_real)
    if (where is not None and path_inside(where, root_real)) or (run_ident is not None and run_ident in _chain(fd)):
        return f"--out {out} is inside the run directory; trainwreck never writes there. Choose another folder."
    return None


def fd_holds_run(fd: int, run_root: str, chain: Optional[set] = None) -> bool:
    """Whether the folder open at `fd` is the run, holds it, or lies in it (by kernel path, or device and inode)."""
    root_real = os.path.realpath(run_root)
    where = kernel_path(fd)
    if where is not None and (path_inside(where, root_real) or path_inside(root_real, where)):
        return True
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino) in (run_chain(run_root) if chain is None else chain) or \
        fd_refusal(fd, "", run_root) is not None
