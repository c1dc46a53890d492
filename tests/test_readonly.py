"""Read-only guarantee: every verb that reads a run leaves the run directory byte-for-byte and mtime-for-mtime
unchanged; outputs go only to --out or stdout."""
import glob
import hashlib
import os

import pytest
from twtest import EXAMPLES

RUNS = sorted(d for d in glob.glob(os.path.join(EXAMPLES, "*")) if os.path.isdir(d))
VERBS = [["diagnose", "--json", "--no-probe"], ["diagnose", "--no-probe"], ["diagnose", "--md"],
         ["collect", "--no-probe"], ["collect", "--json"], ["traceback"], ["traceback", "--json"], ["curve"],
         ["curve", "--json"], ["init-loss"], ["rollback"], ["rollback", "--json"]]


def tree(d):
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(d)):
        dirs.sort()
        h.update(f"{root}:{sorted(dirs)}".encode())
        for f in sorted(files):
            p = os.path.join(root, f)
            st = os.lstat(p)
            h.update(f"{p}:{st.st_size}:{st.st_mtime_ns}:{st.st_mode}".encode())
            h.update(open(p, "rb").read())
    return h.hexdigest()


@pytest.mark.parametrize("run", RUNS, ids=os.path.basename)
def test_no_verb_changes_the_run(run, cli, tmp_path):
    before = tree(run)
    for verb in VERBS:
        p = cli(verb[0], run, *verb[1:])
        assert p.returncode in (0, 2), (verb, p.stderr[-300:])
        assert "Traceback (most recent call last)" not in p.stderr, (verb, p.stderr[-300:])
    p = cli("diagnose", run, "--out", str(tmp_path / "snap"), "--no-probe")
    assert p.returncode == 0
    assert tree(run) == before


def test_eval_verb_changes_no_case(cli, tmp_path):
    corpus = os.path.join(os.path.dirname(__file__), "corpus")
    before = tree(corpus)
    p = cli("eval", corpus, "-k", "00")
    assert p.returncode == 0 and "overall" in p.stdout
    assert tree(corpus) == before
