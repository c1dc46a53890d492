"""Run discovery: the newest evidence wins across every layout, a stray root log never swallows the runs beside
it, and the CLI and the prompt-router hook name the same run (one discovery, imported by both)."""
import json
import os
import sys
import time

import pytest
from twtest import EXAMPLES, ROOT, run_cli

from trainwreck.collect import collect
from trainwreck.locate import NotFound, locate
from trainwreck.locate.discovery import MAX_INSPECT

sys.path.insert(0, os.path.join(ROOT, "tests", "hooks"))
from hookrun import run_hook  # noqa: E402

NOW = time.time()
H = 3600
D = 86400
STATE = json.dumps({"global_step": 20, "log_history": [{"loss": 2.3, "step": 10}, {"loss": 2.1, "step": 20}]})


def build(root, files, links=()):
    """Write `files` ({relative path: age in seconds}) and date each file that old. Each folder is dated by
    its oldest entry (when it was populated), so only the files say how recent a run is."""
    for rel, age in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(STATE if rel.endswith("trainer_state.json") else "step 1 loss=2.30\nstep 2 loss=2.10\n")
        os.utime(p, (NOW - age, NOW - age))
    for link, target in links:
        os.symlink(os.path.join(root, target), os.path.join(root, link))
    for d, _dirs, _files in sorted(os.walk(root), key=lambda w: -len(w[0])):
        ages = [os.lstat(os.path.join(d, n)).st_mtime for n in os.listdir(d)]
        if ages:
            os.utime(d, (min(ages), min(ages)))


# layout name -> (files with ages, symlinks, the target `trainwreck diagnose` should pick in the root)
LAYOUTS = {
    "old runs/ beside a fresh Hydra run": (
        {"runs/old/train.log": 2 * D, "runs/old/events.out.tfevents.1": 2 * D,
         "outputs/2026-11-30/23-10-00/train.log": 10 * H,
         "outputs/2026-12-01/10-00-00/.hydra/config.yaml": H, "outputs/2026-12-01/10-00-00/train.log": 60},
        (), "outputs/2026-12-01/10-00-00"),
    "lightning version_1 newer than version_0": (
        {"lightning_logs/version_0/metrics.csv": 2 * D, "lightning_logs/version_0/hparams.yaml": 2 * D,
         "lightning_logs/version_1/metrics.csv": 120, "lightning_logs/version_1/hparams.yaml": H},
        (), "lightning_logs/version_1"),
    "a run still writing beats a later run that stopped": (
        {"lightning_logs/version_0/hparams.yaml": 3 * D, "lightning_logs/version_0/metrics.csv": 30,
         "lightning_logs/version_1/hparams.yaml": D, "lightning_logs/version_1/metrics.csv": D},
        (), "lightning_logs/version_0"),
    "root lightning_logs older than a nested one": (
        {"lightning_logs/version_0/metrics.csv": 2 * D, "tb/lightning_logs/version_1/metrics.csv": 300},
        (), "tb/lightning_logs/version_1"),
    "nohup.out at the root beside fresh runs": (
        {"nohup.out": 5 * H, "train.py": 60, "config.yaml": 60, "runs/exp1/train.log": 2 * D,
         "runs/exp2/train.log": 600},
        (), "runs/exp2"),
    "a root log newer than every run": (
        {"nohup.out": 30, "runs/exp1/train.log": 2 * D, "runs/exp2/train.log": H},
        (), "nohup.out"),
    "slurm logs at the root beside an older Hydra run": (
        {"slurm-41.out": D, "slurm-42.out": 90, "outputs/2026-12-01/09-00-00/.hydra/config.yaml": 2 * H,
         "outputs/2026-12-01/09-00-00/train.log": 2 * H},
        (), "slurm-42.out"),
    "wandb latest-run": (
        {"wandb/run-20261130_100000-old/run-old.wandb": D,
         "wandb/run-20261130_100000-old/files/output.log": D,
         "wandb/run-20261201_100000-abc/run-abc.wandb": 60,
         "wandb/run-20261201_100000-abc/files/output.log": 60,
         "wandb/debug.log": 60, "runs/exp1/train.log": 2 * H},
        [("wandb/latest-run", "wandb/run-20261201_100000-abc")], "wandb/latest-run"),
    "HF output_dir beside an older run": (
        {"out/checkpoint-500/trainer_state.json": 2 * H, "out/checkpoint-1000/trainer_state.json": 300,
         "out/checkpoint-1000/model.safetensors": 300, "runs/exp1/train.log": D},
        (), "out"),
    "HF output_dir one level inside outputs/": (
        {"outputs/bert-ft/checkpoint-200/trainer_state.json": 120, "runs/exp1/train.log": D},
        (), "outputs/bert-ft"),
    "multirun sweep": (
        {"multirun/2026-12-01/08-00-00/0/train.log": 3 * H, "multirun/2026-12-01/08-00-00/1/train.log": H,
         "multirun/2026-12-01/08-00-00/2/train.log": 2 * H},
        (), "multirun/2026-12-01/08-00-00/1"),
    "plain run folders beside nohup.out": (
        {"nohup.out": 2 * H, "exp_a/config.yaml": D, "exp_a/train.log": D, "exp_b/config.yaml": H,
         "exp_b/train.log": 600, "src/model.py": 10},
        (), "exp_b"),
    "a run folder with records keeps its own lightning_logs": (
        {"exp1/.hydra/config.yaml": H, "exp1/train.log": 600, "exp1/lightning_logs/version_0/metrics.csv": 60,
         "runs/old/train.log": D},
        (), "exp1"),
    "a folder of loose logs holding Lightning runs is split: the newest run": (
        {"exp/train.log": D, "exp/lightning_logs/version_0/metrics.csv": 2 * D,
         "exp/lightning_logs/version_1/metrics.csv": 60},
        (), "exp/lightning_logs/version_1"),
    "a folder of loose logs holding Lightning runs is split: its newer log": (
        {"exp/train.log": 30, "exp/lightning_logs/version_1/metrics.csv": H},
        (), "exp/train.log"),
    "a Hydra run folder with its own lightning_logs is one run": (
        {".hydra/config.yaml": H, "train.log": 600, "lightning_logs/version_0/metrics.csv": 60},
        (), "."),
    "a run folder whose logs/ holds more logs is one run": (
        {"config.yaml": H, "train.log": 600, "logs/worker0.log": 60, "logs/worker1.log": 60},
        (), "."),
}


def _router_target(cwd):
    rc, out, err = run_hook("UserPromptSubmit", {"session_id": "s", "transcript_path": "/nonexistent",
                                                 "cwd": str(cwd), "hook_event_name": "UserPromptSubmit",
                                                 "prompt": "my loss is NaN at step 400"})
    assert rc == 0 and "Traceback" not in err, err
    line = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    return line.split("/trainwreck:diagnose ", 1)[1].split(" (", 1)[0]


@pytest.mark.parametrize("name", LAYOUTS)
def test_discovery_picks_the_newest_evidence(tmp_path, name):
    files, links, want = LAYOUTS[name]
    build(str(tmp_path), files, links)
    run = locate(None, str(tmp_path))
    assert run.target == want
    if want.endswith((".out", ".log")):  # a root log won: that one file is the run, not the project tree
        assert run.single_file == os.path.join(os.path.realpath(tmp_path), want)
        assert [f.path for f in collect(run).files] == [os.path.basename(want)]
    else:
        assert run.single_file is None


@pytest.mark.parametrize("name", LAYOUTS)
def test_cli_and_prompt_router_name_the_same_run(tmp_path, name):
    files, links, want = LAYOUTS[name]
    build(str(tmp_path), files, links)
    p = run_cli("diagnose", "--no-probe", "--json", cwd=str(tmp_path))
    assert p.stdout, p.stderr
    cli_target = json.loads(p.stdout)["target"]
    assert cli_target == _router_target(tmp_path) == want


def test_the_project_folder_is_no_longer_the_run_when_runs_sit_beside_a_log(tmp_path):
    build(str(tmp_path), {"nohup.out": 2 * H, "runs/exp1/metrics.jsonl": 60})
    run = locate(str(tmp_path))  # named explicitly: the same rule as in the current directory
    assert run.root == os.path.realpath(tmp_path / "runs" / "exp1")
    assert run.how == f"most recent run under {tmp_path}"


def test_an_explicit_run_directory_is_diagnosed_whole():
    run = locate(os.path.join(EXAMPLES, "nan-fp16"))
    assert run.root == os.path.realpath(os.path.join(EXAMPLES, "nan-fp16")) and run.how == "run directory"
    assert run.single_file is None


def test_a_run_folder_with_only_loose_logs_is_the_run(tmp_path):
    build(str(tmp_path), {"train.log": 60, "config.yaml": 60})
    assert locate(None, str(tmp_path)).how == "current directory"
    assert locate(str(tmp_path)).how == "run directory"


def test_an_explicit_log_file(tmp_path):
    build(str(tmp_path), {"runs/exp1/train.log": 60, "old.log": D})
    run = locate(str(tmp_path / "old.log"))
    assert run.single_file == os.path.realpath(tmp_path / "old.log") and run.how == "log file"


def test_fifo_and_missing_paths_are_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotFound, match="FIFO"):
        locate(str(tmp_path / "pipe"))
    with pytest.raises(NotFound, match="no such file"):
        locate(str(tmp_path / "nope"))


def test_nothing_found_says_where_it_looked(tmp_path):
    build(str(tmp_path), {"src/model.py": 60, "configs/config.yaml": 60})  # a config alone is not a run
    with pytest.raises(NotFound) as exc:
        locate(None, str(tmp_path))
    msg = str(exc.value)
    for where in ("runs/*", "outputs/*/*", "multirun/*/*/*", "lightning_logs/version_*", "wandb/latest-run"):
        assert where in msg
    assert locate(str(tmp_path)).how == "directory"  # named explicitly: diagnosed as it is


def test_many_runs_the_newest_is_found(tmp_path):
    files = {f"runs/r{i:04d}/train.log": D + i for i in range(1500)}
    files["runs/r0777/train.log"] = 60
    build(str(tmp_path), files)
    assert locate(None, str(tmp_path)).target == os.path.join("runs", "r0777")


def test_the_newest_of_many_root_logs_is_found(tmp_path):
    files = {f"slurm-{i}.out": D + i for i in range(1000)}
    files["slurm-512.out"] = 60
    files["outputs/2026-12-01/09-00-00/.hydra/config.yaml"] = H
    files["outputs/2026-12-01/09-00-00/train.log"] = H
    build(str(tmp_path), files)
    assert locate(None, str(tmp_path)).target == "slurm-512.out"


def test_a_symlink_out_of_the_tree_is_not_followed(tmp_path):
    build(str(tmp_path), {"outside/private.log": 10, "proj/runs/exp1/train.log": H, "scratch/2026-12-01/10-00-00/"
                          ".hydra/config.yaml": 60, "scratch/2026-12-01/10-00-00/train.log": 60})
    os.symlink(tmp_path / "outside", tmp_path / "proj" / "notes")  # newest evidence, but outside the project
    os.symlink(tmp_path / "outside", tmp_path / "proj" / "runs" / "exp2")
    assert locate(None, str(tmp_path / "proj")).target == os.path.join("runs", "exp1")
    os.symlink(tmp_path / "scratch", tmp_path / "proj" / "outputs")  # a layout folder linked out, too
    assert locate(None, str(tmp_path / "proj")).target == os.path.join("runs", "exp1")
    named = locate("outputs/2026-12-01/10-00-00", str(tmp_path / "proj"))  # named, it is diagnosed
    assert named.root == os.path.realpath(tmp_path / "scratch" / "2026-12-01" / "10-00-00")


def test_only_a_bounded_number_of_candidates_is_read(tmp_path, monkeypatch):
    from trainwreck.locate import discovery as mod
    build(str(tmp_path), {f"runs/r{i:04d}/train.log": H + i for i in range(300)})
    seen = []
    real = mod.inspect
    monkeypatch.setattr(mod, "inspect", lambda p, *a, **k: seen.append(p) or real(p, *a, **k))
    assert mod.discover(str(tmp_path)).path.endswith("r0000")
    assert len(seen) <= MAX_INSPECT + 1  # the candidates, and the folder itself
