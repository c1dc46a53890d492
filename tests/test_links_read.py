"""Reads through links (issue 10, found 5): the one read primitive opens a file inside the run and proves the
descriptor is that file, so a file or a directory swapped for a link between the check and the open is refused and
nothing outside the run is read; opening never blocks (a FIFO) and leaves access times alone where the kernel
allows O_NOATIME. Discovery lists no run behind a link that leaves the folder searched."""
import json
import os
import time

import pytest

from trainwreck.collect import safeio
from trainwreck.collect.safeio import BoundedFile, Skip
from trainwreck.locate import NotFound, discover, locate
from trainwreck.pipeline import diagnose

OUTSIDE = "OUTSIDE-" + "marker-" * 2 + "never-read"  # the outside file's text: must never appear in any output
LOG = "step 1 loss 2.0\nstep 2 loss 1.9\nRuntimeError: CUDA error: an illegal memory access was encountered\n"


@pytest.fixture
def world(tmp_path):
    run = tmp_path / "run"
    (run / "logs").mkdir(parents=True)
    (run / "logs" / "train.log").write_text(LOG)
    out = tmp_path / "elsewhere"
    (out / "logs").mkdir(parents=True)
    (out / "logs" / "train.log").write_text(OUTSIDE + "\n" + "RuntimeError: " + OUTSIDE + "\n")
    (out / "secret.log").write_text("step 1 loss 2.0\nstep 2 loss nan\nRuntimeError: " + OUTSIDE + "\n")
    return run, out


def _swap_at_open(monkeypatch, swap, restore=None, name=None):
    """Run `swap` after the primitive's checks, right before its open (of the file called `name`, by default
    the first one opened), and `restore` right after that open."""
    real_open = safeio._open_fd
    done = []

    def racing(path):
        if not done and (name is None or os.path.basename(path) == name):
            done.append(path)
            swap()
        try:
            return real_open(path)
        finally:
            if restore and len(done) == 1:
                done.append("restored")
                restore()
    monkeypatch.setattr(safeio, "_open_fd", racing)
    return done


def _everything(run):
    """The report and every line the collection kept, as one string."""
    r = diagnose(str(run), probe=False)
    b = r.bundle
    lines = [ln.text for log in b.logs for ln in getattr(log, "lines", []) or []]
    lines += [getattr(ln, "text", str(ln)) for ln in b.extra_lines]
    return json.dumps(r.diagnosis.to_json()) + json.dumps(lines, default=str) + repr(b.notes)


def test_a_file_swapped_for_a_symlink_between_check_and_open_is_refused(world, monkeypatch):
    run, out = world
    target = run / "logs" / "train.log"

    def swap():
        target.unlink()
        target.symlink_to(out / "secret.log")
    done = _swap_at_open(monkeypatch, swap)
    with pytest.raises(Skip, match="symlink"):
        BoundedFile(os.path.realpath(run), str(target))
    assert done, "the race helper never ran: the primitive no longer opens through _open_fd"


def test_a_directory_swapped_for_a_link_between_check_and_open_is_refused(world, monkeypatch):
    run, out = world
    logs = run / "logs"

    def swap():
        os.rename(logs, run / "logs.orig")
        logs.symlink_to(out / "logs")
    _swap_at_open(monkeypatch, swap)
    with pytest.raises(Skip, match="replaced while being opened"):
        BoundedFile(os.path.realpath(run), str(logs / "train.log"))


def test_a_directory_swapped_and_swapped_back_around_the_open_is_refused(world, monkeypatch):
    run, out = world
    logs = run / "logs"

    def swap():
        os.rename(logs, run / "logs.orig")
        logs.symlink_to(out / "logs")

    def restore():
        logs.unlink()
        os.rename(run / "logs.orig", logs)
    _swap_at_open(monkeypatch, swap, restore)
    with pytest.raises(Skip, match="replaced while being opened"):
        BoundedFile(os.path.realpath(run), str(logs / "train.log"))


def test_a_symlink_inside_the_run_to_a_file_inside_it_is_still_read(world):
    run, _ = world
    (run / "latest.log").symlink_to(run / "logs" / "train.log")
    with BoundedFile(os.path.realpath(run), str(run / "latest.log")) as f:
        assert "illegal memory access" in " ".join(ln.text for ln in f.lines(0, f.size))


def test_a_symlink_leaving_the_run_is_not_read(world):
    run, out = world
    (run / "stolen.log").symlink_to(out / "secret.log")
    with pytest.raises(Skip, match="outside the run"):
        BoundedFile(os.path.realpath(run), str(run / "stolen.log"))
    assert OUTSIDE not in _everything(run)


def test_a_fifo_never_blocks_the_open(world):
    run, _ = world
    os.mkfifo(run / "train.out")
    t = time.monotonic()
    with pytest.raises(Skip, match="FIFO"):
        BoundedFile(os.path.realpath(run), str(run / "train.out"))
    assert time.monotonic() - t < 2


def _atime_observable(path):
    """Whether a plain read of `path` moves its atime on this filesystem (noatime mounts: not observable)."""
    old = time.time() - 3 * 86400
    os.utime(path, (old, old - 86400))  # atime older than a day and newer than mtime: relatime updates it too
    with open(path, "rb") as f:
        f.read()
    return os.stat(path).st_atime > old + 1


def test_reading_leaves_the_access_time_of_an_owned_file_alone(world):
    run, _ = world
    control = run / "control.log"
    control.write_text(LOG)
    if not _atime_observable(str(control)):
        pytest.skip("this filesystem does not update atime on read (noatime): nothing to observe")
    target = run / "logs" / "train.log"
    old = time.time() - 3 * 86400
    os.utime(target, (old, old - 86400))
    with BoundedFile(os.path.realpath(run), str(target)) as f:
        assert f.lines(0, f.size)
    assert abs(os.stat(target).st_atime - old) < 1, "the read moved the file's access time (no O_NOATIME)"


# ---------------------------------------------------------------- discovery

def _project(tmp_path, out):
    proj = tmp_path / "proj"
    (proj / "runs" / "a").mkdir(parents=True)
    (proj / "runs" / "a" / "train.log").write_text(LOG)
    old = time.time() - 86400
    os.utime(proj / "runs" / "a" / "train.log", (old, old))
    os.utime(proj / "runs" / "a", (old, old))
    return proj


@pytest.mark.parametrize("link", ["runs/latest", "outputs", "wandb/latest-run", "lightning_logs", "latest"])
def test_discovery_never_chooses_a_run_behind_a_link_that_leaves_the_folder(world, tmp_path, link):
    _, out = world
    proj = _project(tmp_path, out)
    elsewhere = out / "2026-01-01" / "12-00-00"
    elsewhere.mkdir(parents=True)
    (elsewhere / "train.log").write_text(OUTSIDE + "\n")
    (elsewhere / "version_0").mkdir()
    (elsewhere / "version_0" / "train.log").write_text(OUTSIDE + "\n")
    p = proj / link
    p.parent.mkdir(parents=True, exist_ok=True)
    p.symlink_to(elsewhere if link != "outputs" and link != "lightning_logs" else out)
    c = discover(str(proj))
    assert c.kind == "dir" and os.path.realpath(c.path) == os.path.realpath(proj / "runs" / "a"), c
    assert any(os.path.basename(link) in s for s in c.skipped), c.skipped
    run = locate(None, str(proj))
    assert run.root == os.path.realpath(proj / "runs" / "a")


def test_discovery_with_only_a_link_out_says_it_skipped_it(world, tmp_path):
    _, out = world
    proj = tmp_path / "only"
    (proj / "runs").mkdir(parents=True)
    (proj / "runs" / "latest").symlink_to(out)
    with pytest.raises(NotFound, match=r"runs/latest.*leaves"):
        locate(None, str(proj))
