"""The CLI contract other tools depend on: JSON validates against the shipped schema, --out writes the snapshot,
exit statuses, and every example run gets the classification its name promises."""
import glob
import json
import os

import pytest
from twtest import EXAMPLES, ROOT

jsonschema = pytest.importorskip("jsonschema")
SCHEMA = json.load(open(os.path.join(ROOT, "trainwreck", "schemas", "diagnosis.schema.json")))
RUNS = sorted(d for d in glob.glob(os.path.join(EXAMPLES, "*")) if os.path.isdir(d))
EXPECTED = {"nan-fp16": "NaN", "oom-cuda": "OOM", "divergence-lr": "divergence", "stall-nccl": "stall",
            "crash-shape": "crash", "unclear-silent": "unclear"}


def test_every_classification_has_an_example_run():
    from trainwreck.model import CLASSIFICATIONS
    names = {os.path.basename(r) for r in RUNS}
    assert set(EXPECTED) <= names
    # the engine's own list of classes (not a copy of it): a new class needs an example run, and so does the schema
    assert set(EXPECTED.values()) == set(CLASSIFICATIONS)
    assert set(SCHEMA["properties"]["classification"]["enum"]) == set(CLASSIFICATIONS)


@pytest.mark.parametrize("run", RUNS, ids=os.path.basename)
def test_example_json_report(run, cli, tmp_path):
    p = cli("diagnose", run, "--json", "--out", str(tmp_path / "out"), "--no-probe")
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    jsonschema.validate(rep, SCHEMA)
    want = EXPECTED.get(os.path.basename(run))
    if want:
        assert rep["classification"] == want, rep["headline"]
    for f in ["report.json", "report.md", "meta/failure-profile.json", "meta/root-causes.json",
              "artifacts/failure.lock.json"]:
        assert (tmp_path / "out" / f).is_file(), f
    # every cited line is verbatim the line of that file (after redaction; these examples hold no secrets)
    for c in rep["causes"] + rep["contributing_factors"]:
        for ev in c["evidence"]:
            if "text" in ev and ev.get("line") and not ev["path"].startswith("/"):
                lines = open(os.path.join(run, ev["path"]), encoding="utf-8", errors="replace").read().split("\n")
                assert lines[ev["line"] - 1].rstrip("\r") == ev["text"], ev
    lock = json.load(open(tmp_path / "out" / "artifacts" / "failure.lock.json"))
    assert {f["path"] for f in lock["files"]} == {f["path"] for f in rep["evidence_files"]}
    assert all(len(f["sha256"]) == 64 for f in lock["files"])


def test_nan_example_reads_like_the_design(cli):
    p = cli("diagnose", os.path.join(EXAMPLES, "nan-fp16"), "--no-probe")
    out = " ".join(p.stdout.split())  # the renderer wraps long rows
    assert p.returncode == 0
    assert "NaN at step 400" in out
    assert "[DIRECT]" in out and "metrics.jsonl" in out
    assert "gradient_clip_val" in out  # the config factor, cited
    assert "consequence, not the cause" in out and "on rank 3" in out  # the OOM after the NaN
    assert "/trainwreck:" in out and "checkpoints/step_300.pt" in out


def test_missing_path_is_exit_2_without_traceback(cli):
    p = cli("diagnose", "/nonexistent/run/dir", "--json")
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and "no such file or directory" in p.stderr


def test_nothing_found_says_where_it_looked(cli, tmp_path):
    p = cli("diagnose", cwd=str(tmp_path))
    assert p.returncode == 2
    assert "runs/*" in p.stderr and "outputs/*/*" in p.stderr and "trainwreck diagnose PATH" in p.stderr


def test_out_inside_run_is_refused(cli, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("step 1 loss=2.3\n")
    p = cli("diagnose", str(run), "--out", str(run / "diag"), "--no-probe")
    assert p.returncode == 2 and "never writes there" in p.stderr
    assert not (run / "diag").exists()


def test_help_teaches(cli):
    p = cli("diagnose", "--help")
    assert p.returncode == 0
    for word in ("--json", "--out", "--no-probe", "Hydra", "NaN | OOM | divergence | stall | crash | unclear"):
        assert word in p.stdout
    p = cli("frobnicate")
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_same_input_same_diagnosis(cli):
    run = os.path.join(EXAMPLES, "nan-fp16")
    a = json.loads(cli("diagnose", run, "--json", "--no-probe").stdout)
    b = json.loads(cli("diagnose", run, "--json", "--no-probe").stdout)
    assert a == b


def test_single_log_file_target(cli):
    p = cli("diagnose", os.path.join(EXAMPLES, "oom-cuda", "stderr.txt"), "--json", "--no-probe")
    rep = json.loads(p.stdout)
    assert rep["classification"] == "OOM"
    assert [f["path"] for f in rep["evidence_files"]] == ["stderr.txt"]


def test_probe_reports_missing_gpu_cleanly(cli):
    """Real pynvml: without an NVIDIA driver (or without nvidia-ml-py) the probe says why in the notes; with a GPU
    it adds no such note. Either way the probe never changes the answer or fails the run."""
    p = cli("diagnose", os.path.join(EXAMPLES, "crash-shape"), "--json")
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["classification"] == "crash"
    gpu_notes = [n for n in rep["notes"] if n.startswith("GPU probe")]
    try:
        import pynvml
    except ImportError:
        assert gpu_notes == ["GPU probe: nvidia-ml-py is not installed (pip install nvidia-ml-py)"]
        return
    try:
        pynvml.nvmlInit()
        pynvml.nvmlShutdown()
    except Exception:
        assert len(gpu_notes) == 1 and "NVML could not start" in gpu_notes[0] and "no NVIDIA driver" in gpu_notes[0]
    else:
        assert gpu_notes == []
    assert not any(n.startswith("--no-probe") for n in rep["notes"])  # the probe did run
