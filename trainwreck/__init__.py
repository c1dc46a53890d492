"""trainwreck: evidence-first diagnosis of failed and stalled ML training runs.

The package also holds two start-up helpers every stage shares (a diagnosis is a short-lived process, so all
that runs at import is paid on every call):
- `lazy_re(pattern, flags)`: a module-level regular expression compiled on first use, not at import. Compiling
  every pattern took 25-50 ms of each call, and a run needs only some of them.
- `@record`: what trainwreck used `@dataclass` for, without its price (importing dataclasses pulls in inspect,
  ast, dis and tokenize, and generating each class's methods compiles source at import: ~25 ms for 15 classes).
  A record is a plain class with a hand-written `__init__` whose parameters are its fields; the decorator adds
  field-wise `__eq__`, a dataclass-style `__repr__` and `__hash__ = None`. `record_replace` is
  dataclasses.replace.
- `submodules(path)`: the names pkgutil.iter_modules gives for a package, without importing pkgutil (which
  imports inspect when it lists a folder).
"""
from __future__ import annotations

import os
import re
from typing import Any, Iterable, List

__version__ = "0.1.0"


PATTERNS: "List[LazyPattern]" = []  # every lazy_re made, in the order the modules made them


class LazyPattern:
    """re.compile(pattern, flags), compiled when an attribute (`match`, `search`, `sub`, `pattern`, …) is first
    asked for; that attribute is then stored on the object, so later lookups are plain attribute reads. Every one
    made is kept in `PATTERNS`, so the suite can run each against adversarial input (tests/test_time_bound.py)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        PATTERNS.append(self)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_args":
            raise AttributeError(name)
        value = getattr(re.compile(*self._args), name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"lazy_re({self._args[0]!r}, {self._args[1]!r})"


def lazy_re(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)


def _record_eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        names = self.__record_fields__
        return [getattr(self, n) for n in names] == [getattr(other, n) for n in names]
    return NotImplemented


def _record_repr(self: Any) -> str:
    shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__record_fields__)
    return f"{self.__class__.__qualname__}({shown})"


def path_inside(path: str, root: str) -> bool:
    """`path` is `root` or below it (both already resolved: a string test, no file system access)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def record(cls: type) -> type:
    """Class decorator: the fields are the parameters of the class's own `__init__`, in order."""
    code = cls.__dict__["__init__"].__code__
    cls.__record_fields__ = code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]
    cls.__eq__ = _record_eq  # type: ignore[assignment]
    cls.__repr__ = _record_repr  # type: ignore[assignment]
    cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared by value, as a dataclass
    return cls


def record_replace(obj: Any, **changes: Any) -> Any:
    """A copy of the record `obj` with `changes` applied, built through `__init__` (as dataclasses.replace)."""
    kw = {n: getattr(obj, n) for n in obj.__record_fields__}
    kw.update(changes)
    return obj.__class__(**kw)


def submodules(path: Iterable[str]) -> List[str]:
    """The modules and subpackages in a package's folders (its `__path__`), sorted by file name, as
    pkgutil.iter_modules lists source files: the plug-in discovery of readers, detectors and verbs."""
    names: List[str] = []
    for folder in path:
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            continue
        for f in entries:
            if f.endswith(".py") and f != "__init__.py":
                name = f[:-3]
            elif "." not in f and os.path.isfile(os.path.join(folder, f, "__init__.py")):
                name = f
            else:
                continue
            if name.isidentifier() and name not in names:
                names.append(name)
    return names
