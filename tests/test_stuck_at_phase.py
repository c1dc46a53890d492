"""A run whose last progress is the entry of a phase, with nothing after it, stalled there (issue 9, "a hang
reported by nobody": the log ends at "***** Running training *****", "Epoch 1/10", "Validation DataLoader 0: 0%",
"Starting training from iteration 0", a store-based barrier's wait line).

It is a stall [HYPOTHESIS] of modest confidence that names the phase, cites the line and offers a hang probe;
repeated identical wait lines are direct evidence of a wait. The controls stay what they are: a completed run is
"no failure found", a log that progresses and stops with no phase entry stays "a hang, or a kill", an OOM kill
in dmesg stays OOM. Fixture wording: tests/fixtures/stuck/README.md."""
import json
import os
import shutil

import pytest
from twtest import ROOT

from trainwreck.analyze import stuck_at_phase
from trainwreck.pipeline import diagnose

FIX = os.path.join(ROOT, "tests", "fixtures", "stuck")
ID = "log.stuck-at-phase"


def _diag(path):
    return diagnose(path if os.path.isabs(path) else os.path.join(FIX, path), probe=False).diagnosis.to_json()


def _found(path):
    """The detector's own findings on the run (before decide weighs them against the rest)."""
    res = diagnose(path if os.path.isabs(path) else os.path.join(FIX, path), probe=False)
    return [f for f in res.findings if f.id == ID]


def _ours(d):
    return [c for c in ([d["primary_cause"]] if d["primary_cause"] else []) + d["causes"] if c.get("id") == ID]


def _cited(c):
    return " | ".join(e["text"] for e in c["evidence"])


# fixture, the phase the claim names, the stage, a part of a cited line, a word the fixes or the probe must hold
STALLS = [
    ("hf-running-training", "training", "runtime", "***** Running training *****", "num_workers=0"),
    ("hf-running-training", "training", "runtime", "0/1125", "py-spy dump"),
    ("detectron2-start", "training", "runtime", "Starting training from iteration 0", "py-spy dump"),
    ("keras-epoch1", "training", "runtime", "Epoch 1/10", "num_workers=0"),
    ("lightning-validation", "validation", "evaluation", "Validation DataLoader 0:", "num_workers=0"),
    ("ddp-barrier-once", "distributed setup", "startup", "Waiting in store based barrier", "NCCL_DEBUG=INFO"),
    ("data-loading", "data loading", "startup", "Loading training data", "num_workers=0"),
    ("checkpoint-at-step", "checkpoint save", "checkpoint", "Saving checkpoint to gs://", "py-spy dump"),
    ("tf-batch-all-reduce", "training", "runtime", "batch_all_reduce: 161 all-reduces", "py-spy dump"),
]


@pytest.mark.parametrize("name,phase,stage,line,probe", STALLS)
def test_a_log_that_ends_at_a_phase_entry_is_a_stall_there(name, phase, stage, line, probe):
    d = _diag(name)
    assert d["classification"] == "stall", d["headline"]
    assert d["primary_cause"]["id"] == ID
    p = d["primary_cause"]
    assert p["label"] == "HYPOTHESIS", "the log cannot tell a hang from a kill while it waited"
    assert 0.3 <= d["confidence"] <= 0.6, "modest confidence"
    assert phase in p["summary"], p["summary"]
    assert d["failure_stage"] == stage
    assert line in _cited(p), "the cited evidence holds the phase's line"
    assert d["outcome"]["outcome"] == "failed"
    fixes = json.dumps(d["fix_candidates"])
    verify = d["verification"]["command"] + " " + d["verification"].get("next_probe", "")
    assert probe in fixes + " " + verify
    assert "py-spy" in verify, "a hang probe"


def test_the_phase_entry_after_progress_is_named_with_the_progress_before_it():
    d = _diag("lightning-validation")
    p = d["primary_cause"]
    assert "Validation DataLoader 0:   0%" in p["evidence"][-1]["text"], "the last entry line is cited"
    # after training steps the entry weighs a little less than a run that never moved
    assert d["confidence"] < _diag("hf-running-training")["confidence"]


def test_data_loading_and_distributed_phases_name_their_family():
    assert _diag("data-loading")["primary_cause"]["family"]["id"] == "data-pipeline-deadlock"
    assert _diag("ddp-barrier-once")["primary_cause"]["family"]["id"] == "rendezvous-timeout"


DISTRIBUTED_FIX = "the run is distributed"


@pytest.mark.parametrize("name", ["hf-running-training", "lightning-validation", "keras-epoch1"])
def test_a_single_process_run_gets_no_distributed_advice(name):
    # HF prints "(w. parallel, distributed & accumulation)" and Lightning "LOCAL_RANK: 0" on one GPU too
    assert DISTRIBUTED_FIX not in json.dumps(_diag(name)["fix_candidates"])


def test_a_distributed_run_stuck_at_its_first_step_gets_the_collective_probe(tmp_path):
    # Lightning's DDP setup lines (strategies/ddp.py, trainer/connectors), then the first epoch's bar at 0
    (tmp_path / "train.log").write_text(
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
        "----------------------------------------------------------------------------------------------------\n"
        "distributed_backend=nccl\n"
        "All distributed processes registered. Starting with 2 processes\n"
        "----------------------------------------------------------------------------------------------------\n"
        "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1]\n"
        "Epoch 0:   0%|          | 0/100 [00:00<?, ?it/s]\n", encoding="utf-8")
    d = _diag(str(tmp_path))
    assert d["classification"] == "stall" and d["primary_cause"]["id"] == ID
    assert DISTRIBUTED_FIX in json.dumps(d["fix_candidates"])


def test_repeated_identical_wait_lines_are_direct_evidence_of_a_wait():
    d = _diag("filelock-wait")  # filelock's "Lock … not acquired on …, waiting 0.05 seconds ..." four times
    assert d["classification"] == "stall"
    ours = _ours(d)
    assert ours, d["causes"]
    assert ours[0]["label"] == "DIRECT"
    assert "4 times" in ours[0]["summary"] and "lock" in ours[0]["summary"]
    assert ours[0]["confidence"] > _ours(_diag("ddp-barrier-once"))[0]["confidence"]


def test_a_wait_the_catalog_reads_keeps_the_catalog_meaning():
    # torch 2.x words the barrier's count `num_workers_joined`: the catalog reads it as well as `worker_count`,
    # and this detector stands down for lines the catalog explains (its meaning says why the count never matches)
    d = _diag("ddp-barrier-repeated")
    assert d["classification"] == "stall"
    assert d["primary_cause"]["signature"] == "store-based-barrier-wait"
    assert "1/2 ranks joined" in d["primary_cause"]["summary"]
    assert not _found("ddp-barrier-repeated")


def test_a_wait_line_between_progress_is_not_a_repeat(tmp_path):
    src = os.path.join(FIX, "filelock-wait", "train.log")
    lines = open(src, encoding="utf-8").read().splitlines()
    lines.insert(4, "{'loss': 2.31, 'learning_rate': 5e-05, 'epoch': 0.01}")  # progress between the waits
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ours = _ours(_diag(str(tmp_path)))
    assert ours and "2 times" in ours[0]["summary"]
    # two different waits in a row are not a repeat of one wait
    lines = open(src, encoding="utf-8").read().splitlines()
    lines[-2] = lines[-2].replace("/root/.cache/huggingface/datasets/", "/tmp/other/")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = _found(str(tmp_path))
    assert found and found[0].label == "HYPOTHESIS"


# --- controls


def test_completed_run_whose_last_entry_is_a_checkpoint_save_is_no_failure():
    d = _diag("control-hf-completed-after-save")
    assert d["outcome"]["outcome"] == "completed"
    assert d["classification"] == "unclear" and not _ours(d)
    assert not _found("control-hf-completed-after-save"), "a completion after the entry: the run did not stop there"
    assert d["headline"].startswith("no failure found")


def test_a_save_that_reports_it_finished_is_not_where_the_run_stopped():
    # HF's final save_model with no completion line after it: "Saving model checkpoint to" then "… saved in …"
    assert not _found("control-final-save")


def test_a_log_that_progresses_and_stops_mid_training_stays_a_hang_or_a_kill():
    d = _diag("control-stops-mid-training")
    assert d["classification"] == "unclear" and not _ours(d)
    # the tqdm bar it ends on reads 150/1125: the run stopped short of its loop's end, a hang or a kill
    assert "part-way through a loop (150/1125 at train.log:7)" in d["headline"]
    assert "a hang, a kill from outside" in d["headline"]


@pytest.mark.parametrize("name", ["control-keras-finished", "control-validation-advances"])
def test_progress_after_the_entry_is_no_stall(name):
    d = _diag(name)
    assert not _ours(d) and d["classification"] != "stall"


def test_an_oom_kill_in_dmesg_stays_oom():
    d = _diag("control-oom-killer")  # the log ends at "***** Running training *****"; dmesg says who ended it
    assert d["classification"] == "OOM", d["headline"]


def test_a_scheduler_stop_after_the_entry_is_not_a_stall_here(tmp_path):
    # a time limit ends a run wherever it is; it says nothing about the run standing still
    shutil.copy(os.path.join(FIX, "hf-running-training", "train.log"), tmp_path / "train.log")
    with open(tmp_path / "train.log", "a", encoding="utf-8") as fh:
        fh.write("slurmstepd: error: *** JOB 4242 ON gpu-node-07 CANCELLED AT 2024-01-01T10:00:00 DUE TO TIME LIMIT ***\n")
    d = _diag(str(tmp_path))
    assert not _ours(d)
    assert d["outcome"]["outcome"] == "interrupted"


def test_a_ctrl_c_right_after_the_entry_is_a_stall_the_user_ended(tmp_path):
    # someone stops a run by hand because it stood still: the log is read up to the interrupt
    shutil.copy(os.path.join(FIX, "hf-running-training", "train.log"), tmp_path / "train.log")
    with open(tmp_path / "train.log", "a", encoding="utf-8") as fh:
        fh.write("^C\n")
    d = _diag(str(tmp_path))
    ours = _ours(d)[0]
    assert d["classification"] == "stall" and ours["label"] == "HYPOTHESIS"
    assert "interrupted" in ours["summary"] and "0/1125" in _cited(ours)
    assert d["outcome"]["outcome"] == "interrupted", "how the run ended is still the interrupt"


def test_ddp_reducer_buckets_then_ctrl_c_is_a_stall_at_the_training_step():
    d = _diag("ddp-reducer-buckets-ctrl-c")
    ours = _ours(d)[0]
    assert d["classification"] == "stall", d["headline"]
    assert "Reducer buckets have been rebuilt" in _cited(ours) and "death signal" in _cited(ours)
    assert d["outcome"]["outcome"] == "interrupted"
    assert DISTRIBUTED_FIX in json.dumps(d["fix_candidates"])


@pytest.mark.parametrize("name", ["control-ddp-iters-ctrl-c", "control-checkpoint-saved",
                                  "control-tf-batch-all-reduce-steps"])
def test_the_same_entry_lines_followed_by_progress_are_no_stall(name):
    d = _diag(name)
    assert not _ours(d) and d["classification"] != "stall", d["headline"]


def test_an_error_after_the_entry_belongs_to_the_error(tmp_path):
    shutil.copy(os.path.join(FIX, "keras-epoch1", "train.log"), tmp_path / "train.log")
    with open(tmp_path / "train.log", "a", encoding="utf-8") as fh:
        fh.write("Segmentation fault (core dumped)\n")
    assert not _found(str(tmp_path))


def test_another_log_that_keeps_moving_means_the_run_went_on(tmp_path):
    shutil.copy(os.path.join(FIX, "hf-running-training", "train.log"), tmp_path / "train.log")
    shutil.copy(os.path.join(FIX, "control-stops-mid-training", "train.log"), tmp_path / "rank1.log")
    assert not _ours(_diag(str(tmp_path)))
    # a second log whose progress bar still moves (no metric values in it): the run went on as well
    os.remove(tmp_path / "rank1.log")
    (tmp_path / "rank1.log").write_text("  0%|          | 0/1125 [00:00<?, ?it/s]\n"
                                        " 13%|█▎        | 150/1125 [01:02<06:44,  2.41it/s]\n", encoding="utf-8")
    assert not _found(str(tmp_path))


def test_too_many_lines_after_the_entry_is_not_an_entry_at_the_end(tmp_path):
    text = open(os.path.join(FIX, "keras-epoch1", "train.log"), encoding="utf-8").read()
    noise = "".join(f"WARNING:tensorflow:callback note {i}\n" for i in range(stuck_at_phase.AFTER + 2))
    (tmp_path / "train.log").write_text(text + noise, encoding="utf-8")
    assert not _ours(_diag(str(tmp_path)))


@pytest.mark.parametrize("line,advances", [
    ("Epoch 0:  70%|█████████    | 7/10 [00:14<00:06,  2.12s/it, loss=0.724, v_num=11]", True),
    ("INFO:tensorflow:global step 1301: loss = 0.0784 (6.244 sec/step)", True),
    (" 13%|█▎        | 150/1125 [01:02<06:44,  2.41it/s]", True),
    ("Epoch:   0%|          | 0/4 [00:00<?, ?it/s]", False),
    ("  Total optimization steps = 1,125", False),
    ("  Gradient Accumulation steps = 1", False),
    ("Epoch 0 step 0", False),
])
def test_what_counts_as_the_run_advancing(line, advances):
    assert stuck_at_phase.advances(line) is advances


@pytest.mark.parametrize("line,phase", [
    ("Epoch:   0%|          | 0/4 [00:00<?, ?it/s]", "training"),
    ("Start training with global_step=0", "training"),
    ("Validating:   0%|                                         | 0/3 [00:00<?, ?it/s]", "evaluation"),
    (" > Using PyTorch DDP", "distributed"),
    ("Saving model checkpoint to out/checkpoint-500", "checkpoint"),
    ("Epoch 3/10", "training"),
    ("  Num examples = 12,000", None),
    ("Epoch 0:  70%|█████████    | 7/10 [00:14<00:06,  2.12s/it, loss=0.724, v_num=11]", None),
])
def test_what_counts_as_a_phase_entry(line, phase):
    assert stuck_at_phase.entry(line) == phase


def test_a_progress_bar_closing_after_a_traceback_is_not_a_stuck_phase():
    """tqdm prints its bar once more when the exception unwinds it: the OOM is the failure, not a stall at step 0."""
    from twtest import run_cli
    p = run_cli("diagnose", os.path.join(ROOT, "examples", "runs", "oom-cuda"), "--no-probe", "--json")
    d = json.loads(p.stdout)
    assert d["classification"] == "OOM"
    everything = json.dumps([d.get("terminal_events"), d.get("causes"), d.get("contributing_factors")])
    assert "stuck at the start" not in everything


def test_tf_master_waiting_for_a_worker_task_is_stuck_in_distributed_setup():
    # TF 1.x master.cc logs "CreateSession still waiting for response from worker: /job:…/task:N" every 10 s
    d = _diag("tf-createsession-wait")
    ours = _ours(d)[0]
    assert d["classification"] == "stall" and ours["label"] == "DIRECT" and "3 times" in ours["summary"]
    assert ours["family"]["id"] == "rendezvous-timeout" and d["failure_stage"] == "startup"
    # the same wait that ends when the worker answers (a master session starts, steps follow) is no stall
    assert not _ours(_diag("control-tf-createsession-then-steps"))


def test_a_phase_counting_its_own_steps_is_progress_not_its_entry(tmp_path):
    # the step number in "Saving checkpoint at step N" dates the save; the same line counting up is progress
    (tmp_path / "train.log").write_text("".join(f"Evaluating at step {s}\n" for s in (100, 200, 300)),
                                        encoding="utf-8")
    assert not _found(str(tmp_path))
    (tmp_path / "train.log").write_text("step 290 loss 1.92\nstep 300 loss 1.90\nEvaluating at step 300\n",
                                        encoding="utf-8")
    assert _found(str(tmp_path)), "one announcement after progress is the entry"
