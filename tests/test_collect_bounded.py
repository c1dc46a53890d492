"""Collection is bounded by bytes, not by a clock, and bounded reading never loses the first non-finite value.

Files are generated in tmp_path at the sizes where sampling starts (just below and just above each whole-read
limit), plus one log large enough that its line numbers are not counted."""
import hashlib
import json
import os
import time

import pytest

from trainwreck.analyze.trajectory_nonfinite import find_onset
from trainwreck.collect import MAX_FILES_READ, collect, safeio
from trainwreck.collect.metricfile import FULL_PARSE_LIMIT
from trainwreck.collect.readers import trainer_state
from trainwreck.locate import locate

MB = 1 << 20


def _lines_until(size, line_of):
    """Lines line_of(0), line_of(1) … while the total stays <= size bytes."""
    out, total, i = [], 0, 0
    while True:
        line = line_of(i)
        if total + len(line) > size:
            return out
        out.append(line)
        total += len(line)
        i += 1


def _with_nan(lines, frac, bad, good_width=6):
    """Lines from index int(len*frac) on get their 6-character value replaced by `bad` (same width)."""
    k = int(len(lines) * frac)
    return [ln if i < k else ln.replace("#" * good_width, bad) for i, ln in enumerate(lines)], k


def _fill(lines):
    return "".join(ln.replace("######", "2.0123") for ln in lines)


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return os.path.getsize(path)


def _jsonl(size):
    lines = _lines_until(size, lambda i: f'{{"step": {i}, "loss": ######, "lr": 0.0003}}\n')
    lines, k = _with_nan(lines, 0.45, "NaN   ")
    return "metrics.jsonl", _fill(lines), k


def _csv(size):
    lines = ["epoch,step,train_loss,lr-AdamW\n"]
    lines += _lines_until(size - len(lines[0]), lambda i: f"{i // 1000},{i},######,0.0003\n")
    body, k = _with_nan(lines[1:], 0.45, "nan   ")
    return "metrics.csv", lines[0] + _fill(body), k


def _trainer_state(size):
    head, foot = '{\n  "global_step": 1,\n  "log_history": [\n', '    {"loss": 0.1, "step": -1}\n  ]\n}\n'
    lines = _lines_until(size - len(head) - len(foot), lambda i: f'    {{"loss": ######, "step": {i}}},\n')
    lines, k = _with_nan(lines, 0.45, "NaN   ")
    return "trainer_state.json", head + _fill(lines) + foot, k


def _text_log(size, frac=0.45):
    lines = ["config: lr=3e-4 fp16=true\n"]
    lines += _lines_until(size - len(lines[0]), lambda i: f"[INFO] step {i} loss=###### lr=3.0e-04\n")
    body, k = _with_nan(lines[1:], frac, "nan   ")
    return "train.log", lines[0] + _fill(body), k


FORMATS = {"jsonl": (_jsonl, FULL_PARSE_LIMIT), "csv": (_csv, FULL_PARSE_LIMIT),
           "trainer_state": (_trainer_state, trainer_state.LIMIT), "text-log": (_text_log, safeio.FULL_READ_LIMIT)}


def _onset_step(run):
    bundle = collect(locate(str(run)))
    onset = find_onset("loss", bundle.series.get("loss", []))
    return (onset.point.step if onset else None), bundle


@pytest.mark.parametrize("side", ["just-below", "just-above"])
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_first_nonfinite_step_is_right_where_sampling_starts(tmp_path, fmt, side):
    make, limit = FORMATS[fmt]
    name, text, k = make(limit - 64 if side == "just-below" else limit + 256)
    size = _write(str(tmp_path / name), text)
    assert (size <= limit) == (side == "just-below")  # the case sits on the side of the limit it claims
    step, bundle = _onset_step(tmp_path)
    assert step == k, (fmt, side, step, k, bundle.notes)
    if side == "just-above" and fmt == "text-log":
        assert any("was located by" in n for n in bundle.notes)  # the note says how it was found


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_an_isolated_nan_in_the_middle_of_a_large_metrics_file_is_found(tmp_path, fmt):
    make, limit = FORMATS[fmt]
    name, text, k = make(limit * 2)
    lines = text.split("\n")
    j = len(lines) // 5  # one bad value long before the persistent onset, never in a sample or the tail
    lines[j] = lines[j].replace("2.0123", "NaN   " if fmt == "jsonl" else "nan   ")
    _write(str(tmp_path / name), "\n".join(lines))
    step, _b = _onset_step(tmp_path)
    assert step == (j - 1 if fmt == "csv" else j)


def test_nan_onset_in_the_middle_of_a_log_too_large_to_count_lines(tmp_path):
    name, text, k = _text_log(safeio.COUNT_LIMIT + 4 * MB, frac=0.88)  # onset beyond COUNT_LIMIT, before the tail
    _write(str(tmp_path / name), text)
    step, bundle = _onset_step(tmp_path)
    assert step == k
    onset = find_onset("loss", bundle.series["loss"])
    assert onset.point.source.line is None and onset.point.source.byte is not None  # cited by byte offset
    assert onset.index > 0 and onset.points[onset.index - 1].step == k - 1  # the last finite value just before


def test_reads_of_a_large_log_are_bounded_whatever_its_size(tmp_path, monkeypatch):
    p = tmp_path / "train.log"
    with open(p, "wb") as f:
        f.write(b"step 1 loss=2.0000 lr=3.0e-04\n" * (48 * MB // 30))
        f.write(b"RuntimeError: boom\n")
    read = []
    real = os.pread

    def counting(fd, n, off):
        b = real(fd, n, off)
        read.append(len(b))
        return b

    monkeypatch.setattr(os, "pread", counting)
    bundle = collect(locate(str(tmp_path)))
    assert bundle.logs[0].lines[-1].text == "RuntimeError: boom"
    assert sum(read) < 4 * MB, f"{sum(read) / MB:.0f} MB read from a 48 MB log"
    assert bundle.logs[0].lines[-1].line is None  # beyond COUNT_LIMIT: cited by byte offset, not counted


def test_the_same_files_are_read_whatever_the_clock_does(tmp_path, monkeypatch):
    for r in range(6):
        _write(str(tmp_path / f"rank_{r}.log"), f"[rank{r}]: step 1 loss=2.3\n" * 2000 + f"[rank{r}]: Error x\n")
    _write(str(tmp_path / "metrics.jsonl"), '{"step": 1, "loss": 2.3}\n')
    _write(str(tmp_path / "config.yaml"), "lr: 0.1\n")
    calm = collect(locate(str(tmp_path)))
    ticks = iter(range(0, 10 ** 9, 10_000))
    monkeypatch.setattr(time, "monotonic", lambda: float(next(ticks)))  # every look at the clock: hours later
    busy = collect(locate(str(tmp_path)))
    assert [f.to_json() for f in busy.files] == [f.to_json() for f in calm.files]
    assert [[ln.text for ln in log.lines] for log in busy.logs] == [[ln.text for ln in log.lines] for log in calm.logs]
    assert len(busy.files) == 8


def test_of_twenty_rank_logs_the_first_to_fail_is_read_first_and_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(safeio, "EVIDENCE_BYTES", 600 << 10)  # room for three of the twenty logs
    now = time.time()
    for r in range(20):
        body = "".join(f"[rank{r}]: step {i} loss={2.3 - i * 1e-5:.5f}\n" for i in range(6000))
        if r == 7:  # the rank that crashed: it stopped first
            body += f"[rank{r}]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
            t = now - 1800
        else:  # the others waited for it until the watchdog fired
            body += f"[rank{r}]: [E ProcessGroupNCCL.cpp:475] Watchdog caught collective operation timeout\n"
            t = now - 60 + r
        p = str(tmp_path / f"rank_{r}.log")
        _write(p, body)
        os.utime(p, (t, t))
    bundle = collect(locate(str(tmp_path)))
    first = bundle.logs[0]
    assert first.path == "rank_7.log"
    # a log over FULL_READ_LIMIT gives its head and its end, so analysing it costs the same at any size
    assert first.head and first.head[0].line == 1 and "illegal memory access" in first.lines[-1].text
    assert any("illegal memory access" in ln.text for ln in bundle.all_lines())
    assert any("byte budget" in n for n in bundle.notes)  # the budget did bind: later logs were cut short
    assert len(bundle.logs) == 20  # and every log still gave its end


def test_the_file_cap_keeps_the_relevant_files(tmp_path):
    now = time.time()
    for i in range(100):
        p = str(tmp_path / f"logs/worker_{i:03d}.log")
        _write(p, "step 1 loss=2.3\nstep 2 loss=2.2\n")
        os.utime(p, (now - 1000 + i, now - 1000 + i))
    err = str(tmp_path / "logs/worker_050b.log")  # neither among the newest nor among the oldest
    _write(err, "step 1 loss=2.3\nTraceback (most recent call last):\nRuntimeError: CUDA error: device-side assert\n")
    os.utime(err, (now - 950, now - 950))
    _write(str(tmp_path / "config.yaml"), "lr: 0.1\n")
    _write(str(tmp_path / "metrics.jsonl"), '{"step": 1, "loss": 2.3}\n')
    for s in range(20):
        _write(str(tmp_path / f"ckpt/step_{s}.pt"), "")
    bundle = collect(locate(str(tmp_path)))
    read = {f.path for f in bundle.files}
    assert len(read) == MAX_FILES_READ
    assert "logs/worker_050b.log" in read  # the log that shows the failure
    assert {"config.yaml", "metrics.jsonl"} <= read  # other kinds are not crowded out by logs
    assert any("not read" in n for n in bundle.notes)
    # among logs that show no failure, the newest are kept and the oldest are the ones left out
    assert "logs/worker_099.log" in read and "logs/worker_000.log" not in read


def test_a_log_that_ends_mid_line_says_so(tmp_path):
    _write(str(tmp_path / "train.log"), "step 1 loss=2.3\nstep 2 loss=2.2\nstep 3 lo")
    bundle = collect(locate(str(tmp_path)))
    assert any("ends without a newline (the writer may have been killed mid-line)" in n for n in bundle.notes)
    _write(str(tmp_path / "train.log"), "step 1 loss=2.3\nstep 2 loss=2.2\n")
    assert not any("without a newline" in n for n in collect(locate(str(tmp_path))).notes)


def test_the_lock_hash_covers_exactly_the_bytes_read(tmp_path):
    small = "step 1 loss=2.3\nRuntimeError: x\n"
    _write(str(tmp_path / "a/train.log"), small)
    rec = collect(locate(str(tmp_path / "a"))).files[0]
    assert rec.hashed == "whole" and rec.sha256 == hashlib.sha256(small.encode()).hexdigest()
    big = tmp_path / "b/train.log"
    lines = [f"step {i} loss=2.0000\n" for i in range(300_000)]
    _write(str(big), "".join(lines))

    def digest():
        r = collect(locate(str(tmp_path / "b"))).files[0]
        assert r.hashed == "head+tail"
        return r.sha256

    before = digest()
    data = bytearray(big.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 1] = b"7" if data[mid:mid + 1] != b"7" else b"8"  # a byte that was never read
    big.write_bytes(bytes(data))
    assert digest() == before
    data[-3:-2] = b"9" if data[-3:-2] != b"9" else b"1"  # a byte of the tail that was read
    big.write_bytes(bytes(data))
    assert digest() != before


def test_config_and_overrides_values_are_redacted_in_memory(tmp_path):
    _write(str(tmp_path / ".hydra/config.yaml"), "db:\n  password: hunter2horse\n  host: db1\n")
    _write(str(tmp_path / ".hydra/overrides.yaml"), "- +db.password=Hunter2Override\n")
    bundle = collect(locate(str(tmp_path)))
    values = {e.path: (e.key, e.value) for es in bundle.configs.values() for e in es if "password" in e.key}
    assert values == {".hydra/config.yaml": ("db.password", "[REDACTED:secret]"),
                      ".hydra/overrides.yaml": ("db.password", "[REDACTED:secret]")}
    assert json.dumps([e.text for es in bundle.configs.values() for e in es]).count("hunter2") == 0


def test_memory_follows_points_not_bytes_for_a_wide_metrics_file(tmp_path):
    from trainwreck.collect.metricfile import MAX_POINTS, SAMPLES, TAIL_ENTRIES
    head = "step,train_loss,val_loss,lr,grad_norm,train_acc\n"
    lines = _lines_until(FULL_PARSE_LIMIT - 64 - len(head), lambda i: f"{i},######,2.1,0.0003,1.5,0.5\n")
    body, k = _with_nan(lines, 0.7, "nan   ")
    _write(str(tmp_path / "metrics.csv"), head + _fill(body))
    step, bundle = _onset_step(tmp_path)
    assert step == k  # past the whole-parsed part: found by the scan
    points = sum(len(s.points) for ss in bundle.series.values() for s in ss)
    assert points <= MAX_POINTS + (SAMPLES + TAIL_ENTRIES + 1) * 5, points
    assert any(f"more than {MAX_POINTS} values" in n for n in bundle.notes)
