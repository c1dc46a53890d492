"""A malformed file degrades, never aborts (issue 10, found 4): the verbs and the renderers. `init-loss` on a class
count that is no count, `eval` on hostile case.json files, the plot of a grad norm that is only NaN, a file name
that is not UTF-8, a renderer that raises — each gives a note or a one-line error, and `--out` is written
atomically: a failure part-way leaves the previous contents and no partial files."""
import json
import os

import pytest

from trainwreck.cli import main

TB = ("step 1 loss 2.30\nstep 2 loss 2.20\nTraceback (most recent call last):\n"
      '  File "train.py", line 3, in <module>\n    trainer.fit()\nRuntimeError: boom\n')
GOOD = "".join(json.dumps({"step": i, "loss": 2.3 - i * 0.01}) + "\n" for i in range(10))


def _run(tmp_path, files, name="run"):
    run = tmp_path / name
    run.mkdir()
    (run / "train.log").write_text(TB)
    for rel, data in files.items():
        (run / rel).write_text(data)
    return run


def _cli(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err, err
    return rc, out, err


# -- init-loss ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["1e999", "0", "-1", "ten", "9" * 401, "2.5"])
def test_init_loss_with_a_class_count_that_is_no_count(tmp_path, capsys, value):
    run = _run(tmp_path, {"metrics.jsonl": GOOD, "config.yaml": f"model:\n  num_classes: {value}\n"})
    rc, out, _err = _cli(capsys, "init-loss", str(run))
    assert rc == 0
    assert f"num_classes = {value[:40]} (config.yaml:2) is not a number of classes" in out
    assert "pass --num-classes or --vocab" in out and "first loss 2.3" in out


def test_init_loss_still_checks_a_real_class_count(tmp_path, capsys):
    run = _run(tmp_path, {"metrics.jsonl": GOOD, "config.yaml": "num_classes: 10\n"})
    rc, out, _err = _cli(capsys, "init-loss", str(run))
    assert rc == 0 and out.startswith("OK   first loss 2.3 matches ln(10)")


@pytest.mark.parametrize("value", ["0", "-1", "ten", "1e999"])
def test_init_loss_command_line_count_is_checked_by_the_parser(tmp_path, capsys, value):
    run = _run(tmp_path, {"metrics.jsonl": GOOD})
    with pytest.raises(SystemExit) as exc:
        main(["init-loss", str(run), f"--num-classes={value}"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1 and "--num-classes" in err


def test_diagnose_notes_the_refused_class_count(tmp_path, capsys):
    run = _run(tmp_path, {"metrics.jsonl": GOOD, "config.yaml": "vocab_size: 1e999\n"})
    rc, out, _err = _cli(capsys, "diagnose", str(run), "--json", "--no-probe")
    rep = json.loads(out)
    assert rc == 0 and rep["classification"] == "crash"
    assert any(n.startswith("vocab_size = 1e999 (config.yaml:1) is not a number of classes") for n in rep["notes"])


# -- eval on hostile case.json ------------------------------------------------------------------------------------

def test_eval_skips_and_names_each_unusable_case(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    labels = {"001-not-json": "{nope", "002-list": "[1, 2]", "003-no-keys": "{}",
              "004-bad-class": '{"classification": "bogus"}', "005-unhashable": '{"classification": ["crash"]}',
              "006-cause-int": '{"classification": "crash", "cause": 5}',
              "007-evidence-int": '{"classification": "crash", "evidence_line": 5}',
              "008-deep": "[" * 100_000 + "]" * 100_000,
              "009-good": '{"classification": "crash", "cause": ["boom"], "evidence_line": "RuntimeError: boom"}',
              "010-cause-string": '{"classification": "crash", "cause": "boom"}'}
    for case, label in labels.items():
        d = corpus / case
        d.mkdir(parents=True)
        (d / "train.log").write_text(TB)
        (d / "case.json").write_text(label)
    (corpus / "split.json").write_text('["009-good"]')  # not the {"test": [...]} shape: no test split
    (corpus / "batches.json").write_text('{"batches": [{"name": 3}, "x", {"name": "all", "range": [1, 10]}]}')
    rc, out, err = _cli(capsys, "eval", str(corpus), "--json")
    assert rc == 0
    r = json.loads(out)
    why = {s["case"]: s["why"] for s in r["skipped"]}
    assert why == {"001-not-json": "case.json is not valid JSON",
                   "002-list": "case.json holds a JSON list, not an object",
                   "003-no-keys": "case.json has no classification",
                   "004-bad-class": 'classification "bogus" is not one of NaN, OOM, divergence, stall, crash, unclear',
                   "005-unhashable": 'classification ["crash"] is not one of NaN, OOM, divergence, stall, crash, '
                                     'unclear',
                   "006-cause-int": "cause is not a list of phrases (strings)",
                   "007-evidence-int": "evidence_line is not a string",
                   "008-deep": "case.json is not valid JSON"}
    assert "trainwreck: 002-list: skipped, case.json holds a JSON list, not an object" in err
    assert r["cases"] == 2 and r["correct"] == 2 and r["cause_cases"] == 2 and r["cause_hit_rate"] == 1.0
    assert r["batches"][0]["name"] == "all" and len(r["batches"]) == 1


def test_eval_with_only_unusable_cases_is_a_one_line_error(tmp_path, capsys):
    d = tmp_path / "corpus" / "001"
    d.mkdir(parents=True)
    (d / "case.json").write_text('"crash"')
    rc, _out, err = _cli(capsys, "eval", str(tmp_path / "corpus"))
    assert rc == 2 and "no usable cases" in err


# -- the plot and the renderers ------------------------------------------------------------------------------------

def test_grad_norm_only_nan_still_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    rows = "".join(json.dumps({"step": i, "loss": 2.3 - i * 0.01, "grad_norm": float("nan")}) + "\n"
                   for i in range(1, 30))
    run = _run(tmp_path, {"metrics.jsonl": rows})
    out = tmp_path / "out"
    rc, _o, err = _cli(capsys, "diagnose", str(run), "--no-probe", "--out", str(out))
    assert rc == 0, err
    assert (out / "artifacts" / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_failing_plot_is_a_note(tmp_path, capsys, monkeypatch):
    from trainwreck.report import plot

    monkeypatch.setattr(plot, "plot", lambda *a: 1 / 0)
    out = tmp_path / "out"
    rc, _o, _e = _cli(capsys, "diagnose", str(_run(tmp_path, {"metrics.jsonl": GOOD})), "--no-probe", "--out", str(out))
    rep = json.loads((out / "report.json").read_text())
    assert rc == 0 and "no plot: the plot failed (ZeroDivisionError: division by zero)" in rep["notes"]
    assert not (out / "artifacts" / "curves.png").exists() and (out / "report.md").exists()


def test_a_failing_renderer_is_a_note_and_the_other_files_are_written(tmp_path, capsys, monkeypatch):
    from trainwreck.report import artifacts

    def broken(d):
        raise KeyError("summary")

    monkeypatch.setattr(artifacts, "markdown", broken)
    out = tmp_path / "out"
    rc, _o, _e = _cli(capsys, "diagnose", str(_run(tmp_path, {})), "--no-probe", "--out", str(out))
    assert rc == 0
    rep = json.loads((out / "report.json").read_text())
    assert "report.md was not written: its renderer failed (KeyError: 'summary')" in rep["notes"]
    assert not (out / "report.md").exists()
    assert (out / "meta" / "root-causes.json").exists() and (out / "artifacts" / "failure.lock.json").exists()


def test_a_failing_terminal_view_falls_back_to_json(tmp_path, capsys, monkeypatch):
    import trainwreck.report as report

    monkeypatch.setattr(report, "terminal", lambda d: 1 / 0)
    rc, out, err = _cli(capsys, "diagnose", str(_run(tmp_path, {})), "--no-probe")
    assert rc == 0 and "the terminal view failed (ZeroDivisionError" in err
    assert json.loads(out)["classification"] == "crash"


# -- a file name that is not UTF-8 ---------------------------------------------------------------------------------

def test_file_name_not_utf8_with_out(tmp_path, capsys):
    run = _run(tmp_path, {})
    with open(os.path.join(os.fsencode(run), b"\xff\xfe.log"), "wb") as f:
        f.write(TB.replace("boom", "second").encode())
    out = tmp_path / "out"
    rc, stdout, err = _cli(capsys, "diagnose", str(run), "--no-probe", "--json", "--out", str(out))
    assert rc == 0, err
    for text in (stdout, (out / "report.json").read_bytes().decode("utf-8")):  # valid UTF-8 throughout
        rep = json.loads(text)
        assert "\\xff\\xfe.log" in [f["path"] for f in rep["evidence_files"]]  # shown escaped, as `ls -b` does
        json.dumps(rep, ensure_ascii=False).encode("utf-8")  # nothing in it that UTF-8 cannot encode
    assert "\\xff\\xfe.log" in (out / "report.md").read_bytes().decode("utf-8")


@pytest.mark.parametrize("verb", [["collect", "--json"], ["collect"], ["diagnose", "--md"], ["diagnose"]])
def test_file_name_not_utf8_in_every_view(tmp_path, capsys, verb):
    run = _run(tmp_path, {})
    with open(os.path.join(os.fsencode(run), b"\xff\xfe.log"), "wb") as f:
        f.write(TB.encode())
    rc, out, err = _cli(capsys, verb[0], str(run), "--no-probe", *verb[1:])  # capsys writes strict UTF-8
    assert rc == 0, err
    if "--json" in verb:
        assert "\\xff\\xfe.log" in [f["path"] for f in json.loads(out)["files"]]
    elif verb != ["diagnose"]:  # the terminal view lists no file names; the others list every file read
        assert "\\xff\\xfe.log" in out


# -- --out is written atomically -------------------------------------------------------------------------------------

def _snapshot(folder):
    return {os.path.relpath(os.path.join(d, f), folder): open(os.path.join(d, f), "rb").read()
            for d, _dirs, files in os.walk(folder) for f in files}


def _leftovers(parent):
    return [p for p in os.listdir(parent) if p.startswith(".") or p.endswith((".tmp", ".partial"))]


def _first(tmp_path, capsys):
    run = _run(tmp_path, {"metrics.jsonl": GOOD})
    out = tmp_path / "out"
    rc, _o, _e = _cli(capsys, "diagnose", str(run), "--no-probe", "--out", str(out))
    assert rc == 0
    before = _snapshot(out)
    assert {"report.json", "report.md", "meta/root-causes.json"} <= set(before)
    (run / "train.log").write_text(TB.replace("boom", "second failure"))  # the next diagnosis differs
    return run, out, before


def test_report_json_renderer_raising_leaves_the_previous_out(tmp_path, capsys, monkeypatch):
    from trainwreck.report import artifacts

    run, out, before = _first(tmp_path, capsys)
    real, calls = artifacts._dump, []

    def dump(obj):  # the meta files are written into the staging folder, then report.json fails
        calls.append(1)
        if "classification" in obj and "evidence_files" in obj:
            raise TypeError("planted")
        return real(obj)

    monkeypatch.setattr(artifacts, "_dump", dump)
    rc, _o, err = _cli(capsys, "diagnose", str(run), "--no-probe", "--out", str(out))
    assert len(calls) >= 3  # it failed half-way, after other files were rendered
    assert rc == 2 and "could not render report.json (TypeError: planted)" in err
    assert _snapshot(out) == before
    assert _leftovers(tmp_path) == [] and _leftovers(out) == []


def test_disk_full_mid_write_leaves_the_previous_out(tmp_path, capsys, monkeypatch):
    import errno

    from trainwreck.report import artifacts

    run, out, before = _first(tmp_path, capsys)
    real, n = artifacts._put, []

    def put(stage, rel, text):
        n.append(rel)
        if len(n) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(stage, rel, text)

    monkeypatch.setattr(artifacts, "_put", put)
    rc, _o, err = _cli(capsys, "diagnose", str(run), "--no-probe", "--out", str(out))
    assert rc == 2 and "cannot write --out" in err and "No space left on device" in err
    assert _snapshot(out) == before and _leftovers(tmp_path) == []


def test_a_rename_failing_while_publishing_puts_the_previous_files_back(tmp_path, capsys, monkeypatch):
    from trainwreck.report.outdir import Folder

    run, out, before = _first(tmp_path, capsys)
    real, seen = Folder.rename, []

    def rename(self, name, dst, dst_name):  # every rename of the publish goes through the folders held open
        if dst.path == str(out) and self.path.endswith(".partial"):
            seen.append(dst_name)
            if len(seen) == 3:  # report.json and meta/ are in place, the third fails
                raise OSError(5, "Input/output error")
        real(self, name, dst, dst_name)

    monkeypatch.setattr(Folder, "rename", rename)
    rc, _o, err = _cli(capsys, "diagnose", str(run), "--no-probe", "--out", str(out))
    assert rc == 2 and "Input/output error" in err
    assert _snapshot(out) == before and _leftovers(tmp_path) == []


def test_out_is_replaced_whole_and_other_files_there_stay(tmp_path, capsys):
    run, out, before = _first(tmp_path, capsys)
    (out / "mine.txt").write_text("the user's own file")
    (out / "meta" / "stale.json").write_text("{}")  # trainwreck's folders hold one diagnosis, not two mixed
    rc, _o, _e = _cli(capsys, "diagnose", str(run), "--no-probe", "--out", str(out))
    assert rc == 0
    after = _snapshot(out)
    assert after["mine.txt"] == b"the user's own file"
    assert "meta/stale.json" not in after and "meta/root-causes.json" in after
    assert b"second failure" in after["report.json"] and after["report.json"] != before["report.json"]
    assert _leftovers(tmp_path) == [] and _leftovers(out) == []


def test_out_entry_that_holds_the_run_is_refused(tmp_path, capsys):
    parent = tmp_path / "p"
    parent.mkdir()
    run = _run(parent, {}, name="artifacts")  # the run is an artifacts/ folder; --out is its parent
    rc, _o, err = _cli(capsys, "diagnose", str(run), "--no-probe", "--out", str(parent))
    assert rc == 2 and "resolves into the run" in err and "never writes there" in err
    assert sorted(os.listdir(run)) == ["train.log"] and sorted(os.listdir(parent)) == ["artifacts"]
