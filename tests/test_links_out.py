"""--out never writes into the run (issue 10, found 5): every path the snapshot writes is resolved, every component
checked, and a --out that lands in the run by any route is refused with a one-line error and exit 2, the run left
byte-for-byte as it was."""
import contextlib
import io
import os

import pytest
from test_readonly import tree

from trainwreck import cli

LOG = "step 1 loss 2.0\nstep 2 loss 1.9\nRuntimeError: CUDA error: an illegal memory access was encountered\n"


def _run(tmp_path, sub="run"):
    run = tmp_path / sub
    run.mkdir(parents=True)
    (run / "train.log").write_text(LOG)
    return run


def _diagnose(target, out):
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = cli.main(["diagnose", str(target), "--no-probe", "--out", str(out)])
    return code, err.getvalue()


def _refused(target, out, run):
    before = tree(str(run))
    code, err = _diagnose(target, out)
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "never writes there" in lines[0] and "Traceback" not in err, err
    assert tree(str(run)) == before, "a file was written into the run"
    return lines[0]


def test_out_is_the_run_itself(tmp_path):
    run = _run(tmp_path)
    _refused(run, run, run)


def test_out_inside_the_run(tmp_path):
    run = _run(tmp_path)
    _refused(run, run / "diag", run)


def test_out_meta_is_a_link_to_the_run(tmp_path):
    run = _run(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "meta").symlink_to(run)
    assert "meta resolves into the run" in _refused(run, out, run)


def test_out_is_the_parent_of_a_run_kept_in_artifacts(tmp_path):
    run = _run(tmp_path, "proj/artifacts")
    # the run is the single log's folder, proj/artifacts; --out proj would write proj/artifacts/*.json into it
    assert "artifacts resolves into the run" in _refused(run / "train.log", tmp_path / "proj", run)


def test_a_symlinked_component_of_out_pointing_into_the_run(tmp_path):
    run = _run(tmp_path)
    (tmp_path / "via").symlink_to(run)
    _refused(run, tmp_path / "via" / "diag" / "deeper", run)


def test_a_dangling_link_in_out_that_would_create_a_folder_in_the_run(tmp_path):
    run = _run(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "artifacts").symlink_to(run / "not-yet")  # dangling: makedirs would create it inside the run
    _refused(run, out, run)
    assert not (run / "not-yet").exists()


def test_a_planted_file_link_at_a_report_path(tmp_path):
    run = _run(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").symlink_to(run / "train.log")
    assert "report.md resolves into the run" in _refused(run, out, run)


def test_a_bind_like_alias_of_the_run_is_caught_by_inode(tmp_path, monkeypatch):
    """A folder that is the run by device and inode but not by path (a bind mount): refused."""
    from trainwreck.report import outpath
    run = _run(tmp_path)
    alias = tmp_path / "alias"
    alias.mkdir()
    real_ident = outpath._ident

    def ident(p):  # the alias reports the run's identity, as a bind mount would
        return real_ident(str(run)) if os.path.realpath(p) == str(alias) else real_ident(p)
    monkeypatch.setattr(outpath, "_ident", ident)
    assert outpath.refusal(str(alias / "diag"), str(run))


@pytest.mark.parametrize("where", ["sibling", "parent-of-run"])
def test_out_beside_or_above_the_run_is_written(tmp_path, where):
    run = _run(tmp_path, "proj/run")
    out = tmp_path / "diag" if where == "sibling" else tmp_path / "proj"
    before = tree(str(run))
    code, err = _diagnose(run, out)
    assert code == 0, err
    assert (out / "report.json").is_file() and (out / "artifacts" / "failure.lock.json").is_file()
    assert tree(str(run)) == before


def _swap_while_rendering(monkeypatch, swap):
    from trainwreck.report import artifacts
    render = artifacts._render

    def render_then_swap(*args, **kwargs):
        written = render(*args, **kwargs)
        swap()  # the race: between the check and the publish, a folder of the path becomes a link into the run
        return written
    monkeypatch.setattr(artifacts, "_render", render_then_swap)


def test_out_swapped_for_a_link_into_the_run_while_writing(tmp_path, monkeypatch):
    run = _run(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")

    def swap():
        os.rename(out, tmp_path / "out.moved")
        out.symlink_to(run)
    _swap_while_rendering(monkeypatch, swap)
    assert "never writes there" in _refused(run, out, run)


def test_the_parent_of_a_new_out_swapped_while_writing(tmp_path, monkeypatch):
    run = _run(tmp_path)
    parent = tmp_path / "reports"
    parent.mkdir()
    out = parent / "diag"

    def swap():
        os.rename(parent, tmp_path / "reports.moved")
        parent.symlink_to(run)
    _swap_while_rendering(monkeypatch, swap)
    before = tree(str(run))
    code, err = _diagnose(run, out)
    assert code == 2 and "Traceback" not in err, err
    assert tree(str(run)) == before, "a file was written into the run"
