"""The signature catalog is data: every file validates, every example is a fixture for its own entry."""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from twtest import ROOT

from trainwreck import catalog
from trainwreck.catalog import build
from trainwreck.collect import yamlish

SCHEMA_PATH = os.path.join(os.path.dirname(catalog.__file__), os.pardir, "schemas", "signature.schema.json")
FILES = catalog.catalog_files()
FAMILIES = {"memory", "numerics", "distributed", "data", "checkpoint", "environment", "compiler", "cuda",
            "ascend", "config", "system"}


def _ids(files):
    return [os.path.basename(f) for f in files]


def test_every_family_has_a_file():
    present = {os.path.splitext(os.path.basename(f))[0] for f in FILES}
    assert FAMILIES <= present


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_file_validates_against_schema(path):
    jsonschema = pytest.importorskip("jsonschema")
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft7Validator.check_schema(schema)
    data = build.read_file(path)
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(data), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_the_stdlib_yaml_reader_equals_pyyaml(path):
    yaml = pytest.importorskip("yaml")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    assert yamlish.loads(text) == yaml.safe_load(text)


def test_yaml_subset():
    text = (
        "# comment\n"
        "- id: a-b\n"
        "  weight: 0.5\n"
        "  min_count: 3\n"
        "  flag: true\n"
        "  none: null\n"
        "  quoted: 'it''s # not a comment'\n"
        "  dq: \"tab\\there \\\"q\\\"\"\n"
        "  plain: https://example.org/x#frag  # trailing comment\n"
        "  flow: [a, 'b c', \"d\"]\n"
        "  map: {skill: debug, command: \"python x.py  # smoke\"}\n"
        "  nested:\n"
        "    - line: 'x'\n"
        "      source: https://example.org\n"
        "  list:\n"
        "  - one\n"
        "  - two\n"
    )
    expected = [{
        "id": "a-b", "weight": 0.5, "min_count": 3, "flag": True, "none": None,
        "quoted": "it's # not a comment", "dq": 'tab\there "q"', "plain": "https://example.org/x#frag",
        "flow": ["a", "b c", "d"], "map": {"skill": "debug", "command": "python x.py  # smoke"},
        "nested": [{"line": "x", "source": "https://example.org"}], "list": ["one", "two"],
    }]
    assert yamlish.loads(text) == expected
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(text) == expected


@pytest.mark.parametrize("bad", [
    "- a: |\n    block\n",
    "- a: &anchor x\n",
    "- a: yes\n",
    "- a: 'unterminated\n",
    "- a: b: c\n",
    "- a: 1\n  a: 2\n",
    "- a: 1\n\t  b: 2\n",
    "- a: 1\n---\n- b: 2\n",
    "- a: [1, 2\n",
])
def test_yaml_reader_refuses_what_it_does_not_support(bad):
    with pytest.raises(yamlish.YAMLError):
        yamlish.loads(bad)


def test_compiled_catalog_equals_the_yaml_sources():
    why = build.stale()
    assert why is None, why


def test_an_edited_source_without_a_rebuild_fails_and_says_how_to_rebuild(tmp_path):
    files = []
    for path in FILES:
        files.append(str(tmp_path / os.path.basename(path)))
        shutil.copy(path, files[-1])
    with open(files[0], encoding="utf-8") as fh:
        text = fh.read()
    with open(files[0], "w", encoding="utf-8") as fh:
        fh.write(text.replace("weight: 0.", "weight: 0.0", 1))
    why = build.stale(files=files)
    family = os.path.splitext(os.path.basename(files[0]))[0]
    assert why and "python -m trainwreck.catalog.build" in why and family in why


def test_loading_the_catalog_parses_no_yaml():
    code = ("import sys; from trainwreck import catalog; n = len(catalog.load()); catalog.prefilter(); "
            "print(n, 'trainwreck.collect.yamlish' in sys.modules, 'yaml' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": ROOT}, check=True).stdout.split()
    assert out == [str(len(catalog.load())), "False", "False"]


def test_the_loaded_signatures_are_the_sources_entries():
    by_family = {os.path.splitext(os.path.basename(f))[0]: build.read_file(f) for f in FILES}
    want = [(fam, e["id"], e["patterns"], [n.lower() for n in e["needles"]], float(e["weight"]))
            for fam, entries in by_family.items() for e in entries]
    got = [(s.family, s.id, s.sources, list(s.needles), s.weight) for s in catalog.load()]
    assert got == want


def test_nothing_in_the_engine_is_evaled():
    """The README promises nothing is eval'ed: no eval/exec/compile() call anywhere in the engine."""
    found = []
    for d, _dirs, names in os.walk(os.path.join(ROOT, "trainwreck")):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(d, name)
                for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
                    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                            and node.func.id in ("eval", "exec", "compile")):
                        found.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}: {node.func.id}()")
    assert not found, found


def test_ids_unique_and_catalog_size():
    sigs = catalog.load()
    ids = [s.id for s in sigs]
    assert len(ids) == len(set(ids))
    assert len(sigs) >= 80


SIGS = catalog.load()
EXAMPLES = [(s, e) for s in SIGS for e in s.examples]


@pytest.mark.parametrize("sig,example", EXAMPLES, ids=[f"{s.id}-{i}" for i, (s, _) in enumerate(EXAMPLES)])
def test_example_matches_its_entry_and_passes_prefilter(sig, example):
    assert sig.match(example.line), f"{sig.id}: its example does not match its patterns"
    assert any(n in example.line.lower() for n in sig.needles), f"{sig.id}: no needle in its example"
    pf = catalog.prefilter()
    assert pf(example.line)
    assert sig in pf.candidates(example.line)
    assert example.source.startswith("https://")


def test_examples_are_not_claimed_by_a_stronger_entry_of_another_class():
    """An example of entry A matched by entry B (other classification, higher weight) must be declared."""
    problems = []
    for sig, example in EXAMPLES:
        for other in SIGS:
            if other is sig or other.classification == sig.classification or other.weight <= sig.weight:
                continue
            if other.match(example.line) and other.id not in sig.overlaps:
                problems.append(f"{sig.id} example also matches {other.id} ({other.classification})")
    assert not problems, "\n".join(problems)


def test_overlaps_name_existing_entries():
    ids = {s.id for s in SIGS}
    for sig in SIGS:
        assert set(sig.overlaps) <= ids, sig.id


def test_patterns_compile_and_named_groups_feed_detail():
    for sig in SIGS:
        if not sig.detail:
            continue
        names = set(re.findall(r"{(\w+)}", sig.detail))
        groups = set()
        for p in sig.patterns:
            groups |= set(p.groupindex)
        assert names <= groups, f"{sig.id}: detail uses {names - groups} that no pattern captures"


def test_needles_are_lowercase_literals_of_bounded_gate_set():
    pf = catalog.prefilter()
    for sig in SIGS:
        for n in sig.needles:
            assert n == n.lower(), sig.id
    # speed depends on the number of gate words a plain line is tested against (46: CPython's "can't open file",
    # whose line holds no shared gate word; 47: Horovod's stall inspector, whose glog-format line holds none either)
    assert len(pf.gates) <= 47, pf.gates


def test_ordinary_lines_fail_the_prefilter():
    pf = catalog.prefilter()
    ordinary = [
        "step 1200 loss=2.3456 lr=3.000e-04 grad_norm=0.812 tokens/s=123456",
        "{'loss': 1.6747, 'grad_norm': 0.51, 'learning_rate': 0.0001956, 'epoch': 0.1}",
        "10/30 22:18:02 - mmengine - INFO - Epoch(train) [1][200/735]  lr: 1.9870e-04  eta: 2:46:39  time: 2.8906"
        "  data_time: 0.0042  memory: 10762  loss: 2.7522  grad_norm: 3.0608",
        " 14%|█▍        | 377/2724 [13:55:57<86:19:20, 132.41s/it]",
        "2023-03-22 09:30:39 iter 2920: loss 3.9883, time 1099.34ms, mfu 15.34%",
        "[INFO|trainer.py:1812] 2024-05-10 02:41:09,500 >> ***** Running training *****",
    ]
    for line in ordinary:
        assert not pf(line), line
        assert pf.candidates(line) == ()


def test_prefilter_inf_gate_ignores_info():
    pf = catalog.prefilter()
    assert not pf("[INFO] step 3 done")
    assert pf("step 3 loss=inf")
    assert any(s.id == "loss-nan-logged" for s in pf.candidates("step 3 loss=inf"))


def test_a_broken_source_fails_the_build_in_one_line_naming_file_and_line(tmp_path, monkeypatch, capsys):
    files = []
    for path in FILES:
        files.append(str(tmp_path / os.path.basename(path)))
        shutil.copy(path, files[-1])
    with open(files[1], encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    n = next(i for i, line in enumerate(lines) if line.startswith("  "))
    lines[n] = "\t" + lines[n][2:]
    with open(files[1], "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    monkeypatch.setattr(build, "catalog_files", lambda: files)
    assert build.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert f"{os.path.basename(files[1])}: line {n + 1}: tab in indentation" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
