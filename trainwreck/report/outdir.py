"""A folder that --out is written into, held open while the snapshot is written.

Checking a path and then writing by that path leaves a window: a component swapped for a link into the run between
the check and the write redirects the write. So the folders of --out are opened once, checked by their descriptors
(report/outpath.py: fd_refusal), and every folder made, file created and entry renamed is relative to a descriptor
(mkdir/open/rename with dir_fd=...), the last component never followed (O_NOFOLLOW): what was checked is what is
written into. Where the platform lacks those calls (os.supports_dir_fd), the same operations go by path, as before.
"""
from __future__ import annotations

import os
import secrets
import shutil
import stat
from typing import Optional, Tuple

AT = (all(f in os.supports_dir_fd for f in (os.open, os.mkdir, os.rename, os.stat, os.unlink, os.rmdir))
      and os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY") and hasattr(os, "O_NOFOLLOW"))

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR = getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0) | _NOFOLLOW
_HELD = _DIR | getattr(os, "O_PATH", os.O_RDONLY)  # written into, never listed: no read permission needed
_LISTED = _DIR | os.O_RDONLY
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class Folder:
    """A folder by descriptor (`fd`; None where the platform has no *at calls: then by `path`). `path` is where it
    was opened, for messages and the fallback; the descriptor, not the path, is what is written into."""

    def __init__(self, path: str, fd: Optional[int] = None, listed: bool = False):
        self.path, self.fd, self.listed = path, fd, listed

    @classmethod
    def open(cls, path: str) -> "Folder":
        """The folder at `path`, links in the path followed (the user's own, e.g. ~/data -> /mnt/data): check the
        folder opened with outpath.fd_refusal before writing into it."""
        if not AT:
            return cls(path)
        return cls(path, os.open(path, _HELD & ~_NOFOLLOW))

    def _at(self, name: str) -> Tuple[str, Optional[int]]:
        return (name, self.fd) if self.fd is not None else (os.path.join(self.path, name), None)

    def sub(self, name: str, listed: bool = False) -> "Folder":
        """The folder `name` in this one, never through a link."""
        path = os.path.join(self.path, name)
        if self.fd is None:
            if os.path.islink(path) or not os.path.isdir(path):
                raise NotADirectoryError(20, "Not a directory (or a link)", path)
            return Folder(path)
        return Folder(path, os.open(name, _LISTED if listed else _HELD, dir_fd=self.fd), listed)

    def mkdir(self, name: str, mode: int = 0o777) -> None:
        at, fd = self._at(name)
        os.mkdir(at, mode, dir_fd=fd)

    def mktemp(self, prefix: str, suffix: str) -> Tuple[str, "Folder"]:
        """A new folder of a random name, 0700, as tempfile.mkdtemp makes one; opened to be listed."""
        for _ in range(100):
            name = f"{prefix}{secrets.token_hex(4)}{suffix}"
            try:
                self.mkdir(name, 0o700)
            except FileExistsError:
                continue
            try:
                return name, self.sub(name, listed=True)
            except OSError:  # made but not opened (swapped since?): not left behind
                self.remove_tree(name)
                raise
        raise FileExistsError(17, "no free name for a temporary folder", self.path)

    def lstat(self, name: str) -> Optional[os.stat_result]:
        at, fd = self._at(name)
        try:
            return os.stat(at, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def ident(self) -> Tuple[int, int]:
        st = os.fstat(self.fd) if self.fd is not None else os.stat(self.path)
        return st.st_dev, st.st_ino

    def names(self) -> list:
        if self.fd is None:
            return sorted(os.listdir(self.path))
        with os.scandir(self.fd) as it:
            return sorted(e.name for e in it)

    def create(self, name: str, data: bytes) -> None:
        """A new file (never an existing one, never through a link); a failed write leaves no partial file."""
        at, fd = self._at(name)
        f = os.open(at, _NEW, 0o666, dir_fd=fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(f, view):]
        except BaseException:
            os.close(f)
            os.unlink(at, dir_fd=fd)
            raise
        os.close(f)

    def rename(self, name: str, dst: "Folder", dst_name: str) -> None:
        """Move the entry `name` (a link is moved itself, never followed) to `dst_name` in `dst`."""
        src_at, src_fd = self._at(name)
        dst_at, dst_fd = dst._at(dst_name)
        os.rename(src_at, dst_at, src_dir_fd=src_fd, dst_dir_fd=dst_fd)

    def chmod(self, mode: int) -> None:
        if self.fd is not None and self.listed:
            os.fchmod(self.fd, mode)
        else:
            os.chmod(self.path, mode)

    def remove_tree(self, name: str, keep: frozenset = frozenset()) -> None:
        """Remove the folder `name` and everything in it, links removed, never followed; a folder whose (device,
        inode) is in `keep` (the run and the folders above it) is never removed. Errors are ignored."""
        if self.fd is None:
            shutil.rmtree(os.path.join(self.path, name), ignore_errors=True)
            return
        try:
            sub = self.sub(name, listed=True)
        except OSError:
            return
        try:
            if sub.ident() in keep:
                return
            for entry in sub.names():
                st = sub.lstat(entry)
                if st is not None and stat.S_ISDIR(st.st_mode):
                    sub.remove_tree(entry, keep)
                else:
                    try:
                        os.unlink(entry, dir_fd=sub.fd)
                    except OSError:
                        pass
        finally:
            sub.close()
        try:
            os.rmdir(name, dir_fd=self.fd)
        except OSError:
            pass

    def close(self) -> None:
        if self.fd is not None and self.fd >= 0:
            os.close(self.fd)
            self.fd = -1  # a use after the close fails loudly (EBADF) instead of touching whatever gets the number


def open_made(path: str, check) -> Folder:
    """The folder at `path`, held open, its missing folders made as os.makedirs would (0777 less the umask): the
    deepest existing one is opened and passed to `check` (which raises to refuse it) before anything is made in it,
    and each missing one is made and opened relative to the one above it, never through a link."""
    missing = []
    while not os.path.isdir(path):
        head, tail = os.path.split(path)
        if head == path or not tail:
            break
        missing.append(tail)
        path = head
    folder = Folder.open(path)
    try:
        check(folder)
        for name in reversed(missing):
            try:
                folder.mkdir(name)
            except FileExistsError:
                pass
            nxt = folder.sub(name)
            folder.close()
            folder = nxt
        check(folder)
    except BaseException:
        folder.close()
        raise
    return folder
