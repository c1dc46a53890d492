"""--out is written through folders held open and checked by descriptor (issue 10, found 5): a folder of the --out
path swapped for a link into the run AFTER the last path check and BEFORE the renames (the window a check-then-
write-by-path leaves) still cannot put a file into the run; every file lands in the folder that was checked, or
nothing is published. Also: a checked folder moved into the run before the renames is refused, a swap before the
folders are opened is caught by the descriptor's own check, and the path fallback (no dir_fd) still works."""
import contextlib
import importlib.util
import io
import json
import os

import pytest
from test_readonly import tree

from trainwreck import cli
from trainwreck.report import artifacts, outdir, outpath

LOG = "step 1 loss 2.0\nstep 2 loss 1.9\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
METRICS = "".join(json.dumps({"step": i, "loss": 2.3 - i * 0.01, "grad_norm": 1.0 + i}) + "\n" for i in range(20))
SNAPSHOT = {"report.json", "report.md", "meta/failure-profile.json", "meta/root-causes.json",
            "artifacts/failure.lock.json"} | ({"artifacts/curves.png"} if importlib.util.find_spec("matplotlib")
                                              else set())
NAMES = {os.path.basename(p) for p in SNAPSHOT} | {"meta", "artifacts"}

needs_fd = pytest.mark.skipif(not outdir.AT, reason="the platform has no dir_fd calls: --out goes by path")


def _run(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text(LOG)
    (run / "metrics.jsonl").write_text(METRICS)
    return run


def _diagnose(run, out):
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = cli.main(["diagnose", str(run), "--no-probe", "--out", str(out)])
    return code, err.getvalue()


def _files(folder):
    return {os.path.relpath(os.path.join(d, f), folder) for d, _dirs, files in os.walk(folder) for f in files}


def _state(run):
    """Every entry under the run but its own folder (whose mtime the test's own move changes): mode, mtime and
    content."""
    state = {}
    for d, dirs, files in os.walk(run):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            state[os.path.relpath(p, run)] = (st.st_mode, st.st_mtime_ns,
                                              open(p, "rb").read() if n in files else None)
    return state


def _nothing_of_the_snapshot_in(run):
    for d, dirs, files in os.walk(run):
        assert not [n for n in dirs + files if n.endswith(".partial") or n.startswith(".previous.")], (d, dirs)
        assert not NAMES & set(files + dirs), (d, dirs, files)


def _before_the_renames(monkeypatch, swap):
    """The race: after the last path check (the re-check after rendering), before the publish's first rename."""
    publish = artifacts._publish

    def swap_then_publish(*args, **kwargs):
        swap()
        return publish(*args, **kwargs)
    monkeypatch.setattr(artifacts, "_publish", swap_then_publish)


def _layout(tmp_path, where, exists):
    """--out reports/a/diag, and the folder of its path that the race replaces (moved aside, a link into the run
    put in its place)."""
    out = tmp_path / "reports" / "a" / "diag"
    out.parent.mkdir(parents=True)
    if exists:
        out.mkdir()
        (out / "mine.txt").write_text("the user's own file")
    swapped = {"target": out, "parent": out.parent, "grandparent": out.parent.parent}[where]
    return out, swapped, swapped.with_name(swapped.name + ".moved")


@needs_fd
@pytest.mark.parametrize("exists", [True, False], ids=["existing-out", "new-out"])
@pytest.mark.parametrize("where", ["target", "parent", "grandparent"])
def test_a_folder_swapped_for_a_link_into_the_run_just_before_the_renames(tmp_path, monkeypatch, where, exists):
    run = _run(tmp_path)
    out, swapped, moved = _layout(tmp_path, where, exists)

    def swap():
        if swapped.exists():  # a new --out does not exist yet: a link is put where it is to be made
            os.rename(swapped, moved)
        swapped.symlink_to(run, target_is_directory=True)
    _before_the_renames(monkeypatch, swap)
    before = tree(str(run))
    code, err = _diagnose(run, out)
    assert "Traceback" not in err and "internal error" not in err, err
    assert tree(str(run)) == before, "a file of the run changed"
    _nothing_of_the_snapshot_in(run)
    landed = moved / out.relative_to(swapped) if where != "target" else moved
    if exists or where != "target":  # published: every file, the plot included, in the folder that was checked
        assert code == 0, err
        assert _files(landed) == SNAPSHOT | ({"mine.txt"} if exists else set())
    else:  # a link now where a new --out was to be made: nothing published, and one line that says why
        assert code == 2 and len(err.strip().splitlines()) == 1 and "left as it was" in err, err
        assert not os.path.lexists(moved)
    if exists:
        assert (landed / "mine.txt").read_text() == "the user's own file"
    assert [n for n in os.listdir(landed.parent) if n.endswith(".partial")] == []  # the stage removed


@needs_fd
def test_an_existing_out_swapped_just_before_the_renames_gets_the_whole_snapshot(tmp_path, monkeypatch):
    """The folder checked, not the link now at its path, receives the snapshot."""
    run = _run(tmp_path)
    out, swapped, moved = _layout(tmp_path, "target", True)
    _before_the_renames(monkeypatch, lambda: (os.rename(swapped, moved), swapped.symlink_to(run)))
    code, err = _diagnose(run, out)
    assert code == 0, err
    assert _files(moved) == SNAPSHOT | {"mine.txt"}
    assert json.loads((moved / "report.json").read_text())["classification"] == "crash"


@needs_fd
def test_a_checked_folder_moved_into_the_run_before_the_renames_is_refused(tmp_path, monkeypatch):
    """Not a link this time: the folder itself moved into the run. Its descriptor now lies in the run; the check
    just before the renames sees it, and nothing is written."""
    run = _run(tmp_path)
    out, _swapped, _moved = _layout(tmp_path, "target", True)
    inside = run / "moved-in"
    _before_the_renames(monkeypatch, lambda: os.rename(out, inside))
    before = _state(run)
    code, err = _diagnose(run, out)
    assert code == 2 and "never writes there" in err and len(err.strip().splitlines()) == 1, err
    assert _files(inside) == {"mine.txt"}, "a file of the snapshot was written into the run"
    assert sorted(os.listdir(run)) == ["metrics.jsonl", "moved-in", "train.log"]
    assert {p: v for p, v in _state(run).items() if not p.startswith("moved-in")} == before


@needs_fd
@pytest.mark.parametrize("to_make", [False, True], ids=["parent-exists", "folders-to-make"])
@pytest.mark.parametrize("by", ["kernel path", "device and inode"])
def test_a_swap_before_the_folders_are_opened_is_caught_by_descriptor(tmp_path, monkeypatch, by, to_make):
    """The parent swapped for a link into the run after the first path check, before it is opened: the folder
    opened is the run, and its descriptor's check refuses it (by the kernel's path of it, or, where there is none,
    by device and inode up the '..' chain) before any folder of a --out still to be made is made in it."""
    run = _run(tmp_path)
    out, swapped, moved = _layout(tmp_path, "parent", False)
    if to_make:
        out = out.parent / "new" / "deeper" / "diag"
    if by == "kernel path":  # each check on its own: the other one made blind
        monkeypatch.setattr(outpath, "_chain", lambda fd: [])
    else:
        monkeypatch.setattr(outpath, "kernel_path", lambda fd: None)
    real = artifacts.open_made

    def swap_then_open(*args, **kwargs):
        os.rename(swapped, moved)
        swapped.symlink_to(run)
        return real(*args, **kwargs)
    monkeypatch.setattr(artifacts, "open_made", swap_then_open)
    before = tree(str(run))
    code, err = _diagnose(run, out)
    assert code == 2 and "is inside the run directory; trainwreck never writes there" in err, err
    assert tree(str(run)) == before
    _nothing_of_the_snapshot_in(run)


@needs_fd
def test_a_swap_while_rendering_cannot_send_the_remaining_files_into_the_run(tmp_path, monkeypatch):
    """After the first file, the parent is replaced by a folder whose entry of the stage's name links into the run:
    a file written by path would land in the run; written by the stage's descriptor it lands in the stage, and the
    re-check after rendering refuses to publish."""
    run = _run(tmp_path)
    out, swapped, moved = _layout(tmp_path, "parent", False)
    put, calls = artifacts._put, []

    def put_then_swap(*args, **kwargs):
        put(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            stage = [n for n in os.listdir(swapped) if n.endswith(".partial")]
            os.rename(swapped, moved)
            swapped.mkdir()
            (swapped / stage[0]).symlink_to(run)
    monkeypatch.setattr(artifacts, "_put", put_then_swap)
    before = tree(str(run))
    code, err = _diagnose(run, out)
    assert len(calls) >= 4, "the swap came before most of the files were written"
    assert code == 2 and "changed while the snapshot was being written" in err, err
    assert tree(str(run)) == before, "a file was written into the run"
    _nothing_of_the_snapshot_in(run)
    assert os.listdir(moved) == []  # the stage, with every file, removed by descriptor


@pytest.fixture(params=["descriptors", "paths"])
def mode(request, monkeypatch):
    if request.param == "descriptors" and not outdir.AT:
        pytest.skip("the platform has no dir_fd calls")
    if request.param == "paths":
        monkeypatch.setattr(outdir, "AT", False)  # as on a platform without dir_fd: today's path code
    return request.param


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_a_new_out_is_written_whole_with_the_umask_s_permissions(tmp_path, mode, mask):
    run = _run(tmp_path)
    out = tmp_path / "new" / "diag"
    old = os.umask(mask)
    try:
        code, err = _diagnose(run, out)
    finally:
        os.umask(old)
    assert code == 0, err
    assert _files(out) == SNAPSHOT
    for folder in (out.parent, out, out / "meta", out / "artifacts"):
        assert (folder.stat().st_mode & 0o777) == 0o777 & ~mask, folder
    assert (out / "report.json").stat().st_mode & 0o777 == 0o666 & ~mask
    assert os.listdir(out.parent) == ["diag"]  # the stage removed


def test_a_swap_seen_by_the_recheck_after_rendering_is_still_refused(tmp_path, monkeypatch, mode):
    run = _run(tmp_path)
    out, swapped, moved = _layout(tmp_path, "parent", True)
    render = artifacts._render

    def render_then_swap(*args, **kwargs):
        written = render(*args, **kwargs)
        os.rename(swapped, moved)
        swapped.symlink_to(run)
        return written
    monkeypatch.setattr(artifacts, "_render", render_then_swap)
    before = tree(str(run))
    code, err = _diagnose(run, out)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "never writes there" in err or "changed while the snapshot was being written" in err, err
    assert tree(str(run)) == before
    left = _files(moved) - {"diag/mine.txt"}  # the folder checked was left as it was
    # by descriptor the stage is removed; by path it cannot be (its path now leads into the run) and stays
    assert not left if mode == "descriptors" else {f.split("/", 1)[1] for f in left} == SNAPSHOT


def test_out_a_link_of_the_user_s_to_a_folder_outside_the_run_is_written_through(tmp_path, mode):
    """A link the user made (--out ~/reports -> /data/reports) is not a swap: the folder it names is written, as
    before, and the link stays a link."""
    run = _run(tmp_path)
    real = tmp_path / "data" / "reports"
    real.mkdir(parents=True)
    (real / "mine.txt").write_text("the user's own file")
    link = tmp_path / "reports"
    link.symlink_to(real)
    before = tree(str(run))
    code, err = _diagnose(run, link)
    assert code == 0, err
    assert link.is_symlink() and _files(real) == SNAPSHOT | {"mine.txt"}
    assert tree(str(run)) == before
    assert [n for n in os.listdir(real.parent) if n != "reports"] == []  # the stage removed
