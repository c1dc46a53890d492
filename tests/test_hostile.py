"""Hostile run directories: each gets a clean JSON diagnosis or a one-line exit 2 — never a traceback, a hang,
a read through a link that leaves the run, or more than a few seconds."""
import json
import os
import socket
import threading
import time

import pytest

TB = ("Traceback (most recent call last):\n  File \"train.py\", line 10, in <module>\n    loss.backward()\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")


def _check(cli, d, want=None, seconds=10):
    t = time.time()
    p = cli("diagnose", str(d), "--json", "--no-probe", timeout=30)
    dt = time.time() - t
    assert "Traceback (most recent call last)" not in p.stderr, p.stderr[-400:]
    assert p.returncode in (0, 2), p.stderr
    assert dt < seconds, f"took {dt:.1f}s"
    if p.returncode == 0:
        rep = json.loads(p.stdout)
        if want:
            assert rep["classification"] == want, rep["headline"]
        return rep
    assert len(p.stderr.strip().splitlines()) == 1
    return None


def test_binary_log_is_skipped_with_a_note(cli, tmp_path):
    (tmp_path / "train.log").write_bytes(os.urandom(1 << 20))
    p = cli("diagnose", str(tmp_path), "--json", "--no-probe")
    assert p.returncode == 2 and "looks binary" in p.stderr and "Traceback" not in p.stderr  # nothing else to read
    (tmp_path / "stderr.txt").write_text(TB)
    rep = _check(cli, tmp_path, "OOM")
    assert any("binary" in n for n in rep["notes"])


def test_invalid_utf8_and_nul_bytes_still_diagnosed(cli, tmp_path):
    (tmp_path / "train.log").write_bytes(b"step 1 loss=2.3\x00\x00\n\xff\xfe\xc3\x28 garbage \x80\n" * 500 + TB.encode())
    _check(cli, tmp_path, "OOM")


def test_crlf_ansi_and_tqdm_carriage_returns(cli, tmp_path):
    bars = "".join(f"\r\x1b[32m{i}%|####| {i}/100 [00:0{i % 10}<00:00, loss=2.{i}]\x1b[0m" for i in range(100))
    (tmp_path / "train.log").write_bytes((bars + "\n" + TB).replace("\n", "\r\n").encode())
    rep = _check(cli, tmp_path, "OOM")
    ev = rep["primary_cause"]["evidence"][0]
    assert "\x1b" not in ev["text"] and not ev["text"].endswith("\r")


def test_gigantic_line_without_newline(cli, tmp_path):
    with open(tmp_path / "train.log", "wb") as f:
        for _ in range(64):
            f.write(b"x" * (1 << 20))
        f.write(TB.encode().replace(b"\n", b" "))
    rep = _check(cli, tmp_path, "OOM")  # the error at the end of the one 64 MB line is still found
    notes = " ".join(rep["notes"])
    assert "train.log: 64 MB; read its first" in notes  # the user is told the file was read in part
    assert "ends without a newline" in notes


def test_truncated_and_garbled_jsonl(cli, tmp_path):
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "loss": 2.3}\n{"step": 2, "loss": \n{{{{\n'
                                            '{"step": 3, "loss": NaN}\n{"step": 4, "loss": 1e999}\n{"step": 5')
    rep = _check(cli, tmp_path)
    assert any("not valid JSON" in n for n in rep["notes"])


def test_fifo_socket_and_device_links_are_not_opened(cli, tmp_path):
    os.mkfifo(tmp_path / "train.log")
    os.mkfifo(tmp_path / "stderr.txt")
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(tmp_path / "out.log"))
    os.symlink("/dev/zero", tmp_path / "zero.log")
    (tmp_path / "real.err").write_text(TB)
    try:
        rep = _check(cli, tmp_path, "OOM")
    finally:
        s.close()
    notes = " ".join(rep["notes"])
    assert "FIFO" in notes and "outside the run" in notes


def test_symlink_loops_and_links_outside(cli, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.log").write_text("OUTSIDE-MARKER torch.OutOfMemoryError: CUDA out of memory\n")
    os.symlink(run / "b", run / "a")
    os.symlink(run / "a", run / "b")
    os.symlink(run, run / "self")
    os.symlink(outside / "private.log", run / "train.log")
    os.symlink(outside, run / "logs")
    p = cli("diagnose", str(run), "--json", "--no-probe", timeout=30)
    assert "OUTSIDE-MARKER" not in p.stdout + p.stderr
    # nothing is left inside the run, and the one-line error says why each link was not followed
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "train.log: links outside the run directory, not read" in p.stderr
    assert "logs: links outside the run directory, not read" in p.stderr
    assert "looping symlink" in p.stderr
    (run / "stderr.txt").write_text(TB)  # with a real log beside them, the links are named in the notes
    rep = _check(cli, run, "OOM")
    assert "OUTSIDE-MARKER" not in json.dumps(rep)
    assert {f["path"] for f in rep["evidence_files"]} == {"stderr.txt"}
    assert any("links outside the run directory" in n for n in rep["notes"])


def test_many_files_and_deep_nesting(cli, tmp_path):
    many = tmp_path / "many"
    many.mkdir()
    for i in range(100_000):
        open(many / f"f{i}.txt", "w").close()
    (many / "train.log").write_text(TB)
    _found_or_told(cli, many, "stopped listing after 50000 entries")
    deep = tmp_path / "deep"
    p = deep
    for _ in range(200):
        p = p / "d"
    p.mkdir(parents=True)
    (p / "train.log").write_text(TB)
    _found_or_told(cli, deep, "folders deeper than 6 levels were not searched")


def _found_or_told(cli, d, note):
    """The log is found and diagnosed, or the user is told which limit hid it: never a silent miss."""
    t = time.time()
    p = cli("diagnose", str(d), "--json", "--no-probe", timeout=30)
    assert time.time() - t < 10 and "Traceback" not in p.stderr
    if p.returncode == 0:
        rep = json.loads(p.stdout)
        assert note in " ".join(rep["notes"])       # the limit was hit, so the note must be there
        assert rep["classification"] == "OOM", rep["headline"]
    else:
        assert p.returncode == 2 and note in p.stderr, p.stderr


def test_empty_dir_and_empty_files(cli, tmp_path):
    e = tmp_path / "e"
    e.mkdir()
    p = cli("diagnose", str(e), "--json", "--no-probe")
    assert p.returncode == 2 and "nothing to diagnose" in p.stderr and "Traceback" not in p.stderr
    f = tmp_path / "f"
    f.mkdir()
    for n in ("train.log", "metrics.jsonl", "config.yaml", "trainer_state.json"):
        (f / n).write_text("")
    rep = _check(cli, f, "unclear")
    assert rep["verification"]["next_probe"]


def test_weird_names(cli, tmp_path):
    d = tmp_path / "weird names é 空 x"
    d.mkdir()
    (d / "tr ain é.log").write_text(TB)
    _check(cli, d, "OOM")


def test_bad_yaml_and_truncated_trainer_state(cli, tmp_path):
    (tmp_path / "config.yaml").write_text("a: [1, 2\n  b: {{{\n\t- x")
    (tmp_path / "trainer_state.json").write_text('{"log_history": [{"loss": NaN, "step": 1}, {"loss"')
    rep = _check(cli, tmp_path)
    assert any("trainer_state.json" in n for n in rep["notes"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied(cli, tmp_path):
    (tmp_path / "train.log").write_text(TB)
    os.chmod(tmp_path / "train.log", 0)
    rep = _check(cli, tmp_path)
    assert any("cannot open" in n for n in rep["notes"])


def test_metrics_appended_while_read(cli, tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": i, "loss": 2.0}) + "\n" for i in range(20000)))
    stop = threading.Event()

    def writer():
        i = 20000
        with open(path, "a") as f:
            while not stop.is_set():
                f.write(json.dumps({"step": i, "loss": 2.0}) + "\n{\"step\": ")
                f.flush()
                i += 1
                time.sleep(0.0005)

    t = threading.Thread(target=writer)
    t.start()
    try:
        # a loss that never moves from its first value over 20,000 steps logged from step 0 is not learning
        rep = _check(cli, tmp_path, "stall")
    finally:
        stop.set()
        t.join()
    loss = rep["metrics_summary"]["loss"]
    # the torn lines the writer leaves are skipped, never read as a value: every point read is the 2.0 written
    assert loss["min"] == loss["max"] == 2.0 and loss["nonfinite"] == 0
    assert loss["n"] >= 20000 and loss["last_step"] >= 19999
    assert any("not valid JSON" in n for n in rep["notes"])


def test_file_deleted_between_listing_and_reading(tmp_path):
    from trainwreck.collect import Context
    from trainwreck.collect.bundle import Bundle
    from trainwreck.collect.readers import logs
    from trainwreck.collect.safeio import Entry, Skip
    (tmp_path / "train.log").write_text(TB)
    e = Entry("train.log", str(tmp_path / "train.log"), 10, 0.0)
    os.unlink(tmp_path / "train.log")
    b = Bundle(str(tmp_path), str(tmp_path))
    with pytest.raises(Skip):
        logs.read(b, e, Context(b, time.monotonic() + 5))


def test_log_cut_mid_traceback_says_so(cli, tmp_path):
    (tmp_path / "train.log").write_text(
        'step 1 loss=2.3\nTraceback (most recent call last):\n  File "train.py", line 50, in <module>\n    main()\n'
        '  File "train.py", line 40, in main\n    out = model(x)\n')
    rep = _check(cli, tmp_path, "unclear")
    assert "cut off mid-traceback" in rep["headline"]
    assert "line 6" in rep["contributing_factors"][0]["summary"] or "line 5" in rep["contributing_factors"][0]["summary"]


@pytest.mark.parametrize("body", ["step,train_loss\n0,2.3\ninf,2.2\n2,nan\n",
                                  'step,train_loss\n0,2.3\n1,"' + "x" * 200_000 + '"\n2,nan\n'],
                         ids=["infinite-step", "huge-field"])
def test_garbled_metrics_csv_is_diagnosed(cli, tmp_path, body):
    (tmp_path / "metrics.csv").write_text(body)
    rep = _check(cli, tmp_path, "NaN")
    assert rep["metrics_summary"]["loss"]["first_nonfinite_step"] == 2
