"""The evidence guard's per-session block counter: one small JSON file per session, kept where no one else can
reach it. Standard library only.

Where: `$CLAUDE_PLUGIN_DATA/evidence-guard/`, or without it `$TMPDIR/trainwreck-hooks/evidence-guard/` (TEMP, TMP,
then /tmp). A shared temp dir is anyone's to write in, so before a file is touched:
  - each directory the hook owns (trainwreck-hooks/, evidence-guard/) is created 0700, opened with O_NOFOLLOW and
    checked through that descriptor: a directory (not a symlink), owned by this user; group and other bits are
    taken away when they are set. Anything else and the counter is off (the hook still decides, never counts);
  - files are opened relative to that descriptor, never by a path that could be re-pointed: read with O_NOFOLLOW
    (a planted symlink reads as no state), written as a new file (O_CREAT | O_EXCL | O_NOFOLLOW, 0600) that is then
    renamed over the state file, so a symlink planted at the state path is replaced, its target never written.
Where the platform has no O_NOFOLLOW or no dir_fd (Windows), the same steps run by path.
"""
import errno
import json
import os
import stat

MAX_STATE = 4096
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FD = bool(_DIRECTORY) and all(f in getattr(os, "supports_dir_fd", ()) for f in (os.open, os.mkdir, os.rename,
                                                                                   os.unlink))


def _tmp_base():
    return os.environ.get("TMPDIR") or os.environ.get("TEMP") or os.environ.get("TMP") or "/tmp"


def _session_name(payload):
    sid = "".join(c for c in str(payload.get("session_id") or "nosession") if c.isalnum() or c in "-_")[:80]
    return (sid or "nosession") + ".json"


def _private(path, parent_fd=None):
    """Create (0700) or open the directory `path` (a name inside parent_fd when given) and return a descriptor
    for it (or the checked path where dir_fd is unavailable); raises OSError when it is not a private directory."""
    name = os.path.basename(path) if parent_fd is not None else path
    try:
        os.mkdir(name, 0o700, dir_fd=parent_fd) if parent_fd is not None else os.mkdir(name, 0o700)
    except FileExistsError:
        pass
    if not _DIR_FD:
        st = os.lstat(path)
        _check_dir(st)
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(path, 0o700)
        return path
    fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=parent_fd)
    try:
        st = os.fstat(fd)
        _check_dir(st)
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, 0o700)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_dir(st):
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(errno.ENOTDIR, "not a directory")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise OSError(errno.EPERM, "not owned by this user")


class Store:
    """The counter file of one session. Every method fails soft: unreadable state reads as {}, and a write or a
    removal that cannot be done is skipped (the counter is best effort; stop_hook_active is the first guard)."""

    def __init__(self, payload):
        self.name = _session_name(payload)
        self.dir = None  # a descriptor (or, without dir_fd, a checked path) of evidence-guard/
        self.error = None
        try:
            self.dir = self._open_dir()
        except OSError as exc:
            self.error = exc

    def _open_dir(self):
        data = os.environ.get("CLAUDE_PLUGIN_DATA") or ""
        if data:  # the plugin's own data dir, given by Claude Code: created if missing, not re-checked
            os.makedirs(data, 0o700, exist_ok=True)
            base = data
            base_fd = os.open(base, os.O_RDONLY | _DIRECTORY) if _DIR_FD else None
        else:
            tmp = _tmp_base()
            os.makedirs(tmp, exist_ok=True)
            base = os.path.join(tmp, "trainwreck-hooks")
            tmp_fd = os.open(tmp, os.O_RDONLY | _DIRECTORY) if _DIR_FD else None
            try:
                base_fd = _private(base, tmp_fd)
            finally:
                if tmp_fd is not None:
                    os.close(tmp_fd)
        try:
            return _private(os.path.join(base, "evidence-guard"), base_fd if _DIR_FD else None)
        finally:
            if _DIR_FD and base_fd is not None:
                os.close(base_fd)

    def close(self):
        if _DIR_FD and isinstance(self.dir, int):
            os.close(self.dir)
        self.dir = None

    def _path(self, name):
        return name if _DIR_FD else os.path.join(self.dir, name)

    def _kw(self):
        return {"dir_fd": self.dir} if _DIR_FD else {}

    def read(self):
        if self.dir is None:
            return {}
        try:
            fd = os.open(self._path(self.name), os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), **self._kw())
        except OSError:
            return {}
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return {}
            st = json.loads(os.read(fd, MAX_STATE).decode("utf-8", "replace"))
            return st if isinstance(st, dict) else {}
        except (OSError, ValueError, RecursionError):
            return {}
        finally:
            os.close(fd)

    def write(self, obj):
        if self.dir is None:
            return False
        tmp = ".%s.%d.%s.tmp" % (self.name, os.getpid(), os.urandom(4).hex())
        try:
            fd = os.open(self._path(tmp), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, **self._kw())
        except OSError:
            return False
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(obj, f)
            if _DIR_FD:
                os.replace(tmp, self.name, src_dir_fd=self.dir, dst_dir_fd=self.dir)
            else:
                os.replace(self._path(tmp), self._path(self.name))
            return True
        except OSError:
            try:
                os.unlink(self._path(tmp), **self._kw())
            except OSError:
                pass
            return False
