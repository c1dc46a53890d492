"""Read-only guarantee: every verb that reads a run leaves the run directory byte-for-byte and mtime-for-mtime
unchanged (directories included: a file created and deleted again still changes its folder's mtime); outputs go
only to --out or stdout. The verbs and their options come from the CLI's own registry, so a new verb or option is
checked without editing this file."""
import argparse
import contextlib
import glob
import hashlib
import io
import os
import shutil

import pytest
from twtest import EXAMPLES, ROOT

from trainwreck import cli

RUNS = sorted(d for d in glob.glob(os.path.join(EXAMPLES, "*")) if os.path.isdir(d))
CORPUS = os.path.join(ROOT, "tests", "corpus")
# a typical value for each option that takes one (an option missing here fails test_every_option_has_a_value)
TYPICAL = {"metric": "loss", "k": "00", "tail": "5", "num_classes": "10", "vocab": "50257"}


def tree(d):
    """Hash of names, sizes, modes, contents and mtimes of every file AND folder under d (links not followed)."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(d):
        dirs.sort()
        st = os.lstat(root)
        h.update(f"{root}:{sorted(dirs)}:{st.st_mtime_ns}:{st.st_mode}".encode())
        for f in sorted(files):
            p = os.path.join(root, f)
            st = os.lstat(p)
            h.update(f"{p}:{st.st_size}:{st.st_mtime_ns}:{st.st_mode}".encode())
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()


def verbs():
    """{verb name: its argparse sub-parser}, from the real CLI registry."""
    p = cli.build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def invocations(name, parser, target, out_dir):
    """The verb alone on its target, then once with each of its options (store_true flags set, others a typical
    value; --out a fresh folder outside the run)."""
    pos = [a for a in parser._actions if not a.option_strings]
    opts = [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]
    assert [a.dest for a in pos] in (["path"], ["corpus"]), (name, [a.dest for a in pos])
    base = [name, target] + (["-k", TYPICAL["k"]] if pos[0].dest == "corpus" else [])
    yield base
    for a in opts:
        flag = a.option_strings[-1]
        if a.dest == "k":
            continue  # already in base for eval
        if a.nargs == 0:
            yield base + [flag]
        elif a.dest == "out":
            yield base + [flag, os.path.join(out_dir, f"{name}-{len(os.listdir(out_dir))}")]
        else:
            yield base + [flag, TYPICAL[a.dest]]


def run_verb(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(argv)
        except SystemExit as exc:  # argparse
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


def test_every_option_has_a_value():
    for name, parser in verbs().items():
        for a in parser._actions:
            if a.option_strings and a.nargs != 0 and not isinstance(a, argparse._HelpAction) and a.dest != "out":
                assert a.dest in TYPICAL, f"add a typical value for {name} {a.option_strings[-1]} to TYPICAL"


def test_the_registry_is_the_cli():
    names = set(verbs())
    assert {"diagnose", "collect", "traceback", "curve", "init-loss", "rollback", "eval"} <= names
    files = {f[:-3] for f in os.listdir(os.path.dirname(cli.__file__) + "/verbs") if f.endswith(".py")} - {"__init__"}
    assert len(names) == len(files)  # every verb module is registered (and nothing else is)


def _check_run(run, tmp_path, names):
    before = tree(run)
    seen = []
    for name, parser in verbs().items():
        if name not in names:
            continue
        for argv in invocations(name, parser, run, str(tmp_path)):
            rc, _, err = run_verb(argv)
            seen.append(argv)
            assert rc in (0, 2), (argv, rc, err[-300:])
            assert "Traceback (most recent call last)" not in err, (argv, err[-300:])
            assert tree(run) == before, f"`trainwreck {' '.join(argv)}` changed the run directory"
    return seen


@pytest.mark.parametrize("run", RUNS, ids=os.path.basename)
def test_no_verb_changes_the_run(run, tmp_path):
    names = set(verbs()) - {"eval"}
    seen = _check_run(run, tmp_path, names)
    assert {a[0] for a in seen} == names and len(seen) >= 2 * len(names)
    assert os.listdir(tmp_path)  # --out wrote its snapshot outside the run


def test_eval_verb_changes_no_case(tmp_path):
    seen = _check_run(CORPUS, tmp_path, {"eval"})
    assert seen and all(a[0] == "eval" for a in seen)


def test_the_check_sees_a_file_created_and_deleted(tmp_path):
    """The hash is sensitive to what the guarantee is about: a file created and removed again, a touched file."""
    run = tmp_path / "run"
    shutil.copytree(RUNS[0], run)
    before = tree(str(run))
    (run / "scratch.tmp").write_text("x")
    os.unlink(run / "scratch.tmp")
    assert tree(str(run)) != before
    before = tree(str(run))
    some = next(p for p in run.rglob("*") if p.is_file())
    st = some.stat()
    os.utime(some, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    assert tree(str(run)) != before
