"""A malformed file degrades, never aborts (issue 10, found 4): each reader turns one bad record or one bad file into
a note naming the file (and the line), and the rest of the diagnosis stands — exit 0, the other evidence read.

Every payload is written into a real run directory here; the run also holds a real traceback (the wording
Python prints), so "the rest stands" is checked as: the crash is still diagnosed from train.log."""
import json
import struct

import pytest

from trainwreck.cli import main

TB = ("step 1 loss 2.30\nstep 2 loss 2.20\nTraceback (most recent call last):\n"
      '  File "train.py", line 3, in <module>\n    trainer.fit()\nRuntimeError: boom\n')
BIG = "9" * 401  # a JSON integer no float can hold: float() raises OverflowError
GOOD = "".join(json.dumps({"step": i, "loss": 2.0 - i * 0.01}) + "\n" for i in range(10))


def _run(tmp_path, files):
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text(TB)
    for rel, data in files.items():
        p = run / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return run


def _diagnose(capsys, run, *extra):
    rc = main(["diagnose", str(run), "--json", "--no-probe", *extra])
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err, err
    assert rc == 0, err
    rep = json.loads(out)
    assert rep["classification"] == "crash", rep["headline"]  # the rest of the diagnosis stands
    assert "RuntimeError: boom" in json.dumps(rep["primary_cause"])
    return rep


def _notes(rep):
    return "\n".join(rep["notes"])


# -- numbers no float holds, steps that are no step -------------------------------------------------------------

def test_jsonl_integer_too_large_skips_that_value_and_keeps_the_file(tmp_path, capsys):
    run = _run(tmp_path, {"metrics.jsonl": GOOD + '{"step": 10, "loss": ' + BIG + '}\n'})
    rep = _diagnose(capsys, run)
    assert "metrics.jsonl: line 11: loss: integer too large, skipped" in _notes(rep)
    loss = rep["metrics_summary"]["loss"]
    assert loss["path"] == "metrics.jsonl" and loss["n"] == 10 and loss["nonfinite"] == 0  # never read as inf


def test_jsonl_step_too_large_or_not_finite_reads_values_without_a_step(tmp_path, capsys):
    bad = ['{"step": ' + BIG + ', "loss": 1.5}', '{"step": Infinity, "loss": 1.5}', '{"step": NaN, "loss": 1.5}',
           '{"step": "inf", "loss": 1.5}', '{"step": 1e308, "loss": 1.5}']
    run = _run(tmp_path, {"metrics.jsonl": GOOD + "\n".join(bad) + "\n"})
    rep = _diagnose(capsys, run)
    notes = _notes(rep)
    assert "metrics.jsonl: line 11: step is a 401-digit integer, out of range; read without a step" in notes
    # the string "inf" of line 14 is the same finding as line 12's Infinity: one note that counts both
    assert "line 12: step is Infinity, not a step number; read without a step (and 1 more such line)" in notes
    assert "line 13: step is NaN, not a step number" in notes
    assert "line 15: step is 1e+308, out of range" in notes
    loss = rep["metrics_summary"]["loss"]
    assert loss["n"] == 15 and loss["last_step"] == 9  # no 400-digit step reaches the report


def test_trainer_state_integer_too_large_and_infinite_step(tmp_path, capsys):
    state = ('{\n  "global_step": 3,\n  "log_history": [\n    {"step": 1, "loss": 2.0},\n'
             '    {"step": 2, "loss": ' + BIG + '},\n    {"step": Infinity, "loss": 1.0},\n'
             '    {"step": NaN, "loss": 0.9}\n  ],\n  "max_steps": ' + BIG + '\n}\n')
    run = _run(tmp_path, {"trainer_state.json": state})
    rep = _diagnose(capsys, run)
    notes = _notes(rep)
    assert "trainer_state.json: line 5: loss: integer too large, skipped" in notes
    assert "trainer_state.json: line 6: step is Infinity, not a step number; read without a step" in notes
    assert "trainer_state.json: line 7: step is NaN, not a step number" in notes
    assert "max_steps is out of range, not read" in notes


def test_json_history_integer_too_large(tmp_path, capsys):
    run = _run(tmp_path, {"history.json": '{"loss": [2.0, ' + BIG + ', 1.5, 1.2], "accuracy": [0.1, 0.2, 0.3, 0.4]}'})
    rep = _diagnose(capsys, run)
    assert "history.json: line 1: loss: integer too large, skipped" in _notes(rep)


def test_csv_step_column_inf_nan_and_huge_integers(tmp_path, capsys):
    csv = "step,loss\n1,2.0\ninf,1.9\nnan,1.8\n-inf,1.7\n" + "9" * 400 + ",1.6\n6," + BIG + "\n7,1.4\n"
    rep = _diagnose(capsys, _run(tmp_path, {"metrics.csv": csv}))
    notes = _notes(rep)
    assert "metrics.csv: line 3: step is Infinity, not a step number; read without a step" in notes
    assert "metrics.csv: line 4: step is NaN" in notes and "metrics.csv: line 5: step is -Infinity" in notes
    assert "metrics.csv: line 6: step is a 400-digit integer, out of range" in notes
    assert "metrics.csv: line 7: loss: integer too large, skipped" in notes
    loss = rep["metrics_summary"]["loss"]
    assert loss["path"] == "metrics.csv" and loss["nonfinite"] == 0 and loss["last_step"] == 7


def test_csv_field_larger_than_the_csv_modules_limit(tmp_path, capsys):
    # csv.field_size_limit() is 131,072 by default: a quoted cell longer than that makes csv.reader raise
    huge = "x" * 140_000
    csv = f'step,loss,note\n1,2.0,ok\n2,1.9,"{huge}"\n3,1.8,"a,b"\n'
    rep = _diagnose(capsys, _run(tmp_path, {"metrics.csv": csv}))
    # the row is read from its start, by position, up to the 64 KB bound: its step and loss stand, the cut cell goes
    assert "metrics.csv: line 3: row longer than 64 KB; its first 2 cells read" in _notes(rep)
    loss = rep["metrics_summary"]["loss"]
    assert loss["path"] == "metrics.csv" and loss["n"] == 3 and loss["last_step"] == 3  # the rows around it stand


# -- safetensors headers ------------------------------------------------------------------------------------------

def _safetensors(path):
    """A valid safetensors file, by the real library when installed, else by the format (8-byte little-endian
    header length, the JSON header, the tensor bytes)."""
    try:
        import numpy as np
        from safetensors.numpy import save_file
    except ImportError:
        header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
        path.write_bytes(struct.pack("<Q", len(header)) + header + b"\x00" * 8)
        return
    save_file({"w": np.zeros(2, dtype=np.float32)}, str(path))


def _with_header(path, header):
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    body = data[8 + n:]
    new = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(new)) + new + body)


@pytest.mark.parametrize("header, problem", [
    ([1, 2, 3], "header is a JSON list, not an object"),
    ("model", "header is a JSON string, not an object"),
    ({"w": "F32"}, "describes tensor 'w' with a string, not an object"),
    ({"w": {"dtype": "F32", "shape": [2], "data_offsets": 8}}, "data_offsets that are not a [begin, end] pair"),
    ({"w": {"dtype": "F32", "shape": [2], "data_offsets": []}}, "data_offsets that are not a [begin, end] pair"),
    ({"w": {"dtype": "F32", "shape": [2], "data_offsets": ["0", "8"]}}, "data_offsets that are not a [begin"),
    ({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 10 ** 400]}}, "tensors need more bytes"),
])
def test_safetensors_header_of_the_wrong_shape_is_a_corrupt_checkpoint(tmp_path, capsys, header, problem):
    run = _run(tmp_path, {})
    ckpt = run / "checkpoints" / "step_100.safetensors"
    ckpt.parent.mkdir()
    _safetensors(ckpt)
    _safetensors(run / "checkpoints" / "step_50.safetensors")
    _with_header(ckpt, header)
    rep = _diagnose(capsys, run)
    got = {c["path"]: c for c in rep["checkpoints"]}
    assert got["checkpoints/step_50.safetensors"]["ok"] is True  # the check still tells a good file
    bad = got["checkpoints/step_100.safetensors"]
    assert bad["ok"] is False and problem in bad["problem"], bad


# -- torchelastic error.json ----------------------------------------------------------------------------------

@pytest.mark.parametrize("doc, said", [
    ({"message": {"message": "RuntimeError: boom", "extraInfo": "see logs"}},
     "message.extraInfo is a string, not an object"),
    ({"message": {"message": "RuntimeError: boom", "extraInfo": {"py_callstack": 7}}},
     "extraInfo.py_callstack is a number, not a string"),
    ({"message": {"message": ["RuntimeError"], "extraInfo": {}}}, "message.message is a list, not a string"),
])
def test_error_json_of_another_shape_is_read_for_what_it_holds(tmp_path, capsys, doc, said):
    rep = _diagnose(capsys, _run(tmp_path, {"error.json": json.dumps(doc)}))
    assert f"error.json: not the torchelastic error-file shape ({said})" in _notes(rep)


def test_error_json_string_extrainfo_still_gives_its_message(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()  # no log: the error file alone says what failed
    (run / "error.json").write_text(json.dumps({"message": {
        "message": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "extraInfo": "x"}}))
    rc = main(["diagnose", str(run), "--json", "--no-probe"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert json.loads(out)["classification"] == "OOM"


# -- the safety net: a reader that raises ------------------------------------------------------------------------

def test_a_reader_that_raises_is_a_note_and_what_it_read_is_dropped(tmp_path, capsys, monkeypatch):
    from trainwreck.collect.readers import jsonl

    real = jsonl.read

    def broken(bundle, entry, ctx):
        real(bundle, entry, ctx)  # it read everything, then failed: nothing half-trusted may stay
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(jsonl, "read", broken)
    rep = _diagnose(capsys, _run(tmp_path, {"metrics.jsonl": GOOD}))
    assert ("metrics.jsonl: skipped, the jsonl reader failed on it (ZeroDivisionError: planted); the rest of the "
            "diagnosis stands") in _notes(rep)
    assert rep["metrics_summary"]["loss"]["path"] == "train.log"
    assert "metrics.jsonl" not in [f["path"] for f in rep["evidence_files"]]


def test_the_only_file_failing_is_nothing_to_diagnose_not_a_traceback(tmp_path, capsys, monkeypatch):
    from trainwreck.collect.readers import logs

    monkeypatch.setattr(logs, "read", lambda *a: (_ for _ in ()).throw(TypeError("planted")))
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text(TB)
    rc = main(["diagnose", str(run), "--no-probe"])
    err = capsys.readouterr().err
    assert rc == 2 and "train.log: skipped, the logs reader failed on it (TypeError: planted)" in err
    assert len(err.strip().splitlines()) == 1



def test_a_system_probe_that_raises_is_a_note(tmp_path, capsys, monkeypatch):
    import trainwreck.probes as probes

    monkeypatch.setattr(probes, "probe_system", lambda bundle: {}["gpu"])
    rc = main(["diagnose", str(_run(tmp_path, {})), "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    rep = json.loads(out)
    assert rep["classification"] == "crash"
    assert "system probe failed (KeyError: 'gpu'); the live machine was not examined" in rep["notes"]


def test_a_400_digit_value_in_a_log_line_or_table_is_no_infinity(tmp_path):
    """Digits that overflow a float are a number too large, not an infinity: reading them as inf would invent a
    NaN/Inf failure (the JSON and CSV readers refuse them the same way)."""
    from trainwreck.collect.textmetrics import extract
    from trainwreck.pipeline import diagnose

    assert extract("step 10 loss=" + "1" * 400 + " lr=3e-4") == (10, {"lr": 3e-4})
    assert extract("step 10 loss=inf lr=3e-4")[1]["loss"] == float("inf")  # a written inf stays one
    lines = [f"step {i} loss={2.0 - i / 100:.3f} lr=3e-4" for i in range(1, 30)]
    lines.insert(15, "step 15 loss=" + "9" * 400 + " lr=3e-4")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    rows = ["| epoch | loss | acc |", "|---|---|---|"] + [f"| {e} | {1.0 - e / 50:.3f} | 0.5 |" for e in range(20)]
    rows.insert(10, "| 8 | " + "7" * 400 + " | 0.5 |")
    (tmp_path / "table.md").write_text("\n".join(rows) + "\n")
    d = diagnose(str(tmp_path), probe=False).diagnosis.to_json()
    assert d["classification"] != "NaN", d["headline"]
    assert all(s["nonfinite"] == 0 for s in d["metrics_summary"].values()), d["metrics_summary"]


def test_a_stable_baselines_block_whose_counter_is_inf_is_read_without_a_step(tmp_path):
    """SB3's console dump (`| time/total_timesteps | inf |`): an infinite counter is no step, never a crash of the
    whole log (int(inf) raised OverflowError out of the table reader)."""
    from trainwreck.pipeline import diagnose

    dash = "-" * 40
    block = [dash, "| rollout/            |          |", "|    ep_rew_mean      | -200     |",
             "| time/               |          |", "|    total_timesteps  | inf      |",
             "| train/              |          |", "|    value_loss       | 0.52     |", dash]
    (tmp_path / "train.log").write_text("\n".join(block * 3) + "\n")
    d = diagnose(str(tmp_path), probe=False).diagnosis.to_json()
    assert d["metrics_summary"], d["notes"]
    assert not any("OverflowError" in n for n in d["notes"]), d["notes"]
