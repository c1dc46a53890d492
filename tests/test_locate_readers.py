"""Finding the run and reading its artifacts: what a user would notice (the right run, the right line)."""
import json
import os
import struct
import time
import zipfile

from trainwreck.collect import collect
from trainwreck.locate import NotFound, locate


def touch(path, text="", mtime=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if mtime:
        os.utime(path, (mtime, mtime))
        os.utime(os.path.dirname(path), (mtime, mtime))


def test_discovery_picks_the_most_recent_hydra_run(tmp_path):
    old = time.time() - 3600
    touch(tmp_path / "outputs/2026-11-01/09-00-00/train.log", "old", old)
    touch(tmp_path / "outputs/2026-11-01/10-00-00/.hydra/config.yaml", "a: 1")
    touch(tmp_path / "outputs/2026-11-01/10-00-00/train.log", "new")
    run = locate(None, str(tmp_path))
    assert run.root.endswith("10-00-00") and run.how == "most recent run"


def test_discovery_layouts(tmp_path):
    for layout in ("runs/exp1/train.log", "multirun/2026-11-01/10-00-00/3/train.log",
                   "lightning_logs/version_7/metrics.csv", "wandb/run-20261101_1/files/output.log"):
        d = tmp_path / layout.split("/")[0]
        touch(tmp_path / layout, "x")
        if layout.startswith("wandb"):
            os.symlink(tmp_path / "wandb/run-20261101_1", tmp_path / "wandb/latest-run")
            touch(tmp_path / "wandb/run-20261101_1/run-1.wandb", "")
        run = locate(None, str(tmp_path))
        assert os.path.realpath(run.root).startswith(os.path.realpath(d)), layout
        import shutil
        shutil.rmtree(d)


def test_hf_output_dir_is_found_by_trainer_state(tmp_path):
    touch(tmp_path / "out/checkpoint-500/trainer_state.json", '{"log_history": []}')
    assert locate(None, str(tmp_path)).root.endswith("out")


def test_nothing_found_raises_with_where(tmp_path):
    try:
        locate(None, str(tmp_path))
    except NotFound as exc:
        assert "lightning_logs/version_*" in str(exc)
    else:
        raise AssertionError("expected NotFound")


def test_trainer_state_values_cite_their_own_lines(tmp_path):
    state = {"global_step": 30, "log_history": [
        {"epoch": 0.1, "grad_norm": 1.2, "learning_rate": 5e-5, "loss": 2.31, "step": 10},
        {"epoch": 0.2, "grad_norm": float("nan"), "learning_rate": 5e-5, "loss": float("nan"), "step": 20}]}
    text = json.dumps(state, indent=2, sort_keys=True)
    touch(tmp_path / "trainer_state.json", text)
    b = collect(locate(str(tmp_path)))
    lines = text.splitlines()
    s = b.best_series("grad_norm")
    nan = [p for p in s.points if p.value != p.value][0]
    assert nan.step == 20 and '"grad_norm": NaN' in lines[nan.source.line - 1]


def test_lightning_metrics_csv(tmp_path):
    touch(tmp_path / "metrics.csv", "epoch,step,train_loss_step,val_loss\n0,49,2.3,\n0,99,nan,\n0,99,,2.1\n")
    b = collect(locate(str(tmp_path)))
    pts = b.best_series("loss").points
    assert [p.step for p in pts] == [49, 99] and pts[1].source.line == 3


def test_checkpoint_integrity_without_unpickling(tmp_path):
    os.makedirs(tmp_path / "ck")
    with zipfile.ZipFile(tmp_path / "ck/step_100.pt", "w") as z:
        z.writestr("archive/data.pkl", b"\x80\x02}q\x00.")  # never loaded
    good = open(tmp_path / "ck/step_100.pt", "rb").read()
    open(tmp_path / "ck/step_200.pt", "wb").write(good[: len(good) // 2])  # save interrupted
    open(tmp_path / "ck/step_300.pt", "wb").close()
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    open(tmp_path / "ck/model.safetensors", "wb").write(struct.pack("<Q", len(header)) + header + b"\0" * 8)
    touch(tmp_path / "train.log", "step 1 loss=2\n")
    b = collect(locate(str(tmp_path)))
    state = {c["path"]: c["ok"] for c in b.checkpoints}
    assert state == {"ck/step_100.pt": True, "ck/step_200.pt": False, "ck/step_300.pt": False,
                     "ck/model.safetensors": False}


def test_large_log_reads_head_and_tail_only(tmp_path):
    p = tmp_path / "train.log"
    with open(p, "w") as f:
        f.write("FIRST LINE config dump\n")
        for i in range(400_000):
            f.write(f"step {i} loss=2.0\n")
        f.write("LAST LINE\n")
    b = collect(locate(str(tmp_path)))
    log = b.logs[0]
    assert not log.complete and log.head[0].text == "FIRST LINE config dump"
    assert log.lines[-1].text == "LAST LINE" and log.lines[-1].line == 400_002
    assert len(log.lines) <= 500
    assert any("read its first" in n for n in b.notes)


def test_config_entries_cite_lines(tmp_path):
    touch(tmp_path / ".hydra/config.yaml", "trainer:\n  fp16: true\n  gradient_clip_val: null\n")
    touch(tmp_path / ".hydra/overrides.yaml", "- trainer.fp16=false\n")
    b = collect(locate(str(tmp_path)))
    e = b.config("fp16")
    assert (e.path, e.line, e.value) == (".hydra/config.yaml", 2, "true")


def test_rollback_picks_the_last_intact_checkpoint_before_the_grad_norm_spike(cli):
    from twtest import EXAMPLES
    p = cli("rollback", os.path.join(EXAMPLES, "nan-fp16"), "--json")
    r = json.loads(p.stdout)
    assert r["classification"] == "NaN" and r["onset_step"] == 350  # the grad-norm spike, before the NaN at 400
    assert r["rollback_to"]["path"] == "checkpoints/step_300.pt"
