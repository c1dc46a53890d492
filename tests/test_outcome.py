"""The run's outcome comes before its classification (issue 9, "Outcome before classification").

A completed run is "no failure found" (unclear, confidence <= 0.3), never "a hang, or a kill"; Ctrl-C and a
scheduler's time limit are `interrupted` with who stopped them; a failure found before the end is `failed` with
its own class, and the interruption's lines (KeyboardInterrupt, Slurm's cancellation) never cause a class. The
fixtures under tests/fixtures/outcome/ hold the frameworks' own wording (README.md there names each source)."""
import json
import os
import subprocess
import sys
import tempfile
import time

import pytest
from twtest import EXAMPLES, ROOT

from trainwreck.analyze import outcome as outcome_detector
from trainwreck.collect.bundle import Bundle
from trainwreck.model import Line, LogText
from trainwreck.pipeline import diagnose
from trainwreck.report import markdown, terminal

FIX = os.path.join(ROOT, "tests", "fixtures", "outcome")
COMPLETED = ["hf-completed", "hf-log-completed", "lightning-completed", "yolo-completed", "plain-completed"]


def _diag(name, probe=False):
    path = name if os.path.isabs(name) else os.path.join(FIX, name)
    return diagnose(path, probe=probe).diagnosis.to_json()


@pytest.mark.parametrize("name", COMPLETED)
def test_a_completed_run_is_no_failure_found(name):
    d = _diag(name)
    assert d["outcome"]["outcome"] == "completed", d["outcome"]
    assert d["classification"] == "unclear"
    assert d["confidence"] <= 0.3
    assert d["headline"].startswith("no failure found: the run completed")
    assert "hang" not in d["headline"] and "kill" not in d["headline"]
    assert d["outcome"]["cite"], "the outcome names the line that shows it"
    # never a hang probe for a run that finished
    assert "py-spy" not in d["verification"]["command"] and "py-spy" not in d["verification"].get("next_probe", "")


def test_completed_headline_says_what_it_saw():
    d = _diag("hf-completed")
    assert d["outcome"]["cite"].startswith("trainer_state.json:")
    assert "final step 750 of 750" in d["headline"]
    # first and last logged loss, not HF's run average
    assert "loss 2.409 → 0.3692" in d["headline"]
    d = _diag("yolo-completed")  # yolov5's 0-based epochs: 0..29 of `epochs: 30` is the whole run
    assert "final epoch 30 of 30" in d["headline"] and d["outcome"]["by"] == "length"
    d = _diag("lightning-completed")
    assert "final epoch 20 of 20" in d["headline"] and d["outcome"]["by"] == "lightning"


@pytest.mark.parametrize("name,path", [("hf-completed", "trainer_state.json"), ("hf-log-completed", "train.log")])
def test_hf_final_summary_is_not_the_last_steps_loss(name, path):
    """HF's summary `train_loss` is the average over the run: as the loss at the last step it fakes a late jump."""
    res = diagnose(os.path.join(FIX, name), probe=False)
    series = res.bundle.best_series("loss")
    last = series.points[-1]
    assert abs(last.value - 0.3692) < 1e-9, f"last loss point is {last.value} at {last.source.cite()}"
    assert all(abs(p.value - 0.6946) > 1e-3 for p in series.points), "the run average entered the loss series"
    assert "train_runtime" not in last.source.text
    if name == "hf-completed":
        assert "hf.train_summary" in res.bundle.facts


def test_ctrl_c_is_interrupted_by_the_user_not_a_hang():
    d = _diag("ctrl-c")
    assert d["outcome"]["outcome"] == "interrupted" and d["outcome"]["by"] == "user"
    assert d["outcome"]["cite"] == "train.log:58"  # the KeyboardInterrupt line
    assert d["classification"] == "unclear" and d["confidence"] <= 0.3
    assert d["headline"].startswith("interrupted by the user (Ctrl-C")
    assert "hang" not in d["headline"].split(";")[0] and "OOM" not in d["headline"]
    assert d["primary_cause"] is None
    # the Ctrl-C traceback is a stack dump: it says where the process was when it was stopped
    assert "while it was in torch/autograd/__init__.py:266 (backward)" in d["outcome"]["why"]


def test_torchrun_death_signal_is_the_user_and_its_traceback_no_crash():
    d = _diag("torchrun-sigint")
    assert d["outcome"]["outcome"] == "interrupted" and d["outcome"]["by"] == "user"
    assert d["classification"] == "unclear", d["headline"]


@pytest.mark.parametrize("name,cite", [("slurm-time-limit", "slurm-42221.out:56"), ("lsf-runlimit", "job.4242.out:23")])
def test_a_scheduler_time_limit_is_interrupted_not_a_crash(name, cite):
    d = _diag(name)
    assert d["outcome"]["outcome"] == "interrupted" and d["outcome"]["by"] == "time-limit"
    assert d["outcome"]["cite"] == cite
    assert d["classification"] == "unclear" and d["confidence"] <= 0.3
    assert "time limit" in d["headline"]
    assert "--time" in d["verification"]["next_probe"]


def test_nan_then_ctrl_c_is_a_nan_failure():
    d = _diag("nan-then-ctrl-c")
    assert d["outcome"]["outcome"] == "failed"
    assert d["classification"] == "NaN"
    assert "KeyboardInterrupt" not in json.dumps(d["primary_cause"])
    assert d["outcome"]["cite"] == d["primary_cause"]["evidence"][0]["path"] + ":" + str(
        d["primary_cause"]["evidence"][0]["line"])


def test_an_oom_run_is_failed():
    d = _diag(os.path.join(EXAMPLES, "oom-cuda"))
    assert d["outcome"]["outcome"] == "failed" and d["classification"] == "OOM"


def test_a_silent_run_is_unknown_and_says_the_probe_was_not_run():
    d = _diag(os.path.join(EXAMPLES, "unclear-silent"))
    assert d["outcome"]["outcome"] == "unknown" and "not run" in d["outcome"]["why"]


def _bundle(*texts, path="job.out"):
    b = Bundle(root="/nonexistent", target="run")
    b.logs = [LogText(path, 0, [Line(path, i + 1, t) for i, t in enumerate(texts)], True)]
    return b


@pytest.mark.parametrize("text,outcome,by", [
    # slurmstepd req.c (each "DUE TO" reason), plain scancel
    ("slurmstepd: error: *** JOB 32391783 ON cn119 CANCELLED AT 2021-06-18T13:05:36 DUE TO PREEMPTION ***",
     "interrupted", "preemption"),
    ("slurmstepd: error: *** STEP 3495064.0 ON orion-01-01 CANCELLED AT 2021-10-27T19:35:36 ***", "interrupted",
     "cancelled"),
    ("slurmstepd: *** JOB 830329 CANCELLED AT 2018-08-06T17:21:44 DUE TO TIME LIMIT on n447 ***", "interrupted",
     "time-limit"),
    # LSF job report, PBS mom, Kubernetes
    ("TERM_OWNER: job killed by owner.", "interrupted", "cancelled"),
    ("TERM_PREEMPT: job killed after preemption.", "interrupted", "preemption"),
    ("=>> PBS: job killed: walltime 3611 exceeded limit 3600", "interrupted", "time-limit"),
    ("Message:          The node was low on resource: memory.", "interrupted", "eviction"),
    ("Message:          Pod was terminated in response to imminent node shutdown.", "interrupted", "node-shutdown"),
    ("  Warning  DeadlineExceeded  job/train  Job was active longer than specified deadline", "interrupted",
     "time-limit"),
    ("Successfully completed.", "completed", "lsf"),
    ("Status:           Succeeded", "completed", "kubernetes"),
    ("  Normal   Preempted  68s  default-scheduler  Preempted by pod d9d25b95-4a7d-4214-8a30-8ce1fd616f67 on node "
     "worker-0", "interrupted", "preemption"),
    # torchrun, Megatron, srun, lightning
    ("W0409 07:28:49.530000 1359 torch/distributed/elastic/agent/server/api.py:719] Received 15 death signal, "
     "shutting down workers", "interrupted", "signal"),
    ("[exiting program after receiving SIGTERM.] datetime: 2026-09-06 17:57:10", "interrupted", "signal"),
    ("srun: interrupt (one more within 1 sec to abort)", "interrupted", "user"),
    ("Detected KeyboardInterrupt, attempting graceful shutdown ...", "interrupted", "user"),
    ("[rank0]: KeyboardInterrupt", "interrupted", "user"),
    # completion in the frameworks' own words
    ("Training completed. Do not forget to share your model on huggingface.co/models =)", "completed", "hf-trainer"),
    ("30 epochs completed in 0.412 hours.", "completed", "yolo"),
    ("### Training results", "completed", "hf-model-card"),
    ("2021-03-02 10:11:12 | INFO | fairseq_cli.train | done training in 3605.2 seconds", "completed", "fairseq"),
    ("[after training is done] datetime: 2024-01-02 03:04:05", "completed", "megatron"),
    ("Monitored metric val_loss did not improve in the last 3 records. Best score: 0.412. Signaling Trainer to stop.",
     "completed", "early-stopping"),
    ("Training finished.", "completed", "log"),
    # pytorch/examples word_language_model/main.py: print('| End of training | test loss {:5.2f} | test ppl {:8.2f}')
    ("| End of training | test loss  4.96 | test ppl   142.69", "completed", "log"),
    # Theano deep-learning tutorials (SdA.py, convolutional_mlp.py); TensorFlow 1 examples
    ("Optimization complete with best validation score of 5.666667 %, on iteration 36960, with test performance "
     "5.666667 %", "completed", "log"),
    ("Optimization Finished!", "completed", "log"),
])
def test_marker_wording(text, outcome, by):
    got = outcome_detector.detect(_bundle("step 1 loss 2.0", text))
    assert [(f.outcome, f.outcome_by) for f in got] == [(outcome, by)]
    assert got[0].evidence[0].line == 2


@pytest.mark.parametrize("lines,done", [
    # Keras: "Epoch 10/10" then the full progress bar of that epoch (Keras 2 "[===]", Keras 3 "━")
    (["Epoch 9/10", "1875/1875 [==============================] - 3s 1ms/step - loss: 0.2956 - accuracy: 0.9145",
      "Epoch 10/10", "1875/1875 [==============================] - 3s 1ms/step - loss: 0.2801 - accuracy: 0.9201"], True),
    (["1875/1875 ━━━━━━━━━━━━━━━━━━━━ 3s 1ms/step - accuracy: 0.9201 - loss: 0.2801"], False),  # no epoch header
    (["Epoch 10/10", "1875/1875 ━━━━━━━━━━━━━━━━━━━━ 3s 1ms/step - accuracy: 0.9201 - loss: 0.2801"], True),
    (["Epoch 10/10", " 912/1875 [=============>................] - ETA: 1s - loss: 0.2801"], False),  # cut mid-epoch
    (["Epoch 9/10", "1875/1875 [==============================] - 3s 1ms/step - loss: 0.2956"], False),
    (["Epoch 10/10", "   1/1875 [..............................] - ETA: 5:12 - loss: 0.31\r1875/1875 "
      "[==============================] - 3s 1ms/step - loss: 0.2801"], True),  # \r updates captured in one line
    (["Epoch [10/10], Step [500/600], Loss: 0.0412", "Epoch [10/10], Step [600/600], Loss: 0.0385"], True),
    (["Epoch [9/10], Step [600/600], Loss: 0.0412"], False),
    # verbose=2: one line per finished epoch, no bar (Keras 1-2 `275s - loss: …`; TF2 `1875/1875 - 3s - …`)
    (["Epoch 13/14", "275s - loss: 0.0466 - acc: 0.9857", "Epoch 14/14", "274s - loss: 0.0455 - acc: 0.9854"], True),
    (["Epoch 14/14", "1875/1875 - 3s - 1ms/step - loss: 0.2801 - accuracy: 0.9201"], True),
    (["Epoch 13/14", "275s - loss: 0.0466 - acc: 0.9857", "Epoch 14/14"], False),  # the last epoch never ended
])
def test_the_last_epoch_counter(lines, done):
    got = [f for f in outcome_detector.detect(_bundle(*lines)) if f.outcome == "completed"]
    assert bool(got) == done, [f.claim for f in got]


@pytest.mark.parametrize("text", [
    "Training completed for epoch 3",  # a per-epoch message is not the end of training
    "=== end of training epoch 3 ===",
    "Epoch 0 training completed: 2018-10-26T09:33:02.176891",  # NVIDIA nvvl's example: one epoch's end
    "    except KeyboardInterrupt:",  # a traceback's source line
    "Monitored metric val_loss = nan is not finite. Previous best value was 0.412. Signaling Trainer to stop.",
    "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",  # a failure (host memory), not a stop
])
def test_not_an_outcome_marker(text):
    assert outcome_detector.detect(_bundle(text)) == []


def test_a_plain_cancel_after_a_failed_task_is_not_an_interruption():
    """srun cancels the rest of a step after one task failed: the run failed, nobody stopped it."""
    from trainwreck.analyze import analyze
    from trainwreck.decide import decide
    b = _bundle("srun: error: node07: task 3: Exited with exit code 1",
                "slurmstepd: error: *** STEP 3495064.0 ON node07 CANCELLED AT 2021-10-27T19:35:36 ***")
    d = decide(b, analyze(b))
    assert d.outcome["outcome"] != "interrupted"


def test_a_timeout_in_another_file_is_still_the_failure_behind_a_cancel():
    """Rank 1's NCCL watchdog in train.log, then Slurm's cancellation in srun.log: a stall, not an interruption."""
    from trainwreck.analyze import analyze
    from trainwreck.decide import decide
    b = _bundle("Preparing test set...:  46%|  | 31/67 [29:02<35:12, 58.67s/it]slurmstepd: error: *** STEP 1151.0 ON "
                "node1 CANCELLED AT 2023-03-02T11:32:09 ***", path="srun.log")
    tl = ["[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, "
          "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800008 milliseconds before timing out."]
    b.logs.append(LogText("train.log", 0, [Line("train.log", 1, tl[0])], True))
    d = decide(b, analyze(b))
    assert d.classification == "stall" and d.outcome["outcome"] == "failed", (d.headline, d.outcome)


def test_lsf_report_above_the_output_is_the_end_of_the_run():
    """LSF writes its job report above the job's output ("The output (if any) follows:"): a watchdog timeout in
    that output came before the run limit, so it is the hang the limit ended, not a consequence of the kill."""
    from trainwreck.analyze import analyze
    from trainwreck.decide import decide
    src = os.path.join(FIX, "lsf-runlimit", "job.4242.out")
    lines = open(src, encoding="utf-8").read().splitlines() + [
        "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800008 milliseconds before timing out."]
    b = _bundle(*lines, path="job.4242.out")
    d = decide(b, analyze(b))
    assert d.classification == "stall" and d.outcome["outcome"] == "failed", (d.headline, d.outcome)
    b = _bundle(*lines[:-1], path="job.4242.out")
    d = decide(b, analyze(b))
    assert d.classification == "unclear" and d.outcome["outcome"] == "interrupted"


def test_an_oom_the_run_survived_before_completing_is_no_failure():
    """A message that did not end the run (an OOM the batch-size finder caught) is not the run's failure."""
    from trainwreck.analyze import analyze
    from trainwreck.decide import decide
    b = _bundle("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
                "of 79.15 GiB of which 1.02 GiB is free.", "{'loss': 2.1, 'epoch': 1.0}", "{'loss': 1.4, 'epoch': 2.0}",
                "Training completed. Do not forget to share your model on huggingface.co/models =)", path="train.log")
    d = decide(b, analyze(b))
    assert d.outcome["outcome"] == "completed" and d.classification == "unclear" and d.confidence <= 0.3
    assert "the OOM message logged before it (train.log:1) did not stop the run" in d.outcome["why"]
    # the same OOM after the completion message is a failure at the end (e.g. while saving)
    b = _bundle("{'loss': 2.1, 'epoch': 1.0}", "Training completed. Do not forget to share your model on "
                "huggingface.co/models =)", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
                path="train.log")
    d = decide(b, analyze(b))
    assert d.outcome["outcome"] == "failed" and d.classification == "OOM"


def test_reports_state_the_outcome_right_after_the_headline():
    d = _diag("slurm-time-limit")
    lines = terminal(d, width=120).splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("Outcome: "))
    assert lines[at].startswith("Outcome: interrupted (slurm-42221.out:56")
    assert all("confidence" not in ln for ln in lines[at:])  # the headline block is above it
    quote = next(ln for ln in lines[at + 1:at + 4] if "│" in ln)
    assert "DUE TO TIME LIMIT" in quote  # the scheduler's own line, quoted
    md = markdown(d).splitlines()
    head = next(i for i, ln in enumerate(md) if ln.startswith("**interrupted"))
    assert md[head + 2].startswith("**Outcome: interrupted** (`slurm-42221.out:56`)")


def test_outcome_is_in_the_json_contract():
    schema = json.load(open(os.path.join(ROOT, "trainwreck", "schemas", "diagnosis.schema.json")))
    assert "outcome" in schema["required"]
    enum = schema["properties"]["outcome"]["properties"]["outcome"]["enum"]
    assert enum == ["failed", "completed", "interrupted", "running", "unknown"]
    jsonschema = pytest.importorskip("jsonschema")
    for name in ("hf-completed", "ctrl-c", "nan-then-ctrl-c"):
        jsonschema.validate(_diag(name), schema)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux /proc")
def test_running_only_when_a_live_process_holds_the_log():
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "train.log")
        with open(log, "w") as f:
            f.write("".join(f"step {s} loss {3.0 - s / 100:.3f}\n" for s in range(10, 110, 10)))
        # the files alone cannot tell: with --no-probe the outcome is unknown
        assert _diag(tmp)["outcome"]["outcome"] == "unknown"
        # a reader (tail -f, an editor) is no sign of a live run
        reader = subprocess.Popen([sys.executable, "-c", "import sys, time; f = open(sys.argv[1]); "
                                   "print('ready', flush=True); time.sleep(60)", log], stdout=subprocess.PIPE, text=True)
        try:
            assert reader.stdout.readline().strip() == "ready"
            assert _diag(tmp, probe=True)["outcome"]["outcome"] == "unknown"
        finally:
            reader.kill()
            reader.wait()
        writer = subprocess.Popen([sys.executable, "-c", "import sys, time; f = open(sys.argv[1], 'a'); "
                                   "print('ready', flush=True); time.sleep(60)", log], stdout=subprocess.PIPE, text=True)
        try:
            assert writer.stdout.readline().strip() == "ready"
            d = _diag(tmp, probe=True)
            assert d["outcome"]["outcome"] == "running", d["outcome"]
            assert d["outcome"]["by"] == "progressing" and str(writer.pid) in d["outcome"]["why"]
            assert d["headline"].startswith("running:")
            os.utime(log, (time.time() - 3600, time.time() - 3600))  # silent for an hour: alive but stuck
            d = _diag(tmp, probe=True)
            assert d["outcome"]["by"] == "stuck" and "not progressing" in d["outcome"]["why"]
        finally:
            writer.kill()
            writer.wait()
        d = _diag(tmp, probe=True)
        assert d["outcome"]["outcome"] == "unknown" and "no live process" in d["outcome"]["why"]


def test_a_spike_in_a_run_that_completed_is_no_failure():
    """A finite spike that the run went on past counts as divergence only when nothing says the run finished."""
    from trainwreck.decide import decide
    from trainwreck.model import Finding, Point, Source

    def run(done):
        b = _bundle("{'loss': 0.5, 'epoch': 3.0}", *(["Training finished."] if done else []), path="train.log")
        for s in range(10, 310, 10):
            v = 5.0 if s == 150 else 2.0 - s / 300
            b.add_point("loss", "metrics.jsonl", Point(s, v, Source("metrics.jsonl", s // 10, "", step=s, metric="loss",
                                                                    value=v)))
        spike = Finding("x.jump", "loss jumped", confidence=0.6, kind="spike", step=150,
                        evidence=[Source("metrics.jsonl", 15, "", step=150, metric="loss", value=5.0)])
        return decide(b, [spike] + outcome_detector.detect(b))

    assert run(False).classification == "divergence"
    d = run(True)
    assert d.classification == "unclear" and d.outcome["outcome"] == "completed" and d.confidence <= 0.3
    assert "final step 300" in d.headline and "loss 1.967 → 1" in d.headline


def test_every_view_states_the_same_outcome():
    from twtest import run_cli
    path = os.path.join(FIX, "hf-log-completed")
    for verb in (["diagnose"], ["collect"], ["diagnose", "--md"]):
        out = run_cli(*verb, path, "--no-probe")
        assert out.returncode == 0, out.stderr
        assert "Outcome: completed" in out.stdout.replace("**", ""), verb
    rep = json.loads(run_cli("diagnose", path, "--no-probe", "--json").stdout)
    assert rep["outcome"]["outcome"] == "completed" and rep["outcome"]["cite"] == "train.log:90"  # train metrics
    assert [e["line"] for e in rep["outcome"]["evidence"]] == [90, 86]  # … and the first: "Training completed."


def test_a_run_silent_for_hours_before_its_time_limit_hung():
    """The time limit only ended a hang: the last step was logged 4.8 h before Slurm's cancellation."""
    d = _diag("slurm-hang-time-limit")
    assert d["classification"] == "stall" and d["outcome"]["outcome"] == "failed"
    assert d["primary_cause"]["evidence"][0]["line"] == 107  # the last step logged
    assert "4.8 h" in d["primary_cause"]["summary"]
    # the same run stopped a minute after its last step was still progressing: interrupted, no failure
    src = os.path.join(FIX, "slurm-hang-time-limit", "slurm-867816.out")
    with tempfile.TemporaryDirectory() as tmp:
        text = open(src, encoding="utf-8").read().replace("CANCELLED AT 2023-03-02T16:20:46",
                                                          "CANCELLED AT 2023-03-02T11:32:40")
        with open(os.path.join(tmp, "slurm-867816.out"), "w", encoding="utf-8") as f:
            f.write(text)
        d = _diag(tmp)
        assert d["classification"] == "unclear" and d["outcome"]["outcome"] == "interrupted"
        assert d["outcome"]["by"] == "time-limit"


def test_hf_log_that_reached_its_announced_epochs_completed():
    """HF announces the plan ("Num Epochs = 3"); a log whose last step is epoch 3.0 finished the training loop even
    when the lines after it were lost, and one that stopped at 1.28 of 3 did not."""
    src = open(os.path.join(FIX, "hf-log-completed", "train.log"), encoding="utf-8").read().splitlines()
    upto = next(i for i, ln in enumerate(src) if ln.startswith("Training completed"))
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "train.log"), "w", encoding="utf-8") as f:
            f.write("\n".join(src[:upto]) + "\n")
        d = _diag(tmp)
        assert d["outcome"]["outcome"] == "completed" and d["outcome"]["by"] == "length"
        assert "final epoch 3 of 3" in d["headline"]
        with open(os.path.join(tmp, "train.log"), "w", encoding="utf-8") as f:
            f.write("\n".join(src[:40]) + "\n")
        assert _diag(tmp)["outcome"]["outcome"] == "unknown"


def _unclear_headline(tmp_path, name, text):
    run = tmp_path / "run"
    run.mkdir()
    (run / name).write_text(text)
    return _diag(str(run))


def test_a_healthy_run_whose_end_is_not_shown_is_not_called_a_hang(tmp_path):
    # a Keras CSVLogger file alone (no step column, no text log): the metrics are read, the end is unknown
    rows = "\n".join(f"{e},{0.9 + e / 1000:.4f},{0.3 - e / 200:.4f}" for e in range(30))
    d = _unclear_headline(tmp_path, "training_log.csv", "epoch,accuracy,loss\n" + rows + "\n")
    assert d["outcome"]["outcome"] == "unknown"
    h = d["headline"]
    assert h.startswith("unclear: no failure found in the logged metrics, which end at epoch 30 (loss 0.3 → 0.155)")
    assert "no line says how the run ended (finished, hung, or killed" in h
    assert "no logs or metrics" not in h


def test_a_log_that_ends_part_way_through_a_loop_says_so(tmp_path):
    lines = [f"Epoch: [1][{i}/5000], Time: 2.27, Accuracy: 62.36, Loss: {2.13 - i / 1e5:.6f}" for i in range(4517, 4524)]
    d = _unclear_headline(tmp_path, "train.log", "\n".join(lines) + "\n")
    assert d["outcome"]["progress"]["partway"] == {"at": 4523, "of": 5000, "cite": "train.log:7"}
    assert "part-way through a loop (4523/5000 at train.log:7), before its end (a hang, a kill" in d["headline"]


def test_a_log_whose_last_loop_finished_is_not_part_way(tmp_path):
    lines = [f"Train Epoch: 3 [{i}/7010 (100%)]\tLoss: 0.2{i % 10}" for i in range(7000, 7011)]
    d = _unclear_headline(tmp_path, "train.log", "\n".join(lines) + "\n")
    assert "partway" not in d["outcome"].get("progress", {})
    assert "part-way" not in d["headline"] and "no line says how the run ended" in d["headline"]


def test_a_run_that_reached_its_end_with_a_nan_loss_completed_and_is_still_nan(tmp_path):
    # pytorch/examples word_language_model: every batch line prints `loss nan`, then `| End of training |`
    lines = [f"| epoch   1 |  {i * 200:4d}/ 2983 batches | lr 20.00 | ms/batch 11.75 | loss   nan | ppl      nan"
             for i in range(1, 10)]
    lines += ["=" * 89, "| End of training | test loss   nan | test ppl      nan", "=" * 89]
    d = _unclear_headline(tmp_path, "train.log", "\n".join(lines) + "\n")
    assert d["classification"] == "NaN", d["headline"]
    assert d["outcome"]["outcome"] == "completed", d["outcome"]
    assert "but its metrics show a NaN failure" in d["outcome"]["why"]


def test_a_crash_after_the_last_step_is_still_a_failed_run(tmp_path):
    """Control: a message failure (the final save raised) is how the run ended, whatever completed before it."""
    lines = [f"step {i} loss {2.0 - i / 100:.3f}" for i in range(1, 20)] + [
        "Training completed.", "Traceback (most recent call last):", '  File "train.py", line 80, in <module>',
        "    trainer.save_model()", "OSError: [Errno 28] No space left on device"]
    d = _unclear_headline(tmp_path, "train.log", "\n".join(lines) + "\n")
    assert d["classification"] == "crash" and d["outcome"]["outcome"] == "failed", (d["headline"], d["outcome"])


def _detectron2_metrics(tmp_path, last_iter, max_iter=300):
    recs = [{"data_time": 0.004, "eta_seconds": round((max_iter - i - 1) * 0.37, 3), "iteration": i,
             "lr": 2.5e-4, "total_loss": 2.1 - i / 200} for i in range(19, last_iter + 1, 20)]
    (tmp_path / "metrics.json").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return diagnose(str(tmp_path), probe=False).diagnosis.to_json()


def test_detectron2_eta_reaching_zero_at_the_last_record_is_completed(tmp_path):
    d = _detectron2_metrics(tmp_path, 299)
    assert d["outcome"]["outcome"] == "completed" and d["outcome"]["by"] == "eta", d["outcome"]
    assert d["outcome"]["cite"].startswith("metrics.json:")
    assert d["headline"].startswith("no failure found: the run completed")


def test_an_eta_still_above_zero_at_the_last_record_is_no_completion(tmp_path):
    d = _detectron2_metrics(tmp_path, 199)
    assert d["outcome"]["outcome"] == "unknown", d["outcome"]
