"""The engine's structure stays what DESIGN.md says: folders are the stages, the flow goes one way.

Checked from the source (AST), so it fails the moment someone adds a back-edge, a cycle, an import of a
private name from another module, or lets a module grow past 400 lines.
"""
import ast
import os
from collections import defaultdict

import pytest
from twtest import ROOT

PKG = os.path.join(ROOT, "trainwreck")
MAX_LINES = 400

# The flow: an earlier stage never imports a later one. Shared base modules sit below every stage;
# entry points (pipeline, cli, verbs) sit above them all.
LAYERS = [
    ("base", ["trainwreck.model", "trainwreck"]),
    ("locate", ["trainwreck.locate"]),
    ("collect", ["trainwreck.collect"]),
    ("catalog", ["trainwreck.catalog"]),  # data the detectors match against; built with collect's YAML reader
    ("probes", ["trainwreck.probes"]),
    ("analyze", ["trainwreck.analyze"]),
    ("decide", ["trainwreck.decide"]),
    ("report", ["trainwreck.report"]),
    ("entry", ["trainwreck.pipeline", "trainwreck.cli", "trainwreck.verbs", "trainwreck.__main__"]),
]
STAGE_FOLDERS = ["locate", "collect", "analyze", "decide", "report", "verbs", "catalog", "probes"]


def _modules():
    out = {}
    for d, _dirs, files in os.walk(PKG):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
            name = rel[: -len(".__init__")] if rel.endswith(".__init__") else rel
            out[name] = path
    return out


MODULES = _modules()


def _layer(mod: str) -> int:
    best, best_len = None, -1
    for i, (_name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (mod == p or mod.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    assert best is not None, f"{mod} belongs to no stage in tests/test_structure.py LAYERS"
    return best


def _package_of(mod: str, path: str) -> str:
    return mod if path.endswith("__init__.py") else mod.rsplit(".", 1)[0]


def _imports(mod: str, path: str):
    """(imported module, imported names, line) for every import of a trainwreck module, including ones
    inside functions (a lazy import is still a dependency)."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    pkg = _package_of(mod, path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("trainwreck"):
                    yield a.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("trainwreck"):
                continue
            names = [a.name for a in node.names]
            # `from pkg import submodule` depends on the submodule
            subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
            if subs:
                for s in subs:
                    yield s, [], node.lineno
                rest = [n for n in names if f"{target}.{n}" not in MODULES]
                if rest:
                    yield target, rest, node.lineno
            else:
                yield target, names, node.lineno


GRAPH = {m: list(_imports(m, p)) for m, p in MODULES.items()}


def test_the_stages_are_folders():
    for name in STAGE_FOLDERS:
        assert os.path.isfile(os.path.join(PKG, name, "__init__.py")), f"trainwreck/{name}/ is not a package"
    top = sorted(f for f in os.listdir(PKG) if f.endswith(".py"))
    assert top == ["__init__.py", "__main__.py", "cli.py", "model.py", "pipeline.py"], top


def test_no_back_edges():
    bad = []
    for mod, edges in GRAPH.items():
        for target, _names, line in edges:
            if target == "trainwreck" or target not in MODULES and not any(m.startswith(target + ".") for m in MODULES):
                continue
            if _layer(target) > _layer(mod):
                bad.append(f"{MODULES[mod]}:{line}: {mod} ({LAYERS[_layer(mod)][0]}) imports {target} "
                           f"({LAYERS[_layer(target)][0]}), a later stage")
    assert not bad, "\n".join(bad)


def test_no_import_cycles():
    adj = defaultdict(set)
    for mod, edges in GRAPH.items():
        for target, _names, _line in edges:
            if target in MODULES and target != mod:
                adj[mod].add(target)
    # a package's __init__ importing its own submodules is how packages work; the submodule importing the
    # package back is the cycle we forbid
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(adj[m]):
            if state.get(n) == 1:
                cycles.append(" -> ".join(stack[stack.index(n):] + [n]))
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(MODULES):
        if m not in state:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_private_names_across_modules():
    bad = []
    for mod, edges in GRAPH.items():
        for target, names, line in edges:
            for n in names:
                if n.startswith("_") and not n.startswith("__") and target != mod:
                    bad.append(f"{MODULES[mod]}:{line}: imports private {n} from {target}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("mod", sorted(MODULES), ids=lambda m: m)
def test_module_size(mod):
    n = sum(1 for _ in open(MODULES[mod], encoding="utf-8"))
    assert n <= MAX_LINES, f"{MODULES[mod]} has {n} lines (limit {MAX_LINES}): split it along the flow"


def test_the_checker_sees_a_back_edge(tmp_path):
    """The checker itself can fail: a collect module importing decide is a back-edge."""
    assert _layer("trainwreck.decide") > _layer("trainwreck.collect.safeio")
    assert _layer("trainwreck.report.plot") > _layer("trainwreck.decide.next_steps")
    assert _layer("trainwreck.verbs.curve") > _layer("trainwreck.report")
