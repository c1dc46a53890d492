"""The CPU-time deadlines are a backstop that is really enforced: a file whose reading runs past its deadline is
left out with a note naming it, the other files are read, and a run past its own deadline stops reading and
analysing with notes that say what was not done. No ordinary input comes near them (bytes bound the work), and
wall time is not what they count, so machine load changes nothing (test_collect_bounded pins that).

The clock is this process's CPU time; the tests replace it with one they advance, and make one file "slow" by
advancing it while that file is split into lines."""
import json
import os
import subprocess
import sys

import pytest

from trainwreck.collect import collect, safeio
from trainwreck.locate import locate
from trainwreck.pipeline import diagnose

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _run(d):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "train.log"), "w") as f:
        f.write("".join(f"step {i} loss={2.3 - i * 0.001:.4f}\n" for i in range(50)))
        f.write("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                "capacity of 79.15 GiB of which 1.10 GiB is free.\n")
    with open(os.path.join(d, "slow.log"), "w") as f:
        f.write("step 1 loss=2.3\nstep 2 loss=2.2\n")
    with open(os.path.join(d, "config.yaml"), "w") as f:
        f.write("lr: 0.001\nbatch_size: 64\n")
    return d


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(safeio, "cpu_clock", c)
    return c


def _slow(monkeypatch, clock, name, seconds):
    real = safeio.split_lines

    def split(data, rel, first, base):
        if rel.endswith(name):
            clock.now += seconds
        return real(data, rel, first, base)
    monkeypatch.setattr(safeio, "split_lines", split)


def test_a_file_past_its_deadline_is_left_out_with_a_note_and_the_rest_is_read(tmp_path, monkeypatch, clock):
    run = _run(str(tmp_path / "run"))
    _slow(monkeypatch, clock, "slow.log", safeio.FILE_SECONDS + 1)
    result = diagnose(run, probe=False)
    read = {f.path for f in result.bundle.files}
    assert "slow.log" not in read and {"train.log", "config.yaml"} <= read
    assert not any(log.path == "slow.log" for log in result.bundle.logs)  # nothing half-read stays
    note = next(n for n in result.diagnosis.notes if n.startswith("slow.log:"))
    assert "CPU deadline" in note and f"{safeio.FILE_SECONDS:.0f} s a file" in note
    assert result.diagnosis.classification == "OOM"  # the diagnosis of what was read stands


def test_under_the_deadline_nothing_is_left_out(tmp_path, monkeypatch, clock):
    run = _run(str(tmp_path / "run"))
    _slow(monkeypatch, clock, "slow.log", safeio.FILE_SECONDS - 1)  # slow, but within its deadline
    result = diagnose(run, probe=False)
    assert "slow.log" in {f.path for f in result.bundle.files}
    assert not any("deadline" in n for n in result.diagnosis.notes)


def test_past_the_runs_deadline_the_files_and_detectors_not_reached_are_named(tmp_path, monkeypatch, clock):
    run = _run(str(tmp_path / "run"))
    monkeypatch.setattr(safeio, "RUN_SECONDS", safeio.FILE_SECONDS / 2)  # the run's deadline comes first
    _slow(monkeypatch, clock, "train.log", safeio.FILE_SECONDS - 1)  # the first file read eats the run's time
    bundle = collect(locate(run))
    assert [f.path for f in bundle.files] == []  # train.log passed the run's deadline, so it is left out too
    assert any(n.startswith("train.log:") and "for the whole run" in n for n in bundle.notes)
    unread = next(n for n in bundle.notes if "file(s) not read" in n)
    assert "slow.log" in unread and "config.yaml" in unread
    from trainwreck.analyze import analyze
    analyze(bundle)
    assert any("detector(s) not run" in n and "findings are incomplete" in n for n in bundle.notes)


def test_the_cli_says_what_the_deadline_left_out_instead_of_failing(tmp_path):
    """End to end, through a real process: a sitecustomize makes reading slow.log cost 11 CPU seconds (the
    clock jumps), and the CLI still answers, exit 0, with the note."""
    run = _run(str(tmp_path / "run"))
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "from trainwreck.collect import safeio\n"
        "_now = [0.0]\n"
        "safeio.cpu_clock = lambda: _now[0]\n"
        "_real = safeio.split_lines\n"
        "def _split(data, rel, first, base):\n"
        "    if rel.endswith('slow.log'):\n"
        "        _now[0] += safeio.FILE_SECONDS + 1\n"
        "    return _real(data, rel, first, base)\n"
        "safeio.split_lines = _split\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), ROOT]))
    p = subprocess.run([sys.executable, "-m", "trainwreck", "diagnose", run, "--no-probe", "--json"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["classification"] == "OOM"
    assert any(n.startswith("slow.log:") and "CPU deadline" in n for n in d["notes"])


def test_a_reader_slow_while_parsing_its_lines_is_stopped_at_the_files_deadline(tmp_path, monkeypatch, clock):
    """The slowness is in the metric parsing after the file's bytes were read, not in the read: the reader's own
    loop looks at the clock too."""
    from trainwreck.collect.readers import logs
    run = _run(str(tmp_path / "run"))
    with open(os.path.join(run, "slow.log"), "w") as f:
        f.write("".join(f"step {i} loss={2.3 - i * 1e-3:.4f}\n" for i in range(2000)))
    real = logs._extract

    def slow(text):
        if text.startswith("step ") and "loss=2.2" in text:  # only slow.log's lines
            clock.now += 0.1
        return real(text)
    monkeypatch.setattr(logs, "_extract", slow)
    result = diagnose(run, probe=False)
    assert "slow.log" not in {f.path for f in result.bundle.files}
    assert any(n.startswith("slow.log:") and "CPU deadline" in n for n in result.diagnosis.notes)
    assert result.diagnosis.classification == "OOM"
