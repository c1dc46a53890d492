"""Capabilities from the dev half of blind batch 11 (issue 9), each a general situation, not one case:

- torch.distributed's store-based barrier gives up with one line ("Timed out initializing process group in store
  based barrier …", distributed_c10d._store_based_barrier): a rendezvous stall at start-up, decided by that line
  alone, and the store key it names is no secret;
- a C library's own warning ("libibverbs: Warning: couldn't load driver …: cannot open shared object file") is a
  warning: a run that goes on to finish is "completed", not "crash";
- a Ctrl-C traceback whose innermost frames are the standard library's pipe reads (multiprocessing/connection.py
  `_recv`) under a DataLoader frame waited on the DataLoader, not on a collective;
- metric names with the split after them (`nll_train`, `acc_val`, NRI's and many research loops' layout) are read
  as their split-first spellings;
- a validation metric at exactly 0 over every evaluation while the same metric on the training data rises is not
  learning the task (no warm-up: the model does learn the training set).

Message texts are PyTorch's and libibverbs' own, as users pasted them (sources beside each)."""
from twtest import diagnose_text

from trainwreck.collect.metricnames import canonical
from trainwreck.pipeline import diagnose

_d = diagnose_text  # one file written into the run, diagnosed in-process


def test_store_based_barrier_timeout_is_a_rendezvous_stall_from_its_one_line(tmp_path):
    # the line as in https://github.com/NVIDIA/Megatron-LM/issues/782 (world_size=2, worker_count=1)
    d = _d(tmp_path, "train.log",
           "using world size: 2, data-parallel size: 2\n"
           "> initializing torch distributed ...\n"
           "Traceback (most recent call last):\n"
           '  File "pretrain_gpt.py", line 120, in <module>\n'
           "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
           "store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:10:00)\n")
    assert d["classification"] == "stall", d["headline"]
    assert d["primary_cause"]["id"] == "store-based-barrier-timeout"
    assert d["primary_cause"]["family"]["id"] == "rendezvous-timeout" and d["failure_stage"] == "startup"
    assert "1/2 ranks joined" in d["headline"]
    assert "store_based_barrier_key:1" in d["primary_cause"]["summary"]  # a store key, not a secret


def test_a_c_library_warning_before_a_finished_run_is_not_a_crash(tmp_path):
    # libibverbs' warning for each RDMA provider it cannot load, as a Horovod job on TCP prints it on stderr
    (tmp_path / "job.err").write_text("".join(
        f"libibverbs: Warning: couldn't load driver 'lib{p}-rdmav22.so': lib{p}-rdmav22.so: cannot open shared "
        "object file: No such file or directory\n" for p in ("vmw_pvrdma", "rxe", "qedr", "ocrdma")), encoding="utf-8")
    d = _d(tmp_path, "job.out", "".join(f"Epoch {e}/5\n100/100 - 60s - loss: {100 - 10 * e:.4f} - val_loss: "
                                        f"{101 - 10 * e:.4f}\n" for e in range(1, 6)) + "Training done.\n")
    assert d["outcome"]["outcome"] == "completed", d["headline"]
    assert d["classification"] == "unclear" and "no failure found" in d["headline"]


def test_the_same_missing_library_as_an_import_error_is_still_the_crash(tmp_path):
    d = _d(tmp_path, "train.log", "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                                  "    import torch\nImportError: libcudnn.so.8: cannot open shared object file: No "
                                  "such file or directory\n")
    assert d["classification"] == "crash" and d["primary_cause"]["id"] == "shared-library-missing"


_CTRL_C_IN_LOADER = """Traceback (most recent call last):
  File "train.py", line 96, in <module>
    for j, data in enumerate(testdataloader, 0):
  File "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py", line 330, in __next__
    idx, batch = self._get_batch()
  File "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py", line 309, in _get_batch
    return self.data_queue.get()
  File "/usr/lib/python3.6/multiprocessing/queues.py", line 335, in get
    res = self._reader.recv_bytes()
  File "/usr/lib/python3.6/multiprocessing/connection.py", line 216, in recv_bytes
    buf = self._recv_bytes(maxlength)
  File "/usr/lib/python3.6/multiprocessing/connection.py", line 407, in _recv_bytes
    buf = self._recv(4)
  File "/usr/lib/python3.6/multiprocessing/connection.py", line 379, in _recv
    chunk = read(handle, remaining)
KeyboardInterrupt
"""


def test_ctrl_c_in_a_pipe_read_under_the_dataloader_waited_on_the_dataloader(tmp_path):
    d = _d(tmp_path, "train.log", "epoch 1 loss: 0.91\nepoch 2 loss: 0.72\nvalidating...\n" + _CTRL_C_IN_LOADER)
    assert d["classification"] == "stall" and d["outcome"]["outcome"] == "interrupted", d["headline"]
    assert "DataLoader" in d["primary_cause"]["summary"] and "collective" not in d["primary_cause"]["summary"]
    assert d["primary_cause"]["family"]["id"] == "data-pipeline-deadlock"


def test_metric_names_with_the_split_after_them():
    assert canonical("nll_train") == "loss" and canonical("nll_val") == "eval_loss"
    assert canonical("acc_train") == "accuracy" and canonical("acc_val") == "val_acc"
    assert canonical("f1_dev") == "val_f1" and canonical("loss_val") == "eval_loss"
    assert canonical("lr_val") == "lr"  # not a split: lr has no validation value


def _nri(val_acc, train_acc):
    # the epoch line layout of NRI-style training loops (split after the metric), as users paste it
    return "".join(f"Epoch: {e:04d} nll_train: {9e4 / (e + 1):.10f} kl_train: 195.29 acc_train: {a:.10f} "
                   f"nll_val: {1e5 / (e + 1):.10f} acc_val: {v:.10f} time: 800.1s\n"
                   for e, (v, a) in enumerate(zip(val_acc, train_acc)))


def test_validation_accuracy_at_zero_while_training_accuracy_rises_is_not_learning(tmp_path):
    d = _d(tmp_path, "train.log", _nri([0.0] * 5, [0.09, 0.09, 0.21, 0.37, 0.45]))
    assert d["classification"] == "stall", d["headline"]
    assert d["primary_cause"]["id"] == "metric.task-metric-pinned"
    assert "val_acc" in d["primary_cause"]["summary"] and "accuracy rises" in d["primary_cause"]["summary"]


def test_validation_accuracy_that_leaves_zero_is_a_warm_up(tmp_path):
    d = _d(tmp_path, "train.log", _nri([0.0, 0.0, 0.0, 0.12, 0.31], [0.09, 0.09, 0.21, 0.37, 0.45]))
    assert d["classification"] != "stall", d["headline"]


def test_validation_accuracy_at_zero_beside_a_flat_training_accuracy_needs_more_than_the_twin(tmp_path):
    """Two evaluations at 0 while the loss falls fast: still a warm-up (the twin rule needs 3+ evaluations)."""
    d = _d(tmp_path, "train.log", _nri([0.0, 0.0], [0.09, 0.21]))
    assert d["classification"] != "stall", d["headline"]


def test_a_split_named_before_the_metric_keeps_held_out_accuracy_out_of_the_training_series():
    from trainwreck.collect.textmetrics import extract
    assert extract("val loss: 0.5, val acc: 0.3")[1] == {"eval_loss": 0.5, "val_acc": 0.3}
    assert extract("Test Instance Accuracy: 0.040453")[1] == {"test_acc": 0.040453}
    assert extract("Validation Accuracy: 55.1%")[1] == {"val_acc": 55.1}  # a held-out accuracy in percent
    assert extract("Train Instance Accuracy: 0.063618")[1] == {"accuracy": 0.063618}
    # later keys of the line share an earlier key's split (or bound) unless they name their own
    assert extract("Test Instance Accuracy: 0.04, Class Accuracy: 0.025")[1] == {"test_acc": 0.04}
    assert extract("Best Instance Accuracy: 0.04, Class Accuracy: 0.025") is None
    assert extract("Val Loss: 0.5, Train Loss: 0.4, Accuracy: 0.9")[1] == {"eval_loss": 0.5, "loss": 0.4,
                                                                          "accuracy": 0.9}
    assert extract("best loss: 0.3, loss: 0.5")[1] == {"loss": 0.5}


def test_a_held_out_accuracy_frozen_at_a_low_share_while_training_accuracy_moves_is_not_learning(tmp_path):
    # PointNet++'s epoch report layout (train instance accuracy; test instance and class accuracy)
    body = "".join(f"Epoch {e} ({e + 13}/200):\nTrain Instance Accuracy: {0.0636 - e * 1e-4:.6f}\n"
                   "Test Instance Accuracy: 0.040453, Class Accuracy: 0.025000\n"
                   "Best Instance Accuracy: 0.040453, Class Accuracy: 0.025000\n" for e in range(4, 7))
    d = _d(tmp_path, "train.log", body)
    assert d["classification"] == "stall" and d["primary_cause"]["id"] == "metric.eval-frozen", d["headline"]
    assert "test_acc is 0.040453" in d["primary_cause"]["summary"]
    assert "training accuracy moved from 0.0632 to 0.063:" in d["primary_cause"]["summary"]  # not the class acc


def test_a_held_out_accuracy_that_repeats_at_a_high_level_is_no_verdict(tmp_path):
    body = "".join(f"Train Instance Accuracy: {0.91 + e * 1e-3:.6f}\nTest Instance Accuracy: 0.923077\n"
                   for e in range(3))
    d = _d(tmp_path, "train.log", body)
    assert d["classification"] != "stall", d["headline"]


def test_training_and_held_out_accuracy_both_exactly_zero_once_is_not_learning(tmp_path):
    d = _d(tmp_path, "train.log", "Epoch 71/99\nTraining Loss: 1046.7444 Acc: 0.0000\n"
                                  "Validation Loss: 693.5661 Acc: 0.0000\n")
    assert d["classification"] == "stall" and "val_acc" in d["primary_cause"]["summary"]


def _csv(tmp_path, header, rows):
    import csv
    with open(tmp_path / "metrics.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def test_a_loss_flat_from_the_first_steps_of_a_long_run_is_not_learning(tmp_path):
    # Lightning's CSVLogger layout; a loss that never leaves its first value over 6,000 steps
    _csv(tmp_path, ["train_loss", "epoch", "step"],
         [[0.2522 - 0.0022 * (1 - 0.97 ** i), 25 * i + 24, 50 * i + 49] for i in range(120)])
    d = diagnose(str(tmp_path), probe=False).diagnosis.to_json()
    assert d["classification"] == "stall" and d["primary_cause"]["id"] == "metric.plateau", d["headline"]
    assert d["confidence"] >= 0.4


def test_the_same_flat_stretch_from_a_resumed_run_stays_a_weak_note(tmp_path):
    _csv(tmp_path, ["train_loss", "epoch", "step"],
         [[0.2522 - 0.0022 * (1 - 0.97 ** i), 25 * i + 24, 50 * i + 90049] for i in range(120)])
    d = diagnose(str(tmp_path), probe=False).diagnosis.to_json()
    assert d["classification"] != "stall", d["headline"]


def _frozen_csv(tmp_path, vals):
    rows = []
    for e, v in enumerate(vals):
        rows += [[e, 1.47 - 0.01 * e - 0.001 * i, 100 * e + i, ""] for i in range(5)] + [[e, "", 100 * e + 5, v]]
    _csv(tmp_path, ["epoch", "train_loss", "step", "val_loss"], rows)
    return diagnose(str(tmp_path), probe=False).diagnosis.to_json()


def test_a_validation_loss_frozen_in_its_float_noise_while_training_moves_is_not_learning(tmp_path):
    d = _frozen_csv(tmp_path, [1.5276840925216675, 1.5276764631271362, 1.5276808738708496, 1.527694582939148,
                               1.527604341506958])
    assert d["classification"] == "stall" and d["primary_cause"]["id"] == "metric.eval-frozen", d["headline"]
    assert "within 0.01 %" in d["primary_cause"]["summary"]


def test_a_validation_loss_that_moves_in_its_fourth_digit_is_no_frozen_output(tmp_path):
    d = _frozen_csv(tmp_path, [1.5276840925216675, 1.5261764631271362, 1.5246808738708496, 1.523694582939148,
                               1.522604341506958])
    assert d["primary_cause"] is None or d["primary_cause"]["id"] != "metric.eval-frozen", d["headline"]


def test_a_loss_term_nan_from_the_start_beside_a_zero_total_is_nan(tmp_path):
    body = "".join(f"Epoch: {e:3d} | loss: 0.00000 | Train mse: nan | rmse: nan | Val mse: nan | rmse: nan | "
                   f"LR: {0.003 - e * 2e-4:.6f} | Time: 0.73\n" for e in range(7))
    d = _d(tmp_path, "train.log", body)
    assert d["classification"] == "NaN", d["headline"]
    assert "mse is NaN" in d["primary_cause"]["summary"]


def test_a_finite_loss_term_beside_a_zero_total_is_no_nan(tmp_path):
    body = "".join(f"Epoch: {e:3d} | loss: 0.00000 | Train mse: {0.5 - e * 0.01:.4f} | LR: 0.003\n" for e in range(7))
    assert _d(tmp_path, "train.log", body)["classification"] != "NaN"


def test_keyword_arguments_in_source_code_copied_into_a_log_are_not_metrics():
    from trainwreck.collect.textmetrics import extract
    assert extract("        y = F.scaled_dot_product_attention(q, k, v, scale=0.12, is_causal=True)") is None
    assert extract("                                   v.transpose(1, 2), scale=0.12, is_causal=True)") is None
    assert extract("step 10 (loss=0.5, acc=0.9)") == (10, {"loss": 0.5, "accuracy": 0.9})  # no call: metrics
    assert extract("Epoch 1: loss=tensor(0.5)")[1]["loss"] == 0.5


def test_a_final_summary_that_repeats_the_last_evaluation_is_not_a_second_one(tmp_path):
    # verl's SFT trainer prints the last validation, then "Final validation metrics: {…}" with the same value
    body = "".join(f"step:{s} - train/loss:{1.1 / s:.6f} - train/lr(1e-3):0.001\n" for s in range(1, 106))
    body += "step:105 - val/loss:0.058481086045503616\nFinal validation metrics: {'val/loss': 0.058481086045503616}\n"
    d = _d(tmp_path, "train.log", body)
    assert d["classification"] == "unclear", d["headline"]


def test_a_tqdm_description_ends_in_a_colon_and_names_loss_terms_with_a_space():
    from trainwreck.collect.textmetrics import extract
    got = extract("Step: 785. Epoch: 1/100. Iteration: 155/631. Cls loss: 146298.14062. Reg loss: 2.82531. "
                  "Total loss: 146300.96875:  24%|▏| 1")[1]
    assert got == {"cls_loss": 146298.14062, "reg_loss": 2.82531, "loss": 146300.96875}
    assert extract("Test set: Average loss: 0.0012, Accuracy: 9823/10000 (98%)")[1] == {"loss": 0.0012}
    assert extract("eta: 2:46:39 loss: 0.5")[1] == {"loss": 0.5} and extract("Validation loss 6312: 0.5") is None
    # a qualified loss is a term only beside a total on the same line; alone it is the loss
    assert extract("step 3 | Combined loss: 2.3012")[1] == {"loss": 2.3012}
    assert extract("G loss: 0.5, D loss: 0.3")[1] == {"loss": 0.5}
    # a split carries only to a metric of the same kind
    assert extract("Epoch 5 | Val Acc: 0.81 | Loss: 0.30")[1] == {"val_acc": 0.81, "loss": 0.3, "epoch": 5.0}


def test_a_records_repr_is_a_metric_line_and_a_long_line_costs_little():
    import random
    import string
    import time

    from trainwreck.collect.textmetrics import extract
    assert extract("StepMetrics(step=1, loss=2.49, grad_norm=0.5, lr=0.0003)") == (
        1, {"loss": 2.49, "grad_norm": 0.5, "lr": 0.0003})
    rnd = random.Random(3)
    line = "step 1 loss 0.5 " + "".join(rnd.choice(string.ascii_letters) for _ in range(3960)) + "(=1"
    t = time.process_time()
    for _ in range(20):
        extract(line)
    assert time.process_time() - t < 0.2  # 20 lines of 4,000 characters: linear, not a rescan per position


def _sweep(tmp_path, vals):
    import json
    with open(tmp_path / "metrics.jsonl", "w") as f:
        for i, v in enumerate(vals):
            for s in range(10):
                f.write(json.dumps({"step": 100 * i + 10 * s, "train_loss": 9.0 / (1 + i) + 0.01 * s}) + "\n")
            f.write(json.dumps({"step": 100 * i + 100, "val_loss": v}) + "\n")
    return diagnose(str(tmp_path), probe=False).diagnosis.to_json()


def test_a_validation_loss_that_blows_up_again_and_again_is_divergence(tmp_path):
    d = _sweep(tmp_path, [9.3, 90.0, 15.1, 7.8, 30.1, 6.8, 7.5, 46.1, 19.2, 9.3, 8.0, 264.2, 35.0, 8.3, 5.5, 4.4])
    assert d["classification"] == "divergence", d["headline"]
    assert d["primary_cause"]["id"] == "metric.eval-loss-blowups"


def test_one_validation_blow_up_is_a_warning_not_the_verdict(tmp_path):
    d = _sweep(tmp_path, [9.3, 6.1, 5.0, 30.0, 4.6, 4.2, 4.0, 3.9])
    assert d["classification"] != "divergence", d["headline"]


def test_a_loss_term_nan_from_its_first_value_beside_a_total_that_trains_is_no_nan_verdict(tmp_path):
    body = "".join(f"step {s} | loss: {2.5 - s * 0.02:.4f} | mask_loss: nan | lr: 0.001\n" for s in range(1, 40))
    d = _d(tmp_path, "train.log", body + "Training completed.\n")
    assert not (d["primary_cause"] and "mask_loss is NaN" in d["primary_cause"]["summary"]), d["headline"]


_HVD = ("[2020-07-27 20:14:10.551108: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to "
        "be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than "
        "60 seconds. This may indicate that different ranks are trying to submit different tensors or that only "
        "subset of ranks is submitting tensors, which will cause deadlock.\n")


def test_horovods_stall_inspector_in_glog_format_is_a_collective_stall(tmp_path):
    body = "".join(f"I0727 20:0{i}:00.000000 step {i * 100} loss = {3.0 - i * 0.1:.3f}\n" for i in range(5))
    d = _d(tmp_path, "run_squad.log", body + _HVD)
    assert d["classification"] == "stall" and d["primary_cause"]["id"] == "horovod-stalled-ranks", d["headline"]


def test_a_stall_warning_the_run_went_on_to_finish_is_not_its_failure(tmp_path):
    """The warning on the job's stderr, the epochs and the end of training on its stdout (a scheduler's .err and
    .out): no progress follows the warning in its own file, but the run finished."""
    (tmp_path / "job.err").write_text(_HVD, encoding="utf-8")
    body = "".join(f"Epoch {e}/5 - loss: {3.0 - e * 0.3:.4f} - val_loss: {3.1 - e * 0.3:.4f}\n" for e in range(1, 6))
    d = _d(tmp_path, "job.out", body + "Training done.\n")
    assert d["outcome"]["outcome"] == "completed" and d["classification"] == "unclear", d["headline"]


def _lm_log(losses, ppl=True):
    import math
    return "".join(f"| epoch   1 | {200 * (i + 1):5d}/ 2983 batches | lr 20.0000 | ms/batch 11.4 | loss {v:5.2f}"
                   + (f" | ppl {math.exp(v):.2f}" if ppl else "") + "\n" for i, v in enumerate(losses))


def test_a_language_model_worse_than_uniform_over_any_vocabulary_is_divergence(tmp_path):
    # PyTorch's word_language_model example layout; lr 20 on a tanh RNN: a loss of 18 nats, perplexity ~1e8
    d = _d(tmp_path, "train.log", _lm_log([17.7, 18.3, 18.0, 18.1, 18.4, 19.0, 18.4, 8.1, 7.2, 7.0]))
    assert d["classification"] == "divergence", d["headline"]
    assert d["primary_cause"]["id"] == "metric.worse-than-uniform"


def test_a_large_loss_without_a_perplexity_beside_it_is_no_such_verdict(tmp_path):
    """An MSE or a summed loss can be 18 and healthy: only a printed perplexity that is e^loss makes it per token."""
    d = _d(tmp_path, "train.log", _lm_log([19.7, 19.3, 19.0, 18.6, 18.4, 18.0, 17.8, 17.5, 17.1, 16.9], ppl=False))
    assert not (d["primary_cause"] and d["primary_cause"]["id"] == "metric.worse-than-uniform"), d["headline"]


def test_a_loss_that_drops_to_exactly_zero_right_after_its_first_log_is_not_learning(tmp_path):
    body = "{'loss': 2.9325, 'learning_rate': 0.0004995, 'epoch': 0.01}\n" + "".join(
        f"{{'loss': 0.0, 'learning_rate': {0.000499 - i * 1e-6:.7f}, 'epoch': {0.02 + i / 100:.2f}}}\n" for i in range(3))
    d = _d(tmp_path, "train.log", body)
    assert d["classification"] == "stall" and d["primary_cause"]["id"] == "metric.loss-exactly-zero", d["headline"]


def test_a_loss_that_reaches_zero_after_a_long_fall_is_no_such_verdict(tmp_path):
    vals = [2.9, 1.8, 1.1, 0.6, 0.3, 0.1, 0.02, 0.0, 0.0, 0.0]
    body = "".join(f"{{'loss': {v}, 'learning_rate': 0.0005, 'epoch': {0.01 * (i + 1):.2f}}}\n" for i, v in enumerate(vals))
    d = _d(tmp_path, "train.log", body)
    assert not (d["primary_cause"] and d["primary_cause"]["id"] == "metric.loss-exactly-zero"), d["headline"]


def _bar(n, total, elapsed, rate):
    return f" {100 * n // total}%|####      | {n}/{total} [{elapsed}<03:21, {rate}s/it]\n"


def test_a_progress_bar_drawn_again_hours_later_at_the_same_count_is_a_hang(tmp_path):
    body = "$ python train.py --config nyu.yml\n" + _bar(10, 40, "01:09", 6.9) + _bar(11, 40, "01:16", 6.96) \
        + _bar(11, 40, "13:15:37", 4339.76) + _bar(11, 40, "15:05:14", 4937.67)
    d = _d(tmp_path, "train.log", body)
    assert d["classification"] == "stall" and d["primary_cause"]["id"] == "log.progress-bar-stands-still"
    assert "11/40" in d["primary_cause"]["summary"] and "15.1 h" in d["primary_cause"]["summary"]


def test_a_slow_bar_redrawn_on_its_timer_is_no_hang(tmp_path):
    """tqdm's monitor redraws a slow bar every few seconds at the same count: that is a slow iteration."""
    body = _bar(3, 40, "09:00", 180.0) + _bar(3, 40, "09:10", 180.0) + _bar(3, 40, "09:20", 180.0)
    d = _d(tmp_path, "train.log", body)
    assert not (d["primary_cause"] and d["primary_cause"]["id"] == "log.progress-bar-stands-still"), d["headline"]


def test_a_line_of_task_metrics_alone_is_read():
    from trainwreck.collect.textmetrics import extract
    assert extract("dice: 0.0, recall: 0.5")[1] == {"dice": 0.0, "recall": 0.5}
    assert extract("mAP: 0.123")[1] == {"map": 0.123}
    assert extract("reward: 1.5, kl: 0.02")[1] == {"reward": 1.5, "kl": 0.02}
    assert extract("the map of the city is at 0.5 km") is None  # a word, not a metric key


def _keras(upto, total=982):
    return "Epoch 1/10\n" + "".join(f"{i:04d}/{total} [====>.] - ETA: {total - i}s - loss: {39.2 - i * 1e-4:.4f}\n"
                                    for i in range(upto - 30, upto + 1))


def test_a_log_that_stops_one_step_before_an_epochs_end_is_a_hang_there(tmp_path):
    d = _d(tmp_path, "train.log", _keras(981))
    assert d["classification"] == "stall" and d["primary_cause"]["id"] == "log.stopped-at-epoch-end", d["headline"]
    assert "981 of 982" in d["primary_cause"]["summary"]


def test_a_log_that_stops_mid_epoch_is_no_epoch_end_hang(tmp_path):
    d = _d(tmp_path, "train.log", _keras(500))
    assert not (d["primary_cause"] and d["primary_cause"]["id"] == "log.stopped-at-epoch-end"), d["headline"]


def test_a_bar_redrawn_as_it_closes_after_the_runs_last_work_is_no_epoch_end_hang(tmp_path):
    body = "".join(f"Epoch 3/3:  {i * 100 // 35}%|###| {i}/35 [07:32<00:13, 13.1s/it]\n" for i in range(20, 35))
    body += "Saved checkpoint to ./models/sft/global_step_105\nFinal validation metrics: {'val/loss': 0.058}\n"
    body += "Epoch 3/3:  97%|###| 34/35 [07:45<00:13, 13.1s/it]\n"
    d = _d(tmp_path, "train.log", body)
    assert not (d["primary_cause"] and d["primary_cause"]["id"] == "log.stopped-at-epoch-end"), d["headline"]
