"""`trainwreck eval`: dev and frozen-test figures apart, test misses counted but not listed unless asked, each
batch's recorded first look next to its accuracy today, outcome and cited-evidence hit rates."""
import json
import os
import shutil

from twtest import ROOT, run_cli

RUN = os.path.join(ROOT, "examples", "runs", "nan-fp16")


def _corpus(tmp_path):
    c = tmp_path / "corpus"
    for name, label in (("101-right", "NaN"), ("102-wrong-dev", "OOM"), ("201-wrong-test", "crash")):
        shutil.copytree(RUN, c / name)
        (c / name / "case.json").write_text(json.dumps({
            "classification": label, "cause": ["nan"], "outcome": "failed",
            "evidence_line": "this text is in no log"}))
    (c / "split.json").write_text(json.dumps({"test": ["201-wrong-test"]}))
    (c / "batches.json").write_text(json.dumps({"batches": [
        {"name": "b1", "range": [100, 199], "first_look": {"accuracy": 0.25}},
        {"name": "b2", "range": [200, 299], "first_look": None}]}))
    return str(c)


def test_dev_and_test_are_scored_apart_and_test_misses_stay_hidden(tmp_path):
    c = _corpus(tmp_path)
    r = json.loads(run_cli("eval", c, "--json").stdout)
    assert (r["dev"]["cases"], r["dev"]["correct"]) == (2, 1)
    assert (r["test"]["cases"], r["test"]["correct"]) == (1, 0)
    assert [m["case"] for m in r["misses"]] == ["102-wrong-dev"]
    assert r["test_misses_hidden"] == 1
    shown = json.loads(run_cli("eval", c, "--json", "--show-test-misses").stdout)
    assert {m["case"] for m in shown["misses"]} == {"102-wrong-dev", "201-wrong-test"}
    assert r["dev"]["evidence_hit_rate"] == 0.0 and r["dev"]["evidence_cases"] == 2


def test_batches_show_first_look_next_to_now(tmp_path):
    p = run_cli("eval", _corpus(tmp_path))
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "| b1 (100–199) | 2 | 25% | 50% |" in out
    assert "| b2 (200–299) | 1 | — | 0% |" in out
    assert "1 test-split misses not listed" in out
    assert "102-wrong-dev" in out and "201-wrong-test" not in out


def test_a_batch_numbered_in_several_blocks_counts_them_all(tmp_path):
    c = _corpus(tmp_path)
    with open(os.path.join(c, "batches.json"), "w") as f:
        json.dump({"batches": [{"name": "b12", "ranges": [[101, 101], [200, 299]], "first_look": {"accuracy": 0.5}},
                               {"name": "bad", "ranges": [[1, "x"]]}]}, f)
    p = run_cli("eval", c)
    assert "| b12 (101–101, 200–299) | 2 | 50% | 50% |" in p.stdout, p.stdout
    r = json.loads(run_cli("eval", c, "--json").stdout)
    assert [b["name"] for b in r["batches"]] == ["b12"] and r["batches"][0]["ranges"] == [[101, 101], [200, 299]]


def test_a_cases_label_is_never_read_as_its_evidence(tmp_path):
    """A case whose only text is its case.json: the label's own words ("loss: nan at step 30") must not diagnose
    it; the case is a miss ("nothing to diagnose"), not a NaN found in its label."""
    c = tmp_path / "corpus"
    (c / "101-label-only").mkdir(parents=True)
    (c / "101-label-only" / "case.json").write_text(json.dumps({
        "classification": "NaN", "cause": ["nan"], "outcome": "failed",
        "note": "the log said: step 30 loss: nan, step 31 loss: nan, step 32 loss: nan, step 33 loss: nan"}))
    r = json.loads(run_cli("eval", str(c), "--json").stdout)
    assert r["correct"] == 0
    assert r["misses"][0]["got"].startswith("error: nothing to diagnose"), r["misses"]


def test_the_outcome_line_counts_as_cited_evidence(tmp_path):
    """An interrupted run's decisive line is the scheduler's, cited by the outcome record, not by a cause."""
    c = tmp_path / "corpus" / "101-time-limit"
    c.mkdir(parents=True)
    (c / "slurm-77.out").write_text("".join(f"epoch {i} step {i * 100} loss {2.0 - i / 100:.3f}\n" for i in range(50))
                                    + "slurmstepd: error: *** JOB 77 ON node12 CANCELLED AT 2026-11-02T04:13:55 "
                                      "DUE TO TIME LIMIT ***\n")
    (c / "case.json").write_text(json.dumps({"classification": "unclear", "outcome": "interrupted",
                                             "cause": ["time limit"], "evidence_line": "DUE TO TIME LIMIT"}))
    r = json.loads(run_cli("eval", str(tmp_path / "corpus"), "--json").stdout)
    assert r["dev"]["outcome_accuracy"] == 1.0
    assert r["dev"]["evidence_hit_rate"] == 1.0
