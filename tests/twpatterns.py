"""Every regular expression the engine holds, and adversarial lines generated for each one.

`engine_patterns()` finds them without a hand-kept list: the signature catalog (compiled.json), every
`lazy_re` (trainwreck.PATTERNS, filled as the modules are imported), module- and class-level `re.Pattern`
objects (also inside tuples, lists and dicts), and the literal patterns passed to `re.search(...)` & co. inside
functions (read from the source with `ast`, evaluated against the module's globals).

`adversarial(pattern, flags, n)` builds lines of about `n` characters from the pattern's own parts: long runs of
the characters its repeats accept (alone, in pairs, after and between its literals), repeated literals, and
each of those ended by a character that makes the match fail late. A linear pattern takes milliseconds on each;
a nested or overlapping quantifier takes seconds or never ends."""
from __future__ import annotations

import ast
import importlib
import os
import re
import signal
import time
from typing import Iterator, List, Tuple

try:
    from re import _constants as C  # noqa: N812
    from re import _parser as P  # noqa: N812
except ImportError:  # Python < 3.11
    import sre_constants as C  # noqa: N812
    import sre_parse as P  # noqa: N812

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "trainwreck")
_CALLS = {"search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer", "compile"}


def engine_modules() -> List[str]:
    names = []
    for folder, dirs, files in os.walk(PKG):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py") and f != "__main__.py":
                rel = os.path.relpath(os.path.join(folder, f), ROOT)[:-3].replace(os.sep, ".")
                names.append(rel[:-len(".__init__")] if rel.endswith(".__init__") else rel)
    return names


def _walk(obj, depth=0) -> Iterator[Tuple[str, int]]:
    import trainwreck
    if isinstance(obj, trainwreck.LazyPattern):
        yield obj._args[0], obj._args[1]
    elif isinstance(obj, re.Pattern):
        yield obj.pattern, obj.flags & ~re.UNICODE if isinstance(obj.pattern, str) else obj.flags
    elif depth < 4 and isinstance(obj, (tuple, list, set, frozenset)):
        for x in obj:
            yield from _walk(x, depth + 1)
    elif depth < 4 and isinstance(obj, dict):
        for x in list(obj.keys()) + list(obj.values()):
            yield from _walk(x, depth + 1)


def _inline(mod) -> Iterator[Tuple[str, str, int]]:
    """Literal patterns of re.<fn>(...) calls in a module's source, evaluated where they name only globals."""
    path = getattr(mod, "__file__", None)
    if not path:
        return
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CALLS
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args):
            continue
        try:
            pat = eval(compile(ast.Expression(node.args[0]), path, "eval"), vars(mod))  # noqa: S307 - our source
        except Exception:  # names a local: a pattern built at run time (re.escape of a key), not a literal
            continue
        flags = 0
        fl = [k.value for k in node.keywords if k.arg == "flags"]
        if fl:
            try:
                flags = int(eval(compile(ast.Expression(fl[0]), path, "eval"), vars(mod)))  # noqa: S307
            except Exception:
                pass
        if isinstance(pat, (str, bytes)):
            yield f"{mod.__name__}:{node.lineno}.{node.func.attr}", pat, flags  # (how it is called: anchored or not)


def engine_patterns() -> List[Tuple[str, object, int]]:
    """(where, pattern source, flags) for every distinct pattern the engine holds."""
    import trainwreck
    from trainwreck import catalog
    seen, out = set(), []

    def add(where, pat, flags):
        if (pat, flags) not in seen:
            seen.add((pat, flags))
            out.append((where, pat, flags))

    for sig in catalog.load():
        for i, src in enumerate(sig.sources):
            add(f"catalog:{sig.id}[{i}]", src, 0)
    mods = [importlib.import_module(n) for n in engine_modules()]
    for mod in mods:
        for name, val in list(vars(mod).items()):
            if val is trainwreck.PATTERNS:
                continue
            for pat, flags in _walk(val):
                add(f"{mod.__name__}.{name}", pat, flags)
            if isinstance(val, type) and val.__module__ == mod.__name__:
                for attr, v in list(vars(val).items()):
                    for pat, flags in _walk(v):
                        add(f"{mod.__name__}.{name}.{attr}", pat, flags)
        for where, pat, flags in _inline(mod):
            add(where, pat, flags)
    for lp in trainwreck.PATTERNS:  # lazy_re made anywhere else (inside a function at import time)
        add("lazy_re", lp._args[0], lp._args[1])
    return out


# --- adversarial lines ------------------------------------------------------------------------------------------

POOL = "a0 .-_/:=#\t\\\"',()[]@+%eEZx9*|<>;!$~&?^{}\x00é"


def _accepts(items, ch: str, flags: int) -> bool:
    """Whether the parsed subpattern `items` can start with `ch` (roughly: enough to choose pump characters)."""
    if not items:
        return False
    op, av = items[0]
    if op is C.LITERAL:
        return chr(av) == ch or bool(flags & re.I and chr(av).lower() == ch.lower())
    if op is C.NOT_LITERAL:
        return chr(av) != ch
    if op is C.ANY:
        return ch != "\n" or bool(flags & re.S)
    if op is C.IN:
        neg = bool(av) and av[0][0] is C.NEGATE
        hit = False
        for o, a in av:
            if o is C.LITERAL and (chr(a) == ch or (flags & re.I and chr(a).lower() == ch.lower())):
                hit = True
            elif o is C.RANGE and a[0] <= ord(ch) <= a[1]:
                hit = True
            elif o is C.CATEGORY and _category(a, ch):
                hit = True
        return hit != neg
    if op is C.CATEGORY:
        return _category(av, ch)
    if op is C.SUBPATTERN:
        return _accepts(list(av[-1]), ch, flags)
    if op is C.BRANCH:
        return any(_accepts(list(b), ch, flags) for b in av[1])
    if op in (C.MAX_REPEAT, C.MIN_REPEAT) or op is getattr(C, "POSSESSIVE_REPEAT", None):
        return _accepts(list(av[2]), ch, flags) or (av[0] == 0 and _accepts(items[1:], ch, flags))
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT, C.GROUPREF):
        return _accepts(items[1:], ch, flags)
    return False


_CATS = {C.CATEGORY_DIGIT: str.isdigit, C.CATEGORY_NOT_DIGIT: lambda c: not c.isdigit(),
         C.CATEGORY_SPACE: str.isspace, C.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
         C.CATEGORY_WORD: lambda c: c.isalnum() or c == "_", C.CATEGORY_NOT_WORD: lambda c: not (c.isalnum() or c == "_")}


def _category(cat, ch: str) -> bool:
    f = _CATS.get(cat)
    return bool(f(ch)) if f else False


def _parts(items, flags, lits: list, pumps: list) -> None:
    """Collect the literal runs and the start-character sets of the repeats of a parsed pattern."""
    run = ""
    for op, av in items:
        if op is C.LITERAL:
            run += chr(av)
            continue
        if len(run) >= 1:
            lits.append(run)
        run = ""
        if op in (C.MAX_REPEAT, C.MIN_REPEAT) or op is getattr(C, "POSSESSIVE_REPEAT", None):
            body = list(av[2])
            if av[1] > 1:
                pumps.append(frozenset(c for c in POOL if _accepts(body, c, flags)))
            _parts(body, flags, lits, pumps)
        elif op is C.SUBPATTERN:
            _parts(list(av[-1]), flags, lits, pumps)
        elif op is C.BRANCH:
            for b in av[1]:
                _parts(list(b), flags, lits, pumps)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            _parts(list(av[1]), flags, lits, pumps)
    if run:
        lits.append(run)


def adversarial(pattern, flags: int, n: int, most: int = 48) -> List[str]:
    """At most `most` lines of at most `n` characters built to make `pattern` backtrack, if it can."""
    if isinstance(pattern, bytes):
        return [s.encode("latin-1", "replace") for s in adversarial(pattern.decode("latin-1"), flags, n, most)]
    tree = P.parse(pattern, flags)
    fl = flags | getattr(tree.state, "flags", 0)
    lits: list = []
    pumps: list = []
    _parts(list(tree), fl, lits, pumps)
    lits = sorted(set(lits), key=lambda s: (-len(s), s))[:6]
    chars: List[str] = []
    for ps in pumps:
        for c in POOL:  # a few characters of each repeat
            if c in ps and c not in chars and sum(x in chars for x in ps) < 3:
                chars.append(c)
    chars = chars[:8]
    units = [a + b for a in lits[:4] for b in lits[:4] if a != b]  # `lib` then `.so`: a start per repeat
    units += [c for c in chars]
    units += [lit + c for lit in lits[:4] for c in chars[:4]] + [c + lit for lit in lits[:4] for c in chars[:4]]
    units += [a + b for i, a in enumerate(chars) for b in chars[i + 1:]]
    units += lits
    out: List[str] = []
    seen = set()

    def put(s: str) -> None:
        if s and s not in seen:
            seen.add(s)
            out.append(s)

    for u in units:
        body = u * max(1, n // len(u))
        put(body[:n - 1] + "!")  # pumped, then a character that fails late
        for lit in lits[:2]:
            put((lit + body)[:n])
            put((lit + body)[:n - len(lit)] + lit[:-1])
        if len(out) >= most:
            break
    return out[:most]


class Overrun(Exception):
    pass


def _alarm(signum, frame):
    raise Overrun()


def time_on(rx, lines, limit: float) -> Tuple[float, str]:
    """The longest time `rx.search` takes on one of `lines` (and that line), stopped after `limit` seconds on a line
    (sre checks for signals while it backtracks, so an alarm interrupts even a runaway pattern)."""
    worst, which = 0.0, ""
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for s in lines:
            t = time.perf_counter()
            try:
                signal.setitimer(signal.ITIMER_REAL, limit)
                try:
                    for _m in rx.finditer(s):
                        pass
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except Overrun:  # the one-shot alarm went off (possibly just after the search ended)
                pass
            dt = time.perf_counter() - t
            if dt > worst:
                worst, which = dt, s
            if dt >= limit:
                break
    finally:
        signal.signal(signal.SIGALRM, old)
    return worst, which


_SEARCHING = {"search", "sub", "subn", "split", "findall", "finditer"}


def anchored_names() -> set:
    """Names of module-level patterns that the engine only ever calls `.match` / `.fullmatch` on (anchored at the
    position it gives: linear scans ahead of it are fine there). A name searched anywhere is not in it."""
    uses: dict = {}
    for name in engine_modules():
        path = os.path.join(ROOT, *name.split(".")) + ".py"
        if not os.path.exists(path):
            path = os.path.join(ROOT, *name.split("."), "__init__.py")
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in (
                    _SEARCHING | {"match", "fullmatch"}):
                uses.setdefault(node.value.id, set()).add(node.attr)
            elif isinstance(node, ast.Name) and not isinstance(getattr(node, "ctx", None), ast.Store):
                uses.setdefault(node.id, set())
    return {n for n, u in uses.items() if u and not (u & _SEARCHING)} | {"match", "fullmatch"}
